package answer

import (
	"strconv"
	"strings"

	"github.com/omega-monitor/omega-monitor/classify"
)

// A dialog is classify's DialogText cut into what this package reads.
type dialog struct {
	question []string // Question's lines
	step     string
	options  []Option   // Pos and the flags are filled by Inspect
	rows     [][]string // each option's lines as drawn, after its number
	numbers  []int      // the drawn numbers, for the numbered options
	// hints are the hint line and the lines drawn under the options that
	// belong to none (a wrapped or second footer, a box's bottom edge).
	hints []string
	// under is the index in hints of the first line drawn under the
	// options (the hints before it are classify's hint line).
	under int
	// stray are lines classify gave as options, above the first line
	// read as one: classify took another line for the cursor's.
	stray []string
	// cut says a row of buttons holds less than its whole set: the pane
	// is too narrow for it.
	cut bool
}

// An optionLine is a line that starts an option.
type optionLine struct {
	cursor bool
	number int // 0 when none is drawn
	col    int // the column of the number, or of the label when none
	text   string
}

// parse reads a line as the start of an option: an optional cursor glyph,
// then "N. " and the label (numbered), or the label alone.
func (t *table) parse(line string) (o optionLine, numbered bool) {
	rest := strings.TrimLeft(line, " ")
	for _, g := range t.cursors {
		if r, ok := strings.CutPrefix(rest, g); ok && strings.HasPrefix(r, " ") {
			o.cursor = true
			rest = strings.TrimLeft(r, " ")
			break
		}
	}
	o.col = column(line, len(line)-len(rest))
	o.text = strings.TrimRight(rest, " ")
	i := 0
	for i < len(rest) && i < 3 && isDigit(rest[i]) {
		i++
	}
	if i > 0 && strings.HasPrefix(rest[i:], ". ") {
		if label := strings.Trim(rest[i+2:], " "); label != "" {
			o.number, _ = strconv.Atoi(rest[:i])
			o.text = label
			return o, true
		}
	}
	return o, false
}

// A group is an option's first line and the lines drawn under it.
type group struct {
	first optionLine
	more  []string
}

// read cuts a dialog's lines into options and hints.
//
// Numbered options are the lines numbered at the first one's column. Lines
// between two options belong to the one above (a narrow pane may wrap a
// label at any indent). Under the last option, lines indented deeper than
// its number still belong to it; the first line that is not, and all below
// it, are hints: footers are drawn at the dialog's margin, left of the
// numbers or level with them (or, for an agent that wraps a label under its
// number, left of the last option's number).
//
// Without numbers, the options are the cursor's line and the lines that
// start at its label's column; deeper lines belong to the option above, and
// the first line left of that column starts the hints.
func (t *table) read(dt *classify.DialogText) *dialog {
	if t.buttons != nil {
		return t.readButtons(dt)
	}
	d := &dialog{question: strings.Split(dt.Question, "\n")}
	if dt.Hint != "" {
		d.hints = append(d.hints, dt.Hint)
	}
	d.under = len(d.hints)
	lines := dt.Options
	if t.scrollbar != nil && scrolled(lines, t.scrollbar) {
		lines = trimBlank(unscroll(lines, t.scrollbar))
		d.question = trimBlank(unscroll(d.question, t.scrollbar))
	}
	d.step = t.step(d.question)
	var groups []group
	numCol := -1 // the first numbered option's column
	for _, l := range lines {
		if o, ok := t.parse(l); ok {
			numCol = o.col
			break
		}
	}
	inHints := false
	if numCol >= 0 {
		// numbered says a line starts a numbered option: its number at
		// the first one's column or, by the agent's slack, a little left
		// of it when it is the next number.
		next := 1
		numbered := func(l string) (optionLine, bool) {
			o, ok := t.parse(l)
			if !ok || o.col > numCol || o.col < numCol-t.numberSlack || (o.col != numCol && o.number != next) {
				return o, false
			}
			next = o.number + 1
			return o, true
		}
		last := -1 // the last numbered option's line
		for i, l := range lines {
			if _, ok := numbered(l); ok {
				last = i
			}
		}
		next = 1
		for i, l := range lines {
			o, ok := numbered(l)
			switch {
			case inHints:
				d.hints = append(d.hints, strings.TrimSpace(l))
			case ok:
				groups = append(groups, group{first: o})
			case len(groups) == 0:
				d.stray = append(d.stray, l)
			case i < last || indent(l) > numCol || t.wrapAtNumber && indent(l) >= groups[len(groups)-1].first.col:
				g := &groups[len(groups)-1]
				g.more = append(g.more, strings.TrimSpace(l))
			default:
				inHints = true
				d.hints = append(d.hints, strings.TrimSpace(l))
			}
		}
	} else {
		labelCol := -1
		for _, l := range lines {
			if o, _ := t.parse(l); o.cursor {
				labelCol = o.col
				break
			}
		}
		for _, l := range lines {
			o, _ := t.parse(l)
			switch {
			case labelCol < 0:
				// No cursor and no numbers: nothing here is an option.
			case inHints:
				d.hints = append(d.hints, strings.TrimSpace(l))
			case o.col == labelCol && (o.cursor || indent(l) == labelCol):
				groups = append(groups, group{first: o})
			case len(groups) == 0:
				d.stray = append(d.stray, l)
			case indent(l) > labelCol:
				g := &groups[len(groups)-1]
				g.more = append(g.more, strings.TrimSpace(l))
			default:
				inHints = true
				d.hints = append(d.hints, strings.TrimSpace(l))
			}
		}
	}
	st := t.styleOf(d)
	for _, g := range groups {
		label, desc := split(st, g)
		d.options = append(d.options, Option{Label: label, Description: desc, Number: g.first.number, Cursor: g.first.cursor})
		d.rows = append(d.rows, append([]string{g.first.text}, g.more...))
		if g.first.number > 0 {
			d.numbers = append(d.numbers, g.first.number)
		}
	}
	return d
}

// split reads an option's label and description by the style.
func split(st style, g group) (label, desc string) {
	switch st {
	case described:
		return g.first.text, strings.Join(g.more, " ")
	case columns:
		var l, rest []string
		inLabel := true
		for _, part := range append([]string{g.first.text}, g.more...) {
			if !inLabel {
				rest = append(rest, part)
				continue
			}
			if i := strings.Index(part, "  "); i >= 0 {
				l = append(l, strings.TrimRight(part[:i], " "))
				rest = append(rest, strings.TrimSpace(part[i:]))
				inLabel = false
				continue
			}
			l = append(l, part)
		}
		return strings.Join(l, " "), strings.Join(rest, " ")
	}
	return strings.Join(append([]string{g.first.text}, g.more...), " "), ""
}

func (t *table) styleOf(d *dialog) style {
	for _, s := range t.styles {
		if s.when(d) {
			return s.style
		}
	}
	return wrapped
}

func (t *table) step(question []string) string {
	if t.stepLine == nil {
		return ""
	}
	for _, l := range question {
		if s := strings.TrimSpace(l); t.stepLine(s) {
			return s
		}
	}
	return ""
}

// underHead says the options sit under a head of a transcript: the
// paragraph directly above them holds one, of any agent (an agent's answer
// may quote another agent's dialog), or, for an agent whose dialogs
// classify cuts at the edge drawn above them, a head of its own shows
// anywhere in the question.
func (t *table) underHead(question []string) bool {
	end := len(question)
	for end > 0 && strings.TrimSpace(question[end-1]) == "" {
		end--
	}
	start := end
	for start > 0 && strings.TrimSpace(question[start-1]) != "" {
		start--
	}
	for _, l := range question[start:end] {
		for _, a := range tables() {
			if a.head(l) {
				return true
			}
		}
	}
	if t.headAnywhere {
		for _, l := range question {
			if t.head(l) {
				return true
			}
		}
	}
	return false
}

// hidden says the menu does not show all its options: its numbers do not
// run 1, 2, 3… (the list scrolled), a line under the options is numbered
// after the last one, or a hint counts more options than are drawn
// ("option 1/3" over two).
func (d *dialog) hidden() bool {
	if len(d.numbers) > 0 {
		if len(d.numbers) != len(d.options) {
			return true
		}
		for i, n := range d.numbers {
			if n != i+1 {
				return true
			}
		}
	}
	// A line under the options numbered after the last one is an option
	// the reader did not take for one (drawn at another column).
	for _, h := range d.hints[d.under:] {
		if o, ok := (&table{}).parse(h); ok && len(d.numbers) > 0 && o.number > d.numbers[len(d.numbers)-1] {
			return true
		}
	}
	for _, h := range d.hints {
		if m := optionCount().FindStringSubmatch(h); m != nil {
			if n, _ := strconv.Atoi(m[2]); n != len(d.options) {
				return true
			}
		}
	}
	return false
}

func indent(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }

// scrolled says every line of the options that is not blank ends in one of
// the scrollbar's glyphs, drawn in the pane's last column.
func scrolled(lines, glyphs []string) bool {
	seen := false
	for _, l := range lines {
		l = strings.TrimRight(l, " ")
		if l == "" {
			continue
		}
		if !hasAnySuffix(l, glyphs) {
			return false
		}
		seen = true
	}
	return seen
}

// unscroll takes the scrollbar's glyph, and the spaces before it, off the
// end of each line that ends in one.
func unscroll(lines, glyphs []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		l = strings.TrimRight(l, " ")
		for _, g := range glyphs {
			if r, ok := strings.CutSuffix(l, g); ok {
				l = strings.TrimRight(r, " ")
				break
			}
		}
		out[i] = l
	}
	return out
}

// trimBlank drops the blank lines at either end.
func trimBlank(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

func hasAnySuffix(s string, suffixes []string) bool {
	for _, p := range suffixes {
		if strings.HasSuffix(s, p) {
			return true
		}
	}
	return false
}
