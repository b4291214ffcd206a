package tick

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestUnsettledStopsNeedLiveEvidence: a Codex screen whose last answer has
// no end line under it is no evidence of work (releases end turns without
// one): a first sighting is looked at again soon, nothing typed; the same
// screen on the next look is the stop it reads as, and is nudged; the
// screen changing between the looks is an answer streaming (WORKING); the
// agent's own log saying its turn is open is WORKING. Screens with a marker
// of their own are read as before.
func TestUnsettledStopsNeedLiveEvidence(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "golden", "panes", name+".pane"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	idle := read("codex-recent-idle-no-end-line")
	grown := strings.Replace(idle, "passes 500 runs in a row.", "passes 500 runs in a row.\n  It also", 1)
	c := Config{Target: "agent", NudgeBudget: 5, Interval: time.Minute}
	for _, tc := range []struct {
		name  string
		looks []look
		want  []paced
	}{
		{"the same screen twice: a stop, nudged on the second look",
			[]look{{at: 0, pane: idle}, {at: 3 * time.Second, pane: idle}},
			[]paced{{Wait: UnsettledLook}, {Nudge: true}}},
		{"the screen grows between the looks: streaming, then stopped",
			[]look{{at: 0, pane: idle}, {at: 3 * time.Second, pane: grown}, {at: time.Minute, pane: grown}, {at: time.Minute + 3*time.Second, pane: grown}},
			[]paced{{Wait: UnsettledLook}, {}, {Wait: UnsettledLook}, {Nudge: true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, pace(t, c, tc.looks)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	// What each look says, and the state it reads as.
	var lines []string
	for s, l := (State{}), 0; l < 2; l++ {
		var o Outcome
		s, o = Step(s, c, lookInput(time.Duration(l)*3*time.Second, []string{idle, grown}[l], "7", false))
		lines = append(lines, o.Line)
	}
	if !strings.Contains(lines[0], "STALLED · work=7 · progress=? · not nudged yet: the last answer has no end line under it (it may be streaming); the next look, at 09:00:03, decides") ||
		!strings.Contains(lines[1], " · WORKING · ") {
		t.Errorf("lines:\n%s", strings.Join(lines, "\n"))
	}
	// The agent's own log says its turn is open: WORKING on the first look.
	in := lookInput(0, idle, "7", false)
	in.Witness = &Witness{Status: "busy", Updated: t0}
	_, o := Step(State{}, c, in)
	if !strings.Contains(o.Line, " · WORKING · ") || len(o.Actions) != 0 {
		t.Errorf("with the agent's log saying its turn is open: %s %+v", o.Line, o.Actions)
	}
}
