package render

import (
	"time"

	"github.com/omega-monitor/omega-monitor/internal/board"
)

// GroupLine is one cause that stopped many panes (board.Group), while its
// page gathers or waits to be delivered: what the cause is, how many
// panes it holds, and where its page stands.
//
//	group: usage limit · claude · resets 2026-12-03T14:00:00Z · 12 panes · 1 page pending
//	group on box: host gpu gone · 3 panes · 3 gathering, page due in 00:00:40
func GroupLine(g board.Group, now time.Time) string {
	l := "group: "
	if g.Host != "" {
		l = "group on " + g.Host + ": "
	}
	switch g.Kind {
	case "usage-limit":
		l += "usage limit"
		if g.Agent != "" {
			l += " · " + g.Agent
		}
		if g.CauseHost != "" {
			l += " on " + g.CauseHost
		}
		if g.Reset != "" {
			l += " · resets " + g.Reset
		}
	case "host":
		l += "host " + g.CauseHost + " gone"
	default:
		l += g.Kind
	}
	if g.Error != "" {
		return oneLine(l + " (" + g.Name + "): " + g.Error)
	}
	l += " · " + plural(g.Panes, "pane")
	if g.PagesPending > 0 {
		l += " · " + plural(g.PagesPending, "page") + " pending"
	}
	if g.Gathering > 0 {
		l += " · " + plural(g.Gathering, "pane") + " gathering, page due "
		switch {
		case g.DueAt == nil:
		case g.DueAt.After(now):
			l += "in " + Clock(g.DueAt.Sub(now))
		default:
			l += "now"
		}
	}
	return oneLine(l)
}

// pagesOwed counts the groups with a page gathering or pending.
func pagesOwed(f board.Fleet) int {
	n := 0
	for _, g := range f.Groups {
		if g.Gathering > 0 || g.PagesPending > 0 {
			n++
		}
	}
	return n
}
