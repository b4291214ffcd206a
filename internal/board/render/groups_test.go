package render

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/internal/board"
)

func TestGroupLine(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	soon, past := now.Add(40*time.Second), now.Add(-time.Second)
	tests := []struct {
		g    board.Group
		want string
	}{
		{board.Group{Kind: "usage-limit", Agent: "Claude Code", Reset: "9:02am (UTC)", Panes: 12, PagesPending: 1, PagesMade: 1},
			"group: usage limit · Claude Code · resets 9:02am (UTC) · 12 panes · 1 page pending"},
		{board.Group{Host: "box", Kind: "host", CauseHost: "gpu", Panes: 3, Gathering: 3, DueAt: &soon},
			"group on box: host gpu gone · 3 panes · 3 panes gathering, page due in 00:00:40"},
		{board.Group{Kind: "usage-limit", Agent: "Codex", CauseHost: "gpu", Panes: 4, Gathering: 1, DueAt: &past, PagesPending: 2},
			"group: usage limit · Codex on gpu · 4 panes · 2 pages pending · 1 pane gathering, page due now"},
		{board.Group{Name: "host-0123", Kind: "host", Error: "its cause (group.json) cannot be read"},
			"group: host gone (host-0123): its cause (group.json) cannot be read"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, GroupLine(tt.g, now)); diff != "" {
			t.Errorf("GroupLine(%+v) (-want +got):\n%s", tt.g, diff)
		}
	}
	f := board.Fleet{GeneratedAt: now, Groups: []board.Group{tests[0].g, tests[1].g}}
	if got, want := Tmux(f), "●0 📟2"; got != want {
		t.Errorf("Tmux: %q, want %q", got, want)
	}
}
