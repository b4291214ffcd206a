package alert

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// These tests run scripts/omega-alert-send.sh, with real bash and curl,
// against a fake Telegram Bot API on 127.0.0.1.

const (
	testToken = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0"
	testChat  = "-1001234567890"
)

var sendScript = filepath.Join("..", "scripts", "omega-alert-send.sh")

type answer struct {
	status int
	body   string
}

var (
	ok200   = answer{200, `{"ok":true,"result":{"message_id":7,"chat":{"id":-1001234567890},"date":1}}`}
	busy429 = answer{429, `{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 1","parameters":{"retry_after":1}}`}
	err500  = answer{500, `{"ok":false,"error_code":500,"description":"Internal Server Error"}`}
	err502  = answer{502, `<html>bad gateway</html>`}
)

// fakeAPI is the Bot API's sendMessage. It answers with answers in order,
// repeating the last, and records every request.
type fakeAPI struct {
	t       *testing.T
	srv     *httptest.Server
	answers []answer
	hold    chan struct{} // when set, each request waits for it
	arrived chan struct{} // when set, signalled as each request arrives

	mu   sync.Mutex
	reqs []url.Values
	bad  []string
}

func newFakeAPI(t *testing.T, answers ...answer) *fakeAPI {
	f := &fakeAPI{t: t, answers: answers}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	if f.arrived != nil {
		f.arrived <- struct{}{}
	}
	if f.hold != nil {
		<-f.hold
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.Method != http.MethodPost || r.URL.Path != "/bot"+testToken+"/sendMessage" {
		f.bad = append(f.bad, r.Method+" "+r.URL.Path)
		http.Error(w, `{"ok":false,"error_code":404,"description":"Not Found"}`, http.StatusNotFound)
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/x-www-form-urlencoded" {
		f.bad = append(f.bad, "Content-Type "+ct)
	}
	if err := r.ParseForm(); err != nil {
		f.bad = append(f.bad, err.Error())
	}
	f.reqs = append(f.reqs, r.PostForm)
	a := f.answers[min(len(f.reqs), len(f.answers))-1]
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.status)
	fmt.Fprint(w, a.body)
}

func (f *fakeAPI) requests() []url.Values {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.bad) > 0 {
		f.t.Errorf("the fake API got bad requests: %q", f.bad)
	}
	return append([]url.Values(nil), f.reqs...)
}

// sendEnv is a home with a 0600 config pointing at the fake API.
type sendEnv struct {
	home, conf, failed string
	env                []string
}

func newSendEnv(t *testing.T, api string, extra ...string) *sendEnv {
	t.Helper()
	testenv.Need(t, "bash", "curl")
	home := t.TempDir()
	e := &sendEnv{
		home:   home,
		conf:   filepath.Join(home, ".omega", "telegram.conf"),
		failed: filepath.Join(home, ".omega", "monitor", "alert-failed.log"),
	}
	if err := os.MkdirAll(filepath.Dir(e.conf), 0o700); err != nil {
		t.Fatal(err)
	}
	conf := "# the operator's bot\nbot_token = " + testToken + "\r\nchat_id=\"" + testChat + "\"\n"
	if err := os.WriteFile(e.conf, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(home, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	e.env = append([]string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + tmp, "LC_ALL=C.UTF-8",
		"OMEGA_TELEGRAM_API=" + api, "OMEGA_ALERT_BACKOFF=0", "OMEGA_ALERT_TIMEOUT=10",
	}, extra...)
	return e
}

type result struct {
	stdout, stderr string
	code           int
	took           time.Duration
}

func (e *sendEnv) run(t *testing.T, args ...string) result {
	t.Helper()
	return e.runIn(t, "", args...)
}

// runIn runs the script with stdin on its standard input.
func (e *sendEnv) runIn(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{sendScript}, args...)...)
	cmd.Env = e.env
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := result{stdout.String(), stderr.String(), 0, time.Since(start)}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	for _, out := range []string{r.stdout, r.stderr} {
		if strings.Contains(out, testToken) || strings.Contains(out, "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0") {
			t.Errorf("the script printed the bot token:\n%s", out)
		}
	}
	if left, _ := os.ReadDir(filepath.Join(e.home, "tmp")); len(left) > 0 {
		t.Errorf("the script left %d temporary files", len(left))
	}
	return r
}

func (e *sendEnv) failedLog(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(e.failed)
	if errors.Is(err, os.ErrNotExist) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(e.failed); fi.Mode().Perm() != 0o600 {
		t.Errorf("%s is mode %v, want 0600", e.failed, fi.Mode().Perm())
	}
	return string(b)
}

func TestSendDelivers(t *testing.T) {
	api := newFakeAPI(t, ok200)
	e := newSendEnv(t, api.srv.URL)
	msg := examples[0].HTML()[0]
	r := e.runIn(t, msg, "--stdin")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	want := []url.Values{{
		"chat_id":                  {testChat},
		"text":                     {msg},
		"parse_mode":               {"HTML"},
		"disable_web_page_preview": {"true"},
	}}
	if diff := cmp.Diff(want, api.requests()); diff != "" {
		t.Errorf("requests mismatch (-want +got):\n%s", diff)
	}
	if r.stdout != "" || r.stderr != "" {
		t.Errorf("a quiet success printed:\n%s%s", r.stdout, r.stderr)
	}
	if log := e.failedLog(t); log != "" {
		t.Errorf("failed log written on success:\n%s", log)
	}
}

// TestSendTestSaysTheChat: a test alert (OMEGA_ALERT_TEST=1) says which
// chat it reached, by the name Telegram gives it, and its id; a quote or a
// control character in the message or the name forges nothing.
func TestSendTestSaysTheChat(t *testing.T) {
	for _, c := range []struct{ name, body, says string }{
		{"a group", `{"ok":true,"result":{"message_id":7,"from":{"id":42,"is_bot":true,"first_name":"bot","username":"omega_bot"},` +
			`"chat":{"id":-1001234567890,"title":"Ops ` + "\x1b" + `[31mroom","type":"supergroup"},"date":1,"text":"\"title\":\"forged\""}}`,
			"delivered to the chat Ops [31mroom (id -1001234567890)"},
		{"a person", `{"ok":true,"result":{"message_id":8,"from":{"id":42,"is_bot":true,"first_name":"bot"},` +
			`"chat":{"id":5551234,"first_name":"Ada","username":"ada_l","type":"private"},"date":1,"text":"hi"}}`,
			"delivered to the chat @ada_l (id 5551234)"},
		{"no name", ok200.body, "delivered to the chat with no name (id -1001234567890)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			api := newFakeAPI(t, answer{200, c.body})
			e := newSendEnv(t, api.srv.URL, "OMEGA_ALERT_TEST=1")
			r := e.runIn(t, "hello", "--stdin")
			if r.code != 0 || !strings.Contains(r.stderr, c.says) {
				t.Errorf("exit %d, stderr:\n%s\nwant it to say %q", r.code, r.stderr, c.says)

			}
		})
	}
}

// TestSendSeveral: each argument is one message, sent in order (the
// command-line form, kept for text that is not private).
func TestSendSeveral(t *testing.T) {
	api := newFakeAPI(t, ok200)
	e := newSendEnv(t, api.srv.URL)
	if r := e.run(t, "one", "two &amp; <b>three</b>"); r.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	var got []string
	for _, q := range api.requests() {
		got = append(got, q.Get("text"))
	}
	if diff := cmp.Diff([]string{"one", "two &amp; <b>three</b>"}, got); diff != "" {
		t.Errorf("texts mismatch (-want +got):\n%s", diff)
	}
}

func TestSendRetries(t *testing.T) {
	parseErr := answer{400, `{"ok":false,"error_code":400,"description":"Bad Request: can't parse entities: Unsupported start tag \"x\" at byte offset 0"}`}
	tests := []struct {
		name     string
		answers  []answer
		env      []string
		code     int
		requests int
		minTook  time.Duration
		stderr   string // a substring of stderr
		logged   bool
	}{
		{name: "429 honours retry_after", answers: []answer{busy429, ok200}, requests: 2, minTook: time.Second,
			stderr: "retry_after 1s"},
		{name: "5xx then success", answers: []answer{err500, err502, ok200}, requests: 3},
		{name: "backoff doubles", answers: []answer{err500, err500, ok200}, env: []string{"OMEGA_ALERT_BACKOFF=1"},
			requests: 3, minTook: 3 * time.Second},
		{name: "gives up after the tries", answers: []answer{err500}, env: []string{"OMEGA_ALERT_TRIES=3"},
			code: 1, requests: 3, stderr: "gave up after 3 tries: HTTP 500", logged: true},
		{name: "gives up at the deadline", answers: []answer{{429, `{"ok":false,"parameters":{"retry_after":300}}`}},
			env: []string{"OMEGA_ALERT_DEADLINE=5"}, code: 1, requests: 1, stderr: "would pass 5s", logged: true},
		{name: "an absurd retry_after is capped by the deadline", answers: []answer{{429, `{"ok":false,"parameters":{"retry_after":99999999999999999999}}`}},
			env: []string{"OMEGA_ALERT_DEADLINE=5"}, code: 1, requests: 1, stderr: "would pass 5s", logged: true},
		{name: "a long retry_after is capped by the deadline", answers: []answer{{429, `{"ok":false,"parameters":{"retry_after":9223372036854775807}}`}},
			env: []string{"OMEGA_ALERT_DEADLINE=5"}, code: 1, requests: 1, stderr: "would pass 5s", logged: true},
		{name: "a group made a supergroup says its new id", answers: []answer{{400, `{"ok":false,"error_code":400,"description":"Bad Request: group chat was upgraded to a supergroup chat","parameters":{"migrate_to_chat_id":-1001234500099}}`}},
			code: 1, requests: 1, stderr: "group chat was upgraded to a supergroup chat (the group became a supergroup: set chat_id=-1001234500099 in ", logged: true},
		{name: "forbidden is not retried", answers: []answer{{403, `{"ok":false,"error_code":403,"description":"Forbidden: bot was blocked by the user"}`}},
			code: 1, requests: 1, stderr: "Forbidden: bot was blocked by the user", logged: true},
		{name: "ok false is not success", answers: []answer{{200, `{"ok":false}`}}, code: 1, requests: 1, logged: true},
		{name: "refused HTML goes as plain text", answers: []answer{parseErr, ok200}, requests: 2,
			stderr: "sending it as plain text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := newFakeAPI(t, tt.answers...)
			e := newSendEnv(t, api.srv.URL, tt.env...)
			msg := "<b>BLOCKED</b> · <code>h:s</code>\n<pre>a &lt; b &amp;&amp; c</pre>"
			r := e.runIn(t, msg, "--stdin")
			if r.code != tt.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", r.code, tt.code, r.stderr)
			}
			reqs := api.requests()
			if len(reqs) != tt.requests {
				t.Errorf("%d requests, want %d", len(reqs), tt.requests)
			}
			if r.took < tt.minTook {
				t.Errorf("took %v, want at least %v", r.took, tt.minTook)
			}
			if !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("stderr does not say %q:\n%s", tt.stderr, r.stderr)
			}
			log := e.failedLog(t)
			if tt.logged != strings.Contains(log, msg) {
				t.Errorf("failed log holds the message: %v, want %v:\n%s", !tt.logged, tt.logged, log)
			}
			if tt.name == "refused HTML goes as plain text" && len(reqs) == 2 {
				want := url.Values{"chat_id": {testChat}, "text": {"BLOCKED · h:s\na < b && c"}, "disable_web_page_preview": {"true"}}
				if diff := cmp.Diff(want, reqs[1]); diff != "" {
					t.Errorf("plain retry mismatch (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestSendNotFoundSaysWhatItCanMean: Telegram answers 404 to a bot token
// it does not know as it does to a wrong address; the funnel says both,
// and the base address it used, never the token, even when the address
// was given with the token's /bot part in it.
func TestSendNotFoundSaysWhatItCanMean(t *testing.T) {
	api := newFakeAPI(t, ok200)
	for _, c := range []struct{ name, base, says string }{
		{"a wrong path", api.srv.URL + "/telegram", api.srv.URL + "/telegram, to which /bot<token>/sendMessage is added)"},
		{"the token in the address", api.srv.URL + "/bot" + testToken, api.srv.URL + ", to which /bot<token>/sendMessage is added; leave the /bot part out of it)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newSendEnv(t, c.base)
			r := e.runIn(t, "hello", "--stdin")
			if r.code != 1 || !strings.Contains(r.stderr, "HTTP 404: Not Found (a bot token Telegram does not know, or OMEGA_TELEGRAM_API not the Bot API's base address: "+c.says) {
				t.Errorf("exit %d, stderr:\n%s", r.code, r.stderr)
			}
			if strings.Contains(r.stderr+e.failedLog(t), testToken[10:]) {
				t.Errorf("the token is said:\n%s", r.stderr)
			}
		})
	}
}

func TestSendNoAnswer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	e := newSendEnv(t, "http://"+addr, "OMEGA_ALERT_TRIES=2")
	r := e.run(t, "hello")
	if r.code != 1 || !strings.Contains(r.stderr, "no answer from the API") {
		t.Errorf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	if !strings.Contains(e.failedLog(t), "hello") {
		t.Error("the message is not in the failed log")
	}
}

func TestSendRefusesConfig(t *testing.T) {
	tests := []struct {
		name   string
		mode   os.FileMode
		conf   string
		stderr string
	}{
		{"world-readable", 0o644, "", "is mode 644, open to other users"},
		{"group-readable", 0o640, "", "is mode 640"},
		{"world-writable", 0o602, "", "is mode 602"},
		{"no token", 0o600, "chat_id=1\n", "bot_token is missing"},
		{"no chat", 0o600, "bot_token=" + testToken + "\n", "chat_id is missing"},
		{"not executed", 0o600, "bot_token=$(touch pwned)\nchat_id=1\n", "bot_token is missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := newFakeAPI(t, ok200)
			e := newSendEnv(t, api.srv.URL)
			if tt.conf != "" {
				if err := os.WriteFile(e.conf, []byte(tt.conf), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Chmod(e.conf, tt.mode); err != nil {
				t.Fatal(err)
			}
			r := e.run(t, "<b>hi</b>")
			if r.code != 1 || !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("exit %d, want 1 and %q; stderr:\n%s", r.code, tt.stderr, r.stderr)
			}
			if tt.mode&0o077 != 0 && !strings.Contains(r.stderr, "chmod 600 "+e.conf) {
				t.Errorf("stderr does not name the fix:\n%s", r.stderr)
			}
			if n := len(api.requests()); n != 0 {
				t.Errorf("%d requests with a refused config", n)
			}
			if !strings.Contains(e.failedLog(t), "<b>hi</b>") {
				t.Error("the message is not in the failed log")
			}
		})
	}
	t.Run("symlink to a loose file", func(t *testing.T) {
		api := newFakeAPI(t, ok200)
		e := newSendEnv(t, api.srv.URL)
		real := filepath.Join(e.home, "real.conf")
		if err := os.Rename(e.conf, real); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(real, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(real, e.conf); err != nil {
			t.Fatal(err)
		}
		r := e.run(t, "<b>hi</b>")
		if r.code != 1 || !strings.Contains(r.stderr, "(a symlink to "+real+") is mode 644") || !strings.Contains(r.stderr, "chmod 600 "+real) {
			t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
		}
		// The fix it names works: the next run delivers.
		if err := os.Chmod(real, 0o600); err != nil {
			t.Fatal(err)
		}
		if r := e.run(t, "<b>hi</b>"); r.code != 0 || len(api.requests()) != 1 {
			t.Errorf("after the named fix: exit %d, %d requests; stderr:\n%s", r.code, len(api.requests()), r.stderr)
		}
	})
	t.Run("symlink to a file not yours", func(t *testing.T) {
		api := newFakeAPI(t, ok200)
		e := newSendEnv(t, api.srv.URL)
		os.Remove(e.conf)
		if err := os.Symlink("/etc/passwd", e.conf); err != nil {
			t.Fatal(err)
		}
		r := e.run(t, "<b>hi</b>")
		if r.code != 1 || strings.Contains(r.stderr, "chmod") {
			t.Errorf("exit %d, want 1 and no chmod advice; stderr:\n%s", r.code, r.stderr)
		}
		if !strings.Contains(r.stderr, "(a symlink to /etc/passwd) leads outside your home") {
			t.Errorf("stderr does not say where the link leads:\n%s", r.stderr)
		}
		if n := len(api.requests()); n != 0 {
			t.Errorf("%d requests", n)
		}
	})
	t.Run("missing", func(t *testing.T) {
		e := newSendEnv(t, "http://127.0.0.1:9", "OMEGA_TELEGRAM_CONF=/nonexistent/telegram.conf")
		r := e.run(t, "x")
		if r.code != 1 || !strings.Contains(r.stderr, "no config at /nonexistent/telegram.conf") {
			t.Errorf("exit %d; stderr:\n%s", r.code, r.stderr)
		}
	})
}

func TestSendUsage(t *testing.T) {
	e := newSendEnv(t, "http://127.0.0.1:9")
	for _, args := range [][]string{nil, {""}, {"a", ""}, {"--stdin", "a"}} {
		r := e.runIn(t, "a message", args...)
		if r.code != 2 || !strings.HasPrefix(r.stderr, "usage: omega-alert-send ") {
			t.Errorf("args %q: exit %d, want 2 and usage; stderr:\n%s", args, r.code, r.stderr)
		}
	}
	if r := e.runIn(t, "", "--stdin"); r.code != 2 || !strings.Contains(r.stderr, "no message on standard input") {
		t.Errorf("--stdin with nothing on it: exit %d, want 2; stderr:\n%s", r.code, r.stderr)
	}
}

// TestSendTokenNotInArgv: the token is on no command line, seen two ways:
// a curl shim records its arguments, and ps looks at every process while the
// fake API holds the request.
func TestSendTokenNotInArgv(t *testing.T) {
	paths := testenv.Need(t, "curl", "ps")
	api := newFakeAPI(t, ok200)
	api.hold = make(chan struct{})
	api.arrived = make(chan struct{}, 1)
	shims := t.TempDir()
	argv := filepath.Join(shims, "argv")
	shim := "#!/bin/sh\nprintf '%s\\n' \"$@\" >>" + argv + "\nexec " + paths[0] + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(shims, "curl"), []byte(shim), 0o700); err != nil {
		t.Fatal(err)
	}
	e := newSendEnv(t, api.srv.URL)
	e.env[0] = "PATH=" + shims + ":" + os.Getenv("PATH")

	done := make(chan result, 1)
	go func() { done <- e.run(t, "<b>held</b>") }()
	select {
	case <-api.arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("no request arrived")
	}
	ps, err := exec.Command(paths[1], "-eww", "-o", "args=").Output()
	close(api.hold)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ps), "--config -") {
		t.Errorf("ps does not show the held curl:\n%s", ps)
	}
	if strings.Contains(string(ps), "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0") {
		t.Errorf("the bot token is in the process list:\n%s", ps)
	}
	if r := <-done; r.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	b, err := os.ReadFile(argv)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "--config") || strings.Contains(string(b), "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0") {
		t.Errorf("curl's argv:\n%s", b)
	}
	if n := len(api.requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

// TestSendHostilePane: every message of every kind rendered from a hostile
// pane arrives exactly as rendered, parses, and carries no secret.
func TestSendHostilePane(t *testing.T) {
	api := newFakeAPI(t, ok200)
	e := newSendEnv(t, api.srv.URL)
	var sent []string
	for _, a := range []Alert{
		{Kind: Question, Target: "h:s", State: "QUESTION", Time: when, Question: hostile, Options: []string{"❯ 1. <yes>", "  2. &no;"}},
		{Kind: Blocked, Target: "h:s", State: "BLOCKED", Time: when, Work: "0", Transition: hostile},
		{Kind: BudgetExhausted, Target: "h:s", State: "STALLED", Time: when, Work: "3", Progress: "9", Budget: 5, Transition: hostile},
		{Kind: Failure, Target: "h:s", State: "WORKING", Time: when, FailLine: hostile},
		{Kind: Notice, Target: "h:s", Time: when, Text: hostile},
	} {
		for _, m := range a.HTML() {
			if r := e.runIn(t, m, "--stdin"); r.code != 0 {
				t.Fatalf("%s: exit %d, stderr:\n%s", a.Kind, r.code, r.stderr)
			}
			sent = append(sent, m)
		}
	}
	var got []string
	for _, q := range api.requests() {
		got = append(got, q.Get("text"))
		if _, err := telegramText(q.Get("text")); err != nil {
			t.Errorf("Telegram would refuse: %v", err)
		}
		for _, s := range append(hostileSecrets, testToken) {
			if strings.Contains(q.Get("text"), s) {
				t.Errorf("secret %q arrived", s)
			}
		}
	}
	if diff := cmp.Diff(sent, got); diff != "" {
		t.Errorf("arrived texts mismatch (-want +got):\n%s", diff)
	}
}

// argvSecret is a secret in a message that no command line may show.
const argvSecret = "hunter2-ARGV-0f9e8d7c6b5a"

// TestSendMessageNotInArgv attacks the script as another user of the
// machine would: while the fake API holds the request, so that the script
// and its curl are alive, it reads /proc/PID/cmdline of every process below
// this test, and finds neither the message's secret nor the bot token on
// any of them; then the request is let go and the message arrives whole.
func TestSendMessageNotInArgv(t *testing.T) {
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("no /proc here")
	}
	msg := "<b>QUESTION</b> · <code>h:s</code>\n<pre>export PASSWORD=" + argvSecret + "</pre>"
	doc := writeDoc(t, "report.md", docReport)
	tests := []struct {
		name string
		args []string
		// serve starts a fake API holding each request until hold is
		// closed; sent says what it received.
		serve func(t *testing.T, arrived, hold chan struct{}) (url string, sent func() []string)
	}{
		{"sendMessage", []string{"--stdin"}, func(t *testing.T, arrived, hold chan struct{}) (string, func() []string) {
			api := newFakeAPI(t, ok200)
			api.arrived, api.hold = arrived, hold
			return api.srv.URL, func() (texts []string) {
				for _, q := range api.requests() {
					texts = append(texts, q.Get("text"))
				}
				return texts
			}
		}},
		{"sendDocument", []string{"--document", doc, "--stdin"}, func(t *testing.T, arrived, hold chan struct{}) (string, func() []string) {
			api := newFakeDocAPI(t, ok200)
			api.arrived, api.hold = arrived, hold
			return api.srv.URL, func() (captions []string) {
				for _, u := range api.requests() {
					captions = append(captions, u.Fields["caption"])
				}
				return captions
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			arrived, hold := make(chan struct{}, 1), make(chan struct{})
			url, sent := tt.serve(t, arrived, hold)
			e := newSendEnv(t, url)
			done := make(chan result, 1)
			go func() { done <- e.runIn(t, msg, tt.args...) }()
			select {
			case <-arrived:
			case <-time.After(30 * time.Second):
				close(hold)
				t.Fatal("no request arrived")
			}
			lines := cmdlines(t, os.Getpid())
			close(hold)
			r := <-done
			if r.code != 0 {
				t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
			}
			checkCmdlines(t, lines, "omega-alert-send.sh "+strings.Join(tt.args, " "), "curl ")
			if diff := cmp.Diff([]string{msg}, sent()); diff != "" {
				t.Errorf("delivered mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// checkCmdlines fails the test when a command line holds the secret or the
// bot token, or when none holds each of want (so that what was read was the
// processes that carry the message).
func checkCmdlines(t *testing.T, lines map[int]string, want ...string) {
	t.Helper()
	for pid, line := range lines {
		for _, secret := range []string{argvSecret, testToken, testToken[10:]} {
			if strings.Contains(line, secret) {
				t.Errorf("/proc/%d/cmdline holds %q: %q", pid, secret, line)
			}
		}
	}
	for _, w := range want {
		found := false
		for _, line := range lines {
			found = found || strings.Contains(line, w)
		}
		if !found {
			t.Errorf("no process below the test runs %q; read:\n%v", w, lines)
		}
	}
}

// cmdlines returns the command line of every process below root, arguments
// joined by spaces, as /proc shows them to any user of the machine.
func cmdlines(t *testing.T, root int) map[int]string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	children := map[int][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		// The command's name, in parentheses, may hold spaces and
		// parentheses itself: the fields that follow start after the
		// last ')'. They are the state, then the parent's pid.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(fields[1]); err == nil {
			children[ppid] = append(children[ppid], pid)
		}
	}
	lines := map[int]string{}
	for queue := children[root]; len(queue) > 0; queue = queue[1:] {
		pid := queue[0]
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		if err == nil {
			lines[pid] = strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
		}
		queue = append(queue, children[pid]...)
	}
	return lines
}
