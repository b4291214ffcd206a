package mirror

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/internal/board"
)

func TestFromFleet(t *testing.T) {
	f := board.Fleet{
		Watchers: []board.Watcher{
			{Name: "monitor-a", Target: "a", Liveness: board.Live, State: "STALLED", Work: "7", Progress: "?",
				Nudges: board.Nudges{Used: 2, Limit: 5}, Errors: []string{"history.jsonl: 1 line(s) in the last 48h could not be read"}, Unread: []string{"history.jsonl"}},
			{Name: "monitor-b", Liveness: board.Gone, Errors: []string{"state.json: unexpected end of JSON input"}, Unread: []string{"state.json"}},
			{Name: "monitor-c", Liveness: board.Stale, Errors: []string{"a message in any words"}, Unread: []string{"loop.json"}},
			// Words that name a file decide nothing: only what the census
			// says it could not read.
			{Name: "monitor-e", Liveness: board.Live, Errors: []string{"state.json: looks like an error about the state"}},
		},
		Errors: []board.Error{
			{Watcher: "monitor-a", Path: "/h/monitor-a/history.jsonl", Error: "torn"},
			{Watcher: "monitor-d", Path: "/h/monitor-d", Error: "state directory unreadable: permission denied"},
		},
	}
	got, err := FromFleet(f)
	if err != nil {
		t.Fatal(err)
	}
	want := []Watcher{
		{Name: "monitor-a", Target: "a", Liveness: "live", State: "STALLED", Work: "7", Progress: "?", Nudges: 2, Budget: 5},
		{Name: "monitor-b", Liveness: "gone", Unreadable: true},
		{Name: "monitor-c", Liveness: "stale", Unreadable: true},
		{Name: "monitor-e", Liveness: "live"},
		{Name: "monitor-d", Unreadable: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	f.Errors = append(f.Errors, board.Error{Path: "/h", Error: "permission denied"})
	if _, err := FromFleet(f); err == nil || err.Error() != "mirror: the state home could not be read whole: /h: permission denied" {
		t.Errorf("a root error gave %v", err)
	}
}
