package board

import (
	"fmt"
	"strings"
	"time"
)

// A View is how the live board is drawn: the terminal's size, the selected
// watcher (an index into Fleet.Watchers) and the refresh interval.
type View struct {
	Width, Height int
	Selected      int
	Interval      string
}

// Screen draws the live board as exactly v.Height lines of at most v.Width
// cells, without escape sequences (the caller positions them): a title, the
// header, the needs line, one section a watcher (the selected one opened to
// its last transition, last alert and the explanation of its last verdict),
// then errors. When the sections do not fit, the window follows the
// selection.
func Screen(f Fleet, v View) []string {
	w, h := max(v.Width, 1), max(v.Height, 1)
	top := []string{
		fmt.Sprintf("omega-monitor status · %s · every %s · ↑↓ select · Enter jumps · q quits",
			f.GeneratedAt.Format("15:04:05"), v.Interval),
		fmt.Sprintf("%dh: %s  (%d advances, peak %d/h, %d watchers)   Δ fleet +%d -%d",
			f.Fleet.Sparkline.Hours, f.Fleet.Sparkline.Glyphs, f.Fleet.Sparkline.Total,
			f.Fleet.Sparkline.Peak, f.Fleet.Watchers, f.Fleet.Added, f.Fleet.Removed),
		fmt.Sprintf("%s · running %d (live %d, quiet %d) · stale %d · gone %d",
			NeedsLine(f.Fleet), f.Fleet.Running, f.Fleet.Live, f.Fleet.Quiet, f.Fleet.Stale, f.Fleet.Gone),
		"",
	}
	var body []string
	selStart, selEnd := 0, 0
	rows := make([][]string, len(f.Watchers))
	for i, wt := range f.Watchers {
		rows[i] = watcherFields(wt, f.GeneratedAt)
	}
	lines := align(rows, 4)
	for i, wt := range f.Watchers {
		mark := "  "
		if i == v.Selected {
			mark = "▶ "
			selStart = len(body)
		}
		body = append(body, mark+lines[i])
		if wt.Liveness != Live {
			body = append(body, "    "+wt.LivenessReason)
		}
		if i == v.Selected {
			body = append(body, detail(wt, f.GeneratedAt.Location())...)
			selEnd = len(body)
		}
	}
	if len(f.Watchers) == 0 && !f.Degraded {
		body = append(body, "no watchers under "+f.Root)
	}
	for _, e := range f.Errors {
		body = append(body, ErrorLine(e))
	}
	if f.Fleet.Running == 0 {
		body = append(body, NoLiveWatchers)
	}

	room := max(h-len(top), 0)
	first := 0
	if len(body) > room && selEnd > room {
		first = min(selEnd-room, selStart)
	}
	out := make([]string, 0, h)
	for _, l := range top {
		if len(out) < h {
			out = append(out, l)
		}
	}
	for i := first; i < len(body) && len(out) < h; i++ {
		out = append(out, body[i])
	}
	for len(out) < h {
		out = append(out, "")
	}
	for i, l := range out {
		out[i] = Truncate(l, w)
	}
	return out
}

// detail is the selected watcher opened: its last transition, its last
// alert, and the explanation of its last verdict.
func detail(w Watcher, loc *time.Location) []string {
	var out []string
	if t := w.LastTransition; t != nil {
		out = append(out, fmt.Sprintf("    transition %s  %s → %s  %s", t.At.In(loc).Format("15:04:05"), t.From, t.To, oneLine(t.Line)))
	} else {
		out = append(out, "    transition none recorded")
	}
	if a := w.LastAlert; a != nil {
		out = append(out, fmt.Sprintf("    alert      %s  %s: %s", a.At.In(loc).Format("15:04:05"), a.Kind, oneLine(a.Text)))
	} else {
		out = append(out, "    alert      none")
	}
	if w.Explain != "" {
		for i, l := range strings.Split(w.Explain, "\n") {
			head := "               "
			if i == 0 {
				head = "    explain    "
			}
			out = append(out, head+strings.TrimRight(l, " "))
			if i == 5 {
				break
			}
		}
	}
	for _, e := range w.Errors {
		out = append(out, "    error      "+oneLine(e))
	}
	return out
}
