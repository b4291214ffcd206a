package notify

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/omega-monitor/omega-monitor/alert"
)

// A server's error may quote its request back: its URL, its headers, its
// body. Whatever of the channel's URL it holds is masked here in every form
// a server may write it: as written, URL-escaped, JSON-escaped, in base64
// of either alphabet with or without padding (a Basic credential is the
// base64 of user:password), and inside a longer base64 text (a server that
// encodes the whole request).

// maxSaid bounds what is said of a service's error: a server may answer
// with a megabyte, and the reason goes on one line of a log.
const maxSaid = 512

// wordAlone is the length from which a secret is masked wherever it is
// found, and tokenAlone that of one that mixes letters and digits, as no
// word does; a shorter one only where it stands alone, so that a path part
// such as "hook" is not masked inside "webhook".
const (
	wordAlone  = 16
	tokenAlone = 8
)

// base64Alone is that length for a secret's base64, which no word spells.
const base64Alone = 8

// A form is a way a secret may be written; anywhere says it is masked
// wherever it is found, not only where it stands alone.
type form struct {
	text     string
	anywhere bool
}

// secrets are the parts of the channel's URL that may be a secret: the URL
// whole; its user, password, and both as user:password; its host when it is
// no machine's name; each part of its path and each value of its query,
// decoded and as written; its fragment. A value is a secret in its parts
// too (a token sent in parts, the token of "Bearer TOKEN"), and a value
// in base64 in what it decodes to.
func (c Channel) secrets() []string {
	var out []string
	seen := map[string]bool{}
	var add func(v string)
	add = func(v string) {
		if len(v) < 3 || seen[v] || setting[strings.ToLower(v)] {
			return
		}
		seen[v] = true
		out = append(out, v)
		// "Bearer TOKEN" holds TOKEN (the scheme's name is none); a token
		// holds its long parts, which a service may send apart (Slack's
		// hook:A-B-C is sent as /services/A/B/C).
		if f := strings.Fields(v); len(f) > 1 {
			for _, w := range f {
				switch strings.ToLower(w) {
				case "bearer", "basic", "token", "bot", "digest":
					continue
				}
				add(w)
			}
			return
		}
		for _, part := range strings.FieldsFunc(v, isTokenSep) {
			if len(part) >= 6 && part != v {
				add(part)
			}
		}
		if d, ok := decodedText(v); ok {
			add(d)
		}
	}
	seen[c.URL] = true // whole, not in parts: its parts are added below
	out = append(out, c.URL)
	u, err := url.Parse(c.URL)
	if err != nil {
		// A line that is no URL: each of its words may be a token.
		for _, w := range strings.FieldsFunc(c.URL, func(r rune) bool { return strings.ContainsRune(":/@?&=# ", r) }) {
			add(w)
		}
		return out
	}
	if u.User != nil {
		user := u.User.Username()
		add(user)
		if p, ok := u.User.Password(); ok {
			add(p)
			add(user + ":" + p)
			// The header it is sent in, which a server may quote
			// encoded whole.
			add("Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+p)))
		}
		add(u.User.String())
	}
	if !hostIsName(u.Host) {
		add(u.Host)
	}
	for _, path := range []string{u.Path, u.EscapedPath()} {
		for _, seg := range strings.Split(path, "/") {
			add(seg)
		}
	}
	for _, vs := range u.Query() {
		for _, v := range vs {
			add(v)
		}
	}
	for _, kv := range strings.Split(u.RawQuery, "&") {
		_, v, _ := strings.Cut(kv, "=")
		add(v)
	}
	add(u.RawQuery)
	add(u.Fragment)
	return out
}

// setting are values of a service's settings (disabletls=yes,
// scheme=http), which are no secret: masked, they would mask the words of
// every error ("http://").
var setting = map[string]bool{"yes": true, "no": true, "true": true, "false": true, "on": true, "off": true, "http": true, "https": true}

// isTokenSep says whether r parts a token: punctuation a service splits a
// token at.
func isTokenSep(r rune) bool {
	return strings.ContainsRune("-_.:/,;+~@", r)
}

// decodedText is what v decodes to when it is base64 of printable text of
// six bytes or more.
func decodedText(v string) (string, bool) {
	if len(v) < 4 {
		return "", false
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		b, err := enc.DecodeString(v)
		if err != nil || len(b) < 6 || !utf8.Valid(b) {
			continue
		}
		if strings.IndexFunc(string(b), func(r rune) bool { return r < ' ' || r == 0x7f }) >= 0 {
			continue
		}
		return string(b), true
	}
	return "", false
}

// forms are the ways a server may write the secret v.
func forms(v string) []form {
	var out []form
	token := len(v) >= tokenAlone && strings.ContainsAny(v, "0123456789") &&
		strings.IndexFunc(v, func(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }) >= 0
	word := func(s string) { out = append(out, form{s, token || len(s) >= wordAlone}) }
	coded := func(s string) { out = append(out, form{s, len(s) >= base64Alone}) }
	word(v)
	for _, esc := range []string{url.PathEscape(v), url.QueryEscape(v)} {
		word(esc)
		word(lowerHex(esc))
	}
	if q, err := json.Marshal(v); err == nil {
		j := string(q[1 : len(q)-1])
		word(j)
		word(strings.ReplaceAll(j, "/", `\/`))
	}
	encs := []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding}
	for _, enc := range encs {
		coded(enc.EncodeToString([]byte(v)))
	}
	// Inside a longer base64 text, v starts at one of three offsets in
	// its group of three bytes; at each, the characters that hold v's
	// bits alone are the same whatever is around it.
	for k := range 3 {
		lo, hi := (4*k+2)/3, 4*(k+len(v))/3
		if hi-lo < base64Alone {
			continue
		}
		buf := append(make([]byte, k), v...)
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			out = append(out, form{enc.EncodeToString(buf)[lo:hi], true})
		}
	}
	return out
}

// lowerHex is s with the hex digits of its %XX escapes in lower case.
func lowerHex(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			for j := i + 1; j <= i+2; j++ {
				if b[j] >= 'A' && b[j] <= 'F' {
					b[j] += 'a' - 'A'
				}
			}
		}
	}
	return string(b)
}

// secretForms are the forms of every secret of the channel, the longest
// first, so that no part of a longer one is left.
func (c Channel) secretForms() []form {
	var all []form
	seen := map[string]int{}
	for _, v := range c.secrets() {
		for _, f := range forms(v) {
			if i, ok := seen[f.text]; ok {
				all[i].anywhere = all[i].anywhere || f.anywhere
				continue
			}
			seen[f.text] = len(all)
			all = append(all, f)
		}
	}
	slices.SortStableFunc(all, func(a, b form) int { return len(b.text) - len(a.text) })
	return all
}

// mask replaces each form in s by alert.Masked: where it is found, or,
// for a form masked only where it stands alone, where neither neighbour
// continues it as a word.
func mask(s string, fs []form) string {
	for _, f := range fs {
		if !strings.Contains(s, f.text) {
			continue
		}
		var b strings.Builder
		last := 0
		for i := 0; i < len(s); {
			j := strings.Index(s[i:], f.text)
			if j < 0 {
				break
			}
			start, end := i+j, i+j+len(f.text)
			if !f.anywhere && (gluedBefore(s, start, f.text) || gluedAfter(s, end, f.text)) {
				i = start + 1
				continue
			}
			b.WriteString(s[last:start])
			b.WriteString(alert.Masked)
			last, i = end, end
		}
		if last > 0 {
			b.WriteString(s[last:])
			s = b.String()
		}
	}
	return s
}

// isWordByte says whether c continues a word: a letter, a digit, "_" or
// "-" (a path part is a word of "Go-http-client" too).
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// gluedBefore says whether the word v found at s[start:] continues one
// before it. An escape just before it (%2F, escaped again as %252F,
// \u0026, \n) ends the word before.
func gluedBefore(s string, start int, v string) bool {
	if start == 0 || !isWordByte(v[0]) || !isWordByte(s[start-1]) {
		return false
	}
	switch {
	case start >= 3 && s[start-3] == '%' && isHex(s[start-2]) && isHex(s[start-1]),
		start >= 5 && s[start-5:start-2] == "%25" && isHex(s[start-2]) && isHex(s[start-1]):
		return false
	case start >= 6 && s[start-6] == '\\' && s[start-5] == 'u' && isHex(s[start-4]) && isHex(s[start-3]) && isHex(s[start-2]) && isHex(s[start-1]):
		return false
	case start >= 2 && s[start-2] == '\\':
		return false
	}
	return true
}

// gluedAfter says whether the word v ending at s[:end] continues into one
// after it.
func gluedAfter(s string, end int, v string) bool {
	return end < len(s) && isWordByte(v[len(v)-1]) && isWordByte(s[end])
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
