package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/internal/board"
	"github.com/omega-monitor/omega-monitor/internal/board/render"
	"github.com/omega-monitor/omega-monitor/internal/claudecode"
	"github.com/omega-monitor/omega-monitor/internal/codex"
	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
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

	f, out := oneWatcherFleet(t, s.Home, r.state)
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
	compact := render.Compact(f)
	t.Logf("the compact board:\n%s", compact)
	if !slices.ContainsFunc(strings.Split(compact, "\n"), func(l string) bool { return strings.Contains(l, "tools:3 reason:0 text:4 wait:1") }) {
		t.Errorf("the compact board has no line with the counts:\n%s", compact)
	}
}

// TestRealCodexVitals: the real Codex CLI runs two turns against the fake
// Responses API (one that runs a command between two replies, one that
// only replies) and writes its own session log; a watcher polling with
// Codex's CODEX_HOME counts what the turns did, and so does a watcher of
// the same pane over the real sshd, whose host's ~/.codex is Codex's: the
// counts come from the log's end the capture carried. status --json and the
// compact board show them.
func TestRealCodexVitals(t *testing.T) {
	t.Parallel()
	api := fakeapi.NewResponses(t)
	omegaMonitor(t)
	bin := codex.Pin.Binary(t)
	realProgram(t)
	s := codex.Start(t, testenv.Tmux(t), codex.Config{Binary: bin, API: api.URL})
	s.WaitFor(t, realTimeout, "the composer", codex.Idle)
	s.Type(t, "please "+fakeapi.TriggerBash)
	s.Settle(t, realTimeout, "the first turn's end", true, func(screen string) bool {
		return codex.Idle(screen) && strings.Contains(screen, "Worked for")
	})
	s.Type(t, "and now say hello")
	s.Settle(t, realTimeout, "the second turn's end", true, func(screen string) bool {
		return codex.Idle(screen) && strings.Contains(screen, "Done: nothing more")
	})
	if _, err := os.Stat(filepath.Join(s.Launch.Dir, fakeapi.BashMarker)); err != nil {
		t.Fatalf("the command did not run: %v\n%s", err, s.Capture(t))
	}
	logs, _ := filepath.Glob(filepath.Join(s.Launch.Home, ".codex", "sessions", "*", "*", "*", "rollout-*.jsonl"))
	if len(logs) != 1 {
		t.Fatalf("Codex's session logs: %q, want one", logs)
	}
	// Two replies and a tool call in the first turn, one reply in the
	// second; each turn's end is a wait.
	want := board.Vitals{Tools: 1, Text: 3, Wait: 2, Agent: "codex"}

	// Blocked (no work left): the watcher types nothing, so the turns
	// above are all the log holds.
	vitalsOf := func(t *testing.T, r *loopRun) board.Watcher {
		t.Helper()
		r.waitLines(2, realTimeout)
		r.stop()
		f, out := oneWatcherFleet(t, s.Launch.Home, r.state)
		w := f.Watchers[0]
		if w.Vitals == nil {
			t.Fatalf("no vitals (%s)\n%s\nthe log:\n%s", w.VitalsError, out, readFile(t, logs[0]))
		}
		got := board.Vitals{Tools: w.Vitals.Tools, Reason: w.Vitals.Reason, Text: w.Vitals.Text, Wait: w.Vitals.Wait, Agent: w.Vitals.Agent}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("vitals (-want +got):\n%s\nthe log:\n%s", diff, readFile(t, logs[0]))
		}
		compact := render.Compact(f)
		t.Logf("the compact board:\n%s", compact)
		if !slices.ContainsFunc(strings.Split(compact, "\n"), func(l string) bool { return strings.Contains(l, "tools:1 reason:0 text:3 wait:2") }) {
			t.Errorf("the compact board has no line with the counts:\n%s", compact)
		}
		return w
	}
	t.Run("local", func(t *testing.T) {
		r := startLoop(t, loopOptions{target: s.Launch.Name, env: []string{"CODEX_HOME=" + filepath.Join(s.Launch.Home, ".codex")},
			flags: []string{"--mux", s.Tmux.Mux, "--interval", "1", "--work-probe", "echo 0"}})
		w := vitalsOf(t, r)
		if w.Vitals.Source != logs[0] {
			t.Errorf("vitals read from %s, want Codex's log %s", w.Vitals.Source, logs[0])
		}
	})
	t.Run("over ssh", func(t *testing.T) {
		cfg := testenv.NewSSHConfig(t)
		testenv.SSHD(t, cfg, "box", "HOME="+s.Launch.Home, "OMEGA_MONITOR_MUX="+s.Tmux.Mux, "LANG=C.UTF-8")
		r := startLoop(t, loopOptions{target: "box:" + s.Launch.Name,
			flags: []string{"--ssh-config", cfg.Path, "--interval", "1", "--work-probe", "echo 0"}})
		w := vitalsOf(t, r)
		rel, _ := filepath.Rel(filepath.Join(s.Launch.Home, ".codex", "sessions"), logs[0])
		if w.Vitals.Source != "$CODEX_HOME/sessions/"+rel {
			t.Errorf("vitals read from %s, want Codex's log %s on the host", w.Vitals.Source, rel)
		}
	})
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// oneWatcherFleet is the fleet status --json shows, one watcher, under the
// state home of state with the agent's HOME home, and the JSON it came in.
func oneWatcherFleet(t *testing.T, home, state string) (board.Fleet, []byte) {
	t.Helper()
	cmd := exec.Command(omegaMonitor(t), "status", "--json")
	cmd.Env = []string{"HOME=" + home, "OMEGA_MONITOR_HOME=" + filepath.Dir(state), "PATH=/usr/bin:/bin"}
	out, _ := cmd.Output() // exit 3: the watcher no longer runs
	var f board.Fleet
	if err := json.Unmarshal(out, &f); err != nil || len(f.Watchers) != 1 {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	return f, out
}
