package audit

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The Markdown a rule is read from. A rule is a sentence or a list item,
// and both are wrapped over lines at whatever width their writer liked, so
// rules are read from whole blocks, never from single lines: a marker word
// on the second line of a sentence makes the whole sentence the rule.

// A unitKind is the kind of block a rule can come from.
type unitKind int

const (
	paragraph unitKind = iota
	item               // a list item, its wrapped and continued lines joined
	row                // a table row: one line, never joined
)

// A unit is one block of text, its lines joined with a space.
type unit struct {
	kind     unitKind
	numbered bool
	text     string // set by done
	b        strings.Builder
	// starts are the offsets in text where each joined line starts, and
	// lines their line numbers (from 1) in the file.
	starts []int
	lines  []int
	// indent is an item's content column: a line indented as far, after
	// a blank line, is still the item's.
	indent int
	blank  bool // a blank line followed the item's last line
}

// lineAt returns the file's line number of offset off in u.text.
func (u *unit) lineAt(off int) int {
	i, found := slices.BinarySearch(u.starts, off)
	if !found {
		i--
	}
	return u.lines[max(i, 0)]
}

// add appends a line of the unit, numbered line in the file.
func (u *unit) add(text string, line int) {
	if u.b.Len() > 0 {
		u.b.WriteByte(' ')
	}
	u.starts = append(u.starts, u.b.Len())
	u.lines = append(u.lines, line)
	u.b.WriteString(strings.TrimSpace(text))
}

// done sets the unit's text once its last line is added.
func (u *unit) done() *unit {
	u.text = u.b.String()
	return u
}

// A block is a heading or a unit, in file order.
type block struct {
	heading string // set for a heading
	u       *unit
}

var (
	headingRE = lazyRegexp(`^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	setextRE  = lazyRegexp(`^ {0,3}(=+|-+)\s*$`)
	breakRE   = lazyRegexp(`^ {0,3}([-*_])(\s*[-*_]){2,}\s*$`)
	// numberedRE and bulletRE: a list item's indentation, marker, space
	// and content. Items indented up to three spaces start an item of
	// their own: nested lists are separate rules.
	numberedRE   = lazyRegexp(`^( {0,3})(\d{1,3}[.)])(\s+)(\S.*)$`)
	bulletRE     = lazyRegexp(`^( {0,3})([-*+])(\s+)(\S.*)$`)
	fenceRE      = lazyRegexp("^\\s*(`{3,}|~{3,})")
	blockQuoteRE = lazyRegexp(`^ {0,3}>`)
	tableRE      = lazyRegexp(`^ {0,3}\|`)
	commentRE    = lazyRegexp(`^ {0,3}<!--`)
)

// blocks reads content as Markdown into headings and the units a rule can
// be. What is never a rule is left out: fenced and indented code, quotes
// (a block starting with >, with its lazy continuation lines), HTML
// comments (a rendered file does not show them), thematic breaks.
func blocks(content string) []block {
	var out []block
	var cur *unit
	quote := false              // in a block quote, left out
	fence, comment := "", false // in a fence (its opening run), in a comment
	end := func() {
		if cur != nil {
			out = append(out, block{u: cur.done()})
		}
		cur, quote = nil, false
	}
	for i, raw := range strings.Split(content, "\n") {
		n := i + 1
		line := strings.TrimRight(raw, " \t\r")
		switch {
		case fence != "":
			// A fence closes at a line of its own character alone, at
			// least as many as opened it.
			if rest := strings.TrimLeft(line, " \t"); len(rest) >= len(fence) && strings.Trim(rest, fence[:1]) == "" {
				fence = ""
			}
			continue
		case comment:
			if strings.Contains(line, "-->") {
				comment = false
			}
			continue
		}
		if m := fenceRE().FindStringSubmatch(line); m != nil {
			end()
			fence = m[1]
			continue
		}
		if commentRE().MatchString(line) {
			end()
			comment = !strings.Contains(line[strings.Index(line, "<!--")+4:], "-->")
			continue
		}
		if strings.TrimSpace(line) == "" {
			if cur != nil && cur.kind == item {
				cur.blank = true
				continue
			}
			end()
			continue
		}
		indent := indentOf(line)
		if cur != nil && cur.kind == item && cur.blank {
			// After a blank line, a line indented to the item's content
			// is the item's next paragraph; anything else ends it.
			if indent >= cur.indent && !isItem(line) {
				cur.blank = false
				cur.add(line, n)
				continue
			}
			end()
		}
		if m := headingRE().FindStringSubmatch(line); m != nil {
			end()
			out = append(out, block{heading: m[2]})
			continue
		}
		if setextRE().MatchString(line) && cur != nil && cur.kind == paragraph && !quote {
			// The paragraph above was a heading.
			out = append(out, block{heading: cur.done().text})
			cur = nil
			continue
		}
		if breakRE().MatchString(line) {
			end()
			continue
		}
		if blockQuoteRE().MatchString(line) {
			if !quote {
				end()
				quote = true
			}
			continue
		}
		if tableRE().MatchString(line) {
			end()
			u := &unit{kind: row}
			u.add(line, n)
			out = append(out, block{u: u.done()})
			continue
		}
		if m := numberedRE().FindStringSubmatch(line); m != nil {
			end()
			cur = &unit{kind: item, numbered: true, indent: len(m[1]) + len(m[2]) + len(m[3])}
			cur.add(m[4], n)
			continue
		}
		if m := bulletRE().FindStringSubmatch(line); m != nil {
			end()
			cur = &unit{kind: item, indent: len(m[1]) + len(m[2]) + len(m[3])}
			cur.add(m[4], n)
			continue
		}
		if quote {
			continue // a lazy continuation line of the quote
		}
		if cur == nil && indent >= 4 {
			continue // an indented code block
		}
		if cur == nil {
			cur = &unit{kind: paragraph}
		}
		cur.add(line, n) // a paragraph's next line, or an item's lazy one
	}
	end()
	return out
}

func isItem(line string) bool {
	return numberedRE().MatchString(line) || bulletRE().MatchString(line)
}

// indentOf is the column of line's first character, a tab counting to the
// next multiple of four.
func indentOf(line string) int {
	col := 0
	for _, c := range line {
		switch c {
		case ' ':
			col++
		case '\t':
			col += 4 - col%4
		default:
			return col
		}
	}
	return col
}

// sentences returns the offsets [start, end) of the sentences of text. A
// sentence ends at . ! or ? (and any closing bracket, quote or emphasis
// after it) followed by a space, outside a code span, and not after a
// common abbreviation: "e.g. this" and "CLAUDE.md" end nothing. A sentence
// may start in lower case ("omega-monitor watches").
func sentences(text string) [][2]int {
	var out [][2]int
	start := 0
	for i := 0; i < len(text); {
		c := text[i]
		if c == '`' {
			i, _ = skipCodeSpan(text, i)
			continue
		}
		if c != '.' && c != '!' && c != '?' {
			i++
			continue
		}
		j := i + 1
		for j < len(text) && strings.IndexByte(`)]"'*_`, text[j]) >= 0 {
			j++
		}
		for _, closer := range []string{"’", "”"} {
			if strings.HasPrefix(text[j:], closer) {
				j += len(closer)
			}
		}
		if j < len(text) && text[j] != ' ' {
			i = j
			continue
		}
		k := j
		for k < len(text) && text[k] == ' ' {
			k++
		}
		if k < len(text) && c == '.' && abbreviation(text[start:i], text[k:]) {
			i = k
			continue
		}
		out = appendSentence(out, text, start, j)
		start, i = k, k
	}
	return appendSentence(out, text, start, len(text))
}

func appendSentence(out [][2]int, text string, start, end int) [][2]int {
	for start < end && text[start] == ' ' {
		start++
	}
	if start < end {
		out = append(out, [2]int{start, end})
	}
	return out
}

// abbreviation reports whether before (the text before a period) ends in
// an abbreviation that the period does not end a sentence after: e.g., i.e.
// and their kin, and etc. unless a capital follows.
func abbreviation(before, after string) bool {
	before = before[max(len(before)-8, 0):] // longer than any abbreviation
	w := before[strings.LastIndexAny(before, " (")+1:]
	switch strings.ToLower(w) {
	case "e.g", "i.e", "cf", "vs", "viz", "approx", "incl", "fig":
		return true
	case "etc":
		next, _ := utf8.DecodeRuneInString(after)
		return !unicode.IsUpper(next)
	}
	return false
}

// skipCodeSpan returns the offset after the code span whose opening run of
// backquotes starts at i, and true; or, when nothing closes it, the offset
// after that run, and false.
func skipCodeSpan(text string, i int) (int, bool) {
	n := 0
	for i+n < len(text) && text[i+n] == '`' {
		n++
	}
	run := text[i : i+n]
	for j := i + n; j < len(text); {
		k := strings.Index(text[j:], run)
		if k < 0 {
			break
		}
		k += j
		e := k + n
		if e < len(text) && text[e] == '`' { // a longer run: not the closer
			for e < len(text) && text[e] == '`' {
				e++
			}
			j = e
			continue
		}
		return e, true
	}
	return i + n, false
}

// The marker words, and how text that only names them is told from text
// that uses them.
var (
	// markerRE finds a marker used as a word, in capitals: the
	// requirement words of RFC 2119 and their kin.
	markerRE = lazyRegexp(`\b(MUST|NEVER|ALWAYS|SHALL|REQUIRED|DO NOT)\b`)
	// anyCaseMarkerRE is markerRE in a rule file, whose prose instructs
	// in any case ("Never push to main."; "don't" too).
	anyCaseMarkerRE = lazyRegexp(`(?i)\b(must|never|always|shall|required|do not|don't|don’t)\b`)

	// rfcWords are the words a mention names: the markers and the rest
	// of RFC 2119's, which a sentence about the markers lists with them.
	rfcWords = `(?:MUST NOT|MUST|NEVER|ALWAYS|SHALL NOT|SHALL|REQUIRED|DO NOT|SHOULD NOT|SHOULD|MAY|RECOMMENDED|OPTIONAL)`
	// markerListRE is a list of those words: two or more, separated by
	// commas, slashes or bars, or by "or", "and" and "nor" ("MUST,
	// NEVER, ALWAYS", "MUST/NEVER", "MUST or SHALL"). "MUST NEVER",
	// separated by a space alone, is a requirement, not a list.
	markerListRE = lazyRegexp(`\b` + rfcWords + `(?:(?:\s*[,/|]\s*(?:(?:or|and|nor)\s+)?|\s*,?\s+(?:or|and|nor|and/or)\s+)` + rfcWords + `)+\b`)
	// markerNounRE is one of those words named as a word: "the MUST
	// marker", "the keyword NEVER", "marker: ALWAYS".
	markerNounRE = lazyRegexp(`\b` + rfcWords + `\s+(?:markers?|words?|keywords?|terms?)\b|\b(?:markers?|words?|keywords?|terms?):?\s+` + rfcWords + `\b`)
	// quotedWordRE is a marker word alone between single quotes: 'NEVER'.
	quotedWordRE = lazyRegexp(`(?i)['‘]\s*(?:must not|must|never|always|shall not|shall|required|do not|should not|should|may)\s*['’]`)
	// quotedRE is text between double quotes: a quotation, of something
	// other than the project's own requirement.
	quotedRE = lazyRegexp(`"[^"]*"|“[^”]*”`)
)

// unmentioned returns s without what only names marker words: code spans,
// quotations, a marker word between single quotes, a list of the words, a
// word named as a word. What is left uses its markers.
func unmentioned(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] == '`' {
			j, closed := skipCodeSpan(s, i)
			if closed {
				b.WriteByte(' ')
			} else {
				b.WriteString(s[i:j])
			}
			i = j
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	t := b.String()
	if strings.ContainsAny(t, `"“`) {
		t = quotedRE().ReplaceAllString(t, " ")
	}
	if strings.ContainsAny(t, "'‘") {
		t = quotedWordRE().ReplaceAllString(t, " ")
	}
	t = markerListRE().ReplaceAllString(t, " ")
	return markerNounRE().ReplaceAllString(t, " ")
}

// marked reports whether s uses a marker word, not only names one: in
// capitals, or in a rule file (anyCase) in any case.
func marked(s string, anyCase bool) bool {
	re := markerRE()
	if anyCase {
		re = anyCaseMarkerRE()
	}
	return re.MatchString(s) && re.MatchString(unmentioned(s))
}

// onlyNames reports whether s holds marker words, in any case, and every
// one of them is only named (quoted, listed, named as a word).
func onlyNames(s string) bool {
	return anyCaseMarkerRE().MatchString(s) && !anyCaseMarkerRE().MatchString(unmentioned(s))
}
