package render

import (
	"fmt"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/board"
	"github.com/omega-monitor/omega-monitor/internal/printable"
)

// A View is how the live board is drawn: the terminal's size, the selected
// watcher (an index into Fleet.Watchers) and the refresh interval.
type View struct {
	Width, Height int
	Selected      int
	Interval      string
}

// Screen draws the live board as exactly v.Height lines of at most v.Width
// cells, without escape sequences (the caller positions them): a title,
// the header, the table's headings, one section a watcher (the selected
// one opened to its last transition, last alert, the explanation of its
// last verdict and what the width left out of its row), errors, and as
// much of the legend as fits below. The table keeps the target, the state,
// the nudges and what needs you at every width (see CompactWidth). When
// the sections do not fit, the window follows the selection.
func Screen(f board.Fleet, v View) []string {
	w, h := max(v.Width, 1), max(v.Height, 1)
	top := []string{title(f, v, w)}
	top = append(top, HeaderLines(f, w)...)
	if h >= 16 {
		top = append(top, "")
	}
	t := newTable(f, max(w-2, 1))
	if head := t.head(); head != "" && len(f.Watchers) > 0 {
		top = append(top, "  "+head)
	}
	var body []string
	selStart, selEnd := 0, 0
	for i, wt := range f.Watchers {
		mark := "  "
		if i == v.Selected {
			mark = "▶ "
			selStart = len(body)
		}
		for k, l := range t.row(i) {
			if k > 0 {
				mark = "  "
			}
			body = append(body, mark+l)
		}
		if wt.Liveness != board.Live {
			body = append(body, "    "+wt.LivenessReason)
		}
		if u := wt.Undelivered; u != nil {
			body = append(body, "    alert NOT delivered: "+oneLine(u.Why))
		}
		if i == v.Selected {
			body = append(body, detail(wt, f.GeneratedAt.Location(), t.hidden(i), w)...)
			selEnd = len(body)
		}
	}
	if len(f.Watchers) == 0 && !f.Degraded {
		body = append(body, NoWatchers(f.Root))
	}
	for _, h := range f.Hosts {
		body = append(body, HostLine(h, f.GeneratedAt))
	}
	for _, g := range f.Groups {
		body = append(body, GroupLine(g, f.GeneratedAt))
	}
	for _, e := range f.Errors {
		if !hostRow(e) {
			body = append(body, ErrorLine(e))
		}
	}
	if f.Fleet.Running == 0 {
		body = append(body, noneLive(f))
	}

	room := max(h-len(top), 0)
	if spare := room - len(body) - 1; len(f.Watchers) > 0 && spare > 0 {
		// The legend goes below, as much of it as fits whole lines in
		// what the board leaves (its first lines say the first columns).
		legend := t.legend(f, w)
		body = append(append(body, ""), legend[:min(spare, len(legend))]...)
	}
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
	// What a pane, a host or a state file wrote reaches the terminal
	// without an escape sequence.
	for i, l := range out {
		out[i] = Truncate(printable.String(l), w)
	}
	return out
}

// title is the live board's first line; at a narrow width the keys and
// the refresh give way, the last of them "q quits".
func title(f board.Fleet, v View, width int) string {
	pieces := []struct {
		text string
		keep int
	}{
		{"omega-monitor status", 0}, {f.GeneratedAt.Format("15:04:05"), 1}, {"every " + v.Interval, 4},
		{"↑↓ select", 2}, {"Enter jumps", 3}, {"q quits", 0},
	}
	var line string
	for keep := 4; keep >= 0; keep-- {
		var parts []string
		for _, p := range pieces {
			if p.keep <= keep {
				parts = append(parts, p.text)
			}
		}
		if line = strings.Join(parts, " · "); Width(line) <= width {
			break
		}
	}
	return line
}

// detail is the selected watcher opened: its last transition, its last
// alert, the explanation of its last verdict, and what the width left out
// of its row (hidden, as "heading value").
func detail(w board.Watcher, loc *time.Location, hidden []string, width int) []string {
	const indent = "               "
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
			head := indent
			if i == 0 {
				head = "    explain    "
			}
			out = append(out, head+strings.TrimRight(l, " "))
			if i == 5 {
				break
			}
		}
	}
	if len(hidden) > 0 {
		for i, l := range pack(hidden, " · ", max(width-len(indent), 20)) {
			head := indent
			if i == 0 {
				head = "    also       "
			}
			out = append(out, head+l)
		}
	}
	for _, e := range w.Errors {
		out = append(out, "    error      "+oneLine(e))
	}
	return out
}
