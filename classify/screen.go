package classify

import (
	"bytes"
	"io"
	"io/fs"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/omega-monitor/omega-monitor/internal/backread"
)

// Bounds on what a Screen holds. The verdict lives at the bottom of a capture,
// so only a bounded tail is kept however long the scrollback is: memory does
// not grow with it, and reading costs one pass.
const (
	// MaxTailLines is how many lines at the bottom of a capture are kept:
	// twice a tall terminal. The rest is scrollback.
	MaxTailLines = 400
	// MaxTailBytes bounds the raw bytes kept for the tail.
	MaxTailBytes = 1 << 20
	// MaxLineBytes bounds one kept line; longer lines are cut, since every
	// marker read from a line is near its start.
	MaxLineBytes = 16 << 10

	readChunk = 256 << 10
)

// A Line is one line of a capture, normalised for matching.
type Line struct {
	// N is the line's number in the whole capture, from 1.
	N int
	// Text is the line with escape sequences, carriage returns and other
	// control characters removed, U+00A0 read as a space, invalid UTF-8
	// replaced by U+FFFD and trailing spaces trimmed.
	Text string
	// Loud is Text with every character drawn faint (SGR 2) or in reverse
	// video (SGR 7, the cursor's cell) replaced by a space. It equals Text when the capture carried no escape sequences.
	// A dim placeholder in an input box is not a human's draft; only a
	// capture taken with escape sequences (capture-pane -e) can tell.
	Loud string
	// Backs are the stretches of Text drawn on one background colour,
	// left to right, when the capture carried colours and any character
	// of the line has a background other than the terminal's own; nil
	// otherwise. A row of buttons that lights the selected one by its
	// colour alone (OpenCode's permission dialog) is read from them.
	Backs []Back
}

// A Back is a stretch of a Line's Text drawn on one background colour.
type Back struct {
	// From and To are rune columns of Text: the stretch is [From, To).
	From, To int
	// Colour is the background as the capture's SGR named it ("5;215",
	// "2;10;20;30", "44"), "" for the terminal's default; reverse video,
	// which draws the foreground colour behind the text, prefixes "7:".
	Colour string
}

// A Screen is the normalised bottom of a capture.
type Screen struct {
	// Lines are the kept lines, oldest first.
	Lines []Line
	// Total is the number of lines in the whole capture, or 0 when the
	// lines before the tail were skipped without counting them (a regular
	// file read from its tail); N then counts from the first kept line.
	Total int
	// Attrs reports whether the capture carried escape sequences, so
	// that Loud tells faint text from normal text.
	Attrs bool
}

var errNilReader = errorf("nil reader")

// ReadScreen reads a capture and keeps its normalised bottom. It reads the
// whole input once, in chunks kept in a small ring: only the last
// MaxTailBytes or so are held at any time, and no large buffer is ever
// allocated, so that time stays one pass and memory stays flat however long
// the scrollback is.
func ReadScreen(r io.Reader) (*Screen, error) {
	if r == nil {
		return nil, errNilReader
	}
	if s, ok, err := readFileTail(r); ok || err != nil {
		return s, err
	}
	// Chunks start small, so that a short pane costs little, and double
	// up to readChunk. The oldest chunk leaves once the others hold the
	// tail, and is reused for the next read.
	chunks := [][]byte{make([]byte, 0, 16<<10)}
	kept, newlines, cut := 0, 0, false
	for {
		c := chunks[len(chunks)-1]
		if len(c) == cap(c) {
			size := min(2*cap(c), readChunk)
			var next []byte
			for len(chunks) > 1 && kept-len(chunks[0]) >= MaxTailBytes {
				if cap(chunks[0]) == size && next == nil {
					next = chunks[0][:0]
				}
				kept -= len(chunks[0])
				chunks = chunks[1:]
				cut = true
			}
			if next == nil {
				next = make([]byte, 0, size)
			}
			chunks = append(chunks, next)
			continue
		}
		n, err := r.Read(c[len(c):cap(c)])
		if n > 0 {
			newlines += bytes.Count(c[len(c):len(c)+n], []byte{'\n'})
			chunks[len(chunks)-1] = c[:len(c)+n]
			kept += n
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	var tail []byte
	if len(chunks) == 1 {
		tail = chunks[0]
	} else {
		tail = make([]byte, 0, kept)
		for _, c := range chunks {
			tail = append(tail, c...)
		}
	}
	return newScreen(ownedString(tail), newlines, cut), nil
}

// ownedString is b as a string, without a copy: the lines of a Screen are
// slices of the tail it was read into, which nothing writes again. Copying
// each line instead costs a fresh page of memory for every few dozen lines,
// and a process that reads one screen pays for each.
func ownedString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// A tailFile is what an *os.File offers for reading only its tail.
type tailFile interface {
	io.ReaderAt
	Stat() (fs.FileInfo, error)
}

// readFileTail reads only the tail of a regular file, from its end
// backwards (backread), until it holds the lines that are kept: the verdict
// lives at the bottom. The lines before the tail are not counted, so Total is 0 and line
// numbers count from the first kept line. It reports false when r is not a
// regular file larger than MaxTailBytes.
func readFileTail(r io.Reader) (*Screen, bool, error) {
	f, ok := r.(tailFile)
	if !ok {
		return nil, false, nil
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() <= MaxTailBytes {
		return nil, false, nil
	}
	// Only until it holds the kept lines: a pane's lines are short, and
	// reading (and paging in) bytes the screen does not need costs more
	// than classifying it.
	tail, err := backread.Lines(f, fi.Size(), MaxTailLines+1, MaxTailBytes)
	if err != nil {
		return nil, true, errorf("reading the tail of %s: %w", fi.Name(), err)
	}
	return newScreen(ownedString(tail), -1, true), true, nil
}

// ParseScreen normalises a whole capture held in memory.
func ParseScreen(capture []byte) *Screen {
	body := bytes.TrimSuffix(capture, []byte{'\n'})
	from, _ := keptLines(body, false)
	return newScreen(string(capture[from:]), bytes.Count(capture, []byte{'\n'}), false)
}

// newScreen builds a Screen from the tail of a capture. newlines counts the
// newlines of the whole capture; cut says the tail does not start at the
// capture's first byte, so its first, partial line is dropped. A negative
// newlines says they were not counted: Total is then 0, and lines are
// numbered from the first one kept. The lines are slices of tail.
func newScreen(tail string, newlines int, cut bool) *Screen {
	counted := newlines >= 0
	s := &Screen{Total: max(newlines, 0)}
	if len(tail) == 0 {
		return s
	}
	body := tail
	if body[len(body)-1] == '\n' {
		body = body[:len(body)-1]
	} else if counted {
		s.Total++ // a last line without its newline
	}
	from, n := keptLines(body, cut)
	first := s.Total - n + 1
	if !counted {
		first = 1
	}
	var norm normaliser
	s.Lines = make([]Line, n)
	rest := body[from:]
	for i := range s.Lines {
		raw := rest
		if j := strings.IndexByte(rest, '\n'); j >= 0 {
			raw, rest = rest[:j], rest[j+1:]
		}
		text, loud, backs := norm.line(raw)
		s.Lines[i] = Line{N: first + i, Text: text, Loud: loud, Backs: backs}
	}
	s.Attrs = norm.sawEscape
	if !s.Attrs {
		for i := range s.Lines {
			s.Lines[i].Loud = s.Lines[i].Text
		}
	}
	return s
}

// keptLines finds the lines of body (a capture's tail without its last
// newline) that a Screen keeps: the last MaxTailLines, less the first when
// the tail was cut, since it is then a fragment. It returns the offset of
// the first kept line and how many are kept.
func keptLines[T ~string | ~[]byte](body T, cut bool) (from, n int) {
	newlines := 0
	for i := len(body) - 1; i >= 0; i-- {
		if body[i] != '\n' {
			continue
		}
		if newlines++; newlines == MaxTailLines {
			return i + 1, MaxTailLines
		}
	}
	if !cut {
		return 0, newlines + 1
	}
	if newlines == 0 {
		return len(body), 0
	}
	for i := range len(body) {
		if body[i] == '\n' {
			return i + 1, newlines
		}
	}
	panic("unreachable")
}

// A normaliser strips escape sequences and control characters from lines in
// order, carrying the faint attribute from one line to the next as a terminal
// would.
type normaliser struct {
	faint     bool   // SGR 2
	reverse   bool   // SGR 7: how a capture draws the cursor cell
	back      string // SGR 48, 40-47, 100-107: the background, "" for the default
	sawEscape bool
	backs     []Back // the current line's stretches, while it is read
}

// colour names the background the current attributes draw, as Back does.
func (n *normaliser) colour() string {
	if n.reverse {
		return "7:" + n.back
	}
	return n.back
}

// paint notes that the rune at column col is drawn on the current
// background.
func (n *normaliser) paint(col int) {
	c := n.colour()
	if k := len(n.backs) - 1; k >= 0 && n.backs[k].Colour == c && n.backs[k].To == col {
		n.backs[k].To++
		return
	}
	if n.backs == nil {
		n.backs = make([]Back, 0, 8) // a line of a TUI has a few: one allocation
	}
	n.backs = append(n.backs, Back{From: col, To: col + 1, Colour: c})
}

// lineBacks returns the stretches of a line of width runes, nil when all
// of it is drawn on the default background.
func (n *normaliser) lineBacks(width int) []Back {
	backs := n.backs
	n.backs = nil
	coloured := false
	for i, b := range backs {
		if b.From >= width {
			backs = backs[:i]
			break
		}
		backs[i].To = min(b.To, width)
		coloured = coloured || b.Colour != ""
	}
	if !coloured {
		return nil
	}
	return backs
}

// quiet reports whether the current attributes draw text that is not a
// human's: faint placeholder text, or the cursor's reverse-video cell.
func (n *normaliser) quiet() bool { return n.faint || n.reverse }

const esc = 0x1b

// line returns the normalised text of one raw line, the same text with
// faint characters blanked, and its stretches of background colour.
func (n *normaliser) line(raw string) (text, loud string, backs []Back) {
	if len(raw) > MaxLineBytes {
		raw = raw[:MaxLineBytes]
	}
	if plain(raw) {
		// Most lines hold nothing to strip: one copy, shared by both.
		text = strings.TrimRight(raw, " ")
		if c := n.colour(); c != "" && text != "" {
			backs = []Back{{From: 0, To: utf8.RuneCountInString(text), Colour: c}}
		}
		if n.quiet() {
			return text, "", backs
		}
		return text, text, backs
	}
	var t, l strings.Builder
	t.Grow(len(raw))
	l.Grow(len(raw))
	col := 0
	for i := 0; i < len(raw); {
		c := raw[i]
		if c == esc {
			n.sawEscape = true
			i = n.escape(raw, i)
			continue
		}
		if c < utf8.RuneSelf {
			i++
			switch {
			case c == '\t':
				c = ' '
			case c < 0x20 || c == 0x7f:
				continue // NUL, CR and the other controls draw nothing
			}
			t.WriteByte(c)
			n.paint(col)
			col++
			if n.quiet() && c != ' ' {
				l.WriteByte(' ')
			} else {
				l.WriteByte(c)
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(raw[i:])
		i += size
		switch {
		case r == '\u00a0':
			r = ' '
		case r >= 0x80 && r < 0xa0:
			continue // C1 controls
		}
		t.WriteRune(r)
		n.paint(col)
		col++
		if n.quiet() && r != ' ' {
			l.WriteByte(' ')
		} else {
			l.WriteRune(r)
		}
	}
	text = strings.TrimRight(t.String(), " ")
	return text, strings.TrimRight(l.String(), " "), n.lineBacks(utf8.RuneCountInString(text))
}

// plain reports whether a line is valid UTF-8 free of escape sequences,
// controls and no-break spaces, so that normalising it changes nothing.
func plain(raw string) bool {
	for i := range len(raw) {
		c := raw[i]
		// 0xc2 leads U+0080 to U+00BF: the C1 controls and U+00A0.
		if c < 0x20 || c == 0x7f || c == 0xc2 {
			return false
		}
	}
	return utf8.ValidString(raw)
}

// escape skips the escape sequence at raw[i] and returns the index after it,
// noting any change to the faint attribute.
func (n *normaliser) escape(raw string, i int) int {
	if i+1 >= len(raw) {
		return len(raw)
	}
	switch raw[i+1] {
	case '[': // CSI: parameters, intermediates, one final byte
		j := i + 2
		for j < len(raw) && raw[j] >= 0x30 && raw[j] <= 0x3f {
			j++
		}
		params := raw[i+2 : j]
		for j < len(raw) && raw[j] >= 0x20 && raw[j] <= 0x2f {
			j++
		}
		if j >= len(raw) {
			return len(raw)
		}
		if raw[j] == 'm' {
			n.sgr(params)
		}
		return j + 1
	case ']', 'P', 'X', '^', '_': // OSC, DCS, SOS, PM, APC: up to BEL or ST
		for j := i + 2; j < len(raw); j++ {
			if raw[j] == 0x07 {
				return j + 1
			}
			if raw[j] == esc && j+1 < len(raw) && raw[j+1] == '\\' {
				return j + 2
			}
		}
		return len(raw)
	case '(', ')', '*', '+', '#', '%': // charset designation: one more byte
		return min(i+3, len(raw))
	default:
		return i + 2
	}
}

// sgr applies the parameters of a Select Graphic Rendition sequence to the
// faint, reverse and background attributes.
func (n *normaliser) sgr(params string) {
	if len(params) == 0 {
		n.faint, n.reverse, n.back = false, false, ""
		return
	}
	fields := strings.FieldsFunc(params, func(r rune) bool { return r == ';' })
	for k := 0; k < len(fields); k++ {
		f, sub, colon := strings.Cut(fields[k], ":") // 48:5:n carries its own sub-parameters
		if colon {
			if f == "48" {
				n.back = strings.ReplaceAll(sub, ":", ";")
			}
			continue
		}
		switch f {
		case "", "0":
			n.faint, n.reverse, n.back = false, false, ""
		case "2":
			n.faint = true
		case "22":
			n.faint = false
		case "7":
			n.reverse = true
		case "27":
			n.reverse = false
		case "49":
			n.back = ""
		case "38", "48", "58":
			// Extended colours: 5;n or 2;r;g;b.
			if k+1 < len(fields) {
				skip := 0
				switch fields[k+1] {
				case "5":
					skip = 2
				case "2":
					skip = 4
				}
				if f == "48" && skip > 0 {
					n.back = strings.Join(fields[k+1:min(k+1+skip, len(fields))], ";")
				}
				k += skip
			}
		default:
			if len(f) == 2 && f[0] == '4' && f[1] >= '0' && f[1] <= '7' || len(f) == 3 && f[:2] == "10" && f[2] >= '0' && f[2] <= '7' {
				n.back = f
			}
		}
	}
}
