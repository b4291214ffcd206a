package alert

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
)

// Telegram's sendMessage takes at most 4096 characters of text, counted in
// UTF-16 code units after the HTML entities are parsed.
const (
	// MaxMessageLen is the most any message from HTML holds, counted as
	// Telegram counts; it leaves a margin below Telegram's 4096.
	MaxMessageLen = 4000
	// MaxMessages is the most messages one alert becomes. What does not
	// fit is dropped, and the last message says how many lines were.
	MaxMessages = 4
	// MaxLineLen is the longest pane line shown; a longer one keeps its
	// head and tail and says how much of its middle was cut.
	MaxLineLen = 1000
)

// HTML renders the alert as messages for Telegram's HTML parse mode: a
// headline with the target, the time and the state, a plain sentence of what
// the watcher did and did not do, and the pane text in <pre> blocks (which
// keeps it verbatim and stops Telegram from turning mentions, commands and
// links in it into live entities). Every piece of pane text is redacted,
// cleaned and escaped. Only the tags b, i, code and pre are used.
//
// One message is the rule. Long pane text is split between lines into at
// most MaxMessages messages, each within MaxMessageLen, each tag closed in
// the message that opens it; a message that continues says so, and text that
// does not fit is dropped with a visible count.
func (a Alert) HTML() []string {
	var blocks []block
	add := func(b block) {
		if len(b.lines) > 0 {
			blocks = append(blocks, b)
		}
	}
	title := []span{bold(a.headline()), plain(" · "), code(oneLine(a.Target))}
	add(plainBlock(join(title...), plain(a.status())))
	switch a.Kind {
	case Question:
		add(plainBlock(plain("The session is waiting for a human answer. Relayed verbatim; the watcher has not answered it and will not.")))
		q := preBlock(a.Question)
		var opts []string
		for _, o := range a.Options {
			opts = append(opts, uncursor(o))
		}
		o := preBlock(strings.Join(opts, "\n"))
		if len(q.lines) == 0 && len(o.lines) == 0 {
			add(plainBlock(italic("The question could not be read from the pane; look at the session.")))
		}
		add(q)
		if len(o.lines) > 0 {
			add(plainBlock(plain("Options, as the pane lists them:")))
			add(o)
		}
		if k := preBlock(a.Keys); len(k.lines) > 0 {
			add(plainBlock(plain("Keys, as the dialog shows them:")))
			add(k)
		}
		if r := cutRunes(oneLine(Redact(a.Reply)), MaxLineLen); r != "" {
			add(plainBlock(join(plain("✍ A reply to this message is typed as your own words for "), bold(r),
				plain(fmt.Sprintf(": one line, at most %d characters.", a.ReplyMax)))))
		}
		if r := cutRunes(oneLine(Redact(a.NoButtons)), MaxLineLen); r != "" {
			add(plainBlock(italic("No buttons: " + r + ". Answer it at the terminal.")))
		}
	case Blocked:
		add(plainBlock(plain("The session has stopped and the work probe reports no work left, so the watcher does not nudge it. A human needs to decide what comes next.")))
		a.addTransition(add)
	case BudgetExhausted:
		add(plainBlock(plain(a.budgetSentence())))
		a.addTransition(add)
	case Failure:
		add(plainBlock(plain("The pane shows a failure:")))
		add(preBlock(a.FailLine))
	case UsageLimit:
		who := cutRunes(oneLine(a.Agent), 40)
		if who == "" {
			who = "The agent"
		}
		add(plainBlock(plain(who + " was stopped by its usage limit, as the pane says:")))
		add(preBlock(a.Limit))
		if r := cutRunes(oneLine(Redact(a.Reset)), 40); r != "" {
			add(plainBlock(plain("It resets " + r + ", as the pane gives it. The watcher types nothing until the minute shown is over, then nudges it once, and tells you when it has.")))
		} else {
			add(plainBlock(plain("No reset time is shown. The watcher types nothing and looks again each interval; resuming it is yours.")))
		}
	case Notice:
		add(preBlock(a.Text))
	}
	cont := join(bold(a.headline()), plain(" · "), code(oneLine(a.Target)), plain(" · "), italic("continued"))
	return paginate(cont, blocks)
}

func (a Alert) addTransition(add func(block)) {
	t := preBlock(a.Transition)
	if len(t.lines) > 0 {
		add(plainBlock(plain("Last transition:")))
		add(t)
	}
}

// status is the headline's second line: the time and the figures.
func (a Alert) status() string {
	var parts []string
	if !a.Time.IsZero() {
		parts = append(parts, a.Time.Format("2006-01-02 15:04:05 MST"))
	}
	if s := oneLine(a.State); s != "" {
		parts = append(parts, "state "+cutRunes(s, 24))
	}
	switch a.Kind {
	case Blocked:
		parts = append(parts, "work="+figure(a.Work))
	case BudgetExhausted:
		parts = append(parts, "work="+figure(a.Work), "progress="+figure(a.Progress),
			"nudges "+strconv.Itoa(a.Budget)+"/"+strconv.Itoa(a.Budget))
	}
	return strings.Join(parts, " · ")
}

func (a Alert) budgetSentence() string {
	if a.Budget == 0 {
		return "A human is needed. The session has stopped with work left, and this watcher does not nudge (--nudge-budget 0)."
	}
	var moved string
	if p := figure(a.Progress); p != "?" {
		moved = "the progress figure stayed at " + p
	} else {
		moved = "no progress could be read (there is no progress probe)"
	}
	return "A human is needed. The session keeps stopping: the watcher nudged it " +
		strconv.Itoa(a.Budget) + timesWord(a.Budget) + " in a row and " + moved +
		", so it has stopped nudging. Whatever holds the session is something a nudge does not move."
}

func timesWord(n int) string {
	if n == 1 {
		return " time"
	}
	return " times"
}

// A span is a piece of a message: its HTML and the length of its text as
// Telegram counts it (UTF-16 code units after entity parsing).
type span struct {
	html string
	n    int
}

func plain(s string) span  { return span{escape(s), utf16Len(s)} }
func bold(s string) span   { return wrap("b", plain(s)) }
func italic(s string) span { return wrap("i", plain(s)) }
func code(s string) span   { return wrap("code", plain(s)) }

func wrap(tag string, s span) span {
	return span{"<" + tag + ">" + s.html + "</" + tag + ">", s.n}
}

func join(ss ...span) span {
	var out span
	for _, s := range ss {
		out.html += s.html
		out.n += s.n
	}
	return out
}

// A block is lines that share one tag: pane text in <pre>, or the
// watcher's own lines with no tag. A block may be split between messages
// at a line boundary; each part is wrapped in the tag again.
type block struct {
	open, close string
	lines       []span
}

func plainBlock(lines ...span) block {
	var kept []span
	for _, l := range lines {
		if l.n > 0 {
			kept = append(kept, l)
		}
	}
	return block{lines: kept}
}

// preBlock is pane text as a <pre> block: cleaned, redacted, trailing space
// and blank edges dropped, long lines cut in the middle.
func preBlock(s string) block {
	lines := strings.Split(clean(s), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	b := block{open: "<pre>", close: "</pre>"}
	for _, l := range lines {
		b.lines = append(b.lines, plain(cutMiddle(l, MaxLineLen)))
	}
	return b
}

// paginate lays blocks out in messages of at most MaxMessageLen, starting
// every message after the first with cont.
func paginate(cont span, blocks []block) []string {
	const (
		next    = "(continued in the next message)"
		reserve = 64 // room for the line that ends a full message
	)
	var (
		pages []string
		b     strings.Builder
		n     int
		fresh = true // nothing but the continuation headline on this page
	)
	rest := func(bi, li int) int {
		k := len(blocks[bi].lines) - li
		for _, bl := range blocks[bi+1:] {
			k += len(bl.lines)
		}
		return k
	}
	// endPage ends the page; it reports false when no page may follow.
	endPage := func(bi, li int) bool {
		if len(pages)+1 == MaxMessages {
			m := italic("[… " + strconv.Itoa(rest(bi, li)) + " more lines not sent]")
			b.WriteString("\n" + m.html)
			pages = append(pages, b.String())
			return false
		}
		b.WriteString("\n" + italic(next).html)
		pages = append(pages, b.String())
		b.Reset()
		b.WriteString(cont.html)
		n, fresh = cont.n, true
		return true
	}
	for bi, bl := range blocks {
		for li := 0; li < len(bl.lines); {
			sep := 0
			if b.Len() > 0 {
				sep = 1
			}
			room := MaxMessageLen - reserve - n - sep
			k, used := 0, 0
			for li+k < len(bl.lines) {
				c := bl.lines[li+k].n
				if k > 0 {
					c++
				}
				if used+c > room && !(k == 0 && fresh) {
					break
				}
				used += c
				k++
			}
			if k == 0 {
				if !endPage(bi, li) {
					return pages
				}
				continue
			}
			if sep > 0 {
				b.WriteString("\n")
			}
			b.WriteString(bl.open)
			for i, l := range bl.lines[li : li+k] {
				if i > 0 {
					b.WriteString("\n")
				}
				b.WriteString(l.html)
			}
			b.WriteString(bl.close)
			n += sep + used
			fresh = false
			li += k
			if li < len(bl.lines) && !endPage(bi, li) {
				return pages
			}
		}
	}
	return append(pages, b.String())
}

// escape makes text safe for Telegram's HTML mode. Quotes need no escape
// outside attributes, and no pane text goes into an attribute.
var escape = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// cutMiddle shortens a line longer than max UTF-16 units to its head and
// tail around a marker that says how many characters were cut.
func cutMiddle(s string, max int) string {
	if utf16Len(s) <= max {
		return s
	}
	rs := []rune(s)
	head, tail := 0, len(rs)
	for n := 0; n+utf16.RuneLen(rs[head]) <= max*6/10; head++ {
		n += utf16.RuneLen(rs[head])
	}
	for n := 0; n+utf16.RuneLen(rs[tail-1]) <= max*3/10; tail-- {
		n += utf16.RuneLen(rs[tail-1])
	}
	return string(rs[:head]) + " … [" + strconv.Itoa(tail-head) + " characters cut] … " + string(rs[tail:])
}

// clean makes pane text fit to send: valid UTF-8, no terminal escape
// sequences, no control characters but newline and tab, no bidirectional
// overrides that would make it read other than it is, and redacted.
func clean(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = ansi().ReplaceAllString(s, "")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			return -1
		case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return -1
		}
		return r
	}, s)
	return Redact(s)
}

// ansi matches the terminal escape sequences a pane capture may carry:
// CSI (colours, cursor moves), OSC (titles, hyperlinks) and the two-byte
// escapes.
var ansi = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])`)
})

// cursor is a selection cursor in front of a numbered option, or, since an
// option line holds only its option, in front of an unnumbered one (a trust
// or API key dialog's "❯ No, exit"); a bare > only before a number.
var cursor = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(\s*)(?:❯|›|●|▸|➤|>)(\s*\d+[.)])|^(\s*)(?:❯|›|●|▸|➤)( +\S)`)
})

// uncursor replaces a selection cursor with a space, keeping the alignment.
func uncursor(s string) string {
	return cursor().ReplaceAllString(s, "$1$3 $2$4")
}
