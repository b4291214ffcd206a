package termagent

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// A Launch says how to start a program in a pane.
type Launch struct {
	// Name is the tmux session's name.
	Name string
	// Binary and Args are the program and its arguments.
	Binary string
	Args   []string
	// Home and Dir are the program's HOME and working directory, made
	// beforehand by the caller, who writes the program's settings there.
	Home, Dir string
	// Env holds NAME=value entries beyond HOME, PATH, TMPDIR, TERM and
	// LANG; nothing else of the test's environment reaches the program.
	Env []string
	// Width and Height are the pane's size; 100 by 40 when zero.
	Width, Height int
}

// A Session is one program running in a pane of a private tmux server.
type Session struct {
	Tmux *testenv.TmuxServer
	// Pane is the pane's id (%N).
	Pane   string
	Launch Launch
}

// Start starts the program in a new session of the tmux server, through a
// script that clears the environment. The session ends with the test.
func Start(t testing.TB, tmux *testenv.TmuxServer, l Launch) *Session {
	t.Helper()
	if l.Width == 0 {
		l.Width = 100
	}
	if l.Height == 0 {
		l.Height = 40
	}
	// A short TMPDIR of its own: programs keep unix sockets there, whose
	// paths are limited to about 100 bytes.
	tmp, err := os.MkdirTemp("", "omta")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	env := append([]string{
		"HOME=" + l.Home,
		"PATH=" + os.Getenv("PATH"),
		"TMPDIR=" + tmp,
		"TERM=xterm-256color",
		"LANG=C.UTF-8",
	}, l.Env...)
	var script strings.Builder
	script.WriteString("#!/bin/sh\n")
	fmt.Fprintf(&script, "cd %s || exit 1\n", coord.ShellQuote(l.Dir))
	script.WriteString(`exec env -i TMUX="$TMUX" TMUX_PANE="$TMUX_PANE"`)
	for _, kv := range env {
		script.WriteString(" " + coord.ShellQuote(kv))
	}
	for _, a := range append([]string{l.Binary}, l.Args...) {
		script.WriteString(" " + coord.ShellQuote(a))
	}
	script.WriteString("\n")
	launcher := filepath.Join(filepath.Dir(l.Home), "run-"+l.Name+".sh")
	if err := os.WriteFile(launcher, []byte(script.String()), 0o700); err != nil {
		t.Fatal(err)
	}
	out := tmux.Run(t, "new-session", "-d", "-P", "-F", "#{pane_id} #{pane_pid}", "-s", l.Name,
		"-x", strconv.Itoa(l.Width), "-y", strconv.Itoa(l.Height), launcher,
		";", "set-option", "-w", "-t", "="+l.Name+":", "remain-on-exit", "on")
	pane, pidText, _ := strings.Cut(strings.TrimSpace(out), " ")
	s := &Session{Tmux: tmux, Pane: pane, Launch: l}
	pid, err := strconv.Atoi(pidText)
	if !strings.HasPrefix(s.Pane, "%") || err != nil {
		t.Fatalf("termagent: tmux new-session printed %q, not a pane id and pid", out)
	}
	t.Cleanup(func() {
		tmux.Cmd("kill-session", "-t", "="+l.Name).Run()
		EndGroup(pid)
	})
	return s
}

// EndGroup ends the process group that a pane's program leads, and waits
// until it is gone: a program that ignores the hangup tmux sends (Gemini
// CLI relaunches itself under a node that does) would outlive the test, and
// one still exiting writes into a directory the test is about to remove.
func EndGroup(pid int) {
	syscall.Kill(-pid, syscall.SIGKILL)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if syscall.Kill(-pid, 0) == syscall.ESRCH {
			return
		}
	}
}

// Dirs makes a HOME and a working directory for a program under a fresh
// temporary directory, with symlinks resolved (programs compare paths).
func Dirs(t testing.TB) (home, dir string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home, dir = filepath.Join(base, "home"), filepath.Join(base, "work")
	for _, d := range []string{home, dir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return home, dir
}

// Type types text literally, waits until its end shows, then presses Enter
// on its own, as a human would.
func (s *Session) Type(t testing.TB, text string) {
	t.Helper()
	s.Draft(t, text)
	s.Keys(t, "Enter")
}

// Draft types text literally without sending it, and waits until its end
// shows on the screen.
func (s *Session) Draft(t testing.TB, text string) {
	t.Helper()
	s.Tmux.Run(t, "send-keys", "-t", s.Pane, "-l", text)
	tail := []rune(strings.TrimSpace(text))
	if len(tail) > 8 {
		tail = tail[len(tail)-8:]
	}
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		if strings.Contains(s.Capture(t), string(tail)) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Let the input settle, so Enter is not read as part of a paste.
	time.Sleep(400 * time.Millisecond)
}

// Keys sends tmux key names (Enter, Escape, C-u) to the pane.
func (s *Session) Keys(t testing.TB, keys ...string) {
	t.Helper()
	s.Tmux.Run(t, append([]string{"send-keys", "-t", s.Pane}, keys...)...)
}

// Capture returns the screen as capture-pane -p -J prints it.
func (s *Session) Capture(t testing.TB) string {
	t.Helper()
	return s.Tmux.Run(t, "capture-pane", "-p", "-J", "-t", s.Pane)
}

// CaptureEscapes returns the screen with its escape sequences kept
// (capture-pane -p -e -J), so that faint text can be told from normal text.
func (s *Session) CaptureEscapes(t testing.TB) string {
	t.Helper()
	return s.Tmux.Run(t, "capture-pane", "-p", "-e", "-J", "-t", s.Pane)
}

// Resize sets the pane's width.
func (s *Session) Resize(t testing.TB, width int) {
	t.Helper()
	s.Tmux.Run(t, "resize-window", "-t", "="+s.Launch.Name+":", "-x", strconv.Itoa(width))
}

// WaitFor polls the screen until ok holds, and fails the test with the last
// screen after timeout.
func (s *Session) WaitFor(t testing.TB, timeout time.Duration, what string, ok func(screen string) bool) string {
	t.Helper()
	for deadline := time.Now().Add(timeout); ; {
		screen := s.Capture(t)
		if ok(screen) {
			return screen
		}
		if time.Now().After(deadline) {
			t.Fatalf("termagent: %s: waited %v for %s\nscreen:\n%s", s.Launch.Name, timeout, what, screen)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// A Snapshot is one moment of a session, captured both ways.
type Snapshot struct {
	Plain, Escapes string
}

// animated matches what changes on a screen that is otherwise still: timers,
// spinners, clocks.
var animated = regexp.MustCompile(`\d+(?:m \d+)?s\b|[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏•◦]|\d\d:\d\d`)

// Settle waits until ok holds on a screen that stays the same (but for its
// timers and spinners) for a few polls, and captures it. With still false
// the screen may change (a stream growing); ok must then hold on both
// captures.
func (s *Session) Settle(t testing.TB, timeout time.Duration, what string, still bool, ok func(screen string) bool) Snapshot {
	t.Helper()
	const polls = 3
	last, same := "", 0
	for deadline := time.Now().Add(timeout); ; {
		screen := s.Capture(t)
		if ok(screen) && (!still || animated.ReplaceAllString(screen, "") == animated.ReplaceAllString(last, "")) {
			same++
		} else {
			same = 0
		}
		last = screen
		if same >= polls || (!still && same >= 1) {
			snap := Snapshot{Escapes: s.CaptureEscapes(t), Plain: s.Capture(t)}
			if ok(snap.Plain) && ok(stripEscapes(snap.Escapes)) {
				return snap
			}
			same = 0
		}
		if time.Now().After(deadline) {
			t.Fatalf("termagent: %s: waited %v for %s\nscreen:\n%s", s.Launch.Name, timeout, what, screen)
		}
		time.Sleep(400 * time.Millisecond)
	}
}

var escape = regexp.MustCompile("\x1b\\[[0-9;:?]*[A-Za-z]|\x1b\\][^\x07]*\x07")

func stripEscapes(s string) string { return escape.ReplaceAllString(s, "") }
