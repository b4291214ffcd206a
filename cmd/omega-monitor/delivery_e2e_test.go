package main

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	"gotest.tools/v3/poll"

	"github.com/omega-monitor/omega-monitor/internal/board"
	"github.com/omega-monitor/omega-monitor/internal/board/render"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
	"github.com/omega-monitor/omega-monitor/scripts"
)

// End-to-end tests of delivery apart from the poll (issue 36): the real
// loop and deliverer, the real omega-monitor-notify, and a webhook on
// loopback made to fail as real services fail: refusing connections,
// taking the request and never answering, down across a restart of the
// watcher. Every alert must reach every channel exactly once after it
// recovers, and no poll waits for any of it.

// A flakyHook is a generic webhook on a fixed loopback port that can be
// down (refusing connections), hang (take the request, never answer),
// answer 500, or answer 200.
type flakyHook struct {
	t    *testing.T
	addr string

	mu       sync.Mutex
	mode     string   // "ok" or "hang"
	got      []string // the bodies answered 200
	requests int
	ln       net.Listener
	srv      *http.Server
}

func newFlakyHook(t *testing.T, mode string) *flakyHook {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	assert.NilError(t, err)
	h := &flakyHook{t: t, addr: ln.Addr().String(), mode: mode}
	if mode == "down" {
		ln.Close()
	} else {
		h.serve(ln)
	}
	t.Cleanup(h.down)
	return h
}

func (h *flakyHook) serve(ln net.Listener) {
	h.ln = ln
	h.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.requests++
		mode := h.mode
		h.mu.Unlock()
		switch mode {
		case "hang":
			<-r.Context().Done()
			return
		case "500":
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		h.mu.Lock()
		h.got = append(h.got, string(b))
		h.mu.Unlock()
	})}
	go h.srv.Serve(ln)
}

// up listens again on the same port, answering 200.
func (h *flakyHook) up() {
	h.mu.Lock()
	h.mode = "ok"
	h.mu.Unlock()
	if h.srv != nil {
		return
	}
	ln, err := net.Listen("tcp", h.addr)
	assert.NilError(h.t, err)
	h.serve(ln)
}

func (h *flakyHook) set(mode string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.mode = mode
}

func (h *flakyHook) down() {
	if h.srv != nil {
		h.srv.Close()
		h.srv = nil
	}
}

func (h *flakyHook) counts() (got []string, requests int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.got...), h.requests
}

// deliverers lists the pids of the deliverers working on state.
func deliverers(state string) []int {
	var pids []int
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		if len(args) < 2 || args[1] != "deliver" || !strings.Contains(string(b), "\x00--worker") || !strings.Contains(string(b), "\x00"+state+"\x00") {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

func readDelivery(t *testing.T, state string) statedir.DeliveryRecord {
	var rec statedir.DeliveryRecord
	b, err := os.ReadFile(filepath.Join(state, statedir.Delivery))
	if err == nil {
		json.Unmarshal(b, &rec)
	}
	return rec
}

func withChannel(t *testing.T, hook *flakyHook, secret string) string {
	home := t.TempDir()
	assert.NilError(t, os.WriteFile(filepath.Join(home, "channels"), []byte("generic+http://"+hook.addr+"/in/"+secret+"\n"), 0o600))
	return home
}

// TestDeliveryNeverHoldsThePoll: a webhook that takes the request and
// never answers holds no poll and no other channel: the funnel has the
// question at once, the polls go on at their interval, the board says which
// channel is being delivered to, and once the webhook answers again it has
// the question once.
func TestDeliveryNeverHoldsThePoll(t *testing.T) {
	t.Parallel()
	s := testenv.Tmux(t)
	startAgent(t, s, "agent", "AGENT_MODE=question")
	hook := newFlakyHook(t, "hang")
	const secret = "tok3nHANGzz"
	home := withChannel(t, hook, secret)
	r := startLoop(t, loopOptions{target: "agent", home: home,
		env:   []string{"OMEGA_NOTIFY_TIMEOUT=15", "OMEGA_ALERT_RETRY=500ms"},
		flags: []string{"--mux", s.Mux, "--interval", "1", "--work-probe", "echo 5"}})
	lines := r.waitLine("escalated to the operator", 60*time.Second)
	escalated := time.Now()
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if len(r.alertsNow()) == 0 {
			return poll.Continue("the funnel has nothing yet")
		}
		return poll.Success()
	}, poll.WithTimeout(30*time.Second))
	t.Logf("the funnel had the question %v after the escalation, the webhook hanging", time.Since(escalated).Round(time.Millisecond))
	// Polls go on while the webhook holds its request: at 1 s, at least
	// five lines in the next ten seconds (one send to it takes 15).
	r.waitLines(len(lines)+5, 10*time.Second)
	// The board tells a channel being delivered to.
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		said := render.DeliveryLines(board.Watcher{Delivery: ptr(readDelivery(t, r.state))}, time.Now())
		if len(said) == 0 || !strings.Contains(said[0], "delivering to channel line 1 (generic, "+hook.addr+"): try ") {
			return poll.Continue("the board says %q", said)
		}
		return poll.Success()
	}, poll.WithTimeout(30*time.Second))

	hook.set("ok")
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if got, _ := hook.counts(); len(got) == 0 {
			return poll.Continue("the webhook has nothing yet")
		}
		return poll.Success()
	}, poll.WithTimeout(60*time.Second))
	r.waitLines(len(r.waitLines(1, time.Second))+3, 30*time.Second) // three polls more
	got, requests := hook.counts()
	assert.Equal(t, len(got), 1, "the webhook had %q", got)
	assert.Assert(t, strings.Contains(got[0], "QUESTION"), got[0])
	assert.Equal(t, len(r.alertsNow()), 1, "the funnel had %q", r.alertsNow())
	t.Logf("the webhook was sent %d requests, %d of them held unanswered", requests, requests-1)
	// Delivered everywhere: the outbox is empty and its deliverer gone.
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if n := len(outboxNames(t, r.state)); n > 0 {
			return poll.Continue("%d alerts wait", n)
		}
		if p := deliverers(r.state); len(p) > 0 {
			return poll.Continue("deliverers %v still run", p)
		}
		return poll.Success()
	}, poll.WithTimeout(10*time.Second))
	for _, name := range []string{"monitor.log", "watcher.log", "history.jsonl", statedir.Delivery} {
		data, _ := os.ReadFile(filepath.Join(r.state, name))
		assert.Assert(t, !strings.Contains(string(data), secret), "%s holds the channel's token", name)
	}
}

func ptr[T any](v T) *T { return &v }

// waitLog waits for a line of the watcher's monitor.log (where the
// deliverer, apart from the loop, writes its lines) containing want, and
// returns the log.
func waitLog(t *testing.T, state, want string, within time.Duration) string {
	t.Helper()
	var log string
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		b, _ := os.ReadFile(filepath.Join(state, statedir.Log))
		if log = string(b); !strings.Contains(log, want) {
			return poll.Continue("no line with %q in monitor.log", want)
		}
		return poll.Success()
	}, poll.WithTimeout(within))
	return log
}

// TestDeliveryOutlivesAnOutageAndARestart: a webhook that refuses
// connections, or answers 500, when the question comes is said, with the
// cause, and keeps the alert queued; the watcher stopped meanwhile leaves
// no deliverer behind; restarted, its deliverer tries again, and the
// webhook back up has the question once, the funnel never twice.
func TestDeliveryOutlivesAnOutageAndARestart(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ mode, cause string }{
		{"down", "connection refused"},
		{"500", "500 Internal Server Error"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			outageAndRestart(t, tc.mode, tc.cause)
		})
	}
}

func outageAndRestart(t *testing.T, mode, cause string) {
	s := testenv.Tmux(t)
	startAgent(t, s, "agent", "AGENT_MODE=question")
	hook := newFlakyHook(t, mode)
	home := withChannel(t, hook, "tok3nDOWNzz")
	opt := loopOptions{target: "agent", home: home, env: []string{"OMEGA_ALERT_RETRY=300ms"},
		flags: []string{"--mux", s.Mux, "--interval", "1", "--work-probe", "echo 5"}}
	r := startLoop(t, opt)
	r.waitLine("escalated to the operator", 60*time.Second)
	said := waitLog(t, r.state, "alert NOT delivered to channel line 1 (generic, "+hook.addr+")", 30*time.Second)
	assert.Assert(t, strings.Contains(said, cause) && strings.Contains(said, "queued for it"), said)
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if len(r.alertsNow()) == 0 {
			return poll.Continue("the funnel has nothing yet")
		}
		return poll.Success()
	}, poll.WithTimeout(30*time.Second))
	assert.Assert(t, len(deliverers(r.state)) > 0, "no deliverer while an alert waits")

	r.stop()
	assert.DeepEqual(t, deliverers(r.state), []int(nil))
	first := len(r.alertsNow())

	r2 := startLoop(t, opt)
	r2.waitLines(2, 30*time.Second)
	hook.up()
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if got, _ := hook.counts(); len(got) == 0 {
			return poll.Continue("the webhook has nothing yet")
		}
		return poll.Success()
	}, poll.WithTimeout(60*time.Second))
	r2.waitLines(len(r2.waitLines(1, time.Second))+3, 30*time.Second)
	got, _ := hook.counts()
	assert.Equal(t, len(got), 1, "the webhook had %q", got)
	assert.Equal(t, first+len(r2.alertsNow()), 1, "the funnel had the question %d times", first+len(r2.alertsNow()))
	r2.stop()
	assert.DeepEqual(t, deliverers(r2.state), []int(nil))
}

// TestDeliveryCrashMidSendIsSaidNotRepeated: a deliverer killed while its
// send waits for an answer leaves the send's record without its outcome:
// the next deliverer says the webhook may have the alert, and does not
// send it again.
func TestDeliveryCrashMidSendIsSaidNotRepeated(t *testing.T) {
	t.Parallel()
	s := testenv.Tmux(t)
	startAgent(t, s, "agent", "AGENT_MODE=question")
	hook := newFlakyHook(t, "hang")
	home := withChannel(t, hook, "tok3nCRASHzz")
	r := startLoop(t, loopOptions{target: "agent", home: home,
		env:   []string{"OMEGA_NOTIFY_TIMEOUT=30", "OMEGA_ALERT_RETRY=300ms"},
		flags: []string{"--mux", s.Mux, "--interval", "1", "--work-probe", "echo 5"}})
	r.waitLine("escalated to the operator", 60*time.Second)
	var pid int
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		rec := readDelivery(t, r.state)
		for _, c := range rec.Channels {
			if c.Sending != nil && c.ID != "funnel" {
				pid = rec.PID
				return poll.Success()
			}
		}
		return poll.Continue("no send under way: %+v", rec)
	}, poll.WithTimeout(30*time.Second))
	assert.NilError(t, syscall.Kill(pid, syscall.SIGKILL))
	hook.set("ok")
	said := waitLog(t, r.state, "may have reached channel line 1 (generic, "+hook.addr+")", 30*time.Second)
	assert.Assert(t, strings.Contains(said, "not sent again"), said)
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if n := len(outboxNames(t, r.state)); n > 0 {
			return poll.Continue("%d alerts wait", n)
		}
		return poll.Success()
	}, poll.WithTimeout(30*time.Second))
	r.waitLines(len(r.waitLines(1, time.Second))+3, 30*time.Second)
	got, requests := hook.counts()
	assert.Equal(t, requests, 1, "the webhook was sent the alert again: %q", got)
	assert.Equal(t, len(r.alertsNow()), 1)
	err := syscall.Kill(pid, 0)
	assert.Assert(t, errors.Is(err, syscall.ESRCH), "the killed deliverer %d: %v", pid, err)
}

// TestDeliveryTelegramDownThenBack: the real funnel with no Bot API
// reachable holds no poll; the question waits in its queue, said with the
// funnel's cause, and reaches Telegram once when the API is back.
func TestDeliveryTelegramDownThenBack(t *testing.T) {
	t.Parallel()
	testenv.Need(t, "curl")
	s := testenv.Tmux(t)
	startAgent(t, s, "agent", "AGENT_MODE=question")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	assert.NilError(t, err)
	api := ln.Addr().String()
	ln.Close() // down: connections refused
	dir := t.TempDir()
	funnel := filepath.Join(dir, "omega-alert-send.sh")
	assert.NilError(t, os.WriteFile(funnel, scripts.AlertSend, 0o700))
	conf := filepath.Join(dir, "telegram.conf")
	assert.NilError(t, os.WriteFile(conf, []byte(readmeTelegramConf(t)), 0o600))
	home := t.TempDir()
	r := startLoop(t, loopOptions{target: "agent", home: home,
		env: []string{"OMEGA_MONITOR_ALERT_SEND=" + funnel, "OMEGA_TELEGRAM_CONF=" + conf, "OMEGA_TELEGRAM_API=http://" + api,
			"OMEGA_ALERT_RETRY=300ms", "OMEGA_ALERT_TIMEOUT=2"},
		flags: []string{"--mux", s.Mux, "--interval", "1", "--work-probe", "echo 5"}})
	lines := r.waitLine("escalated to the operator", 60*time.Second)
	said := waitLog(t, r.state, "alert NOT delivered to the funnel "+funnel+": ", 60*time.Second)
	assert.Assert(t, strings.Contains(said, "no answer from the API") && !strings.Contains(said, "logged what was not sent"), said)
	r.waitLines(len(lines)+5, 10*time.Second) // the polls go on

	tg := &telegram{}
	ln, err = net.Listen("tcp", api)
	assert.NilError(t, err)
	srv := &http.Server{Handler: tg}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if len(tg.messages()) == 0 {
			return poll.Continue("Telegram has nothing yet")
		}
		return poll.Success()
	}, poll.WithTimeout(60*time.Second))
	r.waitLines(len(r.waitLines(1, time.Second))+3, 30*time.Second)
	assert.Equal(t, len(tg.messages()), 1, "Telegram had %q", tg.messages())
	_, err = os.Stat(filepath.Join(home, statedir.FailedAlerts))
	assert.Assert(t, os.IsNotExist(err), "an alert delivered late was kept as lost")
}
