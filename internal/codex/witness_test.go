package codex_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/codex"
	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
	"github.com/omega-monitor/omega-monitor/internal/termagent"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
	"github.com/omega-monitor/omega-monitor/probe"
)

// rolloutWitness reads the agent's own word from the session log the real
// Codex writes under its CODEX_HOME.
func rolloutWitness(t *testing.T, s *termagent.Session) (probe.Witness, error) {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(s.Launch.Home, ".codex", "sessions", "*", "*", "*", "rollout-*.jsonl"))
	if len(logs) != 1 {
		t.Fatalf("want one Codex session log, found %q", logs)
	}
	data, err := os.ReadFile(logs[0])
	if err != nil {
		t.Fatal(err)
	}
	return probe.ParseWitness(data, "", time.Now())
}

// TestRealCodexRolloutWitness: while an answer streams (and the screen
// shows no status line), the real Codex's session log says the turn is
// open; after Esc it says the turn ended.
func TestRealCodexRolloutWitness(t *testing.T) {
	bin := codex.Pin.Binary(t)
	api := fakeapi.NewResponses(t, append([]fakeapi.Rule{{Match: triggerStream, Reply: fakeapi.Slow(60 * time.Second)}}, fakeapi.DefaultRules()...)...)
	s := codex.Start(t, testenv.Tmux(t), codex.Config{Binary: bin, API: api.URL})
	s.WaitFor(t, 2*time.Minute, "the composer", codex.Idle)
	s.Type(t, "please "+triggerStream)
	s.WaitFor(t, 2*time.Minute, "the stream", termagent.Contains("step3"))
	if w, err := rolloutWitness(t, s); err != nil || w.Status != "busy" || w.Version != codex.Version {
		t.Errorf("while the answer streams, the Codex log says %+v (%v), want busy from %s", w, err, codex.Version)
	}
	s.Keys(t, "Escape")
	s.WaitFor(t, 2*time.Minute, "the interrupt", termagent.Contains("Conversation interrupted"))
	var w probe.Witness
	var err error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		if w, err = rolloutWitness(t, s); err == nil && w.Status == "idle" {
			return
		}
	}
	t.Errorf("after Esc, the Codex log says %+v (%v), want idle", w, err)
}
