package ledger

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// SliceLen is the length, in runes of normalised text, of the slices a
// Matcher matches. A span of a pane line can be ours only when every rune of
// it lies in some SliceLen-rune slice of a record (see Matcher for the rest
// of the rule); a fragment of our text shorter than SliceLen on a line of
// its own is never masked, unless a space beside it was ours too.
//
// Twelve is a compromise between two failures. Longer slices make a chance
// match in unrelated text rarer, but the pane hard-wraps our text at any
// width behind prefixes such as "│ > ", and at 20 columns a line holds only
// 16 runes of it: a slice must fit well inside that. Shorter slices catch
// shorter fragments, but below about ten runes, ordinary phrases ("with the
// next ", "the tests in") start to recur in the agent's own prose.
const SliceLen = 12

// Window hashes are polynomial over the runes, modulo 2^64. They only route
// a lookup: every hit is checked rune by rune, so a collision can cost time
// but never give a wrong answer.
const hashBase = 0x100000001b3

// hashBaseK is hashBase to the power SliceLen: the weight of the rune that
// leaves the window.
var hashBaseK = func() uint64 {
	p := uint64(1)
	for range SliceLen {
		p *= hashBase
	}
	return p
}()

// A Matcher finds, in a line of a pane, the spans that are echoes of
// recorded text, and removes them. It is built once and is safe for
// concurrent use; a nil *Matcher holds nothing and masks nothing.
//
// A span is removed when it is an echo: a run of recorded slices, one for
// each rune position along it, whose two ends both look like the ends of
// an echoed fragment. An end does when the recorded text itself starts (or
// ends) there, or when the line holds no letter before (or after) it, only
// prompt glyphs, borders, indent and padding, which is where the pane's wrap
// puts the rest of the text. So "❯ continue with the next step" and the
// wrapped "│   ue with the next ste   │" lose their fragment, but a line that
// merely shares a phrase with a record in the middle of its own words, such
// as "All 41 tests pass. The report is in coverage.html." against a record
// that ends "when its tests pass.", keeps every character.
//
// Its cost per line is linear in the line's length and independent of how
// many records it holds: each position of the line is one rolling-hash
// update and one probe of a bit filter, and only a filter hit looks further.
type Matcher struct {
	records int      // distinct records
	recs    []string // the distinct records, for Contains
	text    string   // every record that has a slice, one after another
	filter  []uint64
	fshift  uint   // 64 - log2(bits in filter)
	slots   []slot // open addressing, len a power of two
	smask   uint64 // len(slots) - 1
	used    int    // slots not empty
}

// A slot holds one slice, packed in 64 bits: 1 + its offset in text in the
// low 32 (so 0 is an empty slot), its flags in the next 3, and the top 29
// bits of its mixed hash as a tag in the rest.
type slot uint64

func (s slot) off() int     { return int(uint32(s)) - 1 }
func (s slot) flags() uint8 { return uint8(s>>32) & 7 }
func (s slot) tag() uint64  { return uint64(s) >> 35 }
func newSlot(off int, flags uint8, x uint64) slot {
	return slot(uint64(off+1) | uint64(flags)<<32 | x>>35<<35)
}

// Flags of a slice, as has returns them.
const (
	found = 1 << iota // a recorded slice
	first             // the first slice of some record
	last              // the last slice of some record
)

// NewMatcher returns a Matcher for the given texts, normalised as Record
// normalises them: each line of a text is a record of its own.
func NewMatcher(texts ...string) *Matcher {
	var recs []string
	for _, t := range texts {
		recs = append(recs, records(t)...)
	}
	return newMatcher(recs)
}

// newMatcher builds a Matcher over records that are already normalised.
func newMatcher(recs []string) *Matcher {
	m := new(Matcher)
	seen := make(map[string]bool, len(recs))
	m.recs = make([]string, 0, len(recs))
	long := make([]string, 0, len(recs)) // the distinct records with a slice
	var windows int
	for _, r := range recs {
		if seen[r] {
			continue
		}
		seen[r] = true
		m.records++
		m.recs = append(m.recs, r)
		if n := utf8.RuneCountInString(r); n >= SliceLen {
			long = append(long, r)
			windows += n - SliceLen + 1
		}
	}
	if windows == 0 {
		return m
	}

	// The table starts at room for a quarter of the slices, and doubles
	// when it is three quarters full: records share most of their slices
	// (a nudge told again with another step number), and a process that
	// reads one screen pays more for fresh memory than for probes.
	nslots := 16
	for 3*nslots < windows {
		nslots <<= 1
	}
	m.slots = make([]slot, nslots)
	m.smask = uint64(nslots - 1)
	// About 4 filter bits per slice, and more per distinct one, since
	// records share most of their slices: at most one probe in 5 of
	// unrelated text gets past the filter. At most 2^20 bits (128 KiB), to
	// stay in the cache.
	fbits, log := 1<<9, uint(9)
	for fbits < 4*windows && log < 20 {
		fbits <<= 1
		log++
	}
	m.filter = make([]uint64, fbits/64)
	m.fshift = 64 - log
	m.text = strings.Join(long, "")

	start := 0
	for _, r := range long {
		var (
			h      uint64
			ring   [SliceLen]rune // the last SliceLen runes
			starts [SliceLen]int  // and where each starts in text
			j, n   int            // the oldest's index in ring, and the runes so far
		)
		for i, c := range r {
			h = h*hashBase + uint64(c)
			if n >= SliceLen {
				h -= uint64(ring[j]) * hashBaseK // the rune that leaves
			}
			ring[j], starts[j] = c, start+i
			if j++; j == SliceLen {
				j = 0
			}
			if n++; n < SliceLen {
				continue
			}
			off, end, flags := starts[j], start+i+utf8.RuneLen(c), uint8(found)
			if off == start {
				flags |= first
			}
			if end == start+len(r) {
				flags |= last
			}
			m.insert(h, m.text[off:end], off, flags)
		}
		start += len(r)
	}
	return m
}

// mix scrambles a window hash so that its top bits can index the filter and
// its low bits the slots.
func mix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return h
}

// insert adds the slice of text at off, with hash h, or adds flags to it if
// it is there.
func (m *Matcher) insert(h uint64, want string, off int, flags uint8) {
	x := mix(h)
	m.filter[x>>m.fshift>>6] |= 1 << (x >> m.fshift & 63)
	for i := x & m.smask; ; i = (i + 1) & m.smask {
		s := &m.slots[i]
		if *s == 0 {
			*s = newSlot(off, flags, x)
			if m.used++; 4*m.used >= 3*len(m.slots) {
				m.grow()
			}
			return
		}
		// The same bytes are the same runes: want is whole runes.
		if s.tag() == x>>35 && strings.HasPrefix(m.text[s.off():], want) {
			*s |= slot(flags) << 32
			return
		}
	}
}

// grow doubles the table. A slot keeps only the top bits of its hash, so
// each slice's hash is computed again from its runes, as the rolling hash
// of newMatcher computed it.
func (m *Matcher) grow() {
	old := m.slots
	m.slots = make([]slot, 2*len(old))
	m.smask = uint64(len(m.slots) - 1)
	for _, s := range old {
		if s == 0 {
			continue
		}
		var h uint64
		n := 0
		for _, c := range m.text[s.off():] {
			h = h*hashBase + uint64(c)
			if n++; n == SliceLen {
				break
			}
		}
		i := mix(h) & m.smask
		for m.slots[i] != 0 {
			i = (i + 1) & m.smask
		}
		m.slots[i] = s
	}
}

// has returns the flags of the window in ring, oldest rune at ring[head],
// with hash h: 0 if it is not a recorded slice.
func (m *Matcher) has(h uint64, ring *[SliceLen]rune, head int) uint8 {
	x := mix(h)
	if m.filter[x>>m.fshift>>6]&(1<<(x>>m.fshift&63)) == 0 {
		return 0
	}
	for i := x & m.smask; ; i = (i + 1) & m.smask {
		s := m.slots[i]
		if s == 0 {
			return 0
		}
		if s.tag() != x>>35 {
			continue
		}
		j := head
		for _, r := range m.text[s.off():] {
			if ring[j] != r {
				break
			}
			if j++; j == SliceLen {
				j = 0
			}
			if j == head {
				return s.flags()
			}
		}
	}
}

// Len returns the number of distinct records m holds, counting those too
// short to ever mask anything.
func (m *Matcher) Len() int {
	if m == nil {
		return 0
	}
	return m.records
}

// Mask returns line without the echoes of recorded text in it (see
// Matcher), and the rest of the line as it was. Matching reads the line
// normalised as records are (a run of whitespace, U+00A0 among it, is one
// space), so an echo takes the whitespace inside it, whatever it was; the
// whitespace at either end of an echo stays, so the text on either side
// stays apart. The result is always a subsequence of line. A line with
// nothing to mask is returned as it is, without copying.
func (m *Matcher) Mask(line string) string {
	if m == nil || m.slots == nil || len(line) < SliceLen {
		return line
	}
	var buf [4]span
	spans := m.echoes(line, buf[:0])
	if len(spans) == 0 {
		return line
	}
	n := len(line)
	for _, s := range spans {
		n -= s.end - s.start
	}
	var b strings.Builder
	b.Grow(n)
	prev := 0
	for _, s := range spans {
		b.WriteString(line[prev:s.start])
		prev = s.end
	}
	b.WriteString(line[prev:])
	return b.String()
}

// MaskLines returns a new slice holding Mask of each line.
func (m *Matcher) MaskLines(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = m.Mask(l)
	}
	return out
}

// A span is a byte range [start, end) of a line.
type span struct{ start, end int }

// A run is a span covered by recorded slices at consecutive positions of
// the normalised line, with the flags of its first and its last slice.
type run struct {
	span
	head, tail uint8
}

// echoes appends to spans the spans of line that Mask removes, in order.
func (m *Matcher) echoes(line string, spans []span) []span {
	var (
		ring   [SliceLen]rune // the last SliceLen normalised runes
		starts [SliceLen]int  // where each began in line
		head   int            // index in ring of the oldest rune
		n      int            // normalised runes so far
		h      uint64
		blank  = -1 // start of a pending run of spaces, or -1
		cur    run  // the run being extended
		curAt  = -2 // n at cur's last slice
		edges  *letters
	)
	for i := 0; i < len(line); {
		r, size := rune(line[i]), 1
		var space bool
		if r < utf8.RuneSelf {
			space = r <= ' ' || r == 0x7f
		} else {
			r, size = utf8.DecodeRuneInString(line[i:])
			space = isSpace(r)
		}
		if space {
			if blank < 0 && n > 0 {
				blank = i
			}
			i += size
			continue
		}
		// The next normalised rune is the pending space, which ends where r
		// begins (r is read again on the next turn), or else r.
		start, end := i, i+size
		if blank >= 0 {
			r, start, end, blank = ' ', blank, i, -1
		} else {
			i += size
		}
		h = h*hashBase + uint64(r) - uint64(ring[head])*hashBaseK
		ring[head], starts[head] = r, start
		if head++; head == SliceLen {
			head = 0
		}
		if n++; n < SliceLen {
			continue
		}
		f := m.has(h, &ring, head)
		if f == 0 {
			continue
		}
		if curAt == n-1 {
			cur.end, cur.tail, curAt = end, f, n
			continue
		}
		if curAt >= 0 {
			spans = accept(line, spans, cur, &edges)
		}
		cur, curAt = run{span{starts[head], end}, f, f}, n
	}
	if curAt >= 0 {
		spans = accept(line, spans, cur, &edges)
	}
	return spans
}

// letters records where the first letter of a line begins and where its
// last one ends.
type letters struct{ first, last int }

func findLetters(line string) *letters {
	e := &letters{first: len(line), last: 0}
	for i, r := range line {
		if unicode.IsLetter(r) {
			e.first = min(e.first, i)
			e.last = i + utf8.RuneLen(r)
		}
	}
	return e
}

// accept adds the run c to spans, trimmed of whitespace at its ends, if it
// is an echo: each end is the end of a record or has no letter beyond it.
// edges caches the line's letters, found on first use.
func accept(line string, spans []span, c run, edges **letters) []span {
	if c.head&first == 0 || c.tail&last == 0 {
		if *edges == nil {
			*edges = findLetters(line)
		}
		if c.head&first == 0 && (*edges).first < c.start ||
			c.tail&last == 0 && (*edges).last > c.end {
			return spans
		}
	}
	s := trimSpan(line, c.span)
	if k := len(spans) - 1; k >= 0 && s.start <= spans[k].end {
		spans[k].end = max(spans[k].end, s.end)
		return spans
	}
	return append(spans, s)
}

// trimSpan returns s without the whitespace at its ends.
func trimSpan(line string, s span) span {
	for s.start < s.end {
		r, size := utf8.DecodeRuneInString(line[s.start:s.end])
		if !isSpace(r) {
			break
		}
		s.start += size
	}
	for s.start < s.end {
		r, size := utf8.DecodeLastRuneInString(line[s.start:s.end])
		if !isSpace(r) {
			break
		}
		s.end -= size
	}
	return s
}

// Contains reports whether fragment, normalised as records are, is part of
// a recorded text. It is for the short fragments Mask leaves alone: a
// wrapped echo's last piece, shorter than a slice, that a caller already
// knows follows a line the ledger masked. It scans every record.
func (m *Matcher) Contains(fragment string) bool {
	if m == nil {
		return false
	}
	f := normalize(fragment)
	if f == "" {
		return false
	}
	for _, r := range m.recs {
		if strings.Contains(r, f) {
			return true
		}
	}
	return false
}
