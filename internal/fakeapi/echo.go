package fakeapi

// This file is a hostile notification service: every request is refused
// with an error that quotes it back (its request line, its headers, its
// path and query, its body) and each credential it carried in the forms a
// server may echo it, with line breaks, escape sequences and forged log
// lines mixed in, in the shape the service's client reads its errors from.
// It proves that a server's words carry no credential into a log.

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
)

// An EchoShape is how an Echo's error reaches its client's error text.
type EchoShape string

// The shapes: the JSON errors of ntfy, Gotify, Bark and Matrix, which the
// clients quote, and the status line's reason phrase, which every client
// that says the status quotes (the generic webhook).
const (
	EchoNtfy   EchoShape = "ntfy"
	EchoGotify EchoShape = "gotify"
	EchoBark   EchoShape = "bark"
	EchoMatrix EchoShape = "matrix"
	EchoStatus EchoShape = "status"
)

// Forged is what an Echo's error says to pass for the watcher's own lines:
// a MONITOR line of monitor.log and a header of alert-failed.log, each at
// the start of a line of its own.
var Forged = []string{
	"alert NOT delivered to Telegram (the funnel): FORGED by the server",
	"--- 2026-01-02T03:04:05Z · not delivered to channel line 9 (ntfy): FORGED by the server",
}

// attack is what follows the echo: line breaks of every kind, the forged
// lines, a title and a screen clear, a colour, a bidi override.
var attack = "\r\n2026-01-02 03:04:05 MONITOR · box:agent · ? · " + Forged[0] + "\n" + Forged[1] +
	"\r\x1b]0;owned\x07\x1b[2J\x1b[31mred\x1b[0m\u202eright-to-left\u2028next\u0085line\v\f"

// An Echo is the hostile service on 127.0.0.1, closed when the test ends.
type Echo struct {
	URL string
	// Pad, when set, is how many bytes of filler go between the echo and
	// a second copy of it at the end of the error.
	Pad int

	shape EchoShape
	srv   *httptest.Server
	mu    sync.Mutex
	n     int
	only  string
}

// InBase64 names, for Only, the credentials written as they are and the
// whole encoded in base64, at each of the three offsets in a group of
// three bytes (a server that encodes what it quotes).
const InBase64 = "inside a base64 run"

// Only makes the error hold each credential of the request in the form
// named (a Form's name, or InBase64) and nothing else of the request, at
// its start, where a reason cut short still holds it; "" is the whole echo.
func (e *Echo) Only(name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.only = name
}

// NewEcho starts a hostile service that answers in shape.
func NewEcho(t testing.TB, shape EchoShape) *Echo {
	t.Helper()
	e := &Echo{shape: shape}
	e.srv = httptest.NewServer(http.HandlerFunc(e.serve))
	e.URL = e.srv.URL
	t.Cleanup(e.srv.Close)
	return e
}

// HostPort is the service's address, host:port.
func (e *Echo) HostPort() string { return strings.TrimPrefix(e.URL, "http://") }

// Requests is how many requests the service was sent.
func (e *Echo) Requests() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.n
}

func (e *Echo) serve(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	e.n++
	only := e.only
	e.mu.Unlock()
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	said := Echoed(r, body)
	if only != "" {
		said = inForm(credentials(r, body), only) + attack
	}
	if e.Pad > 0 {
		said += strings.Repeat("x", e.Pad) + said
	}
	if e.shape == EchoMatrix && r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/login") {
		// The login's flows, so that the client sends its password.
		io.WriteString(w, `{"flows":[{"type":"m.login.password"}]}`)
		return
	}
	var answer any
	switch e.shape {
	case EchoNtfy:
		answer = map[string]any{"code": 40101, "http": 401, "error": said, "link": "https://ntfy.example/echo?" + r.URL.RawQuery + "&req=" + url.QueryEscape(said)}
	case EchoGotify:
		answer = map[string]any{"error": "Unauthorized", "errorCode": 401, "errorDescription": said}
	case EchoBark:
		answer = map[string]any{"code": 401, "message": said}
	case EchoMatrix:
		answer = map[string]any{"errcode": "M_FORBIDDEN", "error": said}
	case EchoStatus:
		// A reason phrase is one line: the server puts the rest on it.
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		reason := strings.NewReplacer("\r\n", " ", "\n", " ").Replace(said)
		fmt.Fprintf(buf, "HTTP/1.1 401 %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", reason)
		buf.Flush()
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnauthorized)
	json.NewEncoder(w).Encode(answer)
}

// Echoed is what a hostile server says of request r with body: the request
// as it arrived, each credential it carried in each of its Forms, all of it
// again in base64 at each offset, and the attack.
func Echoed(r *http.Request, body []byte) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s\r\n", r.Method, r.RequestURI, r.Proto)
	names := slices.Sorted(maps.Keys(r.Header))
	for _, k := range names {
		for _, v := range r.Header[k] {
			fmt.Fprintf(&b, "%s: %s\r\n", k, v)
		}
	}
	for _, c := range credentials(r, body) {
		for _, f := range Forms(c) {
			fmt.Fprintf(&b, "%s: %s\r\n", f.Name, f.Text)
		}
	}
	b.Write(body)
	whole := b.String()
	b.WriteString("\r\nall of it, encoded: " + inBase64Said(whole))
	b.WriteString(attack)
	return b.String()
}

// credentials are what of request r with body may be a credential: each
// header's value (but the few that never are), what a Basic credential
// decodes to and its password, a bearer token, each part of the path, each
// value of the query, and each string of a JSON body (a password, a key).
func credentials(r *http.Request, body []byte) []string {
	var creds []string
	for k, vs := range r.Header {
		switch k {
		case "Content-Type", "Accept", "User-Agent", "Content-Length", "Accept-Encoding":
			continue
		}
		creds = append(creds, vs...)
	}
	if user, pass, ok := r.BasicAuth(); ok {
		creds = append(creds, user+":"+pass, pass)
	}
	if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		creds = append(creds, tok)
	}
	creds = append(creds, strings.Split(r.URL.Path, "/")...)
	for _, vs := range r.URL.Query() {
		creds = append(creds, vs...)
	}
	var fields map[string]any
	if json.Unmarshal(body, &fields) == nil {
		for _, v := range fields {
			if s, ok := v.(string); ok {
				creds = append(creds, s)
			}
		}
	}
	creds = slices.DeleteFunc(creds, func(c string) bool { return len(c) < 3 })
	slices.Sort(creds)
	return slices.Compact(creds)
}

// inForm is each credential in the form named, a line each.
func inForm(creds []string, name string) string {
	if name == InBase64 {
		return inBase64Said(strings.Join(creds, "\n"))
	}
	var b strings.Builder
	for _, c := range creds {
		for _, f := range Forms(c) {
			if f.Name == name {
				b.WriteString(f.Text + "\r\n")
			}
		}
	}
	return b.String()
}

// inBase64Said is s in base64 at each offset in a group of three bytes, of
// both alphabets.
func inBase64Said(s string) string {
	return base64.StdEncoding.EncodeToString([]byte(s)) + " " +
		base64.URLEncoding.EncodeToString([]byte("\x00"+s)) + " " +
		base64.RawStdEncoding.EncodeToString([]byte("\x00\x00"+s))
}

// A Form is a credential as a server may write it.
type Form struct{ Name, Text string }

// Forms are the forms a server may echo a credential s in: as written,
// URL-escaped (with either case of hex), in base64 of both alphabets with
// and without padding, JSON-escaped, after "Bearer ".
func Forms(s string) []Form {
	b64 := func(enc *base64.Encoding) string { return enc.EncodeToString([]byte(s)) }
	quoted, _ := json.Marshal(s)
	fs := []Form{
		{"as written", s},
		{"path-escaped", url.PathEscape(s)},
		{"query-escaped", url.QueryEscape(s)},
		{"query-escaped, lower-case hex", lowerHex(url.QueryEscape(s))},
		{"base64", b64(base64.StdEncoding)},
		{"base64 unpadded", b64(base64.RawStdEncoding)},
		{"base64url", b64(base64.URLEncoding)},
		{"base64url unpadded", b64(base64.RawURLEncoding)},
		{"JSON-escaped", strings.Trim(string(quoted), `"`)},
		{"bearer", "Bearer " + s},
	}
	return fs
}

// lowerHex puts the hex digits of s's %XX escapes in lower case.
func lowerHex(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1], b[i+2] = lower(b[i+1]), lower(b[i+2])
		}
	}
	return string(b)
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'F' {
		return c + 'a' - 'A'
	}
	return c
}

// Leaks says in which of its Forms secret is in text, and whether it is in
// a base64 run of text at any offset (a server that encodes the whole
// request): each form's name, once.
func Leaks(text, secret string) []string {
	var found []string
	seen := map[string]bool{}
	for _, f := range Forms(secret) {
		if seen[f.Text] {
			continue
		}
		seen[f.Text] = true
		if strings.Contains(text, f.Text) {
			found = append(found, f.Name)
		}
	}
	if inBase64(text, secret) {
		found = append(found, InBase64)
	}
	return found
}

// inBase64 decodes every run of base64 of text, of either alphabet, from
// each of its first four characters, and looks for secret in what it
// decodes to: as it is, or in a form of its own (base64 again: a server
// that encodes the Basic header it quotes).
func inBase64(text, secret string) bool {
	isB64 := func(r rune) bool {
		return r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("+/-_", r)
	}
	std := strings.NewReplacer("-", "+", "_", "/")
	for _, run := range strings.FieldsFunc(text, func(r rune) bool { return !isB64(r) }) {
		run = std.Replace(run)
		for off := 0; off < 4 && off < len(run); off++ {
			r := run[off:]
			d, err := base64.RawStdEncoding.DecodeString(r[:len(r)/4*4])
			if err != nil {
				continue
			}
			for _, f := range Forms(secret) {
				if strings.Contains(string(d), f.Text) {
					return true
				}
			}
		}
	}
	return false
}

// Records splits a log into its records, the lines; Records of a log
// holding a line that reads as one of Forged, or a control character, is
// said in bad.
func Records(log string) (lines []string, bad []string) {
	sc := bufio.NewScanner(strings.NewReader(log))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		l := sc.Text()
		lines = append(lines, l)
		for _, f := range Forged {
			if strings.HasPrefix(l, f) || strings.HasPrefix(strings.TrimLeft(l, "0123456789-: "), "MONITOR · box:agent · ? · "+f) {
				bad = append(bad, "a forged line: "+l)
			}
		}
		if strings.ContainsAny(l, "\r\x1b\x07\v\f\u2028\u0085\u202e") {
			bad = append(bad, fmt.Sprintf("a control character: %q", l))
		}
	}
	return lines, bad
}

// FormNames are the names of the Forms, then InBase64: each way Only can
// echo a credential.
func FormNames() []string {
	var names []string
	for _, f := range Forms("x") {
		names = append(names, f.Name)
	}
	return append(names, InBase64)
}
