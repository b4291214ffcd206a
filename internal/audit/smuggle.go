package audit

import (
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// An auditor reads a repository that may be hostile: a rule file can tell
// it to copy a secret into its report, whole, spaced out or encoded, so
// that the report carries it to Telegram. A finding's own words (not its
// quote, which the checker verifies against the cited lines) are therefore
// a short comment, and one that carries a long encoded or spaced-out run is
// rejected, whatever else it says.

// MaxComment is the most runes a finding's comment, or a clean verdict,
// may hold: a place, and why it breaks the rule.
const MaxComment = 400

// smuggled says why text looks like it carries data rather than a
// comment, or "".
func smuggled(text string) string {
	if n := utf8.RuneCountInString(text); n > MaxComment {
		return fmt.Sprintf("the comment is %d characters; a finding says where and why in at most %d", n, MaxComment)
	}
	if run := spacedRun(text); run != "" {
		return fmt.Sprintf("the comment carries a spaced-out run of %d characters, not words", utf8.RuneCountInString(run))
	}
	for _, tok := range strings.FieldsFunc(text, func(r rune) bool { return !encodedRune(r) }) {
		if encoded(tok) {
			return fmt.Sprintf("the comment carries an encoded run of %d characters; quote the code with > instead", len(tok))
		}
	}
	return ""
}

// minSpaced is the fewest single characters that make a spaced-out run.
const minSpaced = 10

// spacedRun returns the first run of at least minSpaced single characters
// each followed by the same separator ("h u n t e r 2", "h-u-n-t-e-r"),
// or "".
func spacedRun(text string) string {
	rs := []rune(text)
	for i := 0; i+1 < len(rs); i++ {
		sep := rs[i+1]
		if unicode.IsLetter(sep) || unicode.IsDigit(sep) || unicode.IsSpace(rs[i]) || rs[i] == sep {
			continue
		}
		n := 0
		for j := i; j < len(rs) && !unicode.IsSpace(rs[j]) && rs[j] != sep && (j+1 == len(rs) || rs[j+1] == sep); j += 2 {
			n++
		}
		if n >= minSpaced {
			return string(rs[i:min(len(rs), i+2*n)])
		}
	}
	return ""
}

// encodedRune is a rune of base64, base64url or hex text.
func encodedRune(r rune) bool {
	return r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '+' || r == '/' || r == '=' || r == '_' || r == '-')
}

// encoded reports whether tok looks like a key or encoded data: 24
// characters or more, digits mixed with both cases (or 32 hex digits), and
// close to random.
func encoded(tok string) bool {
	if len(tok) < 24 {
		return false
	}
	var lower, upper, digit bool
	allHex := true
	for _, r := range tok {
		switch {
		case r >= 'a' && r <= 'z':
			lower = true
		case r >= 'A' && r <= 'Z':
			upper = true
		case r >= '0' && r <= '9':
			digit = true
		}
		allHex = allHex && strings.ContainsRune("0123456789abcdefABCDEF", r)
	}
	if allHex && len(tok) >= 32 {
		return true
	}
	return lower && upper && digit && entropy(tok) >= 3.5
}

// entropy is the Shannon entropy of s, in bits per byte.
func entropy(s string) float64 {
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	h := 0.0
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / float64(len(s))
			h -= p * math.Log2(p)
		}
	}
	return h
}
