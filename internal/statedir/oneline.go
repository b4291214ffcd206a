package statedir

import "strings"

// OneLine is s as one record of a log: each run of line breaks in it (CR,
// LF, VT, FF, NEL, LS, PS) one space. A log's reader takes a line for a
// record, and text a server or a pane wrote must not start one of its own.
func OneLine(s string) string {
	if strings.IndexFunc(s, isBreak) < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	broken := false
	for _, r := range s {
		if isBreak(r) {
			if !broken {
				b.WriteByte(' ')
			}
			broken = true
			continue
		}
		broken = false
		b.WriteRune(r)
	}
	return b.String()
}

func isBreak(r rune) bool {
	switch r {
	case '\n', '\r', '\v', '\f', 0x85, 0x2028, 0x2029:
		return true
	}
	return false
}
