package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// telegram is a fake Bot API that records each sendMessage it receives.
type telegram struct {
	mu     sync.Mutex
	sent   []url.Values
	status int    // when set, every request gets this status and body
	body   string // the body with status
}

func (tg *telegram) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/sendMessage") {
		http.Error(w, `{"ok":false}`, http.StatusNotFound)
		return
	}
	r.ParseForm()
	tg.mu.Lock()
	status, body := tg.status, tg.body
	if status == 0 {
		tg.sent = append(tg.sent, r.PostForm)
	}
	tg.mu.Unlock()
	if status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write([]byte(body))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"ok":true,"result":{"message_id":1}}`))
}

// TestEscalationsReachTelegramOnce runs the tick over a session whose panes
// carry hostile text, hands every alert it writes to the real funnel script,
// and expects the fake API to receive each escalation exactly once, escaped
// and redacted, however often the screens repeat.
func TestEscalationsReachTelegramOnce(t *testing.T) {
	testenv.Need(t, "bash", "curl")
	tg := &telegram{}
	srv := httptest.NewServer(tg)
	defer srv.Close()
	home := t.TempDir()
	conf := filepath.Join(home, "telegram.conf")
	assert.NilError(t, os.WriteFile(conf, []byte("bot_token=123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0\nchat_id=-100123\n"), 0o600))
	secret := "sk-ant-api03-Zq8XbT4mN2vL9pR6sW1yK3hJ7dF5gC0aE-0123456789abcdef"
	question := "────────────────────────────────────────\n ☐ Deploy\n\nShip <script>alert(1)</script> & the key " + secret + " to prod?\n\n" +
		"❯ 1. Yes, <b>now</b>\n  2. No\n  3. Type something.\n────────────────────────────────────────\n  4. Chat about this\n\n" +
		"Enter to select · ↑/↓ to navigate · Esc to cancel\n"
	idle := func(extra string) string {
		return "⏺ " + extra + "\n\n✻ Brewed for 12s\n\n────────────────────────────────────────\n❯ \n" +
			"────────────────────────────────────────\n  ? for shortcuts\n"
	}
	busy := "⏺ Working.\n\n✻ Crunching… (3s · ↑ 1.2k tokens)\n\n────────────────────────────────────────\n❯ \n" +
		"────────────────────────────────────────\n  esc to interrupt\n"
	polls := []struct {
		pane string
		work string
	}{
		{question, "3"},
		{question, "3"},
		{busy, "3"},
		{question, "3"}, // the same question back within the window: no second page
		{busy, "3"},
		{idle("Ran the suite: exit code 1 <b>fail</b>"), "3"}, // a failure, and an exhausted budget (0)
		{idle("Ran the suite: exit code 1 <b>fail</b>"), "3"},
		{idle("All steps are done."), "0"}, // blocked
		{idle("All steps are done."), "0"},
	}
	state := filepath.Join(home, "w")
	send := filepath.Join("..", "..", "scripts", "omega-alert-send.sh")
	alerts := 0
	for i, p := range polls {
		// A poll a minute, and the waits the tick asks for taken, as the
		// loop takes them: a question is paged once seen twice.
		now := time.Date(2026, 1, 5, 9, i, 0, 0, time.UTC).Format(time.RFC3339)
		out, errs, code := tickOnce(t, p.pane, "--state", state, "--target", "agent", "--work", p.work, "--nudge-budget", "0", "--now", now)
		assert.Equal(t, code, 0, errs)
		waits, _ := filepath.Glob(filepath.Join(state, "actions", "*.wait"))
		for _, w := range waits {
			os.Remove(w)
		}
		files, err := filepath.Glob(filepath.Join(state, "outbox", "*.alert"))
		assert.NilError(t, err)
		sort.Strings(files)
		for _, f := range files {
			msg, err := os.ReadFile(f)
			assert.NilError(t, err)
			cmd := exec.Command("bash", send, "--stdin")
			cmd.Stdin = bytes.NewReader(msg)
			cmd.Env = append(os.Environ(), "OMEGA_TELEGRAM_CONF="+conf, "OMEGA_TELEGRAM_API="+srv.URL, "OMEGA_MONITOR_HOME="+home)
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("poll %d: the funnel failed: %v\n%s", i+1, err, b)
			}
			assert.NilError(t, os.Remove(f))
			alerts++
		}
		t.Logf("poll %d: %s", i+1, strings.TrimSpace(out))
	}
	tg.mu.Lock()
	defer tg.mu.Unlock()
	var kinds []string
	for _, v := range tg.sent {
		text := v.Get("text")
		kinds = append(kinds, strings.SplitN(strings.TrimPrefix(text, "<b>"), "<", 2)[0])
		assert.Equal(t, v.Get("parse_mode"), "HTML")
		assert.Assert(t, !strings.Contains(text, "<script>"), "unescaped pane text reached Telegram:\n%s", text)
		assert.Assert(t, !strings.Contains(text, secret[12:]), "a secret reached Telegram:\n%s", text)
		if strings.HasPrefix(text, "<b>QUESTION") {
			assert.Assert(t, strings.Contains(text, "&lt;script&gt;alert(1)&lt;/script&gt; &amp; the key"), text)
			assert.Assert(t, strings.Contains(text, "Yes, &lt;b&gt;now&lt;/b&gt;"), "the options are relayed verbatim:\n%s", text)
		}
	}
	assert.Equal(t, len(tg.sent), alerts)
	// --nudge-budget 0: a stall is told once, as one the watcher does not nudge.
	assert.DeepEqual(t, kinds, []string{"QUESTION", "FAILURE", "STALLED", "BLOCKED"})
}

// newTelegramServer serves tg on loopback until the test ends and returns
// its address.
func newTelegramServer(t *testing.T, tg *telegram) string {
	srv := httptest.NewServer(tg)
	t.Cleanup(srv.Close)
	return srv.URL
}

// fail makes every later request get status and body.
func (tg *telegram) fail(status int, body string) {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	tg.status, tg.body = status, body
}

// messages are the texts delivered so far.
func (tg *telegram) messages() []string {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	var out []string
	for _, v := range tg.sent {
		out = append(out, v.Get("text"))
	}
	return out
}

// syncBuffer is a bytes.Buffer that a process writes while a test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// readmeTelegramConf is the Telegram config of the README's setup, as
// written there between "cat > ~/.omega/telegram.conf <<'EOF'" and "EOF".
func readmeTelegramConf(t *testing.T) string {
	t.Helper()
	return fillToken(readmeTelegramExample(t))
}

// readmeTelegramExample is the README's telegram.conf, word for word: its
// token is a placeholder, which the funnel refuses.
func readmeTelegramExample(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), "telegram.conf <<'EOF'\n")
	conf, _, ok2 := strings.Cut(rest, "\nEOF\n")
	if !ok || !ok2 {
		t.Fatal("README.md has no telegram.conf here-document")
	}
	return conf + "\n"
}

// fillToken puts a token of the Bot API's shape in the place of conf's
// placeholder, as an operator following the README does.
func fillToken(conf string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(conf, "\n") {
		if strings.HasPrefix(line, "bot_token=") {
			line = "bot_token=123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0\n"
		}
		b.WriteString(line)
	}
	return b.String()
}
