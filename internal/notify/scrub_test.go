package notify

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
)

// TestScrubEachForm: a server's error that quotes a secret of the channel's
// URL, in each form a server may write it, says [redacted] in its place;
// the words around it, and words that merely hold a short part of the URL,
// are left as they are; what is said is one line with no escape sequence.
func TestScrubEachForm(t *testing.T) {
	const (
		ntfy    = "ntfy://opsbot:pw-Zq9xK7dLm2@ntfy.example.com/alerts-T0p1cK9"
		odd     = "ntfy://opsbot:p%40ss%2Fw%20rd%2BZq9@ntfy.example.com/t0p1c-Zq"
		hook    = "generic+https://hooks.example.com/hook/alerts/Wb7TokQ2xZ?token=qT0k3n-8YhPw&disabletls=yes"
		bearer  = "generic+https://hooks.example.com/in?@Authorization=Bearer+bR3ar-T0ken-5xYv"
		gotify  = "gotify://gotify.example.com/AbCdEfGh1234567"
		bark    = "bark://:dev1ceK3yZq8@bark.example.com/?scheme=http"
		pair    = "opsbot:pw-Zq9xK7dLm2"
		oddPair = "opsbot:p@ss/w rd+Zq9"
	)
	b64 := func(enc *base64.Encoding, s string) string { return enc.EncodeToString([]byte(s)) }
	for _, tc := range []struct {
		name, url, said, want string
	}{
		{"as written", ntfy, "401: wrong password pw-Zq9xK7dLm2 for opsbot", "401: wrong password [redacted] for [redacted]"},
		{"the topic, as written", ntfy, "POST /alerts-T0p1cK9: forbidden", "POST /[redacted]: forbidden"},
		{"query-escaped", odd, "pass=p%40ss%2Fw+rd%2BZq9&x", "pass=[redacted]&x"},
		{"query-escaped, lower-case hex", odd, "pass=p%40ss%2fw+rd%2bZq9&x", "pass=[redacted]&x"},
		{"path-escaped", odd, "/p@ss%2Fw%20rd+Zq9/", "/[redacted]/"},
		{"JSON-escaped", odd, `{"password":"p@ss\/w rd+Zq9"}`, `{"password":"[redacted]"}`},
		{"as written, with its odd characters", odd, `{"password":"p@ss/w rd+Zq9"}`, `{"password":"[redacted]"}`},
		{"escaped twice", ntfy, "req=opsbot%253Apw-Zq9xK7dLm2%250D", "req=[redacted]%253A[redacted]%250D"},
		{"user:password in base64", ntfy, "Authorization: Basic " + b64(base64.StdEncoding, pair) + " refused", "Authorization: [redacted] refused"},
		{"base64 unpadded", ntfy, "basic=" + b64(base64.RawStdEncoding, pair) + ";", "basic=[redacted];"},
		{"base64url", odd, "basic=" + b64(base64.URLEncoding, oddPair) + ";", "basic=[redacted];"},
		{"base64url unpadded", odd, "basic=" + b64(base64.RawURLEncoding, oddPair) + ";", "basic=[redacted];"},
		{"the password alone in base64", ntfy, "pw " + b64(base64.StdEncoding, "pw-Zq9xK7dLm2"), "pw [redacted]"},
		{"the Basic header in base64", ntfy, "hdr " + b64(base64.StdEncoding, "Basic "+b64(base64.StdEncoding, pair)), "hdr [redacted]"},
		{"a bearer token", bearer, "Authorization: Bearer bR3ar-T0ken-5xYv", "Authorization: [redacted]"},
		{"the token alone", bearer, "token bR3ar-T0ken-5xYv is revoked.", "token [redacted] is revoked."},
		{"a token in the query", gotify, "POST /message?token=AbCdEfGh1234567: invalid", "POST /message?token=[redacted]: invalid"},
		{"a key glued to a word", bark, "devicekeydev1ceK3yZq8x", "devicekey[redacted]x"},
		{"a zero-width space inside it", ntfy, "pw-Zq9x\u200bK7dLm2", "[redacted]"},
		{"line breaks and escapes", hook, "bad\r\nrequest\x1b[31m red\x1b]0;title\x07\u2028next", "bad request red next"},
		{"words that hold a short part", hook, "failed to send notification to generic webhook: 401; alerts-archive, hookshot; yes", "failed to send notification to generic webhook: 401; alerts-archive, hookshot; yes"},
		{"the short part standing alone", hook, "POST /hook/alerts/Wb7TokQ2xZ?token=qT0k3n-8YhPw&disabletls=yes", "POST /[redacted]/[redacted]/[redacted]?[redacted]"},
		{"a value of the query", hook, "POST /in?disabletls=yes&token=qT0k3n-8YhPw", "POST /in?disabletls=yes&token=[redacted]"},
		{"a setting's value", bark, `Post "http://bark.example.com/push": EOF; User-Agent: Go-http-client/1.1`, `Post "http://bark.example.com/push": EOF; User-Agent: Go-http-client/1.1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Channel{Line: 1, URL: tc.url}
			if diff := cmp.Diff(tc.want, c.Scrub(tc.said)); diff != "" {
				t.Errorf("Scrub(%q) (-want +got):\n%s", tc.said, diff)
			}
		})
	}
}

// TestScrubInsideBase64: a server that encodes what it quotes, the secret
// at any of the three offsets of base64's groups, in either alphabet, has
// no form of it said.
func TestScrubInsideBase64(t *testing.T) {
	c := Channel{Line: 1, URL: "ntfy://opsbot:pw-Zq9xK7dLm2@ntfy.example.com/alerts"}
	for _, lead := range []string{"", "x", "xy"} {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			said := enc.EncodeToString([]byte(lead + "Authorization: opsbot:pw-Zq9xK7dLm2\r\n"))
			got := c.Scrub("echo: " + said)
			for _, s := range []string{"pw-Zq9xK7dLm2", "opsbot:pw-Zq9xK7dLm2"} {
				if leaks := fakeapi.Leaks(got, s); len(leaks) > 0 {
					t.Errorf("%q after %q: %q in %s", s, lead, leaks, got)
				}
			}
		}
	}
}

// TestScrubIsBounded: a megabyte of error is said in at most maxSaid bytes
// and a mark, and a secret past the cut, or across it, leaves no part.
func TestScrubIsBounded(t *testing.T) {
	c := Channel{Line: 1, URL: "ntfy://opsbot:pw-Zq9xK7dLm2@ntfy.example.com/alerts"}
	for _, said := range []string{
		strings.Repeat("x ", 1<<19) + "pw-Zq9xK7dLm2",
		strings.Repeat("x", maxSaid-6) + " pw-Zq9xK7dLm2 and more",
		strings.Repeat("é", maxSaid/2-1) + "pw-Zq9xK7dLm2",
	} {
		got := c.Scrub(said)
		if len(got) > maxSaid+len("…") || !strings.HasSuffix(got, "…") {
			t.Errorf("%d bytes said, ending %q", len(got), got[max(0, len(got)-20):])
		}
		if strings.Contains(got, "pw-Zq") {
			t.Errorf("a part of the secret is said: %q", got[max(0, len(got)-30):])
		}
	}
}
