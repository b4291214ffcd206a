package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/codex"
	"github.com/omega-monitor/omega-monitor/internal/copilot"
	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
	"github.com/omega-monitor/omega-monitor/internal/gemini"
	"github.com/omega-monitor/omega-monitor/internal/opencode"
	"github.com/omega-monitor/omega-monitor/internal/pi"
	"github.com/omega-monitor/omega-monitor/internal/qwen"
	"github.com/omega-monitor/omega-monitor/internal/termagent"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// End-to-end tests of the poll loop against the real Codex CLI and Gemini
// CLI (internal/codex, internal/gemini), each talking to its fake API: a
// nudge reaches the model exactly, and nothing reaches an approval dialog,
// whose command (a canary) never runs.

// agentNudge is the nudge typed into Codex and Gemini: quotes, ';' and
// non-ASCII, which must arrive as they are. It has no '$' or '@', which
// open pickers in these composers.
const agentNudge = `keep going: "step 2"; then report — ünïcödé ✓`

// realAgent is one of the two programs, started idle against its fake API.
type realAgent struct {
	name  string
	start func(t *testing.T) (*termagent.Session, *fakeapi.Server)
	// idle says the program waits at its empty composer after a turn.
	idle func(screen string) bool
	// approval says the program's command approval dialog is up; ""
	// for a program that asks none.
	approval string
	// bash is the prompt that brings the approval.
	bash string
	// side says a prompt is one the program sends by itself, besides the
	// turns (Qwen Code's memory agent and its next-prompt suggestion).
	side func(prompt string) bool
}

var realAgents = []realAgent{
	{
		name: "codex",
		start: func(t *testing.T) (*termagent.Session, *fakeapi.Server) {
			esc := fakeapi.Bash(fakeapi.BashCommand, "")
			esc.Tool.Input = map[string]any{"command": fakeapi.BashCommand,
				"sandbox_permissions": "require_escalated", "justification": "Leave a marker file"}
			api := fakeapi.NewResponses(t, append([]fakeapi.Rule{{Match: "escalate", Reply: esc}}, fakeapi.DefaultRules()...)...)
			omegaMonitor(t)
			bin := codex.Pin.Binary(t)
			t.Parallel()
			realProgram(t)
			s := codex.Start(t, testenv.Tmux(t), codex.Config{Binary: bin, API: api.URL})
			s.WaitFor(t, realTimeout, "the composer", codex.Idle)
			return s, api
		},
		idle:     func(screen string) bool { return codex.Idle(screen) && strings.Contains(screen, "Worked for") },
		approval: "Would you like to run the following command?",
		bash:     "please escalate",
	},
	{
		name: "gemini",
		start: func(t *testing.T) (*termagent.Session, *fakeapi.Server) {
			api := fakeapi.NewGemini(t)
			omegaMonitor(t)
			bin := gemini.Pin.Binary(t)
			t.Parallel()
			realProgram(t)
			s := gemini.Start(t, testenv.Tmux(t), gemini.Config{Binary: bin, API: api.URL})
			s.WaitFor(t, realTimeout, "the composer", gemini.Idle)
			return s, api
		},
		idle:     func(screen string) bool { return gemini.Idle(screen) && strings.Contains(screen, "✦ ") },
		approval: "Allow execution",
		bash:     "now " + fakeapi.TriggerBash,
	},
	{
		// Copilot CLI in its BYOK mode, on the fake Chat Completions API.
		name: "copilot",
		start: onChat(copilot.Pin.Binary, func(t *testing.T, tmux *testenv.TmuxServer, bin, api string) *termagent.Session {
			return copilot.Start(t, tmux, copilot.Config{Binary: bin, API: api})
		}, copilot.Idle),
		idle:     func(screen string) bool { return copilot.Idle(screen) && strings.Contains(screen, " ● ") },
		approval: "Do you want to run this command?",
		bash:     "now " + fakeapi.TriggerBash,
	},
	{
		// Qwen Code in its default approval mode, on the fake Chat
		// Completions API.
		name: "qwen",
		start: onChat(qwen.Pin.Binary, func(t *testing.T, tmux *testenv.TmuxServer, bin, api string) *termagent.Session {
			return qwen.Start(t, tmux, qwen.Config{Binary: bin, API: api})
		}, qwen.Idle),
		idle:     func(screen string) bool { return qwen.Idle(screen) && strings.Contains(screen, "◆") },
		approval: "Allow execution of:",
		bash:     "now " + fakeapi.TriggerBash,
		side: func(p string) bool {
			return strings.HasPrefix(p, "Managed memory has") || strings.HasPrefix(p, "[SUGGESTION MODE:")
		},
	},
	{
		// OpenCode asking before a shell command, on the fake Chat
		// Completions API.
		name: "opencode",
		start: onChat(opencode.Pin.Binary, func(t *testing.T, tmux *testenv.TmuxServer, bin, api string) *termagent.Session {
			return opencode.Start(t, tmux, opencode.Config{Binary: bin, API: api})
		}, opencode.Idle),
		idle:     func(screen string) bool { return opencode.Idle(screen) && strings.Contains(screen, "▣  ") },
		approval: "Permission required",
		bash:     "now " + fakeapi.TriggerBash,
	},
	{
		// Pi asks no permission before a tool: no approval dialog.
		name: "pi",
		start: onChat(pi.Pin.Binary, func(t *testing.T, tmux *testenv.TmuxServer, bin, api string) *termagent.Session {
			return pi.Start(t, tmux, pi.Config{Binary: bin, API: api})
		}, pi.Idle),
		idle: func(screen string) bool { return pi.Idle(screen) && strings.Contains(screen, "↑") },
	},
}

// onChat is the start of a program on the fake Chat Completions API:
// binary finds it, start runs it against the API's URL, idle says its
// input is up.
func onChat(binary func(testing.TB) string, start func(t *testing.T, tmux *testenv.TmuxServer, bin, api string) *termagent.Session,
	idle func(string) bool) func(t *testing.T) (*termagent.Session, *fakeapi.Server) {
	return func(t *testing.T) (*termagent.Session, *fakeapi.Server) {
		api := fakeapi.NewChat(t)
		omegaMonitor(t)
		bin := binary(t)
		t.Parallel()
		realProgram(t)
		s := start(t, testenv.Tmux(t), bin, api.URL)
		s.WaitFor(t, realTimeout, "the input", idle)
		return s, api
	}
}

func watchAgent(t *testing.T, s *termagent.Session, flags ...string) *loopRun {
	t.Helper()
	return startLoop(t, loopOptions{target: s.Launch.Name, flags: append([]string{
		"--mux", s.Tmux.Mux, "--interval", "1", "--work-probe", "echo 3"}, flags...)})
}

// TestRealAgentsIdleGetExactlyTheBudget: each program idle after a finished
// turn, with work left, receives exactly the budget of nudges, each reaching
// the model as the next user message byte for byte.
func TestRealAgentsIdleGetExactlyTheBudget(t *testing.T) {
	testenv.EndToEnd(t)
	t.Parallel()
	for _, a := range realAgents {
		t.Run(a.name, func(t *testing.T) {
			s, api := a.start(t)
			setup := "start on the first step"
			s.Type(t, setup)
			s.Settle(t, realTimeout, "the turn's end", true, a.idle)

			r := watchAgent(t, s, "--nudge-budget", "2", "--nudge-text", agentNudge)
			lines := r.waitLine("nudge budget spent", 2*realTimeout)
			lines = r.waitLines(len(lines)+3, realTimeout)
			r.stop()
			if got := nudgedLines(lines); len(got) != 2 {
				t.Errorf("the loop nudged %d times, want the budget of 2:\n%s", len(got), strings.Join(lines, "\n"))
			}
			// The last nudge's turn may still be on its way to the model.
			deadline := time.Now().Add(realTimeout)
			want := []string{setup, agentNudge, agentNudge}
			prompts := func() []string {
				return slices.DeleteFunc(api.Prompts(), func(p string) bool { return a.side != nil && a.side(p) })
			}
			for !slices.Equal(prompts(), want) && time.Now().Before(deadline) {
				time.Sleep(250 * time.Millisecond)
			}
			if got := prompts(); !slices.Equal(got, want) {
				t.Errorf("the fake API saw the user texts %q, want exactly %q\nscreen:\n%s", got, want, s.Capture(t))
			}
		})
	}
}

// TestRealAgentsApprovalGetsNothing: with the loop running, poll after poll,
// nothing is typed into the approval dialog: it is still up, the model heard
// nothing more, and the canary command it asks to run never ran.
func TestRealAgentsApprovalGetsNothing(t *testing.T) {
	t.Parallel()
	for _, a := range realAgents {
		t.Run(a.name, func(t *testing.T) {
			if a.approval == "" {
				t.Skipf("%s asks no approval before a tool", a.name)
			}
			s, api := a.start(t)
			s.Type(t, a.bash)
			s.Settle(t, realTimeout, "the approval dialog", true, termagent.Contains(a.approval))
			n := len(api.Requests())
			r := watchAgent(t, s, "--nudge-budget", "2", "--nudge-text", agentNudge)
			lines := r.waitLines(6, realTimeout)
			r.stop()
			for _, l := range lines {
				if !strings.Contains(l, " · QUESTION · ") {
					t.Errorf("line %q: want QUESTION on every poll of the dialog", l)
				}
			}
			if al := r.alerts(); len(al) != 1 || !strings.Contains(al[0], "QUESTION") {
				t.Errorf("alerts = %q, want the dialog escalated once", al)
			}
			if screen := s.Capture(t); !strings.Contains(screen, a.approval) {
				t.Errorf("the dialog is gone:\n%s", screen)
			}
			if got := requestsSince(api, n); len(got) > 0 {
				t.Errorf("the fake API received requests after the dialog appeared:\n%s", strings.Join(got, "\n"))
			}
			if _, err := os.Stat(filepath.Join(s.Launch.Dir, fakeapi.BashMarker)); err == nil {
				t.Errorf("the canary %s ran: the approval dialog was answered", fakeapi.BashCommand)
			}
		})
	}
}

// TestRealCodexStreamGetsNothing: while the real Codex streams an answer
// (no status line on its screen), the loop types nothing. With Codex's own
// session log read as the second witness, the log says its turn is open:
// WORKING. Without it, the screen with no end line under the answer is no
// evidence by itself (issue 35): it is looked at again, and the answer
// growing between the looks is WORKING.
func TestRealCodexStreamGetsNothing(t *testing.T) {
	t.Parallel()
	for _, withLog := range []bool{true, false} {
		t.Run(fmt.Sprintf("log %v", withLog), func(t *testing.T) {
			api := fakeapi.NewResponses(t, append([]fakeapi.Rule{{Match: "stream", Reply: fakeapi.Slow(90 * time.Second)}}, fakeapi.DefaultRules()...)...)
			omegaMonitor(t)
			bin := codex.Pin.Binary(t)
			t.Parallel()
			realProgram(t)
			s := codex.Start(t, testenv.Tmux(t), codex.Config{Binary: bin, API: api.URL})
			s.WaitFor(t, realTimeout, "the composer", codex.Idle)
			s.Type(t, "please stream")
			s.WaitFor(t, realTimeout, "the stream", termagent.Contains("step2"))
			var env []string
			if withLog {
				// The loop runs where Codex keeps its session logs.
				env = []string{"CODEX_HOME=" + filepath.Join(s.Launch.Home, ".codex")}
			}
			r := startLoop(t, loopOptions{target: s.Launch.Name, env: env,
				flags: []string{"--mux", s.Tmux.Mux, "--interval", "1", "--work-probe", "echo 3", "--nudge-budget", "2", "--nudge-text", agentNudge}})
			lines := r.waitLines(6, realTimeout)
			r.stop()
			if got := nudgedLines(lines); len(got) > 0 {
				t.Errorf("the loop nudged a streaming Codex:\n%s", strings.Join(lines, "\n"))
			}
			working := 0
			for _, l := range lines {
				if strings.Contains(l, " · WORKING · ") {
					working++
				}
			}
			if working < 3 {
				t.Errorf("the stream read WORKING on %d of %d looks:\n%s", working, len(lines), strings.Join(lines, "\n"))
			}
			if got := api.Prompts(); !slices.Equal(got, []string{"please stream"}) {
				t.Errorf("the fake API saw %q, want only the first prompt", got)
			}
			if agreed, disagreed := witnessed(t, r); withLog && agreed+disagreed == 0 {
				t.Errorf("Codex's session log was never read as the second witness")
			}
			if screen := s.Capture(t); !strings.Contains(screen, "step") || strings.Contains(screen, agentNudge) {
				t.Errorf("the stream was disturbed:\n%s", screen)
			}
		})
	}
}

// TestRealGeminiSwallowedEnterIsNotRetyped: the first Enter the loop sends
// to the real Gemini CLI is lost (as Gemini loses one while it redraws; here
// the multiplexer drops it). The next poll finds our text still in the
// input box and sends only Enter: the text reaches the model once, never
// typed twice.
func TestRealGeminiSwallowedEnterIsNotRetyped(t *testing.T) {
	a := realAgents[1]
	s, api := a.start(t)
	setup := "start on the first step"
	s.Type(t, setup)
	s.Settle(t, realTimeout, "the turn's end", true, a.idle)

	dir := t.TempDir()
	dropped := filepath.Join(dir, "dropped")
	lossy := filepath.Join(dir, "mux")
	// The key goes as the multiplexer's if-shell, its command the
	// send-keys: the first one that sends Enter is dropped.
	wrapper := "#!/bin/sh\nenter=; for a in \"$@\"; do case $a in 'send-keys '*' Enter') enter=1 ;; esac; done\n" +
		`if [ "$1" = if-shell ] && [ -n "$enter" ] && [ ! -e ` + coord.ShellQuote(dropped) + ` ]; then : >` + coord.ShellQuote(dropped) + "; exit 0; fi\n" +
		"exec " + coord.ShellQuote(s.Tmux.Mux) + " \"$@\"\n"
	if err := os.WriteFile(lossy, []byte(wrapper), 0o700); err != nil {
		t.Fatal(err)
	}
	r := startLoop(t, loopOptions{target: s.Launch.Name, flags: []string{
		"--mux", lossy, "--interval", "1", "--work-probe", "echo 3", "--nudge-budget", "2", "--nudge-text", agentNudge}})
	lines := r.waitLine("Enter only", 2*realTimeout)
	lines = r.waitLines(len(lines)+2, realTimeout) // the Enter goes out after its line
	r.stop()
	if _, err := os.Stat(dropped); err != nil {
		t.Fatalf("no Enter was dropped: %v", err)
	}
	want := []string{setup, agentNudge}
	deadline := time.Now().Add(realTimeout)
	for !slices.Equal(api.Prompts(), want) && time.Now().Before(deadline) {
		time.Sleep(250 * time.Millisecond)
	}
	if got := api.Prompts(); !slices.Equal(got, want) {
		t.Errorf("the fake API saw %q, want exactly %q\n%s", got, want, strings.Join(lines, "\n"))
	}
	if screen := s.Capture(t); strings.Count(screen, "keep going") > 1 {
		t.Errorf("the nudge was typed twice:\n%s", screen)
	}
}
