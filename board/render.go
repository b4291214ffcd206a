package board

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// NoLiveWatchers ends the compact form when no watcher is live or quiet: a
// scheduled caller reads it (and the exit status 3) as "tear yourself down".
const NoLiveWatchers = "no live watchers"

// Header is the first line of every render: the 48-hour sparkline of
// progress advances across the fleet, the fleet's diff, and what needs a
// human now, counted.
func Header(f Fleet) string {
	s := f.Fleet
	sp := s.Sparkline
	return fmt.Sprintf("%dh: %s  (%d advances, peak %d/h, %d watchers)   Δ fleet +%d -%d   %s",
		sp.Hours, sp.Glyphs, sp.Total, sp.Peak, s.Watchers, s.Added, s.Removed, NeedsLine(s))
}

// NeedsLine counts what needs a human now.
func NeedsLine(s Summary) string {
	return fmt.Sprintf("needs you: %s, %s, %s", plural(s.Questions, "question"),
		plural(s.Blocked, "blocked"), plural(s.BudgetsExhausted, "budget spent"))
}

func plural(n int, what string) string {
	switch {
	case what == "blocked":
		return strconv.Itoa(n) + " blocked"
	case what == "budget spent":
		if n == 1 {
			return "1 budget spent"
		}
		return strconv.Itoa(n) + " budgets spent"
	case n == 1:
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// Compact is the one-shot form: the header, one line a watcher, a line per
// error when the census is degraded, and NoLiveWatchers when no watcher
// runs. It holds no escape sequences.
func Compact(f Fleet) string {
	var b strings.Builder
	b.WriteString(Header(f))
	b.WriteByte('\n')
	rows := make([][]string, len(f.Watchers))
	for i, w := range f.Watchers {
		rows[i] = watcherFields(w, f.GeneratedAt)
	}
	for _, line := range align(rows, 4) {
		b.WriteString(line)
		b.WriteByte('\n')
	}
	if len(f.Watchers) == 0 && !f.Degraded {
		fmt.Fprintf(&b, "no watchers under %s\n", f.Root)
	}
	for _, a := range f.Audits {
		b.WriteString(AuditLine(a, f.GeneratedAt))
		b.WriteByte('\n')
	}
	for _, e := range f.Errors {
		b.WriteString(ErrorLine(e))
		b.WriteByte('\n')
	}
	if f.Fleet.Running == 0 {
		b.WriteString(NoLiveWatchers)
		b.WriteByte('\n')
	}
	return b.String()
}

// ErrorLine is one thing the census could not read.
func ErrorLine(e Error) string {
	return "degraded: " + e.Path + ": " + oneLine(e.Error)
}

// watcherFields is a watcher's compact line, as fields: the first four
// (name, liveness, target, agent) are aligned in columns.
func watcherFields(w Watcher, now time.Time) []string {
	agent := w.Agent
	if agent == "" {
		agent = "-"
	}
	target := w.Target
	if target == "" {
		target = "-"
	}
	if w.Pane != "" {
		target += " " + w.Pane
	}
	fields := []string{w.Name, "[" + w.Liveness + "]", target, agent}
	state := w.State
	if state == "" {
		state = "-"
	}
	if w.StateSince != nil {
		state += " " + Clock(now.Sub(*w.StateSince))
	}
	fields = append(fields, state,
		"work="+orUnknown(w.Work)+" progress="+orUnknown(w.Progress),
		fmt.Sprintf("nudges %d/%d", w.Nudges.Used, w.Nudges.Limit),
		DiffText(w.Diff),
		ActivityText(w.Activity),
		fmt.Sprintf("log:%d(+%d)", w.Log.Lines, w.Log.New))
	if w.HumanIdle != "" {
		fields = append(fields, "human:"+w.HumanIdle)
	}
	if u := w.Undelivered; u != nil {
		fields = append(fields, "alert NOT delivered: "+oneLine(u.Why))
	}
	return fields
}

func orUnknown(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// DiffText is "+A -R", or "-" when no figure is known (no diff recorded
// yet, or not a git worktree).
func DiffText(d *Diff) string {
	if !d.Known() {
		return "-"
	}
	return fmt.Sprintf("+%d -%d", d.Added, d.Removed)
}

// stateLetters abbreviates the poll counts.
var stateLetters = map[string]string{"WORKING": "W", "QUESTION": "Q", "STALLED": "S", "BLOCKED": "B", "?": "?"}

// ActivityText is the last hour's counters: polls by state (W working, Q
// question, S stalled, B blocked, ? no capture), nudges, escalations,
// failures, disagreements with the agent's own status.
func ActivityText(a Activity) string {
	var polls []string
	names := make([]string, 0, len(a.Polls))
	for k := range a.Polls {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool { return stateOrder(names[i]) < stateOrder(names[j]) })
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
	line := fmt.Sprintf("1h polls:%s nudges:%d esc:%d fail:%d dis:%d", p, a.Nudges, a.Escalations, a.Failures, a.Disagreements)
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

// align pads the first n fields of every row to a common width and joins
// the fields with two spaces.
func align(rows [][]string, n int) []string {
	widths := make([]int, n)
	for _, r := range rows {
		for i := 0; i < n && i < len(r); i++ {
			widths[i] = max(widths[i], Width(r[i]))
		}
	}
	out := make([]string, len(rows))
	for j, r := range rows {
		var b strings.Builder
		for i, f := range r {
			if i > 0 {
				b.WriteString("  ")
			}
			b.WriteString(f)
			if i < n && i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-Width(f)))
			}
		}
		out[j] = b.String()
	}
	return out
}

// Tmux is the fleet in a few cells for tmux's status-right: ✋ questions, ⛔
// blocked, ⌛ budgets spent (each only when there is one), ● running
// watchers, ✗ stale ones (when any), ! when the census is degraded.
func Tmux(f Fleet) string {
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
