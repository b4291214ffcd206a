package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/capture"
	"github.com/omega-monitor/omega-monitor/internal/copilot"
	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
	"github.com/omega-monitor/omega-monitor/internal/qwen"
	"github.com/omega-monitor/omega-monitor/internal/termagent"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// witnessAgent is a real program whose own log is read as its witness.
type witnessAgent struct {
	name   string
	binary func(testing.TB) string
	start  func(t *testing.T, tmux *testenv.TmuxServer, bin, api string) *termagent.Session
	idle   func(string) bool
	// spinner is what its screen shows while a turn waits for its first
	// token.
	spinner string
	// home is the environment variable naming where it keeps its logs,
	// and the folder under its HOME it defaults to; logs the glob of its
	// logs under it.
	home, folder, logs string
	// lie writes, under its home, a log of the pane's directory dir that
	// says a turn is open now, holding text.
	lie func(t *testing.T, home, dir, text string) string
	// side says a prompt is one the program sends by itself.
	side func(string) bool
}

var witnessAgents = []witnessAgent{
	{
		name: "qwen", binary: qwen.Pin.Binary, idle: qwen.Idle, spinner: "esc to cancel", home: "QWEN_HOME", folder: ".qwen",
		logs: "projects/*/chats/*.jsonl",
		start: func(t *testing.T, tmux *testenv.TmuxServer, bin, api string) *termagent.Session {
			return qwen.Start(t, tmux, qwen.Config{Binary: bin, API: api})
		},
		lie: func(t *testing.T, home, dir, text string) string {
			return writeLie(t, filepath.Join(home, "projects", "forged", "chats", "lie.jsonl"), fmt.Sprintf(
				`{"uuid":"x","sessionId":"x","timestamp":%q,"type":"user","cwd":%q,"version":"0.24.4","message":{"role":"user","parts":[{"text":%q}]}}`+"\n",
				time.Now().UTC().Format(time.RFC3339Nano), dir, text)+text+"\n")
		},
		side: func(p string) bool {
			return strings.HasPrefix(p, "Managed memory has") || strings.HasPrefix(p, "[SUGGESTION MODE:")
		},
	},
	{
		name: "copilot", binary: copilot.Pin.Binary, idle: copilot.Idle, spinner: "Working", home: "COPILOT_HOME", folder: ".copilot",
		logs: "session-state/*/events.jsonl",
		start: func(t *testing.T, tmux *testenv.TmuxServer, bin, api string) *termagent.Session {
			return copilot.Start(t, tmux, copilot.Config{Binary: bin, API: api})
		},
		lie: func(t *testing.T, home, dir, text string) string {
			now := time.Now().UTC().Format(time.RFC3339Nano)
			return writeLie(t, filepath.Join(home, "session-state", "forged", "events.jsonl"), fmt.Sprintf(
				`{"type":"session.start","data":{"context":{"cwd":%q}},"id":"s","timestamp":%q}`+"\n"+
					`{"type":"user.message","data":{"content":%q},"id":"u","timestamp":%q}`+"\n"+
					`{"type":"assistant.turn_start","data":{},"id":"t","timestamp":%q}`+"\n", dir, now, text, now, now)+text+"\n")
		},
		side: func(string) bool { return false },
	},
}

func writeLie(t *testing.T, path, text string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRealAgentLogIsAWitness: the real Qwen Code's chat record and the
// real Copilot CLI's events log are read as each program's own word on
// whether a turn is open, and can only stop a nudge. While a turn waits
// for its first token, the log says busy and the screen WORKING: they
// agree, and nothing is typed. After the turn, a log that lies (written in
// the pane's directory, fresh, saying a turn is open, with frame marks and
// a menu in it) holds the nudge the screen would allow: the screen still
// reads STALLED, never WORKING, and no key is typed. With the lie gone,
// the same screen is nudged: the log was what held it.
func TestRealAgentLogIsAWitness(t *testing.T) {
	testenv.EndToEnd(t)
	t.Parallel()
	for _, a := range witnessAgents {
		t.Run(a.name, func(t *testing.T) {
			api := fakeapi.NewChat(t, fakeapi.TourRules()...)
			omegaMonitor(t)
			bin := a.binary(t)
			t.Parallel()
			realProgram(t)
			s := a.start(t, testenv.Tmux(t), bin, api.URL)
			s.WaitFor(t, realTimeout, "the input", a.idle)
			home := filepath.Join(s.Launch.Home, a.folder)
			watch := func() *loopRun {
				return startLoop(t, loopOptions{target: s.Launch.Name, env: []string{a.home + "=" + home},
					flags: []string{"--mux", s.Tmux.Mux, "--interval", "1", "--work-probe", "echo 3", "--nudge-budget", "1", "--nudge-text", agentNudge}})
			}

			held := "please " + fakeapi.TriggerHold
			s.Type(t, held)
			s.WaitFor(t, realTimeout, "the spinner", termagent.Contains(a.spinner))
			// The program writes its log a moment after it draws the
			// spinner, more on a loaded machine.
			logged := func() bool {
				logs, _ := filepath.Glob(filepath.Join(home, a.logs))
				for _, l := range logs {
					if b, err := os.ReadFile(l); err == nil && strings.Contains(string(b), held) {
						return true
					}
				}
				return false
			}
			for deadline := time.Now().Add(realTimeout); !logged(); time.Sleep(100 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("no log under %s holds the prompt", home)
				}
			}
			r := watch()
			lines := r.waitLines(3, realTimeout)
			r.stop()
			if got := nudgedLines(lines); len(got) > 0 {
				t.Errorf("the loop nudged a turn waiting for its first token:\n%s", strings.Join(lines, "\n"))
			}
			if agreed, disagreed := witnessed(t, r); agreed == 0 {
				t.Errorf("the log agreed on %d polls, disagreed on %d: it was not read as the witness\n%s", agreed, disagreed, strings.Join(lines, "\n"))
			}

			s.WaitFor(t, realTimeout, "the answer", func(screen string) bool {
				return strings.Contains(screen, "Thought it through.") && a.idle(screen)
			})
			marks := strings.Join([]string{capture.StatusEnd, capture.PaneMark, capture.QwenChatEnd, "[omega-monitor:events-end copilot-cli]",
				capture.CodexLogMark, capture.TitleMark + " ✋", "❯ 1. Yes"}, "\n")
			lie := a.lie(t, home, s.Launch.Dir, marks)
			r = watch()
			lines = r.waitLine("not nudged: the agent's own status says busy, though the screen reads STALLED", realTimeout)
			lines = r.waitLines(len(lines)+2, realTimeout)
			r.stop()
			for _, l := range lines {
				if !strings.Contains(l, " · STALLED · ") {
					t.Errorf("the lying log moved the verdict: %s", l)
				}
			}
			if got := nudgedLines(lines); len(got) > 0 {
				t.Errorf("the loop nudged under a log saying the turn is open:\n%s", strings.Join(lines, "\n"))
			}
			if screen := s.Capture(t); strings.Contains(screen, agentNudge) || !a.idle(screen) {
				t.Errorf("a key reached the screen:\n%s", screen)
			}

			if err := os.Remove(lie); err != nil {
				t.Fatal(err)
			}
			r = watch()
			r.waitNudged("1/1", realTimeout)
			r.stop()
			deadline := time.Now().Add(realTimeout)
			for !slices.Contains(api.Prompts(), agentNudge) && time.Now().Before(deadline) {
				time.Sleep(200 * time.Millisecond)
			}
			var prompts []string
			for _, p := range api.Prompts() {
				if !a.side(p) {
					prompts = append(prompts, p)
				}
			}
			if want := []string{held, agentNudge}; !slices.Equal(prompts, want) {
				t.Errorf("the fake API saw %q, want %q", prompts, want)
			}
		})
	}
}
