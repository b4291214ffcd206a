package alert

import (
	"regexp"
	"strings"
	"sync"
)

// Masked is what Redact puts where a secret was.
const Masked = "[redacted]"

// A rule masks one shape of secret. tmpl is expanded as in
// regexp.Regexp.Expand; keep, when set, vets a match and leaves it alone when
// it reports false.
type rule struct {
	re   *regexp.Regexp
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
		// PEM private keys, whole, then cut off (a pane shows the top of one).
		{re: regexp.MustCompile(`-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY( BLOCK)?-----[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----`),
			tmpl: "-----BEGIN ${1}PRIVATE KEY${2}-----\n" + Masked + "\n-----END ${1}PRIVATE KEY${2}-----"},
		{re: regexp.MustCompile(`-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY( BLOCK)?-----(?:\r?\n[ \t]*[A-Za-z0-9+/=]{4,}[ \t]*)+`),
			tmpl: "-----BEGIN ${1}PRIVATE KEY${2}-----\n" + Masked},
		// Credentials in a URL: scheme://user:password@host keeps the host.
		{re: regexp.MustCompile(`\b([A-Za-z][A-Za-z0-9+.-]*://)[^\s/?#@:]*:[^\s/?#]*@`),
			tmpl: "${1}" + Masked + "@"},
		// Slack incoming webhooks.
		{re: regexp.MustCompile(`\b(hooks\.slack\.com/(?:services|workflows|triggers)/)[A-Za-z0-9/_-]+`),
			tmpl: "${1}…" + Masked},
		// Anthropic, then OpenAI (which must look random: a digit in it).
		{re: regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_-]{8,}`),
			tmpl: "sk-ant-…" + Masked},
		{re: regexp.MustCompile(`\bsk-((?:proj|svcacct|admin|None)-)?[A-Za-z0-9_-]{20,}`),
			tmpl: "sk-${1}…" + Masked, keep: hasDigit},
		// Stripe.
		{re: regexp.MustCompile(`\b([rs]k_(?:live|test)_)[A-Za-z0-9]{16,}`),
			tmpl: "${1}…" + Masked},
		// GitHub and GitLab.
		{re: regexp.MustCompile(`\b(gh[pousr]_)[A-Za-z0-9]{20,}`),
			tmpl: "${1}…" + Masked},
		{re: regexp.MustCompile(`\b(github_pat_)[A-Za-z0-9_]{20,}`),
			tmpl: "${1}…" + Masked},
		{re: regexp.MustCompile(`\b(glpat-)[A-Za-z0-9_-]{20,}`),
			tmpl: "${1}…" + Masked},
		// AWS access key ids, and secret keys where they are named.
		{re: regexp.MustCompile(`\b(AKIA|ASIA)[A-Z0-9]{16}\b`),
			tmpl: "${1}…" + Masked},
		{re: regexp.MustCompile(`(?i)((?:aws_?)?secret_?access_?key["']?\s*[:=]\s*["']?)[A-Za-z0-9/+=]{40,}`),
			tmpl: "${1}" + Masked},
		// Slack tokens.
		{re: regexp.MustCompile(`\b(xox[abposr]-|xapp-)[A-Za-z0-9-]{10,}`),
			tmpl: "${1}…" + Masked},
		// Google API keys.
		{re: regexp.MustCompile(`\bAIza[A-Za-z0-9_-]{35}`),
			tmpl: "AIza…" + Masked},
		// JSON Web Tokens.
		{re: regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`),
			tmpl: "eyJ…" + Masked},
		// Telegram bot tokens (also inside an API URL's /bot<token>/).
		{re: regexp.MustCompile(`(^|[^0-9A-Za-z]|bot)([0-9]{6,12}):[A-Za-z0-9_-]{30,}`),
			tmpl: "${1}${2}:…" + Masked},
		// Authorization headers, and a bearer token wherever it is named.
		{re: regexp.MustCompile(`(?i)\b(authorization\s*[:=]\s*["']?(?:bearer|basic|token|bot)\s+)[^\s"']{6,}`),
			tmpl: "${1}" + Masked, keep: unmasked},
		{re: regexp.MustCompile(`(?i)\b(bearer\s+)([A-Za-z0-9._~+/=-]{16,})`),
			tmpl: "${1}" + Masked, keep: tokenish},
		// Secrets assigned to variables named for them: FOO_API_KEY=..., ...
		{re: regexp.MustCompile(`\b([A-Z0-9_]*(?:API_?KEY|TOKEN|SECRET|SECRET_KEY|PASSWORD|PASSWD|ACCESS_KEY|PRIVATE_KEY)\s*=\s*["']?)[^\s"']{8,}`),
			tmpl: "${1}" + Masked, keep: unmasked},
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
	// Masking one secret can expose another shape to an earlier rule, so
	// the rules run until nothing changes (in practice, once or twice).
	for range 8 {
		t := s
		for _, r := range rules() {
			t = r.apply(t)
		}
		if t == s {
			break
		}
		s = t
	}
	return s
}

func (r rule) apply(s string) string {
	ms := r.re.FindAllStringSubmatchIndex(s, -1)
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
		b = r.re.ExpandString(b, r.tmpl, s, m)
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
