package classify

import (
	"strings"
	"unicode/utf8"
)

// This file matches the patterns every common screen reaches by hand, so
// that a process reading one screen compiles no regular expression: in a
// fresh process, compiling the dozen expressions a working Claude Code
// screen reaches costs more than the rest of classifying it. Each matcher
// is attached to its expression (pattern.by, pattern.byGroups), which stays
// in the tables as the rule's text; an expression too rich to match by hand
// gets a test that rules out most lines before it is compiled
// (pattern.needs). TestByHandAgreesWithTheExpression and FuzzByHand hold
// every one of them to its expression.
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

// containingFold is the test that a line holds lit in any case, for an
// expression under (?i). lit is ASCII and holds neither k nor s, the two
// ASCII letters whose case folds to a character outside ASCII (the Kelvin
// sign, the long s), so that its match is always lit's bytes in some case.
func containingFold(lit string) func(string) bool {
	return func(s string) bool {
		for i := 0; i+len(lit) <= len(s); i++ {
			if strings.EqualFold(s[i:i+len(lit)], lit) {
				return true
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

// The matchers of Claude Code's table, each named after what it finds.

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
