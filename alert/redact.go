package alert

import (
	"math"
	"regexp"
	"strings"
	"sync"

	"github.com/omega-monitor/omega-monitor/internal/printable"
)

// Masked is what Redact puts where a secret was.
const Masked = "[redacted]"

// pre opens a token rule: the start, or a character that is not a letter
// or a digit, kept as group 1.
const pre = `(^|[^A-Za-z0-9])`

// A rule masks one shape of secret. tmpl is expanded as in
// regexp.Regexp.Expand; keep, when set, vets a match and leaves it alone when
// it reports false.
type rule struct {
	// need are strings, in lower case, one of which a text must hold
	// (case folded) for re to be worth running: most rules find nothing
	// in most text, and a pattern that opens without a literal tries
	// every position of it.
	need []string
	// hint, when set, stands for need: a test of the lower-case text.
	hint func(lower string) bool
	re   func() *regexp.Regexp // compiled on first use: see lazy
	tmpl string
	keep func(match string) bool
}

// rules run in order: the most specific shapes first, so that a token keeps
// its recognisable prefix; the generic ones (headers, variable assignments)
// after them, passing over what is already masked.
// rules compile when Redact first runs, not when the binary starts: most
// invocations never send an alert.
var rules = sync.OnceValue(func() []rule {
	return []rule{
		// A PEM key inside a JSON string: its newlines are \n escapes.
		{need: []string{"private key"}, re: lazy(`-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY( BLOCK)?-----(?:\\r)?\\n[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|["\n]|$)`),
			tmpl: "-----BEGIN ${1}PRIVATE KEY${2}-----\\n" + Masked, keep: unmasked},
		// PEM private keys, whole, then cut off (a pane shows the top of one).
		{need: []string{"private key"}, re: lazy(`-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY( BLOCK)?-----[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----`),
			tmpl: "-----BEGIN ${1}PRIVATE KEY${2}-----\n" + Masked + "\n-----END ${1}PRIVATE KEY${2}-----"},
		{need: []string{"private key"}, re: lazy(`-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY( BLOCK)?-----(?:\r?\n[ \t]*[A-Za-z0-9+/=]{4,}[ \t]*)+`),
			tmpl: "-----BEGIN ${1}PRIVATE KEY${2}-----\n" + Masked},
		// Credentials in a URL: scheme://user:password@host keeps the host.
		{need: []string{"://"}, re: lazy(`\b([A-Za-z][A-Za-z0-9+.-]*://)[^\s/?#@:]*:[^\s/?#]*@`),
			tmpl: "${1}" + Masked + "@"},
		// Slack incoming webhooks.
		{need: []string{"hooks.slack.com"}, re: lazy(`\b(hooks\.slack\.com/(?:services|workflows|triggers)/)[A-Za-z0-9/_-]+`),
			tmpl: "${1}…" + Masked},
		// Token shapes with a prefix of their own. pre: not a letter or a
		// digit before the prefix (a space, punctuation, or a "_" that
		// glues the key to a variable name, where \b would not match).
		// Anthropic, then OpenAI (which must look random: a digit in it).
		{need: []string{"sk-ant-"}, re: lazy(pre + `sk-ant-[A-Za-z0-9_-]{8,}`),
			tmpl: "${1}sk-ant-…" + Masked},
		{need: []string{"sk-"}, re: lazy(`\bsk-((?:proj|svcacct|admin|None)-)?[A-Za-z0-9_-]{20,}`),
			tmpl: "sk-${1}…" + Masked, keep: hasDigit},
		// Stripe.
		{need: []string{"k_live_", "k_test_"}, re: lazy(pre + `([rs]k_(?:live|test)_)[A-Za-z0-9]{16,}`),
			tmpl: "${1}${2}…" + Masked},
		// GitHub and GitLab.
		{need: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, re: lazy(pre + `(gh[pousr]_)[A-Za-z0-9]{20,}`),
			tmpl: "${1}${2}…" + Masked},
		{need: []string{"github_pat_"}, re: lazy(pre + `(github_pat_)[A-Za-z0-9_]{20,}`),
			tmpl: "${1}${2}…" + Masked},
		{need: []string{"glpat-"}, re: lazy(pre + `(glpat-)[A-Za-z0-9_-]{20,}`),
			tmpl: "${1}${2}…" + Masked},
		// Hugging Face, npm, Google OAuth access tokens, SendGrid.
		{need: []string{"hf_"}, re: lazy(pre + `(hf_)[A-Za-z0-9]{20,}`),
			tmpl: "${1}${2}…" + Masked},
		{need: []string{"npm_"}, re: lazy(pre + `(npm_)[A-Za-z0-9]{20,}`),
			tmpl: "${1}${2}…" + Masked},
		{need: []string{"ya29."}, re: lazy(pre + `(ya29\.)[A-Za-z0-9_-]{20,}`),
			tmpl: "${1}${2}…" + Masked},
		{need: []string{"sg."}, re: lazy(pre + `(SG\.)[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}`),
			tmpl: "${1}${2}…" + Masked},
		// AWS access key ids; secret keys and session tokens where they
		// are named.
		{need: []string{"akia", "asia"}, re: lazy(pre + `(AKIA|ASIA)[A-Z0-9]{16}\b`),
			tmpl: "${1}${2}…" + Masked},
		{need: []string{"secret_access", "secretaccess", "session_token", "sessiontoken"}, re: lazy(`(?i)((?:aws_?)?(?:secret_?access_?key|session_?token)["']?\s*[:=]\s*["']?)[A-Za-z0-9/+=]{20,}`),
			tmpl: "${1}" + Masked},
		// Slack tokens.
		{need: []string{"xox", "xapp-"}, re: lazy(pre + `(xox[abposr]-|xapp-)[A-Za-z0-9-]{10,}`),
			tmpl: "${1}${2}…" + Masked},
		// Google API keys.
		{need: []string{"aiza"}, re: lazy(pre + `AIza[A-Za-z0-9_-]{35}`),
			tmpl: "${1}AIza…" + Masked},
		// JSON Web Tokens.
		{need: []string{"eyj"}, re: lazy(pre + `eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`),
			tmpl: "${1}eyJ…" + Masked},
		// Telegram bot tokens (also inside an API URL's /bot<token>/).
		{hint: botTokenHint, re: lazy(`(^|[^0-9A-Za-z]|bot)([0-9]{6,12}):[A-Za-z0-9_-]{30,}`),
			tmpl: "${1}${2}:…" + Masked},
		// Authorization headers, and a bearer token wherever it is named.
		{need: []string{"authorization"}, re: lazy(`(?i)\b(authorization\s*[:=]\s*["']?(?:bearer|basic|token|bot)\s+)[^\s"']{6,}`),
			tmpl: "${1}" + Masked, keep: unmasked},
		{need: []string{"bearer"}, re: lazy(`(?i)\b(bearer\s+)([A-Za-z0-9._~+/=-]{16,})`),
			tmpl: "${1}" + Masked, keep: tokenish},
		// Secrets assigned to variables named for them: FOO_API_KEY=..., ...
		{need: []string{"key", "token", "secret", "passw"}, re: lazy(`\b([A-Z0-9_]*(?:API_?KEY|TOKEN|SECRET|SECRET_KEY|PASSWORD|PASSWD|ACCESS_KEY|PRIVATE_KEY)\s*=\s*["']?)[^\s"']{8,}`),
			tmpl: "${1}" + Masked, keep: unmasked},
		// The same names in lower case, as YAML, JSON or an INI file write
		// them: password: ..., "api_key": "...", client_secret = ...
		{need: []string{"key", "token", "secret", "passw"}, re: lazy(`(?i)((?:^|[\s{,"'])["']?[a-z0-9_.-]*(?:api[_-]?key|access[_-]?token|auth[_-]?token|refresh[_-]?token|secret|password|passwd|private[_-]?key)["']?\s*[:=]\s*["']?)[^\s"',}]{6,}`),
			tmpl: "${1}" + Masked, keep: assignedSecret},
	}
})

// Redact masks the API keys, tokens and credentials that panes commonly show:
// Anthropic, OpenAI, Stripe, GitHub, GitLab, AWS, Slack, Google and Telegram
// keys, JSON Web Tokens, bearer and basic credentials, PEM private keys, URLs
// with a user and password, and values assigned to variables named for
// secrets (FOO_TOKEN=...). A masked token keeps a short prefix that says what
// it was (sk-ant-…[redacted]). Everything else is returned unchanged, and
// Redact(Redact(s)) == Redact(s).
func Redact(s string) string {
	if !mightHoldSecret(s) {
		return s // the common case: a line with no hint of a secret compiles nothing
	}
	r := redactShapes(s)
	// A key hard-wrapped by a narrow pane, or drawn inside a box, is a
	// secret across lines: read again with the borders off and the wrapped
	// runs joined, and if that holds one, the relay is that text, masked.
	if joined := unwrap(s); joined != s {
		if rj := redactShapes(joined); rj != joined {
			r = rj
		}
	}
	return maskRandom(r)
}

// Scrub is what may be kept or shown of text a pane printed: its escape
// sequences and its invisible or reordering characters (bidi overrides,
// zero-width, tags) out, then its secrets masked. The order matters: a
// zero-width character inside a key would cut the key's shape short, and
// Redact would mask only the part before it.
func Scrub(s string) string { return Redact(printable.String(s)) }

// RedactLines is Redact line by line, so that a screen keeps its rows (a
// golden case's geometry is part of what it proves); it says on how many
// lines it masked something. A secret wrapped over lines or boxed is left
// in part: compare with Redact of the whole to find one.
func RedactLines(text []byte) ([]byte, int) {
	lines := strings.SplitAfter(string(text), "\n")
	n := 0
	for i, l := range lines {
		body := strings.TrimSuffix(l, "\n")
		if r := Redact(body); r != body {
			lines[i] = r + l[len(body):]
			n++
		}
	}
	if n == 0 {
		return text, 0
	}
	return []byte(strings.Join(lines, "")), n
}

// redactShapes applies the rules.
func redactShapes(s string) string {
	// Masking one secret can expose another shape to an earlier rule, so
	// the rules run until nothing changes (in practice, once or twice).
	for range 8 {
		t := s
		// Masking only takes text away: what the text held before a
		// rule ran is a superset of what it holds after.
		lower := strings.ToLower(s)
		for _, r := range rules() {
			if r.worth(lower) {
				t = r.apply(t)
			}
		}
		if t == s {
			break
		}
		s = t
	}
	return s
}

// lazy compiles pattern when it is first used: a process pays for the
// rules its text needs, not for all of them (each tick scrubs a few lines,
// and most lines need none).
func lazy(pattern string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })
}

// worth says whether lower, a text in lower case, holds one of r's needs.
func (r rule) worth(lower string) bool {
	if r.hint != nil {
		return r.hint(lower)
	}
	for _, n := range r.need {
		if strings.Contains(lower, n) {
			return true
		}
	}
	return false
}

// botTokenHint says whether s holds what a Telegram bot token opens with:
// six digits and a colon.
func botTokenHint(s string) bool {
	for i := 6; i < len(s); i++ {
		if s[i] != ':' {
			continue
		}
		digits := 0
		for j := i - 1; j >= 0 && isDigit(s[j]) && digits < 6; j-- {
			digits++
		}
		if digits == 6 {
			return true
		}
	}
	return false
}

func (r rule) apply(s string) string {
	re := r.re()
	ms := re.FindAllStringSubmatchIndex(s, -1)
	if ms == nil {
		return s
	}
	var b []byte
	last := 0
	for _, m := range ms {
		if r.keep != nil && !r.keep(s[m[0]:m[1]]) {
			continue
		}
		b = append(b, s[last:m[0]]...)
		b = re.ExpandString(b, r.tmpl, s, m)
		last = m[1]
	}
	if last == 0 && b == nil {
		return s
	}
	return string(append(b, s[last:]...))
}

func hasDigit(s string) bool { return strings.ContainsAny(s, "0123456789") }

func unmasked(s string) bool { return !strings.Contains(s, Masked) }

// tokenish tells a credential after "bearer" from a word of prose: a digit,
// token punctuation, or mixed case.
func tokenish(s string) bool {
	f := strings.Fields(s)
	tok := f[len(f)-1]
	if hasDigit(tok) || strings.ContainsAny(tok, "._~+/=") {
		return true
	}
	var upper, lower int
	for _, r := range tok {
		switch {
		case r >= 'A' && r <= 'Z':
			upper++
		case r >= 'a' && r <= 'z':
			lower++
		}
	}
	return upper >= 2 && lower >= 2
}

// assignedSecret vets a lower-case assignment: a value that names no
// secret (a boolean, a type, a reference to a variable or a placeholder)
// is left alone.
func assignedSecret(m string) bool {
	if !unmasked(m) {
		return false
	}
	i := strings.LastIndexAny(m, ":=")
	v := strings.Trim(strings.TrimSpace(m[i+1:]), `"'`)
	switch strings.ToLower(v) {
	case "true", "false", "null", "none", "required", "optional", "string", "boolean", "secret", "password":
		return false
	}
	return !strings.HasPrefix(v, "$") && !strings.HasPrefix(v, "<") && !strings.HasPrefix(v, "{") && !strings.HasPrefix(v, "-----")
}

// The scanners below are written out rather than as patterns: a pattern
// anchored only at its end, or opening with a class, is tried at every
// position of a line, and these run over every line a pane relays.

// isSpace is \s of package regexp: ASCII white space.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' || c == '\v'
}

// borders are the edges an agent draws around a line of a box.
var borders = []string{"│", "┃", "║", "|"}

// cutBorder returns s without the border it starts with, or ok false.
func cutBorder(s string, cut func(string, string) (string, bool)) (string, bool) {
	for _, b := range borders {
		if rest, ok := cut(s, b); ok {
			return rest, true
		}
	}
	return s, false
}

// stripBorders takes off the box borders of a line: leading white space, a
// border and one space after it; one space before a closing border, it,
// and what white space follows.
func stripBorders(l string) string {
	i := 0
	for i < len(l) && isSpace(l[i]) {
		i++
	}
	if rest, ok := cutBorder(l[i:], strings.CutPrefix); ok {
		if rest != "" && isSpace(rest[0]) {
			rest = rest[1:]
		}
		l = rest
	}
	j := len(l)
	for j > 0 && isSpace(l[j-1]) {
		j--
	}
	if rest, ok := cutBorder(l[:j], strings.CutSuffix); ok {
		if rest != "" && isSpace(rest[len(rest)-1]) {
			rest = rest[:len(rest)-1]
		}
		l = rest
	}
	return l
}

// isWrapByte says whether c can be part of a key wrapped over lines:
// [A-Za-z0-9+/=_.-].
func isWrapByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("+/=_.-", c) >= 0
}

// endsWithRun says whether l ends with 8 or more bytes that could be part
// of a key; startsWithRun whether it starts with them.
func endsWithRun(l string) bool {
	n := 0
	for i := len(l) - 1; i >= 0 && isWrapByte(l[i]); i-- {
		n++
	}
	return n >= 8
}

func startsWithRun(l string) bool {
	n := 0
	for n < len(l) && isWrapByte(l[n]) {
		n++
	}
	return n >= 8
}

// unwrap returns s with box borders taken off each line, and each line
// that ends in a key-like run joined to a next line that starts with one.
func unwrap(s string) string {
	if !strings.Contains(s, "\n") && !strings.ContainsAny(s, "│┃║|") {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = stripBorders(l)
	}
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			prev := lines[i-1]
			if endsWithRun(prev) && startsWithRun(strings.TrimLeft(l, " \t")) {
				b.WriteString(strings.TrimLeft(l, " \t"))
				continue
			}
			b.WriteByte('\n')
		}
		b.WriteString(l)
	}
	return b.String()
}

// A random run: 40 characters or more of key alphabet (no "/": a path is
// not a key), with both cases and digits, close to random. No named shape caught it; it is masked all the
// same, keeping four characters.
// A run is at most 512 bytes: a longer one is read as runs of 512, the
// last of which counts only if it is 40 or more.
const (
	minRandomRun = 40
	maxRandomRun = 512
)

// isRunByte says whether c is of a random run's alphabet: [A-Za-z0-9+=_-].
func isRunByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '=' || c == '_' || c == '-'
}

// maskRandom masks the random runs of s: the entropy fallback.
func maskRandom(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		if !isRunByte(s[i]) {
			i++
			continue
		}
		end := i
		for end < len(s) && end-i < maxRandomRun && isRunByte(s[end]) {
			end++
		}
		if run := s[i:end]; len(run) >= minRandomRun && looksRandom(run) {
			b.WriteString(s[last:i])
			b.WriteString(run[:4] + "…" + Masked)
			last = end
		}
		i = end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// looksRandom reports whether run mixes lower case, upper case and digits,
// the digits scattered (four switches between a digit and a letter at
// least: a name followed by a number, as a test's temporary directory, is
// not a key), with at least 4.3 bits of entropy a character.
func looksRandom(run string) bool {
	var lower, upper, digit bool
	var counts [256]int
	switches := 0
	for i := 0; i < len(run); i++ {
		c := run[i]
		counts[c]++
		if i > 0 && isDigit(c) != isDigit(run[i-1]) {
			switches++
		}
		switch {
		case c >= 'a' && c <= 'z':
			lower = true
		case c >= 'A' && c <= 'Z':
			upper = true
		case c >= '0' && c <= '9':
			digit = true
		}
	}
	if !lower || !upper || !digit || switches < 4 {
		return false
	}
	h := 0.0
	for _, n := range counts {
		if n > 0 {
			p := float64(n) / float64(len(run))
			h -= p * math.Log2(p)
		}
	}
	return h >= 4.3
}

// hints are what every rule needs to find in a text (compared without
// case): a text with none of them, and no long run of key characters,
// holds nothing Redact would mask.
var hints = []string{
	"begin", "://", "hooks.slack", "sk-", "_live_", "_test_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_",
	"github_pat_", "glpat-", "hf_", "npm_", "ya29.", "sg.", "akia", "asia", "secret", "session",
	"xox", "xapp-", "aiza", "eyj", "authoriz", "bearer", "key", "token", "passw",
}

// mightHoldSecret reports whether s has a hint of a secret: one of hints,
// or a run of 30 key characters (a Telegram token, a random key).
func mightHoldSecret(s string) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '+' || c == '=' {
			if run++; run >= 30 {
				return true
			}
		} else {
			run = 0
		}
	}
	lower := strings.ToLower(s)
	for _, h := range hints {
		if strings.Contains(lower, h) {
			return true
		}
	}
	return false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
