package poll

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/omega-monitor/omega-monitor/alert"
	"github.com/omega-monitor/omega-monitor/internal/board"
	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
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

// TestChannelServersEchoNoSecret: channels whose servers refuse each alert
// with an error that quotes the request back (each credential in one form
// a server may write it, as written, URL-escaped, in base64 of either
// alphabet with or without padding, JSON-escaped, after "Bearer ", inside a
// longer base64 text; then the whole request, padded past a megabyte), with
// line breaks, escape sequences and lines forged as the watcher's, through
// the real omega-monitor-notify: no form of any secret reaches the
// watcher's lines, monitor.log as the MCP server's logs reads it, the
// history, the board's reading of the watcher or alert-failed.log, and
// every record of those logs is one line of ours.
func TestChannelServersEchoNoSecret(t *testing.T) {
	ntfy := fakeapi.NewEcho(t, fakeapi.EchoNtfy)
	gotify := fakeapi.NewEcho(t, fakeapi.EchoGotify)
	hook := fakeapi.NewEcho(t, fakeapi.EchoStatus)
	bearer := fakeapi.NewEcho(t, fakeapi.EchoStatus)
	echoes := []*fakeapi.Echo{ntfy, gotify, hook, bearer}
	lines := []string{
		"ntfy://opsbot:pw-Zq9xK7dLm2@" + ntfy.HostPort() + "/alerts-T0p1cK9?disabletls=yes",
		"gotify://" + gotify.HostPort() + "/AbCdEfGh1234567?disabletls=yes",
		"generic+http://hookuser:hk-P4ssW0rd9@" + hook.HostPort() + "/hook/in/Wb7TokQ2xZ?token=qT0k3n-8YhPw",
		"generic+http://" + bearer.HostPort() + "/in?@Authorization=Bearer+bR3ar-T0ken-5xYv",
	}
	secrets := map[string]string{
		"ntfy password": "pw-Zq9xK7dLm2", "ntfy user:password": "opsbot:pw-Zq9xK7dLm2", "ntfy topic": "alerts-T0p1cK9",
		"gotify token": "AbCdEfGh1234567", "generic password": "hk-P4ssW0rd9", "generic user:password": "hookuser:hk-P4ssW0rd9",
		"generic path token": "Wb7TokQ2xZ", "generic query token": "qT0k3n-8YhPw", "bearer token": "bR3ar-T0ken-5xYv",
	}
	t.Setenv("OMEGA_NOTIFY_TRIES", "1")
	o := DeliverOptions{Retry: time.Millisecond, Expiry: time.Hour}
	for _, form := range append(fakeapi.FormNames(), "the whole request") {
		for _, e := range echoes {
			e.Only(form)
			if form == "the whole request" {
				e.Only("")
				e.Pad = 1 << 20
			}
		}
		// An alert refused at each channel, then, past its expiry,
		// given up there and kept.
		// Each delivery ends within a minute: one that does not is cut.
		w := newChannelWorld(t, lines...)
		deliver := func() []string {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			said, _ := Deliver(ctx, w.dir, "box:agent", w.funnel, w.home, os.Environ(), o)
			if ctx.Err() != nil {
				t.Errorf("echoed %s: the delivery did not end", form)
			}
			return said
		}
		said := deliver()
		if len(said) != len(lines) {
			t.Errorf("echoed %s: %d lines said, want one a channel: %.2000q", form, len(said), said)
		}
		old := time.Now().Add(-2 * time.Hour)
		assert.NilError(t, os.Chtimes(filepath.Join(w.dir, statedir.Outbox, w.waiting(t)[0]), old, old))
		said = append(said, deliver()...)
		if left := w.waiting(t); len(left) > 0 {
			t.Errorf("echoed %s: %q still waits", form, left)
		}

		var logs strings.Builder
		_, err := statedir.Dir(w.dir).TailLog(0, &logs)
		assert.NilError(t, err)
		watcher, err := board.One(w.home, filepath.Base(w.dir), time.Now(), board.Options{})
		assert.NilError(t, err)
		seen, err := json.Marshal(watcher)
		assert.NilError(t, err)
		where := map[string]string{
			"the lines":        strings.Join(said, "\n"),
			"monitor.log":      logs.String(),
			"the history":      w.read(t, filepath.Join(w.dir, statedir.History)),
			"the board":        string(seen),
			"alert-failed.log": w.read(t, filepath.Join(w.home, statedir.FailedAlerts)),
		}
		for _, place := range slices.Sorted(maps.Keys(where)) {
			text := where[place]
			for _, name := range slices.Sorted(maps.Keys(secrets)) {
				if leaks := fakeapi.Leaks(text, secrets[name]); len(leaks) > 0 {
					t.Errorf("echoed %s: %s: the %s leaked, %s", form, place, name, strings.Join(leaks, ", "))
				}
			}
			records, bad := fakeapi.Records(text)
			for _, r := range records {
				switch {
				case len(r) > 4096:
					bad = append(bad, fmt.Sprintf("a line of %d bytes", len(r)))
				case place == "monitor.log" && !strings.Contains(r, " MONITOR · box:agent · ? · "):
					bad = append(bad, fmt.Sprintf("a line not ours: %.200q", r))
				}
			}
			if len(bad) > 0 {
				t.Errorf("echoed %s: %s: %d faults; the first: %.300s", form, place, len(bad), bad[0])
			}
		}
		if headers := strings.Count("\n"+where["alert-failed.log"], "\n--- "); headers != len(lines) {
			t.Errorf("echoed %s: %d headers in alert-failed.log, want one a channel that gave up:\n%.2000s", form, headers, where["alert-failed.log"])
		}
	}
}

// TestFunnelFloodIsBounded: a funnel whose last word is a megabyte (the
// Bot API's refusal, passed on) is said, recorded and kept on lines of a
// bounded length, and the alert given up at its expiry is kept once: the
// alert's record, which holds why, stays small enough to be read.
func TestFunnelFloodIsBounded(t *testing.T) {
	w := newChannelWorld(t)
	w.setFunnel(t, `{ printf 'HTTP 500: '; head -c 1048576 /dev/zero | tr '\0' x; echo; } >&2; exit 1`)
	o := DeliverOptions{Retry: time.Millisecond, Expiry: time.Hour}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	said, _ := Deliver(ctx, w.dir, "box:agent", w.funnel, w.home, os.Environ(), o)
	old := time.Now().Add(-2 * time.Hour)
	assert.NilError(t, os.Chtimes(filepath.Join(w.dir, statedir.Outbox, w.waiting(t)[0]), old, old))
	more, _ := Deliver(ctx, w.dir, "box:agent", w.funnel, w.home, os.Environ(), o)
	said = append(said, more...)
	assert.NilError(t, ctx.Err(), "the delivery did not end")
	assert.Equal(t, len(said), 2, "%.300q", said)
	assert.DeepEqual(t, w.waiting(t), []string(nil))
	kept := w.read(t, filepath.Join(w.home, statedir.FailedAlerts))
	assert.Equal(t, strings.Count("\n"+kept, "\n--- "), 1, "%.300s", kept)
	for _, text := range append(said, kept, w.read(t, filepath.Join(w.dir, statedir.Log))) {
		for _, l := range strings.Split(text, "\n") {
			assert.Assert(t, len(l) < 2048, "a line of %d bytes: %.200s", len(l), l)
		}
	}
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
