package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	gtpoll "gotest.tools/v3/poll"

	"github.com/omega-monitor/omega-monitor/internal/board"
	"github.com/omega-monitor/omega-monitor/internal/board/render"
	"github.com/omega-monitor/omega-monitor/internal/poll"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

func readDiff(t *testing.T, state string) board.Diff {
	t.Helper()
	var d board.Diff
	if err := statedir.Dir(state).ReadRecord(statedir.DiffFile, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestTickAsksForTheDiffAndRecordsIt: a framed tick names the pane's
// directory, and asks for a measure (the last action) when one is due; the
// next tick records what the loop hands back, and asks again only once it is
// 5 minutes old.
func TestTickAsksForTheDiffAndRecordsIt(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	pane := readPane(t, "adv-custom-statusline-working")
	tickAt := func(at string, extra ...string) []string {
		t.Helper()
		var out, errb bytes.Buffer
		args := append([]string{"tick", "--state", state, "--target", "agent", "--frame", "--work", "5", "--now", at}, extra...)
		if code := run(args, strings.NewReader(frameOf(pane)), &out, &errb); code != 0 || strings.Contains(out.String(), "error") {
			t.Fatalf("tick: %d %s %s", code, out.String(), errb.String())
		}
		entries, _ := os.ReadDir(filepath.Join(state, "actions"))
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}
	actions := tickAt("2026-03-10T14:00:00Z")
	if diff := cmp.Diff([]string{"001.diff"}, actions); diff != "" {
		t.Fatalf("actions (-want +got):\n%s", diff)
	}
	steps, err := os.ReadFile(filepath.Join(state, "actions", "001.diff"))
	if err != nil || string(steps) != "measure 001.diff.sh\n" {
		t.Errorf("the diff action holds %q, %v", steps, err)
	}
	if cmd, err := os.ReadFile(filepath.Join(state, "pastes", "001.diff.sh")); err != nil || string(cmd) != poll.DiffCommand("/w") {
		t.Errorf("the diff command is %q, %v", cmd, err)
	}
	os.Remove(filepath.Join(state, "actions", "001.diff")) // as the loop does
	output := filepath.Join(t.TempDir(), "diff.out")
	testenv.WriteFile(t, output, "dir /w\nbase main\n2\t0\ta.go\n")
	if actions := tickAt("2026-03-10T14:01:00Z", "--diff-output", output); len(actions) != 0 {
		t.Errorf("asked again right after the measure: %v", actions)
	}
	if d := readDiff(t, state); d.Added != 2 || d.Dir != "/w" {
		t.Errorf("recorded %+v", d)
	}
	if actions := tickAt("2026-03-10T14:06:00Z"); len(actions) != 1 {
		t.Errorf("not asked again after 5 minutes: %v", actions)
	}
	// A measure the loop never ran (it stopped, or its tick failed) is
	// only asked again: no error in the line.
	if actions := tickAt("2026-03-10T14:07:00Z"); len(actions) != 1 {
		t.Errorf("not asked again after a measure left undone: %v", actions)
	}
}

// The loop measures the diff of the watched pane's working directory, which
// it learns from the capture frame: locally, and on an ssh host over the
// loop's own connection; the board shows the figure.
func TestLoopRecordsTheDiffOfThePanesWorktree(t *testing.T) {
	t.Parallel()
	clone := testenv.AgentWorktree(t)
	s := testenv.Tmux(t)
	cfg := testenv.NewSSHConfig(t)
	testenv.SSHD(t, cfg, "box", "OMEGA_MONITOR_MUX="+s.Mux, "LANG=C.UTF-8")
	s.Run(t, "new-session", "-d", "-s", "agent", "-c", clone, "-x", "120", "-y", "40", "sleep 600")
	for _, target := range []string{"agent", "box:agent"} {
		t.Run(target, func(t *testing.T) {
			r := startLoop(t, loopOptions{target: target, flags: []string{"--ssh-config", cfg.Path, "--interval", "1", "--mux", s.Mux}})
			defer r.stop()
			path := filepath.Join(r.state, "diff.json")
			gtpoll.WaitOn(t, func(gtpoll.LogT) gtpoll.Result {
				if _, err := os.Stat(path); err != nil {
					return gtpoll.Continue("no diff.json yet")
				}
				return gtpoll.Success()
			}, gtpoll.WithTimeout(60*time.Second), gtpoll.WithDelay(100*time.Millisecond))
			d := readDiff(t, r.state)
			if d.Added != 5 || d.Removed != 1 || d.Dir != clone || d.Base != "origin/HEAD" || d.Error != "" {
				t.Errorf("diff.json: %+v", d)
			}
			f, err := board.Census(filepath.Dir(r.state), time.Now(), board.Options{})
			if err != nil || len(f.Watchers) != 1 || render.DiffText(f.Watchers[0].Diff) != "+5 -1" || f.Fleet.Added != 5 {
				t.Errorf("the board: %+v %v", f.Watchers, err)
			}
		})
	}
}
