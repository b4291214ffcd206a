package poll

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/omega-monitor/omega-monitor/alert"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.RemoveBuilds()
	os.Exit(code)
}

// A fakeChannel is a service's API on loopback: it keeps what each request
// carried, and answers with fail's status while fail says so (0: 200).
type fakeChannel struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []string
	paths  []string
	fail   func(n int) int // the status of the nth request, from 1
	hold   chan struct{}   // when not nil, a request waits on it
}

func newFakeChannel(t *testing.T) *fakeChannel {
	f := &fakeChannel{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.bodies = append(f.bodies, string(b))
		f.paths = append(f.paths, r.URL.Path)
		n, fail, hold := len(f.bodies), f.fail, f.hold
		f.mu.Unlock()
		if hold != nil {
			select {
			case <-hold:
			case <-r.Context().Done():
				return
			}
		}
		if fail != nil {
			if code := fail(n); code != 0 {
				http.Error(w, "down for now", code)
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"x","ok":true}`)
	}))
	t.Cleanup(f.Close)
	return f
}

// delivered is the bodies of the requests answered 200.
func (f *fakeChannel) got() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for i, b := range f.bodies {
		if f.fail == nil || f.fail(i+1) == 0 {
			out = append(out, b)
		}
	}
	return out
}

func (f *fakeChannel) hostPort() string { return strings.TrimPrefix(f.URL, "http://") }

// channelWorld is a watcher's directory with one alert waiting, a funnel
// that keeps what it is given, the notify companion on PATH, and a
// channels file of lines.
type channelWorld struct {
	dir, home, funnel, funnelGot string
}

const channelAlert = "<b>QUESTION</b> · <code>box:agent</code>\nRelayed verbatim.\n<pre>Allow rm -rf build? &lt;!channel&gt; @everyone</pre>"

func newChannelWorld(t *testing.T, lines ...string) *channelWorld {
	t.Helper()
	bin := testenv.Build(t, "../../cmd/omega-monitor-notify")
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("OMEGA_NOTIFY_BACKOFF", "0")
	root := t.TempDir()
	w := &channelWorld{dir: filepath.Join(root, "home", "w"), home: filepath.Join(root, "home")}
	assert.NilError(t, os.MkdirAll(w.dir, 0o700))
	w.funnelGot = filepath.Join(root, "funnel.got")
	w.funnel = filepath.Join(root, "funnel")
	w.setFunnel(t, "exit 0")
	if lines != nil {
		assert.NilError(t, os.WriteFile(filepath.Join(w.home, statedir.Channels), []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	}
	assert.NilError(t, statedir.Dir(w.dir).QueueUrgent(time.Now(), []string{channelAlert}))
	return w
}

// setFunnel makes the funnel keep each message it reads, then run then.
func (w *channelWorld) setFunnel(t *testing.T, then string) {
	script := "#!/bin/sh\n{ cat; echo; echo ---; } >>" + w.funnelGot + "\n" + then + "\n"
	assert.NilError(t, os.WriteFile(w.funnel, []byte(script), 0o700))
}

func (w *channelWorld) deliver(t *testing.T) ([]string, bool) {
	t.Helper()
	return w.deliverWith(t, DeliverOptions{Retry: time.Millisecond})
}

func (w *channelWorld) deliverWith(t *testing.T, o DeliverOptions) ([]string, bool) {
	t.Helper()
	return Deliver(context.Background(), w.dir, "box:agent", w.funnel, w.home, os.Environ(), o)
}

func (w *channelWorld) funnelCount(t *testing.T) int {
	b, err := os.ReadFile(w.funnelGot)
	if os.IsNotExist(err) {
		return 0
	}
	assert.NilError(t, err)
	return strings.Count(string(b), "\n---\n")
}

func (w *channelWorld) waiting(t *testing.T) []string {
	names, err := statedir.Dir(w.dir).PendingAlerts()
	assert.NilError(t, err)
	return names
}

func (w *channelWorld) read(t *testing.T, name string) string {
	b, err := os.ReadFile(name)
	if os.IsNotExist(err) {
		return ""
	}
	assert.NilError(t, err)
	return string(b)
}

// TestChannelsEachHaveTheAlertOnce: an escalation goes to the funnel and
// to ntfy, a Slack-style webhook (Mattermost's) and a generic webhook, each
// once, in text its service reads, with no mention word left to page a
// room; it then leaves the outbox, and a second delivery sends nothing.
func TestChannelsEachHaveTheAlertOnce(t *testing.T) {
	ntfy, slack, hook := newFakeChannel(t), newFakeChannel(t), newFakeChannel(t)
	w := newChannelWorld(t,
		"# the operator's channels",
		"ntfy://"+ntfy.hostPort()+"/omega-alerts?disabletls=yes",
		"mattermost://"+slack.hostPort()+"/hooktoken123?disabletls=yes",
		"generic+"+hook.URL+"/hook/abc",
	)
	lines, ok := w.deliver(t)
	assert.Assert(t, ok, "%q", lines)
	assert.DeepEqual(t, lines, []string(nil))
	assert.Equal(t, w.funnelCount(t), 1)
	for name, f := range map[string]*fakeChannel{"ntfy": ntfy, "slack": slack, "generic": hook} {
		got := f.got()
		assert.Equal(t, len(got), 1, "%s: %q", name, got)
		assert.Assert(t, strings.Contains(got[0], "Allow rm -rf build?"), "%s: %s", name, got[0])
		for _, tag := range []string{"<b>", "<pre>", "&lt;", "@everyone", "<!channel>"} {
			assert.Assert(t, !strings.Contains(got[0], tag), "%s: %q in %s", name, tag, got[0])
		}
	}
	assert.Equal(t, ntfy.paths[0], "/omega-alerts")
	assert.Equal(t, slack.paths[0], "/hooks/hooktoken123")
	assert.Assert(t, strings.Contains(slack.got()[0], "```"), "markdown for a Slack-style webhook: %s", slack.got()[0])
	assert.DeepEqual(t, w.waiting(t), []string(nil))
	entries, _ := os.ReadDir(filepath.Join(w.dir, statedir.Outbox))
	assert.Equal(t, len(entries), 0, "the record left with the alert")

	lines, ok = w.deliver(t)
	assert.Assert(t, ok, "%q", lines)
	assert.Equal(t, w.funnelCount(t), 1)
	assert.Equal(t, len(ntfy.got())+len(slack.got())+len(hook.got()), 3)
}

// TestChannelDownThenBack: a channel that fails stays queued for that
// channel alone, and has the alert once when it answers again; the others
// have it once, at once. An alert that waits longer than its expiry for a
// channel is given up there, said, and kept in alert-failed.log.
func TestChannelDownThenBack(t *testing.T) {
	t.Run("a channel, down then back", func(t *testing.T) {
		down, up := newFakeChannel(t), newFakeChannel(t)
		down.fail = func(n int) int {
			if n == 1 {
				return http.StatusServiceUnavailable
			}
			return 0
		}
		w := newChannelWorld(t, "generic+"+down.URL+"/a", "ntfy://"+up.hostPort()+"/t?disabletls=yes")
		lines, ok := w.deliver(t)
		assert.Assert(t, !ok)
		assert.Assert(t, len(lines) == 1 && strings.Contains(lines[0], "alert NOT delivered to channel line 1 (generic, "+down.hostPort()+"): ") &&
			strings.Contains(lines[0], "503 Service Unavailable; queued for it"), "%q", lines)
		assert.Equal(t, len(up.got()), 1)
		assert.Equal(t, w.funnelCount(t), 1)
		assert.Equal(t, len(w.waiting(t)), 1, "kept for the channel that failed")

		time.Sleep(5 * time.Millisecond) // its backoff
		lines, ok = w.deliver(t)
		assert.Assert(t, ok, "%q", lines)
		assert.Equal(t, len(down.bodies), 2)
		assert.Equal(t, len(down.got()), 1)
		assert.Equal(t, len(up.got()), 1, "sent again to a channel that had it")
		assert.Equal(t, w.funnelCount(t), 1, "sent again to the funnel that had it")
		assert.DeepEqual(t, w.waiting(t), []string(nil))
	})
	t.Run("the funnel down for a poll", func(t *testing.T) {
		ch := newFakeChannel(t)
		w := newChannelWorld(t, "generic+"+ch.URL+"/a")
		w.setFunnel(t, "echo 'Telegram unreachable' >&2; exit 1")
		lines, ok := w.deliver(t)
		assert.Assert(t, !ok)
		assert.Assert(t, len(lines) == 1 && strings.Contains(lines[0], "to the funnel "+w.funnel+": Telegram unreachable; queued"), "%q", lines)
		assert.Equal(t, len(w.waiting(t)), 1, "kept for the funnel")
		assert.Equal(t, len(ch.got()), 1)

		w.setFunnel(t, "exit 0")
		time.Sleep(5 * time.Millisecond)
		lines, ok = w.deliver(t)
		assert.Assert(t, ok, "%q", lines)
		assert.Equal(t, len(ch.got()), 1, "the channel that had it is not sent it again")
		assert.Equal(t, w.funnelCount(t), 2)
		assert.DeepEqual(t, w.waiting(t), []string(nil))
		_, err := os.Stat(filepath.Join(w.home, statedir.FailedAlerts))
		assert.Assert(t, os.IsNotExist(err), "an alert delivered late was kept as lost")
	})
	t.Run("a channel down past the alert's expiry", func(t *testing.T) {
		ch := newFakeChannel(t)
		ch.fail = func(int) int { return http.StatusBadGateway }
		w := newChannelWorld(t, "generic+"+ch.URL+"/a")
		lines, ok := w.deliverWith(t, DeliverOptions{Retry: time.Millisecond, Expiry: time.Hour})
		assert.Assert(t, !ok)
		assert.Equal(t, len(w.waiting(t)), 1)
		// An hour on: the alert is given up for that channel, said with
		// the last failure, and kept.
		old := time.Now().Add(-2 * time.Hour)
		assert.NilError(t, os.Chtimes(filepath.Join(w.dir, statedir.Outbox, w.waiting(t)[0]), old, old))
		lines, ok = w.deliverWith(t, DeliverOptions{Retry: time.Millisecond, Expiry: time.Hour})
		assert.Assert(t, !ok)
		assert.Assert(t, len(lines) == 1 && strings.Contains(lines[0], "alert NOT delivered to channel line 1 (generic, "+ch.hostPort()+") within 1h0m0s: ") &&
			strings.Contains(lines[0], "502 Bad Gateway") && strings.HasSuffix(lines[0], "kept in alert-failed.log"), "%q", lines)
		assert.Assert(t, strings.Contains(w.read(t, filepath.Join(w.home, statedir.FailedAlerts)), "not delivered to channel line 1 (generic"))
		assert.Equal(t, w.funnelCount(t), 1)
		assert.Equal(t, len(ch.bodies), 1, "an expired alert was sent again")
		assert.DeepEqual(t, w.waiting(t), []string(nil))
	})
}

// TestChannelThatNeverAnswers: a channel that takes the request and never
// answers costs one attempt's clock, not the others': they have the alert,
// and the alert waits for that one, said with why.
func TestChannelThatNeverAnswers(t *testing.T) {
	hung, up := newFakeChannel(t), newFakeChannel(t)
	hung.hold = make(chan struct{})
	t.Cleanup(func() { close(hung.hold) })
	t.Setenv("OMEGA_NOTIFY_TIMEOUT", "1")
	w := newChannelWorld(t, "generic+"+hung.URL+"/never", "ntfy://"+up.hostPort()+"/t?disabletls=yes")
	lines, ok := w.deliver(t)
	assert.Assert(t, !ok)
	assert.Equal(t, len(lines), 1, "%q", lines)
	assert.Assert(t, strings.Contains(lines[0], "channel line 1 (generic, "+hung.hostPort()+"): no answer within 1s; queued"), "%q", lines)
	assert.Equal(t, len(up.got()), 1)
	assert.Equal(t, w.funnelCount(t), 1)
	assert.Equal(t, len(w.waiting(t)), 1)
}

// TestChannelSecretsShowNowhere: a channel's token, in its URL's path, its
// user and its query, is on no command line while the alert is sent, and
// in no log, record or history after the channel failed.
func TestChannelSecretsShowNowhere(t *testing.T) {
	const secret = "s3cr3tTOKENzz"
	ch := newFakeChannel(t)
	ch.hold = make(chan struct{})
	ch.fail = func(int) int { return http.StatusUnauthorized }
	t.Setenv("OMEGA_NOTIFY_TRIES", "1")
	w := newChannelWorld(t, "generic+http://user:"+secret+"p@"+ch.hostPort()+"/hook/"+secret+"?token="+secret+"q")
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.deliverWith(t, DeliverOptions{Retry: time.Millisecond, Expiry: time.Hour})
	}()
	// While the channel holds the request, every process's command line.
	for {
		ch.mu.Lock()
		n := len(ch.bodies)
		ch.mu.Unlock()
		if n > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, _ := os.ReadFile(p)
		assert.Assert(t, !strings.Contains(string(b), secret), "%s: %q", p, b)
	}
	close(ch.hold)
	<-done
	// Past its expiry: kept in alert-failed.log, with why.
	old := time.Now().Add(-2 * time.Hour)
	assert.NilError(t, os.Chtimes(filepath.Join(w.dir, statedir.Outbox, w.waiting(t)[0]), old, old))
	lines, _ := w.deliverWith(t, DeliverOptions{Retry: time.Millisecond, Expiry: time.Hour})
	assert.Assert(t, len(lines) == 1 && strings.Contains(lines[0], "401"), "%q", lines)
	for _, f := range []string{filepath.Join(w.dir, statedir.Delivery)} {
		assert.Assert(t, !strings.Contains(w.read(t, f), secret), "%s: %s", f, w.read(t, f))
	}
	for _, s := range lines {
		assert.Assert(t, !strings.Contains(s, secret), "%q", s)
	}
	for _, f := range []string{
		filepath.Join(w.home, statedir.FailedAlerts),
		filepath.Join(w.dir, statedir.History),
		filepath.Join(w.dir, statedir.Log),
		filepath.Join(w.dir, statedir.Undelivered),
	} {
		assert.Assert(t, !strings.Contains(w.read(t, f), secret), "%s: %s", f, w.read(t, f))
	}
	assert.Assert(t, strings.Contains(w.read(t, filepath.Join(w.home, statedir.FailedAlerts)), "Allow rm -rf build?"))
}

// TestChannelsFileFaultsToldOnce: a bad line is told once, in the watcher's
// log, and the good lines still deliver every alert; a file others may read
// is refused whole, told once, and the alert kept for the channels.
func TestChannelsFileFaultsToldOnce(t *testing.T) {
	t.Run("a bad line", func(t *testing.T) {
		ch := newFakeChannel(t)
		w := newChannelWorld(t, "generic+"+ch.URL+"/a", "nosuch://tokenXYZ@x", "ntfy://")
		var told []string
		for i := range 3 {
			if i > 0 {
				assert.NilError(t, statedir.Dir(w.dir).QueueUrgent(time.Now(), []string{fmt.Sprintf("alert %d", i)}))
			}
			lines, ok := w.deliver(t)
			assert.Assert(t, ok, "%q", lines)
			told = append(told, lines...)
		}
		assert.Equal(t, len(told), 2, "%q", told)
		assert.Assert(t, strings.Contains(told[0], "channels:2: no service \"nosuch\""), "%q", told)
		assert.Assert(t, strings.Contains(told[1], "channels:3: "), "%q", told)
		assert.Assert(t, !strings.Contains(strings.Join(told, "\n"), "tokenXYZ"), "%q", told)
		assert.Equal(t, len(ch.got()), 3)
		assert.Equal(t, w.funnelCount(t), 3)
	})
	t.Run("a file others may read", func(t *testing.T) {
		ch := newFakeChannel(t)
		w := newChannelWorld(t, "generic+"+ch.URL+"/a")
		assert.NilError(t, os.Chmod(filepath.Join(w.home, statedir.Channels), 0o644))
		lines, ok := w.deliver(t)
		assert.Assert(t, !ok)
		assert.Assert(t, len(lines) == 2 && strings.Contains(lines[0], "chmod 600") && strings.Contains(lines[1], "kept in alert-failed.log"), "%q", lines)
		assert.Equal(t, len(ch.got()), 0)
		assert.Equal(t, w.funnelCount(t), 1)
		assert.Assert(t, strings.Contains(w.read(t, filepath.Join(w.home, statedir.FailedAlerts)), "not delivered to the channels"))
		assert.DeepEqual(t, w.waiting(t), []string(nil))
	})
}

// TestChannelsWithoutTelegram: an operator whose channels are their only
// way to be paged (the default funnel, and no Telegram config) gets each
// alert on the channels, and no line, log or kept copy about a Telegram
// they never set up; with the config in place, the funnel is tried again.
func TestChannelsWithoutTelegram(t *testing.T) {
	hook := newFakeChannel(t)
	w := newChannelWorld(t, "generic+"+hook.URL+"/hook/abc")
	user := t.TempDir()
	env := append(os.Environ(), "HOME="+user, "OMEGA_TELEGRAM_CONF=")
	lines, ok := Deliver(context.Background(), w.dir, "box:agent", alert.DefaultFunnel(user), w.home, env, DeliverOptions{Retry: time.Millisecond})
	assert.Assert(t, ok, "%q", lines)
	assert.DeepEqual(t, lines, []string(nil))
	assert.Equal(t, len(hook.got()), 1)
	assert.DeepEqual(t, w.waiting(t), []string(nil))
	_, err := os.Stat(filepath.Join(w.home, statedir.FailedAlerts))
	assert.Assert(t, os.IsNotExist(err), "a Telegram never set up was logged as a failure")

	// With the config there, the default funnel is the operator's: a
	// missing one is said.
	assert.NilError(t, os.MkdirAll(filepath.Join(user, ".omega"), 0o700))
	assert.NilError(t, os.WriteFile(filepath.Join(user, ".omega", "telegram.conf"), []byte("bot_token=1:x\nchat_id=1\n"), 0o600))
	assert.NilError(t, statedir.Dir(w.dir).QueueUrgent(time.Now(), []string{channelAlert}))
	lines, _ = Deliver(context.Background(), w.dir, "box:agent", alert.DefaultFunnel(user), w.home, env, DeliverOptions{Retry: time.Millisecond})
	assert.Assert(t, len(lines) > 0 && strings.Contains(strings.Join(lines, "\n"), "no alert funnel"), "%q", lines)
}
