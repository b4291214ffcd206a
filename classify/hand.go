package classify

import (
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// This file matches the patterns every common screen reaches by hand, so
// that a process reading one screen compiles no regular expression: in a
// fresh process, compiling the dozen expressions a working Claude Code
// screen reaches costs more than the rest of classifying it. A matcher is
// attached to a description's pattern by the expression's text alone
// (described): a whole line of literals, a literal after an indent, or one
// of fastPaths, so that the description stays a regular expression, the
// rule's text. An expression too rich to match by hand gets from its
// description the literals a line must hold before it is compiled
// ("needs", pattern.needs). TestByHandAgreesWithTheExpression, FuzzByHand
// and FuzzDescribed hold every one of them to its expression.
//
// The helpers read a line as Go's regexp does: \s is [\t\n\f\r ], \d is
// [0-9], . is any character but a newline, and a byte of invalid UTF-8 is
// one character, U+FFFD.

// by attaches the matcher by hand of p's expression.
func (p *pattern) by(match func(string) bool) *pattern {
	p.byHand = match
	return p
}

// byGroups attaches the matcher by hand of p's expression that also returns
// its groups, as FindStringSubmatch does.
func (p *pattern) byGroups(groups func(string) []string) *pattern {
	p.groups = groups
	p.byHand = func(s string) bool { return groups(s) != nil }
	return p
}

// needs attaches to p a test that every line its expression matches
// passes, such as a literal the expression holds: a line that fails it is
// no match, and compiles nothing. For the expressions too rich to match by
// hand that every screen of an agent reaches.
func (p *pattern) needs(test func(string) bool) *pattern {
	p.need = test
	return p
}

// containing is the test that a line holds one of lits.
func containing(lits ...string) func(string) bool {
	return func(s string) bool {
		for _, l := range lits {
			if strings.Contains(s, l) {
				return true
			}
		}
		return false
	}
}

// containingFold is the test that a line holds one of lits in any case, for an
// expression under (?i). Each is ASCII and holds neither k nor s, the two
// ASCII letters whose case folds to a character outside ASCII (the Kelvin
// sign, the long s), so that its match is always lit's bytes in some case.
func containingFold(lits ...string) func(string) bool {
	return func(s string) bool {
		for _, lit := range lits {
			for i := 0; i+len(lit) <= len(s); i++ {
				if strings.EqualFold(s[i:i+len(lit)], lit) {
					return true
				}
			}
		}
		return false
	}
}

// classGlyphs returns the characters of a character class of literal
// characters, such as spinnerGlyphs: the same set, for matching by hand.
func classGlyphs(class string) []string {
	return strings.Split(strings.TrimSuffix(strings.TrimPrefix(class, "["), "]"), "")
}

// cutAny returns s after the first of prefixes that starts it.
func cutAny(s string, prefixes ...string) (string, bool) {
	for _, p := range prefixes {
		if rest, ok := strings.CutPrefix(s, p); ok {
			return rest, true
		}
	}
	return s, false
}

// isSpace is \s.
func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\f' || b == '\r'
}

// startsNonSpace is \S at the start of s.
func startsNonSpace(s string) bool { return s != "" && !isSpace(s[0]) }

func isDigit(b byte) bool { return '0' <= b && b <= '9' }

// cutDigits returns s after \d+, or false.
func cutDigits(s string) (string, bool) {
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return s[i:], i > 0
}

// cutSpaces returns s after ` +`, or false.
func cutSpaces(s string) (string, bool) {
	t := strings.TrimLeft(s, " ")
	return t, len(t) < len(s)
}

// within reports whether match holds at the start of s or after one of its
// first n characters, none a newline: `^.{0,n}X`.
func within(s string, n int, match func(string) bool) bool {
	for i := 0; ; i++ {
		if match(s) {
			return true
		}
		if i == n || s == "" || s[0] == '\n' {
			return false
		}
		_, size := utf8.DecodeRuneInString(s)
		s = s[size:]
	}
}

// promptDraft matches `^(?:M1|M2…)(?: (.*))?$`: a prompt mark alone, or
// followed by a space and the draft, the first group.
func promptDraft(marks ...string) func(string) []string {
	return func(s string) []string {
		rest, ok := cutAny(s, marks...)
		switch {
		case !ok:
			return nil
		case rest == "":
			return []string{s, ""}
		case rest[0] != ' ' || strings.IndexByte(rest, '\n') >= 0:
			return nil
		}
		return []string{s, rest[1:]}
	}
}

// numbered matches `^ *(?:(?:C1|C2…) *)?\d+\. +\S`, the line of a numbered
// option, with the cursor before it optional or, when cursorNeeded, not:
// `^ *(?:C1|C2…) *\d+\. +\S`.
func numbered(cursorNeeded bool, cursors ...string) func(string) bool {
	return func(s string) bool {
		s = strings.TrimLeft(s, " ")
		s, ok := cutAny(s, cursors...)
		if !ok && cursorNeeded {
			return false
		}
		s = strings.TrimLeft(s, " ")
		if s, ok = cutDigits(s); !ok {
			return false
		}
		if s, ok = strings.CutPrefix(s, "."); !ok {
			return false
		}
		s, ok = cutSpaces(s)
		return ok && startsNonSpace(s)
	}
}

// cursorOnNumber matches `^(?:C1|C2…) *\d+\. `: an option under the cursor
// at the margin, which looks like a prompt line.
func cursorOnNumber(cursors ...string) func(string) bool {
	return func(s string) bool {
		s, ok := cutAny(s, cursors...)
		if !ok {
			return false
		}
		if s, ok = cutDigits(strings.TrimLeft(s, " ")); !ok {
			return false
		}
		return strings.HasPrefix(s, ". ")
	}
}

// hintOf matches hintLine of literal keys: up to two spaces, hints joined
// by " · " (each starting with neither a space nor a ·, holding no ·), one
// of which is a key followed by " · " or the end of the line.
func hintOf(keys ...string) func(string) bool {
	return func(s string) bool {
		t := strings.TrimLeft(s, " ")
		if len(s)-len(t) > 2 {
			return false
		}
		for i := 0; i < len(t); i++ {
			if i > 0 && !strings.HasSuffix(t[:i], " · ") {
				continue
			}
			rest, ok := cutAny(t[i:], keys...)
			if ok && (rest == "" || strings.HasPrefix(rest, " · ")) && hints(t[:i]) {
				return true
			}
		}
		return false
	}
}

// hints reports whether s is `(?:[^ ·][^·]* · )*`.
func hints(s string) bool {
	const sep = " · "
	for s != "" {
		i := strings.Index(s, "·")
		if i < 1 || s[0] == ' ' || !strings.HasPrefix(s[i-1:], sep) {
			return false
		}
		s = s[i-1+len(sep):]
	}
	return true
}

// spinnerLine matches `^G \S.*…(?: \(.*\))?$` for a glyph G of glyphs: a
// spinner's gerund ending in …, and an optional meter in parentheses.
func spinnerLine(glyphs []string) func(string) bool {
	return func(s string) bool {
		rest, ok := cutAny(s, glyphs...)
		if !ok {
			return false
		}
		if rest, ok = strings.CutPrefix(rest, " "); !ok || !startsNonSpace(rest) {
			return false
		}
		_, size := utf8.DecodeRuneInString(rest)
		rest = rest[size:]
		if strings.IndexByte(rest, '\n') >= 0 {
			return false
		}
		if strings.HasSuffix(rest, "…") {
			return true
		}
		const open = "… ("
		i := strings.Index(rest, open)
		return i >= 0 && i+len(open) < len(rest) && strings.HasSuffix(rest, ")")
	}
}

// Claude Code's spinner glyphs (macOS, Linux's ASCII star, reduced motion).
// The same glyphs head a finished turn (✻ Brewed for 60s), which carries
// neither the ellipsis nor a meter, and so is not a spinner.
const spinnerGlyphs = `[·✢✳✶✻✽*]`

// Claude Code's effort indicator glyphs, one per level.
const effortGlyphs = `[◐◑◒◓○●]`

// rule lines: a column-0 run of box-drawing horizontals, possibly with a
// short label inside. Draft continuation lines are indented, so a draft
// cannot forge one.
const ruleLine = `^─{3,}(?:[^─]{0,40}─+)?$`

// A hint line is a dialog's footer: key hints joined by " · ", at the
// margin where the agent draws its dialogs (column 0 to 2). hintLine makes
// the pattern of one whose hints include one of keys.
func hintLine(keys string) string {
	return `^ {0,2}(?:[^ ·][^·]* · )*(?:` + keys + `)(?: · |$)`
}

// claudeHeads matches the lines that start a block of Claude Code's
// transcript: an answer or tool call, a thinking block, a spinner or a
// turn's end, a human's message.
const claudeHeads = `^(?:[⏺●∴] |` + spinnerGlyphs + ` \S|(?:>|❯) [^\d\s])`

// The matchers of Claude Code's description, each named after what it finds.

// The glyphs of Claude Code's character classes, split once.
var (
	spinners = classGlyphs(spinnerGlyphs)
	efforts  = classGlyphs(effortGlyphs)
)

// isTryPlaceholder is `^Try "[^"]*"$`.
func isTryPlaceholder(s string) bool {
	mid, ok := strings.CutPrefix(s, `Try "`)
	return ok && strings.HasSuffix(mid, `"`) && !strings.Contains(mid[:len(mid)-1], `"`)
}

// isClaudeUserTurn is `^(?:>|❯) \S`.
func isClaudeUserTurn(s string) bool {
	rest, ok := cutAny(s, ">", "❯")
	return ok && strings.HasPrefix(rest, " ") && startsNonSpace(rest[1:])
}

// isClaudeBanner is `^.{0,12}(?:Claude Code v\d|✻ Welcome to Claude Code)`.
func isClaudeBanner(s string) bool {
	return within(s, 12, func(s string) bool {
		v, ok := strings.CutPrefix(s, "Claude Code v")
		return ok && v != "" && isDigit(v[0]) || strings.HasPrefix(s, "✻ Welcome to Claude Code")
	})
}

// isEffortLine is `^ +` + effortGlyphs + ` \S+ · /effort$`.
func isEffortLine(s string) bool {
	s, ok := cutSpaces(s)
	if !ok {
		return false
	}
	if s, ok = cutAny(s, efforts...); !ok {
		return false
	}
	if s, ok = strings.CutPrefix(s, " "); !ok {
		return false
	}
	i := strings.IndexAny(s, " \t\n\f\r") // the end of \S+
	return i > 0 && s[i:] == " · /effort"
}

// isToolTip is `^ *⎿ +Tip: `.
func isToolTip(s string) bool {
	s, ok := strings.CutPrefix(strings.TrimLeft(s, " "), "⎿")
	if !ok {
		return false
	}
	if s, ok = cutSpaces(s); !ok {
		return false
	}
	return strings.HasPrefix(s, "Tip: ")
}

// isClaudeFrameTop is `^(?:─{3,}|╭─+╮)`.
func isClaudeFrameTop(s string) bool {
	if strings.HasPrefix(s, "───") {
		return true
	}
	s, ok := strings.CutPrefix(s, "╭")
	t := strings.TrimLeft(s, "─")
	return ok && len(t) < len(s) && strings.HasPrefix(t, "╮")
}

// isClaudeHead is `^(?:[⏺●∴] |` + spinnerGlyphs + ` \S|(?:>|❯) [^\d\s])`.
func isClaudeHead(s string) bool {
	if rest, ok := cutAny(s, "⏺", "●", "∴"); ok {
		return strings.HasPrefix(rest, " ")
	}
	if rest, ok := cutAny(s, spinners...); ok {
		return strings.HasPrefix(rest, " ") && startsNonSpace(rest[1:])
	}
	rest, ok := cutAny(s, ">", "❯")
	return ok && strings.HasPrefix(rest, " ") && startsNonSpace(rest[1:]) && !isDigit(rest[1])
}

// isMarginCursor is `^ ?❯ *\d+\. +\S`: an option under Claude Code's cursor
// at a dialog's margin.
func isMarginCursor(s string) bool {
	s = strings.TrimPrefix(s, " ")
	rest, ok := strings.CutPrefix(s, "❯")
	if !ok {
		return false
	}
	if rest, ok = cutDigits(strings.TrimLeft(rest, " ")); !ok {
		return false
	}
	if rest, ok = strings.CutPrefix(rest, "."); !ok {
		return false
	}
	rest, ok = cutSpaces(rest)
	return ok && startsNonSpace(rest)
}

// isMarginQuestion is `^ ?[^ ⎿❯>⏺●].*\?$`: a line at a dialog's margin,
// no tool result, prompt or answer head, that ends in a question mark.
func isMarginQuestion(s string) bool {
	s = strings.TrimPrefix(s, " ")
	r, size := utf8.DecodeRuneInString(s)
	if s == "" || strings.ContainsRune(" ⎿❯>⏺●", r) && r != utf8.RuneError {
		return false
	}
	rest := s[size:]
	return strings.HasSuffix(rest, "?") && !strings.Contains(rest, "\n")
}

// described makes a pattern of a description (the project's or an
// operator's): its expression, matched by hand when this file knows a
// matcher that answers as the expression does. Which one is chosen by the
// expression's text alone, so a description stays a regular expression
// and a matcher by hand is only ever a faster way to its answer.
func described(expr string) *pattern {
	p := re(expr)
	if attach := fastPaths()[expr]; attach != nil {
		attach(p)
	} else if lines, ok := literalLines(expr); ok {
		p.byHand = func(s string) bool { return slices.Contains(lines, s) }
	} else if lit, ok := indentedLiteral(expr); ok {
		p.byHand = func(s string) bool { return strings.HasPrefix(strings.TrimLeft(s, " "), lit) }
	}
	return p
}

// fastPaths are the matchers by hand of the expressions the built-in
// descriptions read on most screens of their agents, by the expression's
// text (TestFastPathsUsed fails on one no description uses any more).
// It is built when a description is first read, not at init: a command
// that reads no screen does not pay for it.
func fastPaths() map[string]func(*pattern) {
	fastPathsOnce.Do(func() { fastPathsMap = makeFastPaths() })
	return fastPathsMap
}

var (
	fastPathsOnce sync.Once
	fastPathsMap  map[string]func(*pattern)
)

func makeFastPaths() map[string]func(*pattern) {
	by := func(match func(string) bool) func(*pattern) { return func(p *pattern) { p.by(match) } }
	return map[string]func(*pattern){
		ruleLine:                by(isRuleLine),
		`^(?:❯|>|!)(?: (.*))?$`: func(p *pattern) { p.byGroups(promptDraft("❯", ">", "!")) },
		`^(?:❯|>) *\d+\. `:      by(cursorOnNumber("❯", ">")),
		`^Try "[^"]*"$`:         by(isTryPlaceholder),
		`^(?:>|❯) \S`:           by(isClaudeUserTurn),
		`^.{0,12}(?:Claude Code v\d|✻ Welcome to Claude Code)`: by(isClaudeBanner),
		`^ +` + effortGlyphs + ` \S+ · /effort$`:               by(isEffortLine),
		`^ *⎿ +Tip: `:                               by(isToolTip),
		`^(?:─{3,}|╭─+╮)`:                           by(isClaudeFrameTop),
		claudeHeads:                                 by(isClaudeHead),
		hintLine(`Enter to select`):                 by(hintOf("Enter to select")),
		`^ ?❯ *\d+\. +\S`:                           by(isMarginCursor),
		`^ *(?:❯ *)?\d+\. +\S`:                      by(numbered(false, "❯")),
		`^ ?[^ ⎿❯>⏺●].*\?$`:                         by(isMarginQuestion),
		`^` + spinnerGlyphs + ` \S.*…(?: \(.*\))?$`: by(spinnerLine(spinners)),
	}
}

// literalLines returns the lines of an expression `^(?:L1|L2…)$` or `^L$`
// whose branches are literals (as regexp.QuoteMeta writes them): a line
// matches it when it is one of them.
func literalLines(expr string) ([]string, bool) {
	inner, ok := strings.CutPrefix(expr, "^")
	if !ok {
		return nil, false
	}
	if inner, ok = strings.CutSuffix(inner, "$"); !ok {
		return nil, false
	}
	// Branches only inside the group: `^a|b$` is `(^a)|(b$)`.
	branches := []string{inner}
	if in, ok := strings.CutPrefix(inner, "(?:"); ok {
		if inner, ok = strings.CutSuffix(in, ")"); !ok {
			return nil, false
		}
		branches = splitBranches(inner)
	}
	var lines []string
	for _, branch := range branches {
		lit, ok := unquoteMeta(branch)
		if !ok || lit == "" {
			return nil, false
		}
		lines = append(lines, lit)
	}
	return lines, true
}

// indentedLiteral returns L of an expression `^ *L`, L a literal that
// starts with no space.
func indentedLiteral(expr string) (string, bool) {
	q, ok := strings.CutPrefix(expr, "^ *")
	if !ok {
		return "", false
	}
	lit, ok := unquoteMeta(q)
	if !ok || lit == "" || lit[0] == ' ' {
		return "", false
	}
	return lit, true
}

// splitBranches splits s at each | no backslash escapes.
func splitBranches(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '|':
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// unquoteMeta returns the literal that regexp.QuoteMeta writes as q, and
// false when q is not such a literal: every byte QuoteMeta escapes is
// escaped in q, and every backslash escapes one.
func unquoteMeta(q string) (string, bool) {
	const special = `\.+*?()|[]{}^$`
	var b strings.Builder
	for i := 0; i < len(q); i++ {
		c := q[i]
		if c == '\\' {
			if i++; i == len(q) || strings.IndexByte(special, q[i]) < 0 {
				return "", false
			}
			c = q[i]
		} else if strings.IndexByte(special, c) >= 0 {
			return "", false
		}
		b.WriteByte(c)
	}
	return b.String(), true
}
