package classify

import (
	"regexp"
	"strings"
)

// A matcher finds the evidence for a rule in the lines of one region.
type matcher interface {
	match(lines []Line) (Line, bool)
}

// anyLine matches when any line of the region matches.
type anyLineMatcher struct{ re *pattern }

func anyLine(p *pattern) matcher { return anyLineMatcher{p} }

func (m anyLineMatcher) match(lines []Line) (Line, bool) {
	for i := len(lines) - 1; i >= 0; i-- {
		if m.re.MatchString(lines[i].Text) {
			return lines[i], true
		}
	}
	return Line{}, false
}

// edgeLine matches when the region's first non-blank line matches, or its
// last line drawn at the margin: a spinner heads the live block, or closes
// it when a redraw lost the blank line between it and the answer above (its
// task list and meter lines stay indented under it). Prose is indented under
// its answer's head, so a margin line is the agent's own structure.
type edgeLineMatcher struct{ re *pattern }

func edgeLine(p *pattern) matcher { return edgeLineMatcher{p} }

func (m edgeLineMatcher) match(lines []Line) (Line, bool) {
	first, margin := -1, -1
	for i, l := range lines {
		if isBlank(l.Text) {
			continue
		}
		if first < 0 {
			first = i
		}
		if l.Text[0] != ' ' {
			margin = i
		}
	}
	if first < 0 {
		return Line{}, false
	}
	if m.re.MatchString(lines[first].Text) {
		return lines[first], true
	}
	if margin > first && m.re.MatchString(lines[margin].Text) {
		return lines[margin], true
	}
	return Line{}, false
}

// endLine matches when the region's first or last non-blank line matches:
// the edges of a live block, where an agent an operator described draws
// its activity. A line inside the block is an answer's, and may quote it.
type endLineMatcher struct{ re *pattern }

func endLine(p *pattern) matcher { return endLineMatcher{p} }

func (m endLineMatcher) match(lines []Line) (Line, bool) {
	first, last := -1, -1
	for i, l := range lines {
		if !isBlank(l.Text) {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	for _, i := range []int{first, last} {
		if i >= 0 && m.re.MatchString(lines[i].Text) {
			return lines[i], true
		}
	}
	return Line{}, false
}

// lastLines matches when one of the region's last n non-blank lines matches:
// a dialog's footer is its last line.
type lastLinesMatcher struct {
	n  int
	re *pattern
}

func lastLines(n int, p *pattern) matcher {
	return lastLinesMatcher{n, p}
}

func (m lastLinesMatcher) match(lines []Line) (Line, bool) {
	seen := 0
	for i := len(lines) - 1; i >= 0 && seen < m.n; i-- {
		if isBlank(lines[i].Text) {
			continue
		}
		seen++
		if m.re.MatchString(lines[i].Text) {
			return lines[i], true
		}
	}
	return Line{}, false
}

// optionMenuMatcher matches a numbered option list whose cursor sits on one
// option, reaching the bottom of the region: the shape of every choice a
// human must make, whatever its footer says or however it wrapped. A
// numbered list in ordinary output has no cursor, and one in the scrollback
// does not reach the bottom.
type optionMenuMatcher struct {
	cursor *pattern
	option *pattern
}

// menuTail is how many non-blank lines may follow the last option: its
// description, a rule, the footer (wrapped, in a narrow pane).
const menuTail = 6

func optionMenu(cursors ...string) matcher {
	quoted := make([]string, len(cursors))
	for i, c := range cursors {
		quoted[i] = regexp.QuoteMeta(c)
	}
	cursor := strings.Join(quoted, "|")
	return optionMenuMatcher{
		cursor: re(`^ *(?:` + cursor + `) *\d+\. +\S`).by(numbered(true, cursors...)),
		option: re(`^ *(?:(?:` + cursor + `) *)?\d+\. +\S`).by(numbered(false, cursors...)),
	}
}

func (m optionMenuMatcher) match(lines []Line) (Line, bool) {
	last, seen := -1, 0
	for i := len(lines) - 1; i >= 0 && seen <= menuTail; i-- {
		if isBlank(lines[i].Text) {
			continue
		}
		if m.option.MatchString(lines[i].Text) {
			last = i
			break
		}
		seen++
	}
	if last < 0 {
		return Line{}, false
	}
	options, cursor := 0, -1
	for i := last; i >= 0 && i >= last-menuHeight; i-- {
		if !m.option.MatchString(lines[i].Text) {
			continue
		}
		options++
		if cursor < 0 && m.cursor.MatchString(lines[i].Text) {
			cursor = i
		}
	}
	if cursor < 0 || options < 2 {
		return Line{}, false
	}
	return lines[cursor], true
}

// continueMenuMatcher matches a start-up menu (an update offer, a sign-in
// or trust choice): numbered options over a footer that says Enter goes on,
// the footer the last thing on a screen with no input box. Its cursor may be
// drawn as colour alone, which a capture without -e loses: the footer and
// the options are its shape. It returns the first option.
type continueMenuMatcher struct{ footer, option *pattern }

func continueMenu(footer *pattern) matcher {
	return continueMenuMatcher{footer: footer, option: re(`^ *(?:[›❯>●▶] *)?\d+\. +\S`)}
}

func (m continueMenuMatcher) match(lines []Line) (Line, bool) {
	end := len(lines) - 1
	for end >= 0 && isBlank(lines[end].Text) {
		end--
	}
	if end < 0 || !m.footer.MatchString(lines[end].Text) {
		return Line{}, false
	}
	first, options, tail := -1, 0, 0
	for i := end - 1; i >= 0 && i >= end-menuHeight; i-- {
		switch t := lines[i].Text; {
		case m.option.MatchString(t):
			first = i
			options++
		case options == 0 && !isBlank(t):
			if tail++; tail > menuTail {
				return Line{}, false
			}
		}
	}
	if options < 2 {
		return Line{}, false
	}
	return lines[first], true
}

// menuHeight bounds how far above its last option a menu's cursor may be.
const menuHeight = 40

func isBlank(s string) bool { return strings.TrimSpace(s) == "" }

// framelessMenuMatcher matches a dialog drawn directly above the input box
// with no edge over it: a question line at the margin, then a numbered menu
// whose cursor sits on an option at the margin, reaching the bottom of the
// region. A menu quoted in an answer sits under the answer's head (heads) or
// is indented under it, so a region holding a head, or a menu or question
// off the margin, is no dialog.
type framelessMenuMatcher struct {
	cursor, option, question, heads *pattern
}

func framelessMenu(cursor, option, question, heads *pattern) matcher {
	return framelessMenuMatcher{cursor, option, question, heads}
}

func (m framelessMenuMatcher) match(lines []Line) (Line, bool) {
	cur := -1
	for i, l := range lines {
		if m.cursor.MatchString(l.Text) {
			cur = i
			break
		}
	}
	if cur < 0 {
		return Line{}, false
	}
	for _, l := range lines {
		if m.heads.MatchString(l.Text) {
			return Line{}, false
		}
	}
	// The menu: options, and their descriptions indented under them.
	in := func(t string) bool { return m.option.MatchString(t) || strings.HasPrefix(t, "   ") }
	first := cur
	for first > 0 && !isBlank(lines[first-1].Text) && in(lines[first-1].Text) {
		first--
	}
	options := 0
	for _, l := range lines[first:] {
		switch t := l.Text; {
		case isBlank(t):
		case m.option.MatchString(t):
			options++
		case !in(t):
			return Line{}, false // the menu does not reach the bottom
		}
	}
	if options < 2 || first == 0 || !m.question.MatchString(lines[first-1].Text) {
		return Line{}, false
	}
	return lines[cur], true
}

// onboardingMatcher matches an agent's onboarding: its welcome banner at the
// margin with the banner's own rule line under it, and below them a choice
// (an option under the cursor) or a footer that says Enter goes on, on a
// screen with no input box. A banner quoted in an answer is indented, and an
// answer has an input box under it; the picker of Claude Code's first
// screen has neither numbers nor a footer, so no menu rule sees it.
type onboardingMatcher struct{ banner, rule, cursor, footer *pattern }

func onboarding(banner, rule, cursor, footer *pattern) matcher {
	return onboardingMatcher{banner, rule, cursor, footer}
}

func (m onboardingMatcher) match(lines []Line) (Line, bool) {
	start := -1
	for i := 0; i+1 < len(lines); i++ {
		if m.banner.MatchString(lines[i].Text) && m.rule.MatchString(lines[i+1].Text) {
			start = i + 2
			break
		}
	}
	if start < 0 {
		return Line{}, false
	}
	end := len(lines) - 1
	for end >= start && isBlank(lines[end].Text) {
		end--
	}
	if end < start {
		return Line{}, false
	}
	if m.footer.MatchString(lines[end].Text) {
		return lines[end], true
	}
	for _, l := range lines[start : end+1] {
		if m.cursor.MatchString(l.Text) {
			return l, true
		}
	}
	return Line{}, false
}

// pickerMatcher matches a picker an agent draws with a selection cursor and
// a footer of key hints: the footer is the last line of the region, and a
// line under the cursor (a numbered option, a checklist item, a name)
// stands above it. A picker need not number its items (Codex's checklist
// "› [x] Settings" over "Use ↑/↓ to move, space to toggle"), so its shape is
// the cursor and the footer together.
//
// Read above a live composer (bound set), the picker must also stand below
// a line that ends or starts a turn (the turn's end line, the human's
// message, the session banner), with no head of the transcript (an answer,
// a tool call, a status line) between them and the footer: a picker quoted
// in an answer sits under the answer's head, and one left in the scrollback
// has the turn's lines under it. The human's message counts when the region
// starts there, as the Turn region does.
type pickerMatcher struct {
	footer, cursor *pattern
	// heads and bound are nil where no composer is drawn.
	heads, bound *pattern
}

func picker(footer, cursor *pattern) matcher { return pickerMatcher{footer: footer, cursor: cursor} }

// pickerOverComposer is picker read above a live composer.
func pickerOverComposer(footer, cursor, heads, bound *pattern) matcher {
	return pickerMatcher{footer, cursor, heads, bound}
}

func (m pickerMatcher) match(lines []Line) (Line, bool) {
	_, cur, ok := m.find(lines)
	if !ok {
		return Line{}, false
	}
	return lines[cur], true
}

// find returns the index of the line the picker starts under (-1 for the
// region's start) and of its cursor line.
func (m pickerMatcher) find(lines []Line) (from, cur int, ok bool) {
	end := len(lines) - 1
	for end >= 0 && isBlank(lines[end].Text) {
		end--
	}
	if end < 1 || !m.footer.MatchString(lines[end].Text) {
		return 0, 0, false
	}
	cur = -1
	for i := end - 1; i >= 0 && i >= end-menuHeight; i-- {
		t := lines[i].Text
		if m.heads != nil && m.heads.MatchString(t) {
			return 0, 0, false
		}
		if m.cursor.MatchString(t) {
			cur = i
			break
		}
	}
	if cur < 0 {
		return 0, 0, false
	}
	if m.bound == nil {
		return -1, cur, true
	}
	if cur == 0 {
		// The region starts at the cursor: the turn was read back to it
		// as to a human's message, and nothing of the transcript is in
		// the region. Only a cursor at the margin is taken so; an
		// answer's lines are indented.
		return -1, cur, m.bound.MatchString(lines[0].Text)
	}
	for i := cur - 1; i >= 0; i-- {
		t := lines[i].Text
		if m.bound.MatchString(t) {
			return i, cur, true
		}
		if m.heads.MatchString(t) {
			return 0, 0, false
		}
	}
	return 0, 0, false
}

// after returns the picker's lines: those under the line it starts under
// and the rest of that line's paragraph (the banner's directory line, a
// message's wrapped lines).
func (m pickerMatcher) after(lines []Line) []Line {
	from, cur, ok := m.find(lines)
	if !ok {
		return lines
	}
	from++
	if from > 0 {
		end := from
		for end < cur && !isBlank(lines[end].Text) {
			end++
		}
		if end < cur {
			from = end // a blank line parts the paragraph from the picker
		}
	}
	for from < cur && isBlank(lines[from].Text) {
		from++
	}
	return lines[from:]
}
