package ledger

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxRecord is the most runes one record holds. A longer line of text is
// kept as several records that overlap by SliceLen+1 runes, so every slice
// of the line is still whole in some record (a piece loses at most a space at
// either end to trimming) and the file stays bounded.
const maxRecord = 1024

// isSpace reports whether r reads as a space for matching: whitespace
// (tab, newline, carriage return, U+00A0 and the other Unicode spaces), every
// control character, and the noncharacters U+FFFE and U+FFFF. None of them
// can survive in a record, which is what keeps the Sentinel impossible.
func isSpace(r rune) bool {
	switch {
	case r <= ' ' || r == 0x7f:
		return true
	case r < utf8.RuneSelf:
		return false
	case r <= 0x9f: // C1 controls, U+0085 among them
		return true
	case r == 0xfffe || r == 0xffff:
		return true
	}
	return unicode.IsSpace(r)
}

// normalize returns s with every run of spaces (as isSpace reads them)
// collapsed to one U+0020 and trimmed from both ends. Invalid UTF-8 becomes
// U+FFFD, so the result is always valid UTF-8.
func normalize(s string) string {
	if isNormal(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if isSpace(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// isNormal reports whether normalize(s) == s.
func isNormal(s string) bool {
	prevSpace := true // a leading space is not normal
	for i := 0; i < len(s); {
		r, size := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				return false
			}
		}
		i += size
		if r == ' ' {
			if prevSpace {
				return false
			}
			prevSpace = true
			continue
		}
		if isSpace(r) {
			return false
		}
		prevSpace = false
	}
	return !prevSpace || s == ""
}

// records returns the records a text makes: one per line of it, normalised,
// empty lines dropped, long lines split into overlapping pieces.
func records(text string) []string {
	var recs []string
	for line := range strings.FieldsFuncSeq(text, isNewline) {
		line = normalize(line)
		if line == "" {
			continue
		}
		recs = appendPieces(recs, line)
	}
	return recs
}

func isNewline(r rune) bool { return r == '\n' || r == '\r' }

// appendPieces appends the normalised line to recs, in pieces of at most
// maxRecord runes that overlap by SliceLen+1 runes.
func appendPieces(recs []string, line string) []string {
	if len(line) <= maxRecord || utf8.RuneCountInString(line) <= maxRecord {
		return append(recs, line)
	}
	rs := []rune(line)
	for start := 0; ; start += maxRecord - (SliceLen + 1) {
		end := min(start+maxRecord, len(rs))
		// A piece may begin or end at a space; trim it as a record must be.
		recs = append(recs, strings.TrimSpace(string(rs[start:end])))
		if end == len(rs) {
			return recs
		}
	}
}
