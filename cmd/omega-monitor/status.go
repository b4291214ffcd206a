package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/omega-monitor/omega-monitor/board"
	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/statedir"
)

const statusUsage = `usage: omega-monitor status [--once | --json | --tmux] [--interval DUR]

The fleet board: every watcher under $OMEGA_MONITOR_HOME (default
~/.omega/monitor) at a glance, read from the watchers' own state; it changes
nothing. Three forms of one census:

  (a terminal)  live and full-screen, redrawn every --interval; ↑/↓ or j/k
                select a watcher and open its last transition, last alert and
                the explanation of its last verdict; Enter jumps to the
                watched session (switch-client inside tmux, attach outside);
                q or Ctrl-C restores the terminal
  --once        one header line and one line a watcher, no escape sequences
                (also whenever standard output is not a terminal)
  --json        the same data as one JSON object: watchers, fleet, degraded,
                errors (field names documented in package board)
  --tmux        a short segment for tmux's status-right, cheap enough to run
                every few seconds:
                  set -g status-right '#(omega-monitor status --tmux)'

Liveness: [live] the loop's pid runs with its recorded start token and polled
within two intervals; [quiet] it runs but has not polled in two intervals (a
hung call); [stale] its pid is dead or another process now, and it was not
stopped; [gone] it was stopped, or never recorded a loop.

Exit status: 0; 3 from the one-line form when no watcher is live or quiet
(it then ends with "no live watchers", so a scheduled caller can stop
itself); 1 when the state directory cannot be listed; 2 for a usage error.

flags:
`

// statusCursors is the board's own file under the root: where the last read
// of each watcher's log ended, so that log:N(+new) counts only what was
// appended since, and no log is read whole twice.
const statusCursors = statedir.BoardCursors

func runStatus(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("status", statusUsage, stderr)
	once := fs.Bool("once", false, "print the compact form once")
	asJSON := fs.Bool("json", false, "print the census as JSON")
	tmux := fs.Bool("tmux", false, "print a tmux status segment")
	interval := fs.Duration("interval", 3*time.Second, "the live form's refresh")
	if code, stop := parseFlags(fs, args, stdout, statusUsage); stop {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "omega-monitor status: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	forms := 0
	for _, b := range []bool{*once, *asJSON, *tmux} {
		if b {
			forms++
		}
	}
	if forms > 1 {
		fmt.Fprintln(stderr, "omega-monitor status: --once, --json and --tmux are three forms: give one")
		return 2
	}
	if *interval < 100*time.Millisecond {
		fmt.Fprintln(stderr, "omega-monitor status: --interval must be 100ms or more")
		return 2
	}
	root, err := statedir.Home()
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor status: %v\n", err)
		return 1
	}

	switch {
	case *tmux:
		f, err := board.Census(root, time.Now(), board.Options{Brief: true})
		if err != nil {
			fmt.Fprintln(stdout, "omega-monitor: ?")
			return 1
		}
		fmt.Fprintln(stdout, board.Tmux(f))
		return 0
	case *asJSON:
		cur := loadCursors(root)
		f, err := board.Census(root, time.Now(), board.Options{Cursors: cur})
		if err != nil {
			fmt.Fprintf(stderr, "omega-monitor status: %v\n", err)
			return 1
		}
		saveCursors(root, cur)
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(f); err != nil {
			fmt.Fprintf(stderr, "omega-monitor status: %v\n", err)
			return 1
		}
		return 0
	}
	out, isFile := stdout.(*os.File)
	if *once || !isFile || !isTerminal(out) {
		return statusOnce(root, stdout, stderr)
	}
	in, _ := stdin.(*os.File)
	return statusLive(root, *interval, in, out, stderr)
}

// statusOnce prints the compact form.
func statusOnce(root string, stdout, stderr io.Writer) int {
	cur := loadCursors(root)
	f, err := board.Census(root, time.Now(), board.Options{Cursors: cur})
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor status: %v\n", err)
		return 1
	}
	saveCursors(root, cur)
	io.WriteString(stdout, board.Compact(f))
	if f.Fleet.Running == 0 {
		return 3
	}
	return 0
}

func loadCursors(root string) *board.Cursors {
	c := &board.Cursors{}
	if data, err := os.ReadFile(filepath.Join(root, statusCursors)); err == nil {
		json.Unmarshal(data, c) // a corrupt file is a fresh start: only +new is lost
	}
	return c
}

// saveCursors keeps the cursors for the next run; a root the board cannot
// write to costs only the +new figures.
func saveCursors(root string, c *board.Cursors) {
	data, err := json.Marshal(c)
	if err != nil {
		return
	}
	if _, err := os.Stat(root); err != nil {
		return
	}
	writeAtomic(filepath.Join(root, statusCursors), data)
}

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

// statusLive runs the full-screen board until q or Ctrl-C. Every frame is
// one write that overwrites the previous in place (home, each line cleared
// to its end, the rest of the screen cleared), so nothing flickers or
// scrolls. The terminal is restored exactly on every way out.
func statusLive(root string, interval time.Duration, in, out *os.File, stderr io.Writer) int {
	restore := func() {}
	keys := make(chan key, 8)
	if in != nil && isTerminal(in) {
		r, err := makeRaw(in)
		if err != nil {
			fmt.Fprintf(stderr, "omega-monitor status: the terminal cannot be put in raw mode: %v\n", err)
			return 1
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
	census := func() {
		f, censusErr = board.Census(root, time.Now(), board.Options{Cursors: cur})
		sel = min(sel, max(len(f.Watchers)-1, 0))
	}
	draw := func() {
		cols, rows, ok := terminalSize(out)
		if !ok {
			cols, rows = 80, 24
		}
		v := board.View{Width: cols, Height: rows, Selected: sel, Interval: interval.String()}
		var lines []string
		if censusErr != nil {
			lines = []string{board.Truncate("omega-monitor status: "+censusErr.Error(), cols)}
		} else {
			lines = board.Screen(f, v)
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
	census()
	draw()
	for {
		select {
		case <-ticker.C:
			census()
			draw()
		case s := <-signals:
			if s == syscall.SIGWINCH {
				draw()
				continue
			}
			return 0
		case k := <-keys:
			switch k {
			case keyQuit:
				return 0
			case keyUp:
				sel = max(sel-1, 0)
			case keyDown:
				sel = min(sel+1, max(len(f.Watchers)-1, 0))
			case keyEnter:
				if sel >= len(f.Watchers) {
					break
				}
				if cmd, inside := jumpCommand(f.Watchers[sel].Target); cmd != nil && inside {
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
						fmt.Fprintf(stderr, "omega-monitor status: %s: %v\n", strings.Join(cmd.Args, " "), err)
						return 1
					}
					return 0
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
