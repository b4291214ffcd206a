package render

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/board"
	"github.com/omega-monitor/omega-monitor/internal/printable"
)

// A column is one of the watcher table's: its heading, what a narrow board
// keeps first, what its figures mean and how a watcher fills it.
type column struct {
	head string
	// keep orders what a narrow board shows: the columns of keep 0 (the
	// target, the state, the nudges and what needs you) always, then the
	// others, 1 first, as long as they fit.
	keep int
	// legend says what the column's figures mean, in the board's words;
	// empty where the heading says it.
	legend string
	cell   func(w board.Watcher) string
}

// The columns, in the order of the board. The target leads: it is what
// stop, logs and forget take, and what the operator typed.
var columns = []column{
	{head: "TARGET", cell: func(w board.Watcher) string {
		t := w.Target
		if t == "" {
			t = w.Name
		} else if w.Pane != "" {
			t += " " + w.Pane
		}
		if w.Host != "" {
			return w.Host + "/" + t
		}
		return t
	}},
	{head: "LOOP", keep: 1, legend: "LOOP: [live] polls, [quiet] runs without polling, [stale] died, [gone] stopped",
		cell: func(w board.Watcher) string { return "[" + w.Liveness + "]" }},
	{head: "STATE", cell: func(w board.Watcher) string {
		if w.State == "" {
			return "-"
		}
		return w.State
	}},
	{head: "FOR", keep: 2, legend: "FOR: in that state (frozen once stopped)", cell: forText},
	{head: "NUDGES", legend: "NUDGES: typed/budget since progress", cell: func(w board.Watcher) string {
		if w.State == "" && w.StateSince == nil {
			return "-" // never polled: no budget was read
		}
		return fmt.Sprintf("%d/%d", w.Nudges.Used, w.Nudges.Limit)
	}},
	{head: "NEEDS YOU", cell: needsWord},
	{head: "AGENT", keep: 3, cell: func(w board.Watcher) string {
		if w.Agent == "" {
			return "-"
		}
		return w.Agent
	}},
	{head: "WORK", keep: 4, legend: "WORK, PROGRESS: the probes' figures, ? unknown",
		cell: func(w board.Watcher) string { return orUnknown(w.Work) }},
	{head: "PROGRESS", keep: 5, cell: func(w board.Watcher) string { return orUnknown(w.Progress) }},
	{head: "DIFF", keep: 6, legend: "DIFF: lines +added -removed since the base branch, (not in Δ fleet)",
		cell: func(w board.Watcher) string {
			if w.Diff.Known() && !w.DiffCounted {
				return "(" + DiffText(w.Diff) + ")"
			}
			return DiffText(w.Diff)
		}},
	{head: "VITALS", keep: 6, legend: "VITALS: the agent's own tool calls, reasoning blocks, text replies, waits for you, last hour (- no record)",
		cell: func(w board.Watcher) string { return vitalsText(w.Vitals) }},
	{head: "LAST HOUR", keep: 8, legend: "LAST HOUR: polls by state (W working, Q question, S stalled, B blocked, ? no screen), " +
		"nudges, esc escalations, fail failures, dis disagreed with the agent",
		cell: func(w board.Watcher) string { return activityCell(w.Activity) }},
	{head: "LOG", keep: 9, legend: "LOG: monitor.log lines (+new since the board last looked)",
		cell: func(w board.Watcher) string { return fmt.Sprintf("%d(+%d)", w.Log.Lines, w.Log.New) }},
	{head: "WATCHER", keep: 7, legend: "WATCHER: its name, as stop, logs and forget take it",
		cell: func(w board.Watcher) string { return w.Name }},
	{head: "HUMAN", keep: 10, legend: "HUMAN: how recent a human's input at the agent holds its pages and nudges (off: never held)",
		cell: func(w board.Watcher) string {
			if w.HumanIdle == "" {
				return "-"
			}
			return w.HumanIdle
		}},
}

// The columns a stacked board draws, by their index in columns.
const (
	targetCol = iota // the column that gives way
	loopCol
	stateCol
	forCol
	nudgesCol
	needsCol
	agentCol
)

// The target's width on a board of limited width: cut past maxTarget to
// make room, down to minTarget; where the columns a board always keeps do
// not fit even so, each watcher takes a few lines instead.
const (
	maxTarget = 24
	minTarget = 10
)

// needsWords says what a watcher's agent waits on a human for.
var needsWords = map[string]string{
	board.NeedsQuestion:        "question",
	board.NeedsBlocked:         "blocked",
	board.NeedsBudgetExhausted: "budget spent",
}

// needsWord says what w's agent waits on a human for: a stall that the
// watcher does not nudge (--nudge-budget 0) is no budget spent.
func needsWord(w board.Watcher) string {
	if w.NeedsHuman == board.NeedsBudgetExhausted && w.Nudges.Limit == 0 {
		return "stalled, nudging off"
	}
	return needsWords[w.NeedsHuman]
}

// deltaLegend says what the header's diff sums.
const deltaLegend = "Δ fleet: the running watchers' diffs, each worktree once"

// forText is how long the watcher's state has held, frozen at its end
// once the loop no longer runs; "-" when no state is known.
func forText(w board.Watcher) string {
	if w.StateSince == nil {
		return "-"
	}
	return Clock(time.Duration(w.StateForS) * time.Second)
}

// A table is the watchers laid out for a width: the columns that fit, in
// the board's order, each as wide as its widest cell; or, where not even
// the columns a board always keeps fit, a few lines a watcher (stacked).
type table struct {
	shown   []int // indices into columns
	widths  []int // by shown column
	cells   [][]string
	stacked bool
	width   int
	ws      []board.Watcher
}

// newTable lays f's watchers out in rows of at most width cells (0: no
// limit).
func newTable(f board.Fleet, width int) *table {
	t := &table{width: width, ws: f.Watchers}
	all := make([][]string, len(f.Watchers))
	natural := make([]int, len(columns))
	for j, c := range columns {
		natural[j] = Width(c.head)
	}
	for i, w := range f.Watchers {
		all[i] = make([]string, len(columns))
		for j, c := range columns {
			all[i][j] = printableCell(c.cell(w))
			natural[j] = max(natural[j], Width(all[i][j]))
		}
	}
	if width > 0 {
		natural[targetCol] = min(natural[targetCol], maxTarget)
	}
	shown := make([]bool, len(columns))
	total := -2
	for j, c := range columns {
		if c.keep == 0 {
			shown[j] = true
			total += natural[j] + 2
		}
	}
	if width > 0 && total > width {
		cut := natural[targetCol] - (total - width)
		if cut < minTarget {
			t.stacked = true
			return t
		}
		total -= natural[targetCol] - cut
		natural[targetCol] = cut
	}
	order := make([]int, 0, len(columns))
	for j := range columns {
		order = append(order, j)
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(columns[a].keep, columns[b].keep) })
	// In a fixed order: as a board narrows, its columns go one by one,
	// the last kept first, and never one before another it keeps longer.
	for _, j := range order {
		if shown[j] {
			continue
		}
		if width > 0 && total+2+natural[j] > width {
			break
		}
		shown[j] = true
		total += natural[j] + 2
	}
	for j := range columns {
		if shown[j] {
			t.shown = append(t.shown, j)
			t.widths = append(t.widths, natural[j])
		}
	}
	t.cells = make([][]string, len(f.Watchers))
	for i := range f.Watchers {
		for _, j := range t.shown {
			t.cells[i] = append(t.cells[i], all[i][j])
		}
	}
	return t
}

// printableCell keeps a cell on its line and off the terminal's controls:
// what a state file holds (a target, an agent's name) has no escape
// sequence, line break or tab here.
func printableCell(s string) string { return oneLine(printable.String(s)) }

// head is the headings' row; empty when stacked.
func (t *table) head() string {
	if t.stacked {
		return ""
	}
	heads := make([]string, len(t.shown))
	for k, j := range t.shown {
		heads[k] = columns[j].head
	}
	return t.join(heads)
}

// join pads each cell to its column's width and joins them with two
// spaces; a cell wider than its column (the target, cut) ends in '…'.
func (t *table) join(cells []string) string {
	var b strings.Builder
	for k, c := range cells {
		if k > 0 {
			b.WriteString("  ")
		}
		c = Truncate(c, t.widths[k])
		b.WriteString(c)
		if k < len(cells)-1 {
			b.WriteString(strings.Repeat(" ", t.widths[k]-Width(c)))
		}
	}
	return strings.TrimRight(b.String(), " ")
}

// row is watcher i's line, or its few lines when stacked: the target, its
// loop and agent; then its state, for how long, and its nudges; then what
// it needs you for, when it does.
func (t *table) row(i int) []string {
	if !t.stacked {
		return []string{t.join(t.cells[i])}
	}
	w := t.ws[i]
	cell := func(j int) string { return printableCell(columns[j].cell(w)) }
	first := cell(targetCol) + "  " + cell(loopCol)
	if w.Agent != "" {
		first += "  " + cell(agentCol)
	}
	second := "  " + cell(stateCol)
	if d := cell(forCol); d != "-" && Width(second)+1+len(d)+2+Width(cell(nudgesCol))+len("nudges ") <= t.width {
		second += " " + d
	}
	if n := cell(nudgesCol); n != "-" {
		second += "  nudges " + n
	}
	lines := []string{Truncate(first, t.width), second}
	if n := needsWord(w); n != "" {
		lines = append(lines, "  needs you: "+n)
	}
	return lines
}

// hidden are the shown columns' complement: what a narrow board left out,
// as "HEAD value" for the selected watcher's detail.
func (t *table) hidden(i int) []string {
	shown := map[int]bool{}
	for _, j := range t.shown {
		shown[j] = true
	}
	if t.stacked {
		for _, j := range []int{targetCol, loopCol, stateCol, forCol, nudgesCol, needsCol} {
			shown[j] = true
		}
		shown[agentCol] = t.ws[i].Agent != ""
	}
	var out []string
	for j, c := range columns {
		if !shown[j] {
			out = append(out, strings.ToLower(c.head)+" "+printableCell(c.cell(t.ws[i])))
		}
	}
	return out
}

// legend says what the shown columns' figures mean, and the header's
// diff, in lines of at most width cells (0: as wide as the table); then,
// when some watcher no longer runs, how a stopped watcher leaves the board.
func (t *table) legend(f board.Fleet, width int) []string {
	if width <= 0 {
		width = max(Width(t.head()), 80)
	}
	var items []string
	if t.stacked {
		items = append(items, columns[loopCol].legend, columns[forCol].legend, columns[nudgesCol].legend)
	} else {
		for _, j := range t.shown {
			if l := columns[j].legend; l != "" {
				items = append(items, l)
			}
		}
	}
	items = append(items, deltaLegend)
	if len(f.Hosts) > 0 {
		items = append(items, hostLegend)
	}
	lines := pack(items, " · ", width)
	if f.Fleet.Stale+f.Fleet.Gone > 0 {
		lines = append(lines, pack([]string{ForgetHint}, "", width)...)
	}
	return lines
}

// vitalsText is the board's cell for the agent's own activity: "-" where
// no record is readable, never 0.
func vitalsText(v *board.Vitals) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("tools:%d reason:%d text:%d wait:%d", v.Tools, v.Reason, v.Text, v.Wait)
}
