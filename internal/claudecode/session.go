package claudecode

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/termagent"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// A Mode is a permission mode Claude Code starts in.
type Mode int

const (
	Manual Mode = iota // asks before running commands: --permission-mode manual
	Auto               // decides by itself what is safe: --permission-mode auto
	Bypass             // never asks: --dangerously-skip-permissions
)

// Modes lists every mode, in order.
var Modes = []Mode{Manual, Auto, Bypass}

var modeNames = [...]string{Manual: "manual", Auto: "auto", Bypass: "bypass"}

func (m Mode) String() string {
	if m >= Manual && m <= Bypass {
		return modeNames[m]
	}
	return "Mode(" + strconv.Itoa(int(m)) + ")"
}

// Args returns the command-line arguments that select the mode.
func (m Mode) Args() []string {
	switch m {
	case Auto:
		return []string{"--permission-mode", "auto"}
	case Bypass:
		return []string{"--dangerously-skip-permissions"}
	}
	return []string{"--permission-mode", "manual"}
}

// Widths are the pane widths the captures are taken at.
var Widths = []int{60, 100, 160}

// APIKey is the key Claude Code is given; the fake API accepts any.
const APIKey = "sk-ant-api03-omega-monitor-fake-key-0000"

// Config says how to start a session.
type Config struct {
	// Binary is Claude Code's executable (Binary's result).
	Binary string
	// API is the base URL of the Messages API (fakeapi.Server.URL).
	API  string
	Mode Mode
	// Width and Height are the pane's size; 100 by 40 when zero.
	Width, Height int
	// MaxRetries bounds Claude Code's retries of a failed request
	// (CLAUDE_CODE_MAX_RETRIES); 2 when zero.
	MaxRetries int
	// Name is the tmux session's name; "claude" when empty.
	Name string
	// Env holds more NAME=value entries for Claude Code's environment.
	Env []string
	// Prepare, when set, runs once HOME is made and before Claude Code
	// starts, to put in place what it reads at start (commands, MCP
	// servers).
	Prepare func(home string) error
	// FirstRun starts Claude Code as on a new machine: onboarding not
	// done, no folder trusted, no key approved, the bypass warning not
	// accepted. Start then returns as soon as the pane runs, without
	// waiting for the input box. Its onboarding checks the internet
	// first: put a fakeapi.Hello's Env in Env.
	FirstRun bool
	// NoKey starts it with no API key: a first run then asks how to log
	// in.
	NoKey bool
}

// A Session is one Claude Code running in a pane of a private tmux server.
type Session struct {
	Tmux *testenv.TmuxServer
	// Pane is the pane's id (%N); Name is its tmux session.
	Pane, Name string
	// Home is Claude Code's HOME; Dir is its working directory.
	Home, Dir string
	Config    Config
}

// StartupTimeout bounds how long Claude Code may take to draw its input box
// on a loaded machine.
const StartupTimeout = 3 * time.Minute

// Start starts Claude Code in a new session of the tmux server, with a HOME
// prepared so that no onboarding, trust or API-key dialog shows, and waits
// until it is idle at its input box. The session ends with the test.
func Start(t testing.TB, tmux *testenv.TmuxServer, cfg Config) *Session {
	t.Helper()
	if cfg.Width == 0 {
		cfg.Width = 100
	}
	if cfg.Height == 0 {
		cfg.Height = 40
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 2
	}
	if cfg.Name == "" {
		cfg.Name = "claude"
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := &Session{
		Tmux:   tmux,
		Name:   cfg.Name,
		Home:   filepath.Join(base, "home"),
		Dir:    filepath.Join(base, "work"),
		Config: cfg,
	}
	for _, d := range []string{s.Home, filepath.Join(s.Home, ".claude"), s.Dir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if !cfg.FirstRun {
		writeJSON(t, filepath.Join(s.Home, ".claude.json"), map[string]any{
			"hasCompletedOnboarding": true,
			"customApiKeyResponses": map[string]any{
				// Claude Code remembers an approved key by its last 20
				// characters.
				"approved": []string{APIKey[len(APIKey)-20:], APIKey},
				"rejected": []string{},
			},
			"projects": map[string]any{
				s.Dir: map[string]any{"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true},
			},
		})
		writeJSON(t, filepath.Join(s.Home, ".claude", "settings.json"), map[string]any{
			"skipDangerousModePermissionPrompt": true,
		})
	}
	if cfg.Prepare != nil {
		if err := cfg.Prepare(s.Home); err != nil {
			t.Fatalf("claudecode: preparing %s: %v", s.Home, err)
		}
	}

	// A short TMPDIR of its own: Claude Code keeps unix sockets there,
	// whose paths are limited to about 100 bytes.
	tmp, err := os.MkdirTemp("", "omcc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })

	env := []string{
		"HOME=" + s.Home,
		"PATH=" + os.Getenv("PATH"),
		"TMPDIR=" + tmp,
		"TERM=xterm-256color",
		"LANG=C.UTF-8",
		"ANTHROPIC_BASE_URL=" + cfg.API,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_MAX_RETRIES=" + strconv.Itoa(cfg.MaxRetries),
		"IS_SANDBOX=1",
	}
	if !cfg.NoKey {
		env = append(env, "ANTHROPIC_API_KEY="+APIKey)
	}
	env = append(env, cfg.Env...)
	// The pane runs a script that clears the environment, so nothing of
	// the test's own (a real API key, a real HOME) reaches Claude Code;
	// TMUX and TMUX_PANE, which tmux sets in the pane, are kept, for the
	// status file's tmux field.
	var script strings.Builder
	script.WriteString("#!/bin/sh\n")
	fmt.Fprintf(&script, "cd %s || exit 1\n", coord.ShellQuote(s.Dir))
	script.WriteString(`exec env -i TMUX="$TMUX" TMUX_PANE="$TMUX_PANE"`)
	for _, kv := range env {
		script.WriteString(" " + coord.ShellQuote(kv))
	}
	script.WriteString(" " + coord.ShellQuote(cfg.Binary))
	for _, a := range cfg.Mode.Args() {
		script.WriteString(" " + coord.ShellQuote(a))
	}
	script.WriteString("\n")
	launcher := filepath.Join(base, "run.sh")
	if err := os.WriteFile(launcher, []byte(script.String()), 0o700); err != nil {
		t.Fatal(err)
	}

	out := tmux.Run(t, "new-session", "-d", "-P", "-F", "#{pane_id} #{pane_pid}", "-s", cfg.Name,
		"-x", strconv.Itoa(cfg.Width), "-y", strconv.Itoa(cfg.Height), launcher,
		";", "set-option", "-w", "-t", "="+cfg.Name+":", "remain-on-exit", "on")
	pane, pidText, _ := strings.Cut(strings.TrimSpace(out), " ")
	pid, err := strconv.Atoi(pidText)
	if s.Pane = pane; !strings.HasPrefix(s.Pane, "%") || err != nil {
		t.Fatalf("claudecode: tmux new-session printed %q, not a pane id and pid", out)
	}
	// Ended and gone before its home is removed: Claude Code writes its
	// files there as it exits.
	t.Cleanup(func() {
		tmux.Cmd("kill-session", "-t", "="+cfg.Name).Run()
		termagent.EndGroup(pid)
	})

	if cfg.FirstRun {
		return s
	}
	s.WaitFor(t, StartupTimeout, "Claude Code idle at its input box", func(st *Status, screen string) bool {
		return st != nil && st.Status == "idle" && strings.Contains(screen, "❯")
	})
	return s
}

func writeJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
}

// pane is the session's pane as termagent drives any program's: typing,
// keys and captures are the same whatever runs in it.
func (s *Session) pane() *termagent.Session {
	return &termagent.Session{Tmux: s.Tmux, Pane: s.Pane, Launch: termagent.Launch{Name: s.Name}}
}

// Settle waits until ok holds on a screen that stays still for a few polls,
// and captures it both ways: a screen drawn before Claude Code writes any
// status (its onboarding, its start-up dialogs).
func (s *Session) Settle(t testing.TB, timeout time.Duration, what string, ok func(screen string) bool) termagent.Snapshot {
	t.Helper()
	return s.pane().Settle(t, timeout, what, true, ok)
}

// Type types text into the pane literally, waits until it shows, then
// presses Enter on its own, as a human would.
func (s *Session) Type(t testing.TB, text string) {
	t.Helper()
	s.pane().Type(t, text)
}

// Draft types text into the pane literally without sending it, and waits
// until its end shows on the screen.
func (s *Session) Draft(t testing.TB, text string) {
	t.Helper()
	s.pane().Draft(t, text)
}

// Keys sends tmux key names (Enter, Escape, C-u) to the pane.
func (s *Session) Keys(t testing.TB, keys ...string) {
	t.Helper()
	s.pane().Keys(t, keys...)
}

// Capture returns the pane's screen as capture-pane -p -J prints it: text
// only, wrapped lines joined.
func (s *Session) Capture(t testing.TB) []byte {
	t.Helper()
	return []byte(s.pane().Capture(t))
}

// CaptureEscapes returns the pane's screen with its escape sequences kept
// (capture-pane -p -e -J), so that faint text can be told from normal text.
func (s *Session) CaptureEscapes(t testing.TB) []byte {
	t.Helper()
	return []byte(s.pane().CaptureEscapes(t))
}

// Status is what Claude Code writes about a session to
// ~/.claude/sessions/<pid>.json. Only the fields tests read are kept.
type Status struct {
	PID        int    `json:"pid"`
	SessionID  string `json:"sessionId"`
	Cwd        string `json:"cwd"`
	Version    string `json:"version"`
	Status     string `json:"status"` // busy, waiting or idle
	WaitingFor string `json:"waitingFor"`
	// Tmux is "<session>:@<window>.%<pane>", the pane Claude Code runs in.
	Tmux            string `json:"tmux"`
	ProcStart       string `json:"procStart"`
	UpdatedAt       int64  `json:"updatedAt"` // milliseconds since the epoch
	StatusUpdatedAt int64  `json:"statusUpdatedAt"`
	// Path is the file it was read from; Raw its bytes.
	Path string `json:"-"`
	Raw  []byte `json:"-"`
}

// PaneID returns the pane id at the end of the Tmux field ("%3"), or "".
func (st *Status) PaneID() string {
	i := strings.LastIndex(st.Tmux, ".%")
	if i < 0 {
		return ""
	}
	return st.Tmux[i+1:]
}

// ReadStatus reads the status file, under home, of the Claude Code running
// in pane. It returns nil and no error when none names the pane yet.
func ReadStatus(home, pane string) (*Status, error) {
	files, err := filepath.Glob(filepath.Join(home, ".claude", "sessions", "*.json"))
	if err != nil {
		return nil, fmt.Errorf("claudecode: %v", err)
	}
	var found *Status
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // replaced while we looked
		}
		var st Status
		if err := json.Unmarshal(b, &st); err != nil {
			continue // caught mid-write
		}
		if st.PaneID() != pane {
			continue
		}
		st.Path, st.Raw = f, b
		if found == nil || st.UpdatedAt > found.UpdatedAt {
			found = &st
		}
	}
	return found, nil
}

// Status reads the session's status file; nil when Claude Code has not
// written one for the pane.
func (s *Session) Status(t testing.TB) *Status {
	t.Helper()
	st, err := ReadStatus(s.Home, s.Pane)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// WaitFor polls the status file and the screen until ok holds, and fails the
// test naming what it waited for, with the last screen, after timeout.
func (s *Session) WaitFor(t testing.TB, timeout time.Duration, what string, ok func(st *Status, screen string) bool) (*Status, string) {
	t.Helper()
	var st *Status
	var screen string
	for deadline := time.Now().Add(timeout); ; {
		st = s.Status(t)
		screen = string(s.Capture(t))
		if ok(st, screen) {
			return st, screen
		}
		if time.Now().After(deadline) {
			status := "no status file"
			if st != nil {
				status = string(st.Raw)
			}
			t.Fatalf("claudecode: %s: waited %v for %s\nstatus: %s\nscreen:\n%s", s.Name, timeout, what, status, screen)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// A Snapshot is one stable moment of a session: both captures and the
// status file that held while they were taken.
type Snapshot struct {
	Plain   []byte // capture-pane -p -J
	Escapes []byte // capture-pane -p -e -J
	Status  Status
}

// Stable waits until the status file says want, changed to it no earlier
// than since (zero for any time), the screen passes check (nil for any), and
// the moment is stable; then it captures it. Stable means the status file did
// not change for the last few polls, nor while the captures were taken; for a
// stopped session (idle or waiting) the screen must not have changed either.
// A busy screen animates (spinner, timer), so only its status is held still.
func (s *Session) Stable(t testing.TB, timeout time.Duration, want string, since time.Time, check func(screen string) bool) Snapshot {
	t.Helper()
	const polls = 4
	const every = 400 * time.Millisecond
	good := func(st *Status, screen string) bool {
		return st != nil && st.Status == want && st.StatusUpdatedAt >= since.UnixMilli() && (check == nil || check(screen))
	}
	var last *Status
	var lastScreen string
	same := 0
	deadline := time.Now().Add(timeout)
	for {
		st := s.Status(t)
		screen := string(s.Capture(t))
		if good(st, screen) && last != nil && st.UpdatedAt == last.UpdatedAt && (want == "busy" || steady(screen) == steady(lastScreen)) {
			same++
		} else {
			same = 0
		}
		last, lastScreen = st, screen
		if same >= polls {
			snap := Snapshot{Escapes: s.CaptureEscapes(t), Plain: s.Capture(t)}
			after := s.Status(t)
			if good(after, string(snap.Plain)) && after.UpdatedAt == st.UpdatedAt && (want == "busy" || steady(string(snap.Plain)) == steady(screen)) {
				snap.Status = *after
				return snap
			}
			same = 0
		}
		if time.Now().After(deadline) {
			status := "no status file"
			if st != nil {
				status = string(st.Raw)
			}
			t.Fatalf("claudecode: %s: waited %v for a stable %q\nstatus: %s\nscreen:\n%s", s.Name, timeout, want, status, screen)
		}
		time.Sleep(every)
	}
}

// steady returns a screen without what blinks on a stopped one: the bullet
// of a tool call in progress (● or ⏺ at the start of a line) comes and goes
// while its permission dialog waits.
func steady(screen string) string {
	lines := strings.Split(screen, "\n")
	for i, l := range lines {
		for _, b := range []string{"●", "⏺"} {
			if strings.HasPrefix(l, b) {
				l = " " + l[len(b):]
			}
		}
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}
