package hosts

import (
	"context"
	"path/filepath"
	"time"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/board"
)

// A Board is this machine's census with the boards of other hosts on it.
type Board struct {
	// Root is this machine's state home.
	Root string
	// Hosts are the ssh aliases of the other machines, read in this
	// order; Problems what could not be read of the hosts file.
	Hosts    []string
	Problems []board.Error
	// Reader reads the hosts.
	Reader Reader
	// ReadByBoard says another board reads this one (ReadEnv): this
	// machine alone, and no cursor of the board's moved.
	ReadByBoard bool
}

// controlDir is the directory of the state home that holds the board's
// ssh connections, a dot name, so that the census passes it over.
const controlDir = ".board-ssh"

// Open returns the board of the state home root: its hosts are list
// (aliases separated by commas: status --hosts) when it is not empty,
// else the hosts file of root. sshConfig is ssh's -F, "" for ssh's own.
// getenv says whether another board reads this one (ReadEnv). A list
// that names an unsafe alias is an error; a bad line of the file is one
// of the board's errors.
func Open(root, list, sshConfig string, getenv func(string) string) (*Board, error) {
	b := &Board{Root: root, Reader: Reader{SSH: coord.SSH{Config: sshConfig}, Control: filepath.Join(root, controlDir)}}
	if getenv(ReadEnv) != "" {
		b.ReadByBoard = true
		return b, nil
	}
	if list != "" {
		hosts, err := ParseList(list)
		b.Hosts = hosts
		return b, err
	}
	b.Hosts, b.Problems = ReadFile(filepath.Join(root, File))
	return b, nil
}

// Census reads this machine's census and every host's board at once and
// merges them (board.Merge). The hosts cost at most their clock on top of
// the local census, whatever they do; only a state home that cannot be
// listed is an error. Without hosts it is board.Census.
func (b *Board) Census(now time.Time, opts board.Options) (board.Fleet, error) {
	if len(b.Hosts) == 0 && len(b.Problems) == 0 {
		return board.Census(b.Root, now, opts)
	}
	remotes := make(chan []board.Remote, 1)
	go func() { remotes <- b.Reader.Read(context.Background(), b.Hosts) }()
	local, err := board.Census(b.Root, now, opts)
	rs := <-remotes
	if err != nil {
		return local, err
	}
	local.Errors = append(local.Errors, b.Problems...)
	return board.Merge(local, rs), nil
}

// Once is the census of one look (status --once, --json, --tmux, the MCP
// status tool): brief skips the histories and logs; otherwise the board's
// cursors are read and kept (board.LoadCursors), but for a board another
// reads, which moves none.
func (b *Board) Once(now time.Time, brief bool) (board.Fleet, error) {
	if brief {
		return b.Census(now, board.Options{Brief: true})
	}
	if b.ReadByBoard {
		return b.Census(now, board.Options{})
	}
	cur := board.LoadCursors(b.Root)
	f, err := b.Census(now, board.Options{Cursors: cur})
	if err == nil {
		board.SaveCursors(b.Root, cur)
	}
	return f, err
}
