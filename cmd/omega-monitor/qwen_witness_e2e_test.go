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
	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
	"github.com/omega-monitor/omega-monitor/internal/qwen"
	"github.com/omega-monitor/omega-monitor/internal/termagent"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// TestRealQwenRecordIsAWitness: the real Qwen Code's chat record is read
// as its own word on whether a turn is open, and can only stop a nudge.
// While a turn waits for its first token, the record says busy and the
// screen WORKING: they agree, and nothing is typed. After the turn, a
// record that lies (written in the pane's directory, fresh, saying a turn
// is open, with every frame mark in it) holds the nudge the screen would
// allow: the screen still reads STALLED, never WORKING, and no key is
// typed. With the lie gone, the same screen is nudged: the record was what
// held it.
func TestRealQwenRecordIsAWitness(t *testing.T) {
	testenv.EndToEnd(t)
	api := fakeapi.NewChat(t, fakeapi.TourRules()...)
	omegaMonitor(t)
	bin := qwen.Pin.Binary(t)
	t.Parallel()
	realProgram(t)
	s := qwen.Start(t, testenv.Tmux(t), qwen.Config{Binary: bin, API: api.URL})
	s.WaitFor(t, realTimeout, "the input", qwen.Idle)
	home := filepath.Join(s.Launch.Home, ".qwen")
	watch := func() *loopRun {
		return startLoop(t, loopOptions{target: s.Launch.Name, env: []string{"QWEN_HOME=" + home},
			flags: []string{"--mux", s.Tmux.Mux, "--interval", "1", "--work-probe", "echo 3", "--nudge-budget", "1", "--nudge-text", agentNudge}})
	}

	held := "please " + fakeapi.TriggerHold
	s.Type(t, held)
	s.WaitFor(t, realTimeout, "the spinner", termagent.Contains("esc to cancel"))
	r := watch()
	lines := r.waitLines(3, realTimeout)
	r.stop()
	if got := nudgedLines(lines); len(got) > 0 {
		t.Errorf("the loop nudged a Qwen Code waiting for its first token:\n%s", strings.Join(lines, "\n"))
	}
	if agreed, disagreed := witnessed(t, r); agreed == 0 {
		t.Errorf("the record agreed on %d polls, disagreed on %d: it was not read as the witness\n%s", agreed, disagreed, strings.Join(lines, "\n"))
	}

	s.WaitFor(t, realTimeout, "the answer", func(screen string) bool {
		return strings.Contains(screen, "Thought it through.") && qwen.Idle(screen)
	})
	lie := filepath.Join(home, "projects", "forged", "chats", "lie.jsonl")
	if err := os.MkdirAll(filepath.Dir(lie), 0o700); err != nil {
		t.Fatal(err)
	}
	marks := strings.Join([]string{capture.StatusEnd, capture.PaneMark, capture.QwenChatEnd, capture.CodexLogMark, capture.TitleMark + " ✋"}, "\n")
	record := fmt.Sprintf(`{"uuid":"x","sessionId":"x","timestamp":%q,"type":"user","cwd":%q,"version":"0.24.4","message":{"role":"user","parts":[{"text":%q}]}}`+"\n",
		time.Now().UTC().Format(time.RFC3339Nano), s.Launch.Dir, marks+"\n1. Yes\n")
	if err := os.WriteFile(lie, []byte(record+marks+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = watch()
	lines = r.waitLine("not nudged: the agent's own status says busy, though the screen reads STALLED", realTimeout)
	lines = r.waitLines(len(lines)+2, realTimeout)
	r.stop()
	for _, l := range lines {
		if !strings.Contains(l, " · STALLED · ") {
			t.Errorf("the lying record moved the verdict: %s", l)
		}
	}
	if got := nudgedLines(lines); len(got) > 0 {
		t.Errorf("the loop nudged under a record saying the turn is open:\n%s", strings.Join(lines, "\n"))
	}
	if screen := s.Capture(t); strings.Contains(screen, agentNudge) || !qwen.Idle(screen) {
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
		if !strings.HasPrefix(p, "Managed memory has") && !strings.HasPrefix(p, "[SUGGESTION MODE:") {
			prompts = append(prompts, p)
		}
	}
	if want := []string{held, agentNudge}; !slices.Equal(prompts, want) {
		t.Errorf("the fake API saw %q, want %q", prompts, want)
	}
}
