package render

import (
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/internal/board"
)

// TestGlance: two watchers read in three short lines, what needs a human
// first, whatever their targets and texts.
func TestGlance(t *testing.T) {
	f := board.Fleet{
		Fleet: board.Summary{Watchers: 2, Live: 1, Stale: 1, NeedsHuman: 1},
		Watchers: []board.Watcher{
			{Name: "monitor-api", Target: "api", Liveness: board.Stale, State: "WORKING", StateForS: 75, Nudges: board.Nudges{Limit: 5},
				LastLine: "MONITOR · api · WORKING · what the pane printed is never in a glance"},
			{Name: "monitor-box-web", Target: "box:web", Liveness: board.Live, State: "QUESTION", StateForS: 7200,
				Nudges: board.Nudges{Used: 2, Limit: 5}, NeedsHuman: board.NeedsQuestion},
		},
	}
	want := []string{
		"2 watchers: 1 live, 0 quiet, 1 stale, 0 gone · needs you: 1",
		"monitor-box-web (box:web) · QUESTION for 02:00:00 · nudges 2/5 · needs you: question",
		"monitor-api · [stale] · WORKING for 00:01:15 · nudges 0/5",
	}
	got := Glance(f)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	f.Degraded = true
	f.Watchers[0].Name = "monitor-a-session-name-far-longer-than-any-line-should-be-allowed-to-run-on-for-a-glance"
	for _, l := range Glance(f) {
		if n := utf8.RuneCountInString(l); n > glanceWidth {
			t.Errorf("a line of %d runes: %q", n, l)
		}
	}
}

// Another host's watchers carry its name, and a host that could not be
// read is said in the head line.
func TestGlanceOverHosts(t *testing.T) {
	f := board.Fleet{
		Watchers: []board.Watcher{{Host: "box", Name: "monitor-web", Target: "web", Liveness: board.Live, State: "WORKING"}},
		Hosts:    []board.Host{{Name: "box", Reachable: true}, {Name: "gpu", Degraded: true, Reason: "unreachable"}},
		Degraded: true,
	}
	f.Fleet.Watchers, f.Fleet.Live = 1, 1
	want := []string{
		"1 watchers: 1 live, 0 quiet, 0 stale, 0 gone · needs you: 0 · degraded: some state could not be read · host gpu degraded",
		"box/monitor-web · WORKING",
	}
	if diff := cmp.Diff(want, Glance(f)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
