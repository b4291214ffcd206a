package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/icmd"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/claudecode"
	"github.com/omega-monitor/omega-monitor/internal/codex"
	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
	"github.com/omega-monitor/omega-monitor/internal/gemini"
	"github.com/omega-monitor/omega-monitor/internal/opencode"
	"github.com/omega-monitor/omega-monitor/internal/termagent"
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
	if want := "claude hooks: wrote our hook for Notification, PermissionRequest, Stop, StopFailure into " + settings; !strings.Contains(res.Stdout(), want) {
		t.Errorf("install --hooks --claude said %q, want %q", res.Stdout(), want)
	}
	if _, err := os.Stat(filepath.Join(home, ".gemini")); err == nil {
		t.Error("--claude wrote Gemini's settings too")
	}
	installIn(t, home, state, "--hooks", "--claude").Assert(t, icmd.Expected{Out: "claude hooks: up to date"})
	installIn(t, home, state, "--hooks", "--claude", "--uninstall").Assert(t, icmd.Expected{Out: "claude hooks: removed our hooks from " + settings})
	installIn(t, home, state, "--gemini").Assert(t, icmd.Expected{ExitCode: 2, Err: "--gemini, --opencode and --agent go with --hooks"})
	installIn(t, home, state, "--opencode").Assert(t, icmd.Expected{ExitCode: 2, Err: "--gemini, --opencode and --agent go with --hooks"})
	plugin := filepath.Join(home, ".config", "opencode", "plugin", "omega-monitor-wake.js")
	installIn(t, home, state, "--hooks", "--opencode").Assert(t, icmd.Expected{Out: "opencode hooks: wrote our plugin for permission.asked, permission.updated, question.asked, session.idle, session.error into " + plugin})
	installIn(t, home, state, "--hooks", "--opencode", "--uninstall").Assert(t, icmd.Expected{Out: "opencode hooks: removed our plugin " + plugin})
}

// TestRealClaudeHookWakesTheWatcher: with our hooks installed in the real
// Claude Code's user settings and the watcher at a minute's interval, a
// permission dialog is paged within seconds of being drawn, where the poll
// alone would take up to the minute: the
// PermissionRequest hook woke the loop, and the looks after the wake found
// the dialog as it was drawn.
func TestRealClaudeHookWakesTheWatcher(t *testing.T) {
	api := fakeapi.New(t)
	bin := omegaMonitor(t)
	claude := claudecode.Binary(t)
	t.Parallel()
	realProgram(t)
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

// installHooksIn runs install --hooks for one agent as its user would, with
// HOME (and the agent's other variables) pointing into the test's private
// home, and the state home the hook will name.
func installHooksIn(t *testing.T, bin, agent, stateHome string, env ...string) error {
	t.Helper()
	res := icmd.RunCmd(icmd.Command(bin, "install", "--hooks", "--"+agent),
		icmd.WithEnv(append([]string{"PATH=" + os.Getenv("PATH"), "OMEGA_MONITOR_HOME=" + stateHome}, env...)...))
	t.Logf("install --hooks --%s: %s%s", agent, res.Stdout(), res.Stderr())
	return res.Error
}

// drawnAt samples the screen every 100 ms until show holds, and returns
// when it first did.
func drawnAt(t *testing.T, capture func(testing.TB) string, what string, show func(string) bool) time.Time {
	t.Helper()
	for deadline := time.Now().Add(realTimeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if show(capture(t)) {
			return time.Now()
		}
	}
	t.Fatalf("%s never showed:\n%s", what, capture(t))
	return time.Time{}
}

// woken asserts that the loop printed a line holding want within seconds
// of since, the moment a hook fired for: at --interval 60 only a wake
// brings a poll that soon (the looks after an earlier wake are over, as
// the test made sure). It returns the lines so far.
func woken(t *testing.T, r *loopRun, from int, since time.Time, what, want string) []string {
	t.Helper()
	for deadline := since.Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		lines := r.waitLines(1, realTimeout)
		for _, l := range lines[min(from, len(lines)):] {
			if strings.Contains(l, want) {
				d := time.Since(since)
				t.Logf("%s → a poll that says %q: %.1fs (interval 60s)", what, want, d.Seconds())
				if d > 10*time.Second {
					t.Errorf("%s: the poll came %v after, want seconds (a wake), not the interval", what, d)
				}
				return lines
			}
		}
	}
	t.Fatalf("%s: no line with %q within 30s (interval 60s): no wake", what, want)
	return nil
}

// slowTurn makes a turn that answers for ten seconds: longer than the
// looks after the wake its prompt brought (0.5, 1, 2 and 4 s apart), so that
// a poll soon after its end can only come from a wake at that end.
var slowTurn = fakeapi.Rule{Match: "work a while", Reply: fakeapi.Slow(10 * time.Second)}

// codexApproval is the escalated command the fake Responses API asks the
// real Codex to run: outside the sandbox, so that Codex asks first.
func codexApproval(match, command string) fakeapi.Rule {
	esc := fakeapi.Bash(command, "")
	esc.Tool.Input = map[string]any{"command": command,
		"sandbox_permissions": "require_escalated", "justification": "Leave a marker file"}
	return fakeapi.Rule{Match: match, Reply: esc}
}

// startCodexWithHooks starts the real Codex with our hooks installed in
// its private CODEX_HOME, and answers its first question as a user would:
// the hooks are new, so Codex asks whether to trust them (a question the
// watcher pages, never answers). trust picks "Trust all and continue";
// without it, "Continue without trusting", and only notify runs.
func startCodexWithHooks(t *testing.T, bin, stateHome string, api *fakeapi.Server, trust bool) *termagent.Session {
	t.Helper()
	s := codex.Start(t, testenv.Tmux(t), codex.Config{Binary: codex.Pin.Binary(t), API: api.URL,
		Prepare: func(codexHome string) error {
			return installHooksIn(t, bin, "codex", stateHome, "HOME="+filepath.Dir(codexHome), "CODEX_HOME="+codexHome)
		}})
	screen := s.WaitFor(t, realTimeout, "the review of the new hooks", termagent.Contains("Hooks need review", "Trust all and continue"))
	if r := classify.Classify(classify.ParseScreen([]byte(screen)), classify.Options{}); r.State != classify.Question {
		t.Errorf("Codex's review of our new hooks reads %s, want QUESTION (paged, never answered):\n%s", r.State, r.Explain())
	}
	choice := "› 2. Trust all and continue"
	if !trust {
		choice = "› 3. Continue without trusting"
	}
	// The cursor moves one key at a time, once the dialog takes keys: the
	// choice is pressed only once the screen shows it selected.
	for deadline := time.Now().Add(realTimeout); !strings.Contains(s.Capture(t), choice); time.Sleep(300 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("Codex's review never showed %q selected:\n%s", choice, s.Capture(t))
		}
		s.Keys(t, "Down")
	}
	s.Keys(t, "Enter")
	s.WaitFor(t, realTimeout, "the composer", codex.Idle)
	return s
}

// TestRealCodexHookWakesTheWatcher: with our hooks installed in the real
// Codex's user files and trusted, and the watcher at a minute's interval,
// its approval dialog is paged within seconds of being drawn
// (PermissionRequest), and the turn's end brings a poll within seconds
// (Stop, and notify). Left untrusted, the hooks do not run, and notify
// alone still wakes the watcher at the end of a turn long enough for the
// looks after its start to be over.
func TestRealCodexHookWakesTheWatcher(t *testing.T) {
	t.Parallel()
	for _, trust := range []bool{true, false} {
		t.Run(map[bool]string{true: "trusted", false: "untrusted"}[trust], func(t *testing.T) {
			api := fakeapi.NewResponses(t, append([]fakeapi.Rule{codexApproval("escalate", fakeapi.BashCommand), slowTurn}, fakeapi.DefaultRules()...)...)
			bin := omegaMonitor(t)
			codex.Pin.Binary(t)
			t.Parallel()
			realProgram(t)
			home := t.TempDir()
			s := startCodexWithHooks(t, bin, home, api, trust)
			// The budget is 0: the idle screen at start is escalated,
			// never typed into; each later STALLED line is a poll.
			r := startLoop(t, loopOptions{target: s.Launch.Name, home: home, flags: []string{
				"--mux", s.Tmux.Mux, "--interval", "60", "--pane", s.Pane, "--work-probe", "echo 3", "--nudge-budget", "0"}})
			n := len(r.waitLines(1, realTimeout))
			time.Sleep(2 * time.Second) // into the minute's pause

			if trust {
				s.Type(t, "please escalate")
				drawn := drawnAt(t, s.Capture, "the approval dialog", termagent.Contains("Would you like to run the following command?"))
				lines := woken(t, r, n, drawn, "the dialog drawn", "QUESTION · escalated to the operator")
				n = len(lines)
				if _, err := os.Stat(filepath.Join(s.Launch.Dir, fakeapi.BashMarker)); err == nil {
					t.Errorf("%s ran before anyone answered", fakeapi.BashCommand)
				}
				s.Keys(t, "y") // the test approves, as the operator would
			} else {
				s.Type(t, "please work a while")
			}
			ended := drawnAt(t, s.Capture, "the turn's end", func(screen string) bool {
				return codex.Idle(screen) && strings.Contains(screen, "Worked for")
			})
			woken(t, r, n, ended, "the turn's end", " · STALLED · ")
		})
	}
}

// TestRealGeminiHookWakesTheWatcher: with our hooks in the real Gemini
// CLI's user settings and the watcher at a minute's interval, its approval
// dialog is paged within seconds of being drawn (Notification, of type
// ToolPermission), and a turn's end brings a poll within seconds
// (AfterAgent), the looks after the prompt's own wake long over. A
// cancelled turn has no hook: the poll is its net.
func TestRealGeminiHookWakesTheWatcher(t *testing.T) {
	api := fakeapi.NewGemini(t, append([]fakeapi.Rule{slowTurn}, fakeapi.DefaultRules()...)...)
	bin := omegaMonitor(t)
	geminiBin := gemini.Pin.Binary(t)
	t.Parallel()
	realProgram(t)
	home := t.TempDir()
	s := gemini.Start(t, testenv.Tmux(t), gemini.Config{Binary: geminiBin, API: api.URL,
		Prepare: func(agentHome string) error { return installHooksIn(t, bin, "gemini", home, "HOME="+agentHome) }})
	s.WaitFor(t, realTimeout, "the composer", gemini.Idle)
	r := startLoop(t, loopOptions{target: s.Launch.Name, home: home, flags: []string{
		"--mux", s.Tmux.Mux, "--interval", "60", "--pane", s.Pane, "--work-probe", "echo 3", "--nudge-budget", "0"}})
	n := len(r.waitLines(1, realTimeout))
	time.Sleep(2 * time.Second)

	s.Type(t, "now "+fakeapi.TriggerBash)
	drawn := drawnAt(t, s.Capture, "the approval dialog", termagent.Contains("Allow execution"))
	n = len(woken(t, r, n, drawn, "the dialog drawn", "QUESTION · escalated to the operator"))
	s.Keys(t, "Escape")
	s.WaitFor(t, realTimeout, "the cancelled turn", termagent.Contains("Request cancelled"))
	// The looks after the dialog's wake are over once it was paged; the
	// cancel itself wakes nobody.
	time.Sleep(2 * time.Second)
	n = len(r.waitLines(1, realTimeout))
	s.Type(t, "please work a while")
	ended := drawnAt(t, s.Capture, "the turn's end", termagent.Contains("step10."))
	woken(t, r, n, ended, "the turn's end", " · STALLED · ")
	if _, err := os.Stat(filepath.Join(s.Launch.Dir, fakeapi.BashMarker)); err == nil {
		t.Errorf("%s ran: the dialog was answered", fakeapi.BashCommand)
	}
}

// TestRealOpenCodePluginWakesTheWatcher: the real OpenCode, with our plugin
// installed by install --hooks --opencode in its user config, against the
// fake Chat Completions API. At --interval 60, its permission dialog is
// paged within seconds of being drawn (permission.asked), and a turn's end
// is polled within seconds (session.idle); the dialog is never answered.
func TestRealOpenCodePluginWakesTheWatcher(t *testing.T) {
	api := fakeapi.NewChat(t, append([]fakeapi.Rule{slowTurn}, fakeapi.DefaultRules()...)...)
	bin := omegaMonitor(t)
	ocBin := opencode.Pin.Binary(t)
	t.Parallel()
	home := t.TempDir()
	s := opencode.Start(t, testenv.Tmux(t), opencode.Config{Binary: ocBin, API: api.URL,
		Prepare: func(agentHome string) error { return installHooksIn(t, bin, "opencode", home, "HOME="+agentHome) }})
	s.WaitFor(t, realTimeout, "the input", opencode.Idle)
	r := startLoop(t, loopOptions{target: s.Launch.Name, home: home, flags: []string{
		"--mux", s.Tmux.Mux, "--interval", "60", "--pane", s.Pane, "--work-probe", "echo 3", "--nudge-budget", "0"}})
	n := len(r.waitLines(1, realTimeout))
	time.Sleep(2 * time.Second)

	s.Type(t, "now "+fakeapi.TriggerBash)
	drawn := drawnAt(t, s.Capture, "the permission dialog", termagent.Contains("Permission required"))
	n = len(woken(t, r, n, drawn, "the dialog drawn", "QUESTION · escalated to the operator"))
	s.Keys(t, "Escape")
	s.WaitFor(t, realTimeout, "the rejected command", func(screen string) bool { return !strings.Contains(screen, "Permission required") })
	// The looks after the dialog's wake are over once it was paged, and
	// those the reject's own turn end brought are over 4 s after it.
	time.Sleep(6 * time.Second)
	n = len(r.waitLines(1, realTimeout))
	s.Type(t, "please work a while")
	ended := drawnAt(t, s.Capture, "the turn's end", func(screen string) bool {
		return strings.Contains(screen, "step10.") && opencode.Idle(screen)
	})
	woken(t, r, n, ended, "the turn's end", " · STALLED · ")
	if _, err := os.Stat(filepath.Join(s.Launch.Dir, fakeapi.BashMarker)); err == nil {
		t.Errorf("%s ran: the dialog was answered", fakeapi.BashCommand)
	}
}
