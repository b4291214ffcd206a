package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/omega-monitor/omega-monitor/internal/board"
	"github.com/omega-monitor/omega-monitor/internal/board/render"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// fakeFunnel writes a funnel script that keeps the funnel's contract (its
// one argument --stdin, the message on standard input), appends the message
// it gets and a newline to log, then runs tail (sh code: exit 1 to fail,
// kill -9 $$ to die).
func fakeFunnel(t *testing.T, log, tail string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "funnel.sh")
	script := "#!/bin/sh\n[ \"$*\" = --stdin ] || { echo \"fake funnel: called with $*\" >&2; exit 2; }\n" +
		"{ cat; echo; } >> '" + log + "'\n" + tail + "\n"
	assert.NilError(t, os.WriteFile(path, []byte(script), 0o700))
	return path
}

func deliver(t *testing.T, env testEnv, state, funnel string) (string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := env.run([]string{"deliver", "--state", state, "--target", "agent", "--funnel", funnel}, nil, &out, &errb)
	assert.Equal(t, errb.String(), "")
	return out.String(), code
}

// outboxWatcher is a watcher's directory, monitor-agent, in a state home of
// the test's own, for deliver to work on through a fake funnel (sh).
func outboxWatcher(t *testing.T) (env testEnv, home, state string, d statedir.Dir) {
	t.Helper()
	testenv.Need(t, "sh")
	home = t.TempDir()
	state = filepath.Join(home, "monitor-agent")
	return newTestEnv("OMEGA_MONITOR_HOME="+home, "OMEGA_ALERT_RETRY=1ms"), home, state, statedir.Dir(state)
}

func outboxNames(t *testing.T, state string) []string {
	t.Helper()
	names, err := statedir.Dir(state).PendingAlerts()
	assert.NilError(t, err)
	return names
}

// TestDeliverOutbox: alerts leave the outbox in order, once delivered; one
// whose funnel died or failed stays queued, the rest behind it, and the
// next call (a restarted watcher's deliverer) delivers them, once; without
// a funnel they are kept in alert-failed.log.
func TestDeliverOutbox(t *testing.T) {
	t.Parallel()
	env, home, state, d := outboxWatcher(t)
	now := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	assert.NilError(t, d.QueueAlerts(now, []string{"first", "second"}))
	assert.NilError(t, d.QueueAlerts(now.Add(time.Minute), []string{"third"}))
	assert.Equal(t, mode(t, d.Path(statedir.Outbox)), os.FileMode(0o700))

	sent := filepath.Join(t.TempDir(), "sent")
	// The funnel dies on the first message: it stays, and so do the rest.
	dying := fakeFunnel(t, sent, "kill -9 $$")
	out, code := deliver(t, env, state, dying)
	assert.Equal(t, code, 1)
	assert.Assert(t, strings.Contains(out, "alert NOT delivered to the funnel "+dying+": the funnel: signal: killed"), out)
	assert.Assert(t, strings.Contains(out, "; queued for it, tried again with backoff until it takes it or the alert is 24h0m0s old"), out)
	assert.Equal(t, len(outboxNames(t, state)), 3)
	// The board carries it as such, with the reason.
	var u statedir.UndeliveredRecord
	assert.NilError(t, d.ReadRecord(statedir.Undelivered, &u))
	assert.Assert(t, strings.Contains(u.Why, "signal: killed"), u.Why)
	fl, err := board.Census(home, time.Now(), board.Options{})
	assert.NilError(t, err)
	assert.Assert(t, len(fl.Watchers) == 1 && fl.Watchers[0].Undelivered != nil, "%+v", fl.Watchers)
	assert.Assert(t, strings.Contains(render.Compact(fl), "the funnel: signal: killed"), render.Compact(fl))

	// Restarted: everything pending goes, in order, once.
	os.Remove(sent)
	time.Sleep(5 * time.Millisecond) // the backoff (OMEGA_ALERT_RETRY)
	out, code = deliver(t, env, state, fakeFunnel(t, sent, "exit 0"))
	assert.Equal(t, code, 0, out)
	got, err := os.ReadFile(sent)
	assert.NilError(t, err)
	assert.Equal(t, string(got), "first\nsecond\nthird\n")
	assert.Equal(t, len(outboxNames(t, state)), 0)
	_, err = os.Stat(d.Path(statedir.Undelivered))
	assert.Assert(t, os.IsNotExist(err), "delivered, and the board still says not")
	out, _ = deliver(t, env, state, fakeFunnel(t, sent, "exit 0"))
	got, _ = os.ReadFile(sent)
	assert.Equal(t, string(got), "first\nsecond\nthird\n", "delivered twice")

	// The funnel fails (exit 1): the cause is said, and it stays queued.
	assert.NilError(t, d.QueueAlerts(now.Add(2*time.Minute), []string{"fourth"}))
	out, code = deliver(t, env, state, fakeFunnel(t, sent, "echo 'omega-alert-send: not sent: HTTP 403' >&2; exit 1"))
	assert.Equal(t, code, 1)
	assert.Assert(t, strings.Contains(out, ": omega-alert-send: not sent: HTTP 403; queued for it"), out)
	assert.Equal(t, len(outboxNames(t, state)), 1)

	// No funnel: kept in alert-failed.log by deliver itself.
	assert.NilError(t, d.QueueAlerts(now.Add(3*time.Minute), []string{"fifth"}))
	time.Sleep(5 * time.Millisecond)
	out, code = deliver(t, env, state, filepath.Join(t.TempDir(), "none.sh"))
	assert.Equal(t, code, 1)
	assert.Assert(t, strings.Contains(out, "no alert funnel at"), out)
	failed, err := os.ReadFile(filepath.Join(home, "alert-failed.log"))
	assert.NilError(t, err)
	assert.Assert(t, strings.Contains(string(failed), "\nfourth\n") && strings.Contains(string(failed), "\nfifth\n"), string(failed))
	assert.Equal(t, len(outboxNames(t, state)), 0)

	history, err := os.ReadFile(filepath.Join(state, "history.jsonl"))
	assert.NilError(t, err)
	assert.Equal(t, strings.Count(string(history), `"event":"alert_delivered"`), 3, string(history))
	assert.Equal(t, strings.Count(string(history), `"event":"alert_not_delivered"`), 4, string(history))
	log, err := os.ReadFile(filepath.Join(state, "monitor.log"))
	assert.NilError(t, err)
	assert.Equal(t, strings.Count(string(log), "alert NOT delivered"), 4, string(log))
}

// TestDeliverToAnOldFunnel: a funnel of the contract before --stdin takes
// its first argument for the message and exits 0. That is no delivery: the
// alert is kept in alert-failed.log and the line says why; it leaves the
// outbox, so that no later poll pages the word --stdin again.
func TestDeliverToAnOldFunnel(t *testing.T) {
	t.Parallel()
	env, home, state, d := outboxWatcher(t)
	assert.NilError(t, d.QueueAlerts(time.Now(), []string{"<b>QUESTION</b> old"}))
	sent := filepath.Join(t.TempDir(), "sent")
	old := filepath.Join(t.TempDir(), "old.sh")
	assert.NilError(t, os.WriteFile(old, []byte("#!/bin/sh\nprintf '%s\\n' \"$1\" >> '"+sent+"'\n"), 0o700))
	out, code := deliver(t, env, state, old)
	assert.Equal(t, code, 1)
	assert.Assert(t, strings.Contains(out, "alert NOT delivered to the funnel "+old+": the funnel "+old+" exited 0 without reading the alert on its standard input"), out)
	assert.Assert(t, strings.Contains(out, "kept in alert-failed.log"), out)
	assert.Equal(t, len(outboxNames(t, state)), 0)
	// The next poll has nothing to hand it.
	out, code = deliver(t, env, state, old)
	assert.Equal(t, code, 0)
	assert.Equal(t, out, "")
	got, err := os.ReadFile(sent)
	assert.NilError(t, err)
	assert.Equal(t, string(got), "--stdin\n", "the old funnel was called again")
	failed, err := os.ReadFile(filepath.Join(home, "alert-failed.log"))
	assert.NilError(t, err)
	assert.Assert(t, strings.Contains(string(failed), "\n<b>QUESTION</b> old\n"), string(failed))
}

// TestDeliverThroughTheRealFunnel: an alert waiting in the outbox reaches
// the (fake) Telegram API once through the real funnel script.
func TestDeliverThroughTheRealFunnel(t *testing.T) {
	t.Parallel()
	testenv.Need(t, "bash", "curl")
	tg := &telegram{}
	api := newTelegramServer(t, tg)
	home := t.TempDir()
	conf := filepath.Join(home, "telegram.conf")
	assert.NilError(t, os.WriteFile(conf, []byte(readmeTelegramConf(t)), 0o600))
	funnel := filepath.Join(home, "omega-alert-send.sh")
	env := newTestEnv("HOME="+home, "OMEGA_TELEGRAM_CONF="+conf, "OMEGA_TELEGRAM_API="+api, "OMEGA_MONITOR_HOME="+filepath.Join(home, "state"))
	var out, errb bytes.Buffer
	assert.Equal(t, env.run([]string{"install"}, nil, &out, &errb), 0, errb.String())
	assert.NilError(t, exec.Command("cp", filepath.Join(home, ".omega", "bin", "omega-alert-send.sh"), funnel).Run())
	state := filepath.Join(home, "state", "monitor-agent")
	assert.NilError(t, statedir.Dir(state).QueueAlerts(time.Now(), []string{"<b>QUESTION</b> · <code>agent</code>"}))
	for range 2 {
		_, code := deliver(t, env, state, funnel)
		assert.Equal(t, code, 0)
	}
	assert.DeepEqual(t, tg.messages(), []string{"<b>QUESTION</b> · <code>agent</code>"})
}

// TestQueueNeverOverwrites: alerts queued at the same time (two in one
// poll, or two polls given one time) all stay, in the order queued.
func TestQueueNeverOverwrites(t *testing.T) {
	t.Parallel()
	d := statedir.Dir(filepath.Join(t.TempDir(), "w"))
	now := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	for _, batch := range [][]string{{"a", "b"}, {"c"}, {"d", "e"}} {
		assert.NilError(t, d.QueueAlerts(now, batch))
	}
	var got []string
	for _, name := range outboxNames(t, string(d)) {
		b, err := os.ReadFile(filepath.Join(d.Path(statedir.Outbox), name))
		assert.NilError(t, err)
		got = append(got, string(b))
	}
	assert.DeepEqual(t, got, []string{"a", "b", "c", "d", "e"})
}

// TestDeliverUrgentFirst: a watcher whose pane floods routine alerts has
// them all delivered, oldest first, once; an urgent one queued behind the
// flood goes first.
func TestDeliverUrgentFirst(t *testing.T) {
	t.Parallel()
	env, _, state, d := outboxWatcher(t)
	now := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	var flood []string
	for i := range 12 {
		flood = append(flood, fmt.Sprintf("failure %02d", i))
	}
	assert.NilError(t, d.QueueAlerts(now, flood))
	assert.NilError(t, d.QueueUrgent(now.Add(time.Second), []string{"QUESTION"}))
	sent := filepath.Join(t.TempDir(), "sent")
	funnel := fakeFunnel(t, sent, "exit 0")
	for range 2 {
		_, code := deliver(t, env, state, funnel)
		assert.Equal(t, code, 0)
	}
	got, _ := os.ReadFile(sent)
	want := "QUESTION\n"
	for _, f := range flood {
		want += f + "\n"
	}
	assert.Equal(t, string(got), want)
	assert.Equal(t, len(outboxNames(t, state)), 0)
}
