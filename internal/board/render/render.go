// Package render draws the fleet the census read (package board) for a
// person: the compact text of status --once, the live screen, the tmux
// status segment, the delivery lines, the phone forms of the relay's
// /status. Every function is pure, of a Fleet
// and the sizes given; none reads a file. The census others import is in
// board, apart from these renderers.
package render

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/board"
)

// NoLiveWatchers ends the compact form when no watcher is live or quiet: a
// scheduled caller reads it (and the exit status 3) as "tear yourself down".
const NoLiveWatchers = "no live watchers"

// ForgetHint follows the table when some watcher no longer runs: a stopped
// watcher stays on the board until it is forgotten.
const ForgetHint = "a stopped watcher stays until forgotten: omega-monitor forget TARGET"

// Header is the fleet on one line, as the compact form prints it when its
// width is not limited: what needs a human now, the fleet's diff, its
// watchers by liveness, and the 48-hour sparkline of progress advances.
func Header(f board.Fleet) string { return strings.Join(HeaderLines(f, 0), "") }

// HeaderLines is the fleet's header in lines of at most width cells (0: one
// line). What needs a human comes first and is never cut. The 48-hour
// sparkline ends the last line where it fits, takes a line of its own on a
// wide board (with fewer hours where the 48 do not fit), and is left out
// of a narrow one.
func HeaderLines(f board.Fleet, width int) []string {
	s := f.Fleet
	lines := pack([]string{NeedsLine(s), DeltaText(s), WatchersText(s)}, " · ", width)
	sp := SparkText(s.Sparkline, len(s.Sparkline.Counts))
	last := len(lines) - 1
	switch {
	case width <= 0 || Width(lines[last])+Width(" · ")+Width(sp) <= width:
		lines[last] += " · " + sp
	case Width(sp) <= width:
		lines = append(lines, sp)
	default:
		// Too narrow for 48 glyphs: the last hours that fit, and the 48
		// hours' count and peak all the same; never no sparkline at all.
		part, ok := sparkFit(s.Sparkline, width)
		if ok && width >= wideBoard {
			lines = append(lines, part)
		}
		lines = append(lines, pack([]string{SparkCount(s.Sparkline)}, " · ", width)...)
	}
	return lines
}

// SparkCount is the sparkline's count without its glyphs: "48h: 3
// advances, peak 2/h".
func SparkCount(sp board.Sparkline) string {
	_, total, peak := board.Draw(sp.Counts)
	return fmt.Sprintf("%dh: %s, peak %d/h", len(sp.Counts), plural(total, "advance"), peak)
}

// wideBoard is the width from which the sparkline takes a line of its own.
const wideBoard = 80

// NeedsLine counts what needs a human now: the agents of running watchers
// that wait on a question, are blocked, or spent their nudge budget.
func NeedsLine(s board.Summary) string {
	var parts []string
	if s.Questions > 0 {
		parts = append(parts, plural(s.Questions, "question"))
	}
	if s.Blocked > 0 {
		parts = append(parts, strconv.Itoa(s.Blocked)+" blocked")
	}
	if s.BudgetsExhausted > 0 {
		parts = append(parts, plural(s.BudgetsExhausted, "budget")+" spent")
	}
	if len(parts) == 0 {
		return "needs you: nothing"
	}
	return "needs you: " + strings.Join(parts, ", ")
}

// DeltaText is the fleet's diff: the running watchers' diffs, each worktree
// once.
func DeltaText(s board.Summary) string {
	d := fmt.Sprintf("Δ fleet +%d -%d", s.Added, s.Removed)
	if s.Worktrees > 0 {
		d += " in " + plural(s.Worktrees, "worktree")
	}
	return d
}

// WatchersText counts the watchers by liveness, leaving out the kinds there
// are none of: "6 watchers: 3 live, 1 quiet, 1 stale, 1 gone".
func WatchersText(s board.Summary) string {
	var parts []string
	for _, k := range []struct {
		n    int
		what string
	}{{s.Live, board.Live}, {s.Quiet, board.Quiet}, {s.Stale, board.Stale}, {s.Gone, board.Gone}} {
		if k.n > 0 {
			parts = append(parts, strconv.Itoa(k.n)+" "+k.what)
		}
	}
	text := plural(s.Watchers, "watcher")
	if len(parts) > 0 {
		text += ": " + strings.Join(parts, ", ")
	}
	return text
}

// sparkFit is the sparkline of as many of the last hours as fit in room
// cells (all of them when they do), or false when not even minSpark do.
func sparkFit(sp board.Sparkline, room int) (string, bool) {
	for hours := len(sp.Counts); hours >= minSpark; hours-- {
		if text := SparkText(sp, hours); Width(text) <= room {
			return text, true
		}
	}
	return "", false
}

// minSpark is the fewest hours a sparkline is drawn with.
const minSpark = 6

// SparkText is the sparkline of the last hours of sp, one glyph an hour
// scaled to those hours' peak: "48h: ··▂█ (3 advances, peak 2/h)".
func SparkText(sp board.Sparkline, hours int) string {
	counts := sp.Counts[max(len(sp.Counts)-hours, 0):]
	glyphs, total, peak := board.Draw(counts)
	return fmt.Sprintf("%dh: %s (%s, peak %d/h)", len(counts), glyphs, plural(total, "advance"), peak)
}

// plural is n and what, with an s unless n is 1.
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// Compact is the one-shot form with no width limit: see CompactWidth.
func Compact(f board.Fleet) string { return CompactWidth(f, 0) }

// CompactWidth is the one-shot form in lines of at most width cells (0: no
// limit): the header, the table of watchers (one line a watcher, or a few
// where the table does not fit), the legend of its columns, the audits, a
// line per error when the census is degraded, and NoLiveWatchers when no
// watcher runs. It holds no escape sequences.
func CompactWidth(f board.Fleet, width int) string {
	// The table fits the width; a path or an error in the lines after it
	// is never cut, but left to the terminal to wrap.
	var b strings.Builder
	line := func(s string) {
		b.WriteString(s)
		b.WriteByte('\n')
	}
	for _, l := range HeaderLines(f, width) {
		line(l)
	}
	if len(f.Watchers) > 0 {
		t := newTable(f, width)
		if head := t.head(); head != "" {
			line(head)
		}
		for i, w := range f.Watchers {
			for _, l := range t.row(i) {
				line(l)
			}
			if u := w.Undelivered; u != nil {
				line("  alert NOT delivered: " + oneLine(u.Why))
			}
			for _, l := range DeliveryLines(w, f.GeneratedAt) {
				line("  " + l)
			}
		}
		for _, l := range t.legend(f, width) {
			line(l)
		}
	} else if !f.Degraded {
		line(NoWatchers(f.Root))
	}
	for _, h := range f.Hosts {
		line(HostLine(h, f.GeneratedAt))
	}
	for _, g := range f.Groups {
		line(GroupLine(g, f.GeneratedAt))
	}
	for _, a := range f.Audits {
		line(AuditLine(a, f.GeneratedAt))
	}
	for _, e := range f.Errors {
		if !hostRow(e) {
			line(ErrorLine(e))
		}
	}
	if f.Fleet.Running == 0 {
		line(noneLive(f))
	}
	return b.String()
}

// hostRow says the error is a host's that could not be read: its row says
// it already.
func hostRow(e board.Error) bool { return e.Host != "" && e.Path == "" }

// hostLegend says what a target with a host before it is.
const hostLegend = "HOST/TARGET: a watcher of that host's board (stop it there)"

// HostLine is one other host's row of health: its watchers on the board
// and the round trip of its read (with its clock, where it is off by more
// than the read explains), or why it is degraded.
func HostLine(h board.Host, now time.Time) string {
	l := "host " + h.Name + ": "
	if h.FreshAt == nil {
		l += "DEGRADED: " + oneLine(h.Reason)
		if h.Reachable {
			l += fmt.Sprintf(" (answered in %dms)", h.RTTMs)
		}
		return l
	}
	l += plural(h.Watchers, "watcher") + fmt.Sprintf(", read in %dms", h.RTTMs)
	l += skewText(h.FreshAt.Sub(now), time.Duration(h.RTTMs)*time.Millisecond+2*time.Second)
	if h.Degraded {
		l += "; DEGRADED: " + oneLine(h.Reason)
	}
	return l
}

// skewText says how far a host's clock is from this board's, when it is
// further than slack (the read's round trip, and a margin).
func skewText(d, slack time.Duration) string {
	switch {
	case d > slack:
		return ", its clock " + Clock(d) + " ahead"
	case d < -slack:
		return ", its clock " + Clock(-d) + " behind"
	}
	return ""
}

// NoWatchers is what an empty fleet says: where it looked, and how to
// start a watcher.
func NoWatchers(root string) string {
	return "no watchers under " + root + "; start one with: omega-monitor SESSION (omega-monitor list shows what is watchable)"
}

// noneLive ends a board on which no watcher is live or quiet: "no live
// watchers" only when the whole fleet was read (a caller may stop on it);
// a degraded census says that it could not tell.
func noneLive(f board.Fleet) string {
	if f.Degraded {
		return "no live watcher found, but the census is degraded (above): some could not be read"
	}
	return NoLiveWatchers
}

// ErrorLine is one thing the census could not read.
func ErrorLine(e board.Error) string {
	switch {
	case e.Host != "" && e.Path == "":
		return "degraded: host " + e.Host + ": " + oneLine(e.Error)
	case e.Host != "":
		return "degraded: " + e.Host + ":" + e.Path + ": " + oneLine(e.Error)
	}
	return "degraded: " + e.Path + ": " + oneLine(e.Error)
}

// orUnknown spells a reading that is not known as the MONITOR line does.
func orUnknown(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

// DiffText is "+A -R", or "-" when no figure is known (no diff recorded
// yet, or not a git worktree).
func DiffText(d *board.Diff) string {
	if !d.Known() {
		return "-"
	}
	return fmt.Sprintf("+%d -%d", d.Added, d.Removed)
}

// stateLetters abbreviates the poll counts.
var stateLetters = map[string]string{"WORKING": "W", "QUESTION": "Q", "STALLED": "S", "BLOCKED": "B", "NO AGENT": "N", "?": "?"}

// ActivityText is the last hour's counters: polls by state (W working, Q
// question, S stalled, B blocked, N no agent, ? no capture), nudges, escalations,
// failures, disagreements with the agent's own status.
func ActivityText(a board.Activity) string { return "1h " + activityCell(a) }

// activityCell is ActivityText under the table's LAST HOUR heading.
func activityCell(a board.Activity) string {
	var polls []string
	names := make([]string, 0, len(a.Polls))
	for k := range a.Polls {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool {
		if oi, oj := stateOrder(names[i]), stateOrder(names[j]); oi != oj {
			return oi < oj
		}
		return names[i] < names[j]
	})
	for _, k := range names {
		l := stateLetters[k]
		if l == "" {
			l = k
		}
		polls = append(polls, l+strconv.Itoa(a.Polls[k]))
	}
	p := "0"
	if len(polls) > 0 {
		p = strings.Join(polls, ",")
	}
	line := fmt.Sprintf("polls:%s nudges:%d esc:%d fail:%d dis:%d", p, a.Nudges, a.Escalations, a.Failures, a.Disagreements)
	if a.Undelivered > 0 {
		line += fmt.Sprintf(" NOT-delivered:%d", a.Undelivered)
	}
	return line
}

func stateOrder(s string) int {
	switch s {
	case "WORKING":
		return 0
	case "QUESTION":
		return 1
	case "STALLED":
		return 2
	case "BLOCKED":
		return 3
	}
	return 4
}

// Clock prints a duration as HH:MM:SS (hours may pass 24).
func Clock(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int64(d / time.Second)
	return fmt.Sprintf("%02d:%02d:%02d", s/3600, s/60%60, s%60)
}

// pack joins pieces with sep into lines of at most width cells (0: one
// line). A piece is never split between lines unless it alone is wider
// than width; it is then wrapped at its spaces.
func pack(pieces []string, sep string, width int) []string {
	if width <= 0 {
		return []string{strings.Join(pieces, sep)}
	}
	var lines []string
	cur := ""
	for _, p := range pieces {
		switch {
		case cur == "":
		case Width(cur)+Width(sep)+Width(p) <= width:
			cur += sep + p
			continue
		default:
			lines = append(lines, cur)
		}
		if Width(p) <= width {
			cur = p
			continue
		}
		words := wrapWords(p, width)
		lines = append(lines, words[:len(words)-1]...)
		cur = words[len(words)-1]
	}
	return append(lines, cur)
}

// wrapWords wraps s at its spaces into lines of at most width cells; a
// word wider than width is a line of its own (the caller cuts it).
func wrapWords(s string, width int) []string {
	var lines []string
	cur := ""
	for _, w := range strings.Fields(s) {
		if cur != "" && Width(cur)+1+Width(w) > width {
			lines = append(lines, cur)
			cur = ""
		}
		if cur != "" {
			cur += " "
		}
		cur += w
	}
	return append(lines, cur)
}

// Tmux is the fleet in a few cells for tmux's status-right: ✋ questions, ⛔
// blocked, ⌛ budgets spent (each only when there is one), ● running
// watchers, ✗ stale ones (when any), ! when the census is degraded.
func Tmux(f board.Fleet) string {
	s := f.Fleet
	var parts []string
	if s.Questions > 0 {
		parts = append(parts, "✋"+strconv.Itoa(s.Questions))
	}
	if s.Blocked > 0 {
		parts = append(parts, "⛔"+strconv.Itoa(s.Blocked))
	}
	if s.BudgetsExhausted > 0 {
		parts = append(parts, "⌛"+strconv.Itoa(s.BudgetsExhausted))
	}
	parts = append(parts, "●"+strconv.Itoa(s.Running))
	if s.Stale > 0 {
		parts = append(parts, "✗"+strconv.Itoa(s.Stale))
	}
	if s.Undelivered > 0 {
		parts = append(parts, "✉✗"+strconv.Itoa(s.Undelivered))
	}
	if n := pagesOwed(f); n > 0 {
		// Pages for many panes at once, gathering or not yet delivered.
		parts = append(parts, "📟"+strconv.Itoa(n))
	}
	if f.Degraded {
		parts = append(parts, "!")
	}
	return strings.Join(parts, " ")
}

// oneLine collapses white space.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Width is the number of terminal cells s takes: wide (East Asian, emoji)
// runes take two, combining marks and controls none.
func Width(s string) int {
	n := 0
	for _, r := range s {
		n += runeWidth(r)
	}
	return n
}

func runeWidth(r rune) int {
	switch {
	case r < 0x20 || (r >= 0x7f && r < 0xa0):
		return 0
	case r >= 0x300 && r <= 0x36f, r == 0x200b, r >= 0xfe00 && r <= 0xfe0f:
		return 0
	case r >= 0x1100 && r <= 0x115f, r >= 0x2e80 && r <= 0xa4cf, r >= 0xac00 && r <= 0xd7a3,
		r >= 0xf900 && r <= 0xfaff, r >= 0xfe30 && r <= 0xfe4f, r >= 0xff00 && r <= 0xff60,
		r >= 0xffe0 && r <= 0xffe6, r >= 0x1f300 && r <= 0x1faff, r >= 0x20000 && r <= 0x3fffd,
		r == 0x270b, r == 0x26d4, r == 0x231b, r == 0x23f3:
		return 2
	}
	return 1
}

// Truncate cuts s to at most width cells, marking a cut with '…'.
func Truncate(s string, width int) string {
	if Width(s) <= width {
		return s
	}
	if width <= 0 {
		return ""
	}
	var b strings.Builder
	w := 0
	for _, r := range s {
		rw := runeWidth(r)
		if w+rw > width-1 {
			break
		}
		b.WriteRune(r)
		w += rw
	}
	b.WriteRune('…')
	return b.String()
}

// DeliveryLines says, for a watcher whose deliverer is at work, each
// channel that has a send under way ("delivering to NAME: try 2, 14s") or
// alerts waiting after a failure, with its last delivery and failure: a
// channel that hangs is told apart from a watcher that does.
func DeliveryLines(w board.Watcher, now time.Time) []string {
	if w.Delivery == nil {
		return nil
	}
	var out []string
	for _, c := range w.Delivery.Channels {
		switch {
		case c.Sending != nil:
			l := fmt.Sprintf("delivering to %s: try %d, for %s", oneLine(c.Name), c.Sending.Try, board.RoundAge(max(now.Sub(c.Sending.Since), 0)))
			if c.Sending.Try > 1 && c.Why != "" {
				l += "; last failure: " + oneLine(c.Why)
			}
			out = append(out, l)
		case c.Queued > 0 && c.FailedAt.After(c.DeliveredAt):
			l := fmt.Sprintf("%s: %d alert(s) waiting; last failure %s: %s", oneLine(c.Name), c.Queued, board.Ago(now, c.FailedAt), oneLine(c.Why))
			if !c.DeliveredAt.IsZero() {
				l += "; last delivered " + board.Ago(now, c.DeliveredAt)
			}
			out = append(out, l)
		}
	}
	return out
}

// AuditLine is one audit in the compact form: when it last ran and what it
// found, violations first.
func AuditLine(a board.Audit, now time.Time) string {
	ran := "never"
	if a.RanAt != nil {
		ran = Clock(now.Sub(*a.RanAt)) + " ago"
	}
	found := oneLine(a.Summary)
	if found == "" {
		found = fmt.Sprintf("%d dimensions: %d findings, %d clean; %d rejected", a.Dimensions, a.Findings, a.Clean, a.Rejected)
	}
	if len(a.Violations) > 0 && !strings.Contains(found, "VIOLATED") {
		found = fmt.Sprintf("READ-ONLY VIOLATED (%d changed); ", len(a.Violations)) + found
	}
	return fmt.Sprintf("audit %s  ran %s (%s)  %s  %s", a.Name, ran, a.Agent, found, a.Report)
}
