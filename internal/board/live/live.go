// Package live is the fleet board as a full-screen terminal program: it
// redraws render.Screen in place every interval, moves a selection with the
// arrow keys and takes the operator to the selected watcher's session on
// Enter. It reads the fleet through package board; taking the operator to
// a session (switch-client or attach) is the one thing it runs.
package live

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/board"
	"github.com/omega-monitor/omega-monitor/internal/board/render"
)

// Escape sequences of the live form.
const (
	altScreenOn  = "\x1b[?1049h"
	altScreenOff = "\x1b[?1049l"
	cursorHide   = "\x1b[?25l"
	cursorShow   = "\x1b[?25h"
	home         = "\x1b[H"
	clearEOL     = "\x1b[K"
	clearBelow   = "\x1b[J"
)

// A key is what the live form reacts to.
type key int

const (
	keyQuit key = iota + 1
	keyUp
	keyDown
	keyEnter
)

// Run runs the full-screen board that census reads (a state home's, with
// the hosts on it: hosts.Board.Census) until q or Ctrl-C. Every frame is
// one write that overwrites the previous in place (home, each line cleared
// to its end, the rest of the screen cleared), so nothing flickers or
// scrolls. The terminal is restored exactly on every way out. It returns
// why it could not draw, or could not attach to the session chosen.
func Run(census func(time.Time, board.Options) (board.Fleet, error), interval time.Duration, in, out *os.File) error {
	restore := func() {}
	keys := make(chan key, 8)
	if in != nil && IsTerminal(in) {
		r, err := makeRaw(in)
		if err != nil {
			return fmt.Errorf("the terminal cannot be put in raw mode: %w", err)
		}
		restore = r
		go readKeys(in, keys)
	}
	io.WriteString(out, altScreenOn+cursorHide)
	leave := func() {
		io.WriteString(out, cursorShow+altScreenOff)
		restore()
	}
	defer func() { leave() }()

	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGWINCH, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(signals)
	ticker := time.NewTicker(interval)
	defer ticker.Stop()

	cur := &board.Cursors{}
	sel := 0
	var f board.Fleet
	var censusErr error
	// A census runs beside the keys: one over other hosts waits up to
	// their clock, and q must not. One runs at a time (they share the
	// cursors); a tick while one runs is skipped.
	type result struct {
		f   board.Fleet
		err error
	}
	done := make(chan result, 1)
	running := false
	refresh := func() {
		if running {
			return
		}
		running = true
		go func() {
			f, err := census(time.Now(), board.Options{Cursors: cur})
			done <- result{f, err}
		}()
	}
	read := false // no census came yet: nothing to draw
	draw := func() {
		if !read {
			return
		}
		cols, rows, ok := terminalSize(out)
		if !ok {
			cols, rows = 80, 24
		}
		v := render.View{Width: cols, Height: rows, Selected: sel, Interval: interval.String()}
		var lines []string
		if censusErr != nil {
			lines = []string{render.Truncate("omega-monitor status: "+censusErr.Error(), cols)}
		} else {
			lines = render.Screen(f, v)
		}
		buf := []byte(home)
		for i, l := range lines {
			buf = append(buf, l...)
			buf = append(buf, clearEOL...)
			if i < len(lines)-1 {
				buf = append(buf, '\r', '\n')
			}
		}
		buf = append(buf, clearBelow...)
		out.Write(buf)
	}
	refresh()
	for {
		select {
		case r := <-done:
			running, read = false, true
			f, censusErr = r.f, r.err
			sel = min(sel, max(len(f.Watchers)-1, 0))
			draw()
		case <-ticker.C:
			refresh()
		case s := <-signals:
			if s == syscall.SIGWINCH {
				draw()
				continue
			}
			return nil
		case k := <-keys:
			switch k {
			case keyQuit:
				return nil
			case keyUp:
				sel = max(sel-1, 0)
			case keyDown:
				sel = min(sel+1, max(len(f.Watchers)-1, 0))
			case keyEnter:
				if sel >= len(f.Watchers) {
					break
				}
				if cmd, inside := jumpCommand(jumpTarget(f.Watchers[sel])); cmd != nil && inside {
					// The client moves to the session; the board stays
					// in its own pane, running.
					cmd.Run()
				} else if cmd != nil {
					// attach takes the terminal: the board ends first,
					// so that nothing else reads the keys.
					leave()
					leave = func() {}
					cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
					if err := cmd.Run(); err != nil {
						return fmt.Errorf("%s: %w", strings.Join(cmd.Args, " "), err)
					}
					return nil
				}
			}
			draw()
		}
	}
}

// readKeys turns the bytes typed into keys: q, Ctrl-C, Ctrl-D and Esc-less
// arrows (ESC [ A / B), j and k, Enter.
func readKeys(in *os.File, keys chan<- key) {
	buf := make([]byte, 64)
	for {
		n, err := in.Read(buf)
		if err != nil {
			keys <- keyQuit
			return
		}
		b := buf[:n]
		for i := 0; i < len(b); i++ {
			switch c := b[i]; {
			case c == 'q' || c == 'Q' || c == 3 || c == 4:
				keys <- keyQuit
			case c == 'k':
				keys <- keyUp
			case c == 'j':
				keys <- keyDown
			case c == '\r' || c == '\n':
				keys <- keyEnter
			case c == 0x1b && i+2 < len(b) && (b[i+1] == '[' || b[i+1] == 'O'):
				switch b[i+2] {
				case 'A':
					keys <- keyUp
				case 'B':
					keys <- keyDown
				}
				i += 2
			}
		}
	}
}

// jumpTarget is where Enter takes the operator for w: its target, or
// host:session for a watcher of another host's board that watches a
// session of that host. A watcher there of a third host's session is
// reached by that host's ssh config, not ours: none.
func jumpTarget(w board.Watcher) string {
	switch {
	case w.Host == "":
		return w.Target
	case strings.Contains(w.Target, ":"):
		return ""
	}
	return w.Host + ":" + w.Target
}

// jumpCommand is the command that takes the operator to the watched
// session: switch-client when the board runs inside the multiplexer
// (inside is then true), attach otherwise, over ssh -t for a remote target.
// It is the one thing the board does besides reading. Nil for a target it
// cannot read.
func jumpCommand(target string) (cmd *exec.Cmd, inside bool) {
	t, err := coord.ParseTarget(target)
	if err != nil {
		return nil, false
	}
	bin, err := coord.MuxBinary("", os.Getenv)
	if err != nil {
		return nil, false
	}
	inside = os.Getenv("TMUX") != "" || coord.InRmux(os.Getenv)
	switch {
	case t.Local() && inside:
		return exec.Command(bin, "switch-client", "-t", coord.Exact(t.Session)), true
	case t.Local():
		return exec.Command(bin, "attach-session", "-t", coord.Exact(t.Session)), false
	}
	return exec.Command("ssh", "-t", "--", t.Host, coord.RemoteCommand("attach-session", "-t", coord.Exact(t.Session))), false
}
