package setup

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The scanner below knows just enough TOML to edit Codex's config.toml as
// text: where a line is a table header and what its key is, which lines
// are keys and which continue a value begun above (an array, a multi-line
// string), and which are blank or comments. It does not read values. What
// it cannot be sure of (a header it cannot read, a string or an array not
// closed, a line that is neither a header nor a key) it refuses, naming the
// line, so that no edit is made on a guess.

// A tomlLine is what one line of a TOML text is.
type tomlLine struct {
	header bool     // a [table] or [[array]] header
	array  bool     // an [[array]] header
	key    []string // a header's key, or a key = value line's, unquoted
	value  string   // a key = value line's text after the '=', blanks trimmed
	blank  bool     // blank, or only a comment, outside any value
	inside bool     // continues a value begun on a line above
}

// A tomlError is a line the scanner cannot be sure of.
type tomlError struct {
	line int // counted from 1
	why  string
}

func (e *tomlError) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.why) }

// scanTOML says what each of lines (as splitKeep cuts them) is.
func scanTOML(lines []string) ([]tomlLine, error) {
	out := make([]tomlLine, len(lines))
	var v valueScan
	for i, raw := range lines {
		line := strings.TrimSuffix(strings.TrimSuffix(raw, "\n"), "\r")
		if v.open() {
			out[i].inside = true
			if why := v.scan(line, i); why != "" {
				return nil, &tomlError{i + 1, why}
			}
			continue
		}
		t := strings.TrimLeft(line, " \t")
		switch {
		case t == "" || t[0] == '#':
			out[i].blank = true
		case t[0] == '[':
			key, array, ok := parseHeader(t)
			if !ok {
				return nil, &tomlError{i + 1, "a table header install cannot read"}
			}
			out[i] = tomlLine{header: true, array: array, key: key}
		default:
			key, rest, ok := parseKey(t)
			rest = strings.TrimLeft(rest, " \t")
			if !ok || !strings.HasPrefix(rest, "=") {
				return nil, &tomlError{i + 1, "neither a table header nor key = value"}
			}
			value := strings.TrimLeft(rest[1:], " \t")
			if value == "" || strings.ContainsRune("=#,]}", rune(value[0])) {
				return nil, &tomlError{i + 1, "a key without a value"}
			}
			out[i].key, out[i].value = key, value
			if why := v.scan(value, i); why != "" {
				return nil, &tomlError{i + 1, why}
			}
		}
	}
	switch {
	case v.quotes != "":
		return nil, &tomlError{v.from + 1, "a multi-line string begun here is not closed"}
	case len(v.nest) > 0:
		return nil, &tomlError{v.from + 1, "an array or inline table begun here is not closed"}
	}
	return out, nil
}

// A valueScan follows a value over lines: the multi-line string it is in,
// the arrays and inline tables open around it, and the line where the
// outermost of them began.
type valueScan struct {
	quotes string // `"""` or `'''` while in a multi-line string
	nest   []byte // the '[' and '{' open
	from   int
}

func (v *valueScan) open() bool { return v.quotes != "" || len(v.nest) > 0 }

// scan reads one line (line i of the text) of a value, or of the values
// inside an array; it returns why it cannot, or "".
func (v *valueScan) scan(s string, i int) string {
	if !v.open() {
		v.from = i
	}
	for j := 0; j < len(s); {
		c := s[j]
		if v.quotes != "" {
			q := v.quotes[0]
			switch {
			case c == '\\' && q == '"':
				j += 2 // an escape, or a line-ending backslash
			case c == q:
				n := 0
				for j+n < len(s) && s[j+n] == q {
					n++
				}
				if n > 5 {
					return "a multi-line string closed by more quotes than it can hold"
				}
				if n >= 3 {
					v.quotes = ""
				}
				j += n
			default:
				j++
			}
			continue
		}
		switch c {
		case '#':
			return ""
		case '"', '\'':
			if strings.HasPrefix(s[j:], strings.Repeat(string(c), 3)) {
				v.quotes = s[j : j+3]
				j += 3
				continue
			}
			end := stringEnd(s[j:])
			if end < 0 {
				return "a string not closed on its line"
			}
			j += end
			continue
		case '[', '{':
			v.nest = append(v.nest, c)
		case ']', '}':
			n := len(v.nest)
			if n == 0 || v.nest[n-1] != map[byte]byte{']': '[', '}': '{'}[c] {
				return fmt.Sprintf("a %q that closes nothing open", c)
			}
			v.nest = v.nest[:n-1]
		}
		j++
	}
	return ""
}

// stringEnd is the length of the one-line string s starts with, its quotes
// included, or -1 when it does not end on the line.
func stringEnd(s string) int {
	q := s[0]
	for j := 1; j < len(s); j++ {
		switch {
		case s[j] == '\\' && q == '"':
			j++
		case s[j] == q:
			return j + 1
		}
	}
	return -1
}

// parseHeader reads a header line, t, from its '[' on: its key, whether it
// is an [[array]] header, and whether it holds nothing else but a comment.
func parseHeader(t string) (key []string, array bool, ok bool) {
	open, close := "[", "]"
	if strings.HasPrefix(t, "[[") {
		open, close, array = "[[", "]]", true
	}
	key, rest, ok := parseKey(t[len(open):])
	rest = strings.TrimLeft(rest, " \t")
	if !ok || !strings.HasPrefix(rest, close) {
		return nil, false, false
	}
	rest = strings.TrimLeft(rest[len(close):], " \t")
	return key, array, rest == "" || rest[0] == '#'
}

// parseKey reads the (dotted) key s starts with, blanks around its parts
// allowed: its parts unquoted, and the text after it.
func parseKey(s string) (parts []string, rest string, ok bool) {
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			return nil, "", false
		}
		var part string
		switch s[0] {
		case '"':
			end := stringEnd(s)
			if end < 0 {
				return nil, "", false
			}
			if part, ok = unescape(s[1 : end-1]); !ok {
				return nil, "", false
			}
			s = s[end:]
		case '\'':
			end := strings.IndexByte(s[1:], '\'')
			if end < 0 {
				return nil, "", false
			}
			part, s = s[1:end+1], s[end+2:]
		default:
			n := 0
			for n < len(s) && isBareKeyByte(s[n]) {
				n++
			}
			if n == 0 {
				return nil, "", false
			}
			part, s = s[:n], s[n:]
		}
		parts = append(parts, part)
		s = strings.TrimLeft(s, " \t")
		if !strings.HasPrefix(s, ".") {
			return parts, s, true
		}
		s = s[1:]
	}
}

func isBareKeyByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

// unescape is the text of a basic string, s without its quotes, its
// escapes read; ok is false for an escape TOML does not know.
func unescape(s string) (string, bool) {
	if !strings.Contains(s, `\`) {
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		if i++; i == len(s) {
			return "", false
		}
		if r, ok := map[byte]byte{'b': '\b', 't': '\t', 'n': '\n', 'f': '\f', 'r': '\r', 'e': 0x1b, '"': '"', '\\': '\\'}[s[i]]; ok {
			b.WriteByte(r)
			continue
		}
		width := map[byte]int{'x': 2, 'u': 4, 'U': 8}[s[i]]
		if width == 0 || i+width >= len(s) {
			return "", false
		}
		n, err := strconv.ParseUint(s[i+1:i+1+width], 16, 32)
		if err != nil || !utf8.ValidRune(rune(n)) {
			return "", false
		}
		b.WriteRune(rune(n))
		i += width
	}
	return b.String(), true
}
