// Package printable makes text safe to show on the operator's terminal:
// what a watched pane, a remote host or a probe printed can carry escape
// sequences (a window title, a screen clear, a hidden link, a clipboard
// write) and characters that reorder or hide text (bidi overrides,
// zero-width). They are removed where text enters a MONITOR line or an
// error, and again where a log is printed. It is pure.
package printable

import (
	"io"
	"strings"
	"unicode/utf8"
)

// String returns s with every escape sequence removed, other control
// characters (but tab and newline) and the invisible or reordering
// characters replaced by nothing, and invalid UTF-8 by U+FFFD.
func String(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteRune(utf8.RuneError)
		case r == 0x1b:
			n += escapeLen(s[i+n:])
		case r == 0x9b: // CSI as one C1 character
			n += csiLen(s[i+n:])
		case hidden(r):
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// clean reports whether s needs no change: the common case costs one pass
// and no allocation.
func clean(s string) bool {
	for i, r := range s {
		if hidden(r) {
			return false
		}
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				return false
			}
		}
	}
	return true
}

// hidden reports whether r must not reach a terminal: a control character
// other than tab and newline, a C1 control, or a character that reorders
// or hides text. The word joiner, the invisible operators and the tag
// characters draw nothing, yet a model reads them: a pane can spell a
// whole instruction in tag characters that no operator sees.
func hidden(r rune) bool {
	switch {
	case r == '\t' || r == '\n':
		return false
	case r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x200b && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0xfeff, r == 0x061c:
		return true
	case r >= 0x2060 && r <= 0x2064, r == 0x180e, r >= 0xe0000 && r <= 0xe007f:
		return true
	}
	return false
}

// escapeLen is the length of the escape sequence whose ESC came just
// before s: CSI (ESC [ … final), OSC, DCS and the other string sequences
// (ESC ] … BEL or ESC \), or ESC and one character.
func escapeLen(s string) int {
	if s == "" {
		return 0
	}
	switch s[0] {
	case '[':
		return 1 + csiLen(s[1:])
	case ']', 'P', '_', '^', 'X':
		for i := 1; i < len(s); i++ {
			switch {
			case s[i] == 0x07:
				return i + 1
			case s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\':
				return i + 2
			}
		}
		return len(s)
	}
	_, n := utf8.DecodeRuneInString(s)
	return n
}

// csiLen is the length of a CSI sequence's parameters and final byte.
func csiLen(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x40 && c <= 0x7e {
			return i + 1
		}
	}
	return len(s)
}

// A Writer passes what is written through String, a line at a time.
type Writer struct {
	w    io.Writer
	line []byte
}

// NewWriter returns a Writer to w; Flush it at the end.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

func (pw *Writer) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := strings.IndexByte(string(p), '\n')
		if i < 0 {
			pw.line = append(pw.line, p...)
			break
		}
		pw.line = append(pw.line, p[:i+1]...)
		if _, err := io.WriteString(pw.w, String(string(pw.line))); err != nil {
			return 0, err
		}
		pw.line = pw.line[:0]
		p = p[i+1:]
	}
	return n, nil
}

// Flush writes what is left of a last line without its newline.
func (pw *Writer) Flush() error {
	if len(pw.line) == 0 {
		return nil
	}
	_, err := io.WriteString(pw.w, String(string(pw.line)))
	pw.line = pw.line[:0]
	return err
}

// Cut is s cut to at most n bytes at a character's start, marked with "…"
// when anything was cut: a bound on what a line says of text from elsewhere
// that never splits a character.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := max(n, 0)
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
