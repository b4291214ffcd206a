package classify

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"unicode/utf8"
)

// Bounds on what a Screen holds. The verdict lives at the bottom of a capture,
// so only a bounded tail is kept however long the scrollback is: memory does
// not grow with it, and reading costs one pass.
const (
	// MaxTailLines is how many lines at the bottom of a capture are kept.
	// A terminal screen is far shorter; the rest is scrollback.
	MaxTailLines = 800
	// MaxTailBytes bounds the raw bytes kept for the tail.
	MaxTailBytes = 1 << 20
	// MaxLineBytes bounds one kept line; longer lines are cut, since every
	// marker read from a line is near its start.
	MaxLineBytes = 16 << 10

	readChunk = 4 << 20
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
}

// A Screen is the normalised bottom of a capture.
type Screen struct {
	// Lines are the kept lines, oldest first.
	Lines []Line
	// Total is the number of lines in the whole capture.
	Total int
	// Attrs reports whether the capture carried escape sequences, so
	// that Loud tells faint text from normal text.
	Attrs bool
}

var errNilReader = errors.New("classify: nil reader")

// ReadScreen reads a capture and keeps its normalised bottom. It reads the
// whole input once, holding at most MaxTailBytes of it at a time.
func ReadScreen(r io.Reader) (*Screen, error) {
	if r == nil {
		return nil, errNilReader
	}
	// buf holds the kept tail followed by room for the next read. It grows
	// to its bound; when that fills, the last MaxTailBytes slide to the
	// front: a few large copies instead of one per line.
	buf := make([]byte, 0, 64<<10)
	newlines := 0
	cut := false // bytes before buf[0] were dropped
	for {
		if len(buf) == cap(buf) {
			if cap(buf) < MaxTailBytes+readChunk {
				grown := make([]byte, len(buf), min(2*cap(buf), MaxTailBytes+readChunk))
				copy(grown, buf)
				buf = grown
			} else {
				n := copy(buf[:MaxTailBytes], buf[len(buf)-MaxTailBytes:])
				buf = buf[:n]
				cut = true
			}
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		if n > 0 {
			newlines += bytes.Count(buf[len(buf):len(buf)+n], []byte{'\n'})
			buf = buf[:len(buf)+n]
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	return newScreen(buf, newlines, cut), nil
}

// ParseScreen normalises a whole capture held in memory.
func ParseScreen(capture []byte) *Screen {
	return newScreen(capture, bytes.Count(capture, []byte{'\n'}), false)
}

// newScreen builds a Screen from the tail of a capture. newlines counts the
// newlines of the whole capture; cut says the tail does not start at the
// capture's first byte, so its first, partial line is dropped.
func newScreen(tail []byte, newlines int, cut bool) *Screen {
	s := &Screen{Total: newlines}
	if len(tail) == 0 {
		return s
	}
	body := tail
	if body[len(body)-1] == '\n' {
		body = body[:len(body)-1]
	} else {
		s.Total++ // a last line without its newline
	}
	// Keep the last MaxTailLines lines; when the tail was cut, its first
	// line is a fragment and is dropped.
	start, whole := len(body), false
	for range MaxTailLines {
		i := bytes.LastIndexByte(body[:start], '\n')
		if i < 0 {
			whole = true
			break
		}
		start = i
	}
	var raw [][]byte
	switch {
	case !whole:
		raw = bytes.Split(body[start+1:], []byte{'\n'})
	case cut:
		raw = bytes.Split(body, []byte{'\n'})[1:]
	default:
		raw = bytes.Split(body, []byte{'\n'})
	}
	first := s.Total - len(raw) + 1
	var n normaliser
	s.Lines = make([]Line, len(raw))
	for i, r := range raw {
		text, loud := n.line(r)
		s.Lines[i] = Line{N: first + i, Text: text, Loud: loud}
	}
	s.Attrs = n.sawEscape
	if !s.Attrs {
		for i := range s.Lines {
			s.Lines[i].Loud = s.Lines[i].Text
		}
	}
	return s
}

// A normaliser strips escape sequences and control characters from lines in
// order, carrying the faint attribute from one line to the next as a terminal
// would.
type normaliser struct {
	faint     bool // SGR 2
	reverse   bool // SGR 7: how a capture draws the cursor cell
	sawEscape bool
}

// quiet reports whether the current attributes draw text that is not a
// human's: faint placeholder text, or the cursor's reverse-video cell.
func (n *normaliser) quiet() bool { return n.faint || n.reverse }

const esc = 0x1b

// line returns the normalised text of one raw line, and the same text with
// faint characters blanked.
func (n *normaliser) line(raw []byte) (text, loud string) {
	if len(raw) > MaxLineBytes {
		raw = raw[:MaxLineBytes]
	}
	if plain(raw) {
		// Most lines hold nothing to strip: one copy, shared by both.
		text = strings.TrimRight(string(raw), " ")
		if n.quiet() {
			return text, ""
		}
		return text, text
	}
	var t, l strings.Builder
	t.Grow(len(raw))
	l.Grow(len(raw))
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
			if n.quiet() && c != ' ' {
				l.WriteByte(' ')
			} else {
				l.WriteByte(c)
			}
			continue
		}
		r, size := utf8.DecodeRune(raw[i:])
		i += size
		switch {
		case r == '\u00a0':
			r = ' '
		case r >= 0x80 && r < 0xa0:
			continue // C1 controls
		}
		t.WriteRune(r)
		if n.quiet() && r != ' ' {
			l.WriteByte(' ')
		} else {
			l.WriteRune(r)
		}
	}
	return strings.TrimRight(t.String(), " "), strings.TrimRight(l.String(), " ")
}

// plain reports whether a line is valid UTF-8 free of escape sequences,
// controls and no-break spaces, so that normalising it changes nothing.
func plain(raw []byte) bool {
	for _, c := range raw {
		// 0xc2 leads U+0080 to U+00BF: the C1 controls and U+00A0.
		if c < 0x20 || c == 0x7f || c == 0xc2 {
			return false
		}
	}
	return utf8.Valid(raw)
}

// escape skips the escape sequence at raw[i] and returns the index after it,
// noting any change to the faint attribute.
func (n *normaliser) escape(raw []byte, i int) int {
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
// faint attribute.
func (n *normaliser) sgr(params []byte) {
	if len(params) == 0 {
		n.faint, n.reverse = false, false
		return
	}
	fields := bytes.FieldsFunc(params, func(r rune) bool { return r == ';' })
	for k := 0; k < len(fields); k++ {
		f := fields[k]
		if i := bytes.IndexByte(f, ':'); i >= 0 {
			f = f[:i] // 38:5:n and friends carry their own sub-parameters
		}
		switch string(f) {
		case "", "0":
			n.faint, n.reverse = false, false
		case "2":
			n.faint = true
		case "22":
			n.faint = false
		case "7":
			n.reverse = true
		case "27":
			n.reverse = false
		case "38", "48", "58":
			// Extended colours: skip 5;n or 2;r;g;b.
			if k+1 < len(fields) {
				switch string(fields[k+1]) {
				case "5":
					k += 2
				case "2":
					k += 4
				}
			}
		}
	}
}
