package remotewake

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"

	"github.com/omega-monitor/omega-monitor/coord"
)

// maxPanesARead is the most wake lines one read of the FIFO gives: the
// posts that piled up while the listener was busy are one wake a pane.
const maxPanesARead = 8

// Serve is the listener's work: it prints Hello, then one wake line for
// each pane posted to l (the posts that pile up between two reads make one
// line a pane), until stdin ends (the ssh connection that runs it is gone:
// nobody reads what it prints any more) or stdout fails. It returns nil
// when stdin ends.
func Serve(l *Listener, stdin io.Reader, stdout io.Writer) error {
	w := bufio.NewWriter(stdout)
	w.WriteString(Hello + "\n")
	if err := w.Flush(); err != nil {
		return err
	}
	gone := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, stdin)
		gone <- err
	}()
	posted := make(chan []string)
	failed := make(chan error, 1)
	done := make(chan struct{})
	defer close(done)
	go func() {
		buf := make([]byte, 4096)
		var carry []byte // a post the last read cut, at most a line
		for {
			n, err := l.Read(buf)
			if n > 0 {
				chunk := append(carry, buf[:n]...)
				i := bytes.LastIndexByte(chunk, '\n')
				carry = append([]byte(nil), chunk[i+1:]...)
				if len(carry) > MaxLine {
					carry = nil
				}
				if panes := Panes(chunk[:i+1], maxPanesARead); len(panes) > 0 {
					select {
					case posted <- panes:
					case <-done:
						return
					}
				}
			}
			if err != nil {
				failed <- err
				return
			}
		}
	}()
	for {
		select {
		case err := <-gone:
			return err
		case err := <-failed:
			if errors.Is(err, os.ErrClosed) {
				return nil
			}
			return err
		case panes := <-posted:
			for _, p := range panes {
				w.WriteString(WakeLine(p) + "\n")
			}
			if err := w.Flush(); err != nil {
				return err
			}
		}
	}
}

// findSelf is how the host finds its omega-monitor, in sh: $OMEGA_MONITOR_BIN,
// else omega-monitor on the PATH of an ssh command, else where go install
// puts it, else ~/.local/bin. None: exit 127, as a shell says of a command
// it cannot find, which the relay reads as no omega-monitor on the host.
const findSelf = `for b in "${OMEGA_MONITOR_BIN:-}" "$(command -v omega-monitor 2>/dev/null)" ` +
	`"$HOME/go/bin/omega-monitor" "$HOME/.local/bin/omega-monitor"; do ` +
	`if [ -n "$b" ] && [ -f "$b" ] && [ -x "$b" ]; then exec "$b" wake --listen "$@"; fi; done; exit 127`

// ListenCommand is the command line for ssh that runs the listener on the
// host for the pane or session target (a multiplexer target the watcher
// already checked), each word quoted for the remote login shell. It is
// fixed but for target: nothing a host said goes into it.
func ListenCommand(target string) string {
	return "sh -c " + coord.ShellJoin(findSelf, "omega-monitor", "--target", target)
}
