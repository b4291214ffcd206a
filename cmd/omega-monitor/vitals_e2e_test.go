package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/board"
	"github.com/omega-monitor/omega-monitor/internal/claudecode"
	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
)

// TestRealClaudeVitals: the real Claude Code runs a scripted turn (three
// commands, each after a short text, then a closing reply) and writes its
// own transcript; the watcher, polling with Claude Code's HOME, finds the
// transcript through the pane's status file and counts what the turn did,
// which status --json and the compact board show.
func TestRealClaudeVitals(t *testing.T) {
	const runs = 3
	api := fakeapi.NewScripted(t, func(turn fakeapi.Turn) (fakeapi.Reply, bool) {
		bash := 0
		for _, c := range turn.Calls {
			if c == "Bash" {
				bash++
			}
		}
		switch {
		case !strings.Contains(turn.First, "run three commands"):
			return fakeapi.Reply{}, false
		case bash < runs:
			return fakeapi.Call("Bash", map[string]any{"command": "true", "description": "step"}), true
		}
		return fakeapi.Text("All three ran."), true
	})
	s := startClaude(t, api.Server, claudecode.Bypass)
	turn(t, s, "please run three commands", shows("All three ran."))

	// Blocked (no work left): the watcher types nothing, so the turn
	// above is all the transcript holds.
	r := startLoop(t, loopOptions{target: s.Name, env: []string{"HOME=" + s.Home},
		flags: []string{"--mux", s.Tmux.Mux, "--interval", "1", "--work-probe", "echo 0"}})
	r.waitLines(2, realTimeout)
	r.stop()

	cmd := exec.Command(omegaMonitor(t), "status", "--json")
	cmd.Env = []string{"HOME=" + s.Home, "OMEGA_MONITOR_HOME=" + filepath.Dir(r.state), "PATH=/usr/bin:/bin"}
	out, _ := cmd.Output() // exit 3: the watcher no longer runs
	var f board.Fleet
	if err := json.Unmarshal(out, &f); err != nil || len(f.Watchers) != 1 {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	w := f.Watchers[0]
	if w.Vitals == nil {
		t.Fatalf("no vitals (%s)\n%s", w.VitalsError, out)
	}
	got := board.Vitals{Tools: w.Vitals.Tools, Reason: w.Vitals.Reason, Text: w.Vitals.Text, Wait: w.Vitals.Wait, Agent: w.Vitals.Agent}
	want := board.Vitals{Tools: runs, Text: runs + 1, Wait: 1, Agent: "claude"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("vitals (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(w.Vitals.Source, filepath.Join(s.Home, ".claude", "projects")+"/") || !strings.HasSuffix(w.Vitals.Source, ".jsonl") {
		t.Errorf("vitals read from %s, want Claude Code's transcript", w.Vitals.Source)
	}
	compact := board.Compact(f)
	t.Logf("the compact board:\n%s", compact)
	if !slices.ContainsFunc(strings.Split(compact, "\n"), func(l string) bool { return strings.Contains(l, "tools:3 reason:0 text:4 wait:1") }) {
		t.Errorf("the compact board has no line with the counts:\n%s", compact)
	}
}
