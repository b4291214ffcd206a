package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/icmd"

	"github.com/omega-monitor/omega-monitor/internal/claudecode"
	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// TestInstallHooksCommand: install --hooks says where it wrote, changes
// nothing the second time, and --uninstall takes ours out; the agent flags
// without --hooks are a usage error.
func TestInstallHooksCommand(t *testing.T) {
	t.Parallel()
	home, state := t.TempDir(), t.TempDir()
	res := installIn(t, home, state, "--hooks", "--claude")
	res.Assert(t, icmd.Success)
	settings := filepath.Join(home, ".claude", "settings.json")
	if want := "claude hooks: wrote our hook for Notification, PermissionRequest, Stop, StopFailure, UserPromptSubmit into " + settings; !strings.Contains(res.Stdout(), want) {
		t.Errorf("install --hooks --claude said %q, want %q", res.Stdout(), want)
	}
	if _, err := os.Stat(filepath.Join(home, ".gemini")); err == nil {
		t.Error("--claude wrote Gemini's settings too")
	}
	installIn(t, home, state, "--hooks", "--claude").Assert(t, icmd.Expected{Out: "claude hooks: up to date"})
	installIn(t, home, state, "--hooks", "--claude", "--uninstall").Assert(t, icmd.Expected{Out: "claude hooks: removed our hooks from " + settings})
	installIn(t, home, state, "--codex").Assert(t, icmd.Expected{ExitCode: 2, Err: "--codex and --gemini go with --hooks"})
}

// TestRealClaudeHookWakesTheWatcher: with our hooks installed in the real
// Claude Code's user settings and the watcher at a minute's interval, a
// permission dialog is paged within seconds of being drawn, where the poll
// alone would take up to the minute: the prompt's UserPromptSubmit and the
// PermissionRequest hook woke the loop, and the looks after the wake found
// the dialog as it was drawn.
func TestRealClaudeHookWakesTheWatcher(t *testing.T) {
	api := fakeapi.New(t)
	bin := omegaMonitor(t)
	claude := claudecode.Binary(t)
	t.Parallel()
	home := t.TempDir()
	s := claudecode.Start(t, testenv.Tmux(t), claudecode.Config{Binary: claude, API: api.URL, Mode: claudecode.Manual,
		Prepare: func(claudeHome string) error {
			res := icmd.RunCmd(icmd.Command(bin, "install", "--hooks", "--claude"),
				icmd.WithEnv("HOME="+claudeHome, "PATH="+os.Getenv("PATH"), "OMEGA_MONITOR_HOME="+home))
			t.Logf("install --hooks --claude: %s%s", res.Stdout(), res.Stderr())
			return res.Error
		}})
	// The budget is 0: the idle screen at start is escalated, never typed
	// into, so the only turn is the test's.
	r := startLoop(t, loopOptions{target: s.Name, home: home, flags: []string{
		"--mux", s.Tmux.Mux, "--interval", "60", "--pane", s.Pane, "--work-probe", "echo 3", "--nudge-budget", "0"}})
	n := len(r.waitLines(1, realTimeout))
	time.Sleep(2 * time.Second) // into the minute's pause

	s.Type(t, "now "+fakeapi.TriggerBash)
	// When the dialog is drawn, to the tenth of a second.
	var drawn time.Time
	deadline := time.Now().Add(realTimeout)
	for time.Now().Before(deadline) {
		if strings.Contains(string(s.Capture(t)), "Do you want to proceed?") {
			drawn = time.Now()
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if drawn.IsZero() {
		t.Fatal("the permission dialog never showed")
	}
	lines := r.waitLine("QUESTION · escalated to the operator", 30*time.Second)
	paged := time.Now()
	t.Logf("the dialog drawn → its page: %.1fs (interval 60s); polls after the prompt: %d", paged.Sub(drawn).Seconds(), len(lines)-n)
	if d := paged.Sub(drawn); d > 10*time.Second {
		t.Errorf("the page came %v after the dialog was drawn, want seconds (a wake), not the interval", d)
	}
	if a := r.alerts(); len(a) < 1 || !strings.Contains(a[len(a)-1], "QUESTION") {
		t.Errorf("alerts = %q, want the question", a)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, fakeapi.BashMarker)); err == nil {
		t.Errorf("%s ran: the dialog was answered", fakeapi.BashCommand)
	}
}
