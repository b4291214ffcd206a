package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/omega-monitor/omega-monitor/internal/fsutil"
)

// historyKeep is how many lines of history.jsonl the sweep at a watcher's
// start keeps: the board's sparkline reads 48 hours from the end, and a
// history that only grows would make every sweep and every copy slower.
const historyKeep = 10000

// lockHistory takes the exclusive flock that every writer of history.jsonl
// holds: appends and the sweep. The lock is on a file of its own, because
// the sweep replaces the history by rename, and a lock on the old inode
// would not exclude a writer that opened the new one.
func lockHistory(dir string) (unlock func(), err error) {
	f, err := fsutil.Lock(filepath.Join(dir, "history.lock"))
	if err != nil {
		return nil, fmt.Errorf("history lock: %w", err)
	}
	return func() { f.Close() }, nil
}

// sweepHistory keeps the last keep complete lines of dir/history.jsonl, by
// writing them to a new file and renaming it over the old one, never by
// rewriting in place: a crash leaves the old history or the new one whole.
// A last line without its newline is a write that never finished and is
// dropped. It returns how many lines it dropped.
func sweepHistory(dir string, keep int) (int, error) {
	unlock, err := lockHistory(dir)
	if err != nil {
		return 0, err
	}
	defer unlock()
	path := filepath.Join(dir, "history.jsonl")
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return 0, err
	}
	torn := 0
	if n := len(data); n > 0 && data[n-1] != '\n' {
		torn = 1
		data = data[:bytes.LastIndexByte(data, '\n')+1]
	}
	lines := bytes.Count(data, []byte{'\n'})
	if lines <= keep && torn == 0 {
		return 0, nil
	}
	start := 0
	for drop := lines - keep; drop > 0; drop-- {
		start += bytes.IndexByte(data[start:], '\n') + 1
	}
	if err := writeAtomic(path, data[start:]); err != nil {
		return 0, fmt.Errorf("history sweep: %w", err)
	}
	return max(lines-keep, 0) + torn, nil
}

const sweepUsage = `usage: omega-monitor sweep --state DIR

Keeps the last 10,000 lines of DIR/history.jsonl, by atomic replace under the
history's lock. The loop runs it once when a watcher starts.
`

func runSweep(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("sweep", sweepUsage, stderr)
	dir := fs.String("state", "", "the watcher's state directory")
	if code, stop := parseFlags(fs, args, stdout, sweepUsage); stop {
		return code
	}
	if *dir == "" || fs.NArg() > 0 {
		io.WriteString(stderr, sweepUsage)
		return 2
	}
	dropped, err := sweepHistory(*dir, historyKeep)
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor sweep: %v\n", err)
		return 1
	}
	if dropped > 0 {
		fmt.Fprintf(stdout, "history: dropped %d old line(s), kept the last %d\n", dropped, historyKeep)
	}
	return 0
}
