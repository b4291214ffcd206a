package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/icmd"
	"gotest.tools/v3/poll"

	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
	"github.com/omega-monitor/omega-monitor/internal/relay"
)

const relayToken = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0"

// relayFleet is a fleet with a Telegram config and a fake Bot API.
type relayFleet struct {
	*fleet
	tg *fakeapi.Telegram
}

func newRelayFleet(t *testing.T, conf string) *relayFleet {
	t.Helper()
	f := &relayFleet{fleet: newFleet(t), tg: fakeapi.NewTelegram(t, relayToken)}
	f.tmux.NewSession(t, "agent", "sleep 300") // the server's first session
	os.MkdirAll(filepath.Join(f.home, ".omega"), 0o700)
	if err := os.WriteFile(filepath.Join(f.home, ".omega", "telegram.conf"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.relay(t, "stop") })
	return f
}

func (f *relayFleet) relay(t *testing.T, verb string) *icmd.Result {
	t.Helper()
	cmd := icmd.Command(omegaMonitor(t), "relay", verb)
	cmd.Env = []string{
		"HOME=" + f.home,
		"PATH=" + os.Getenv("PATH"),
		"OMEGA_MONITOR_HOME=" + f.state,
		"OMEGA_MONITOR_MUX=" + f.tmux.Mux,
		"OMEGA_TELEGRAM_API=" + f.tg.URL,
	}
	res := icmd.RunCmd(cmd)
	if strings.Contains(res.Combined(), relayToken) || strings.Contains(res.Combined(), "AAHdq") {
		t.Errorf("relay %s shows the token: %s", verb, res.Combined())
	}
	return res
}

// TestRelayStartStopStatus: relay start runs the receiver in its own
// detached session, status reports it, stop ends it and waits for its
// lock, each verb saying so; none shows the token.
func TestRelayStartStopStatus(t *testing.T) {
	f := newRelayFleet(t, "bot_token="+relayToken+"\nchat_id=42\nanswers=on\n")

	// A state home of its own has a receiver's session of its own.
	session := relay.SessionFor(f.state, func(string) string { return "" })
	f.relay(t, "status").Assert(t, icmd.Expected{ExitCode: 3, Out: "receiver: not running"})
	f.relay(t, "start").Assert(t, icmd.Expected{Out: "receiving answers in session " + session + " (pid "})
	if !f.has(t, session) {
		t.Fatal("no session " + session)
	}
	start := f.tmux.Run(t, "display-message", "-p", "-t", "="+session+":", "#{pane_start_command}")
	if strings.Contains(start, "AAHdq") || !strings.Contains(start, "omega-monitor-relay' 'serve'") {
		t.Errorf("the session's command = %q: want omega-monitor-relay serve, and no token", start)
	}
	res := f.relay(t, "status")
	res.Assert(t, icmd.Expected{Out: "receiver: running, pid "})
	for _, want := range []string{"last update: none since it started", "config: answers=on, free_text=off, private chat 42, answered by the chat's own user"} {
		if !strings.Contains(res.Stdout(), want) {
			t.Errorf("status says %q, want %q", res.Stdout(), want)
		}
	}
	f.relay(t, "start").Assert(t, icmd.Expected{ExitCode: 1, Err: "the receiver already runs (pid "})
	// What it said in its pane is in its log.
	f.relay(t, "logs").Assert(t, icmd.Expected{Out: " receiving answers for answers=on, "})
	f.relay(t, "status").Assert(t, icmd.Expected{Out: "log: " + filepath.Join(f.state, "relay", "relay.log")})

	f.relay(t, "stop").Assert(t, icmd.Expected{Out: "stopped the answer receiver"})
	if f.has(t, session) {
		t.Error("the session " + session + " outlived stop")
	}
	f.relay(t, "status").Assert(t, icmd.Expected{ExitCode: 3, Out: "receiver: not running"})
	f.relay(t, "stop").Assert(t, icmd.Expected{ExitCode: 3, Err: "the receiver does not run"})
}

// TestRelayStartRefused: start refuses, starting nothing, when the config
// would not do; and says what a receiver that died at start said.
func TestRelayStartRefused(t *testing.T) {
	for _, tt := range []struct {
		name, conf, want string
	}{
		{"answers off", "bot_token=" + relayToken + "\nchat_id=42\n", "answers are off: add the line answers=on to "},
		{"a group without allow_users", "bot_token=" + relayToken + "\nchat_id=-100500\nanswers=on\n", "add allow_users=ID[,ID...]"},
		{"no token", "chat_id=42\nanswers=on\n", "bot_token is missing"},
		{"a token the Bot API refuses", "bot_token=987654321:AAwrong\nchat_id=42\nanswers=on\n", "the receiver died at start: "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newRelayFleet(t, tt.conf)
			res := f.relay(t, "start")
			res.Assert(t, icmd.Expected{ExitCode: 1, Err: tt.want})
			t.Logf("start said: %s", res.Stderr())
			if session := relay.SessionFor(f.state, func(string) string { return "" }); f.has(t, session) {
				t.Error("a session " + session + " was left")
			}
			f.relay(t, "status").Assert(t, icmd.Expected{ExitCode: 3, Out: "config"})
		})
	}
}

// TestWatchStartsTheReceiver: with answers on, the first watcher started
// starts the receiver too; the next finds it running and starts none.
func TestWatchStartsTheReceiver(t *testing.T) {
	t.Parallel()
	f := newRelayFleet(t, "bot_token="+relayToken+"\nchat_id=42\nanswers=on\n")
	f.tmux.NewSession(t, "second", "sleep 300")
	env := []string{"OMEGA_TELEGRAM_API=" + f.tg.URL}
	res := f.runEnv(t, env, "watch", "agent", "--interval", "5")
	res.Assert(t, icmd.Success)
	if session := relay.SessionFor(f.state, func(string) string { return "" }); !strings.Contains(res.Stdout(), "receiving answers in session "+session) || !f.has(t, session) {
		t.Fatalf("watch with answers on did not start the receiver:\n%s\n%s", res.Stdout(), res.Stderr())
	}
	res = f.runEnv(t, env, "watch", "second", "--interval", "5")
	res.Assert(t, icmd.Success)
	if strings.Contains(res.Stdout(), "receiving answers") {
		t.Errorf("a second watcher started a second receiver:\n%s", res.Stdout())
	}
	f.run(t, "stop", "agent").Assert(t, icmd.Success)
	f.run(t, "stop", "second").Assert(t, icmd.Success)
}

// TestRelayLogs: relay logs prints the last lines of the receiver's log,
// relay.log.1's before relay.log's; says in one line, exit 0, that there
// is none yet, creating nothing; refuses a log that is a link; and its
// usage answers --help.
func TestRelayLogs(t *testing.T) {
	t.Parallel()
	state := filepath.Join(t.TempDir(), "state")
	env := newTestEnv("OMEGA_MONITOR_HOME=" + state)
	run := func(args ...string) (code int, stdout, stderr string) {
		var out, errb bytes.Buffer
		code = env.run(append([]string{"relay"}, args...), nil, &out, &errb)
		return code, out.String(), errb.String()
	}

	code, out, errs := run("logs")
	if code != 0 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "the answer receiver has no log yet") {
		t.Errorf("no log: exit %d, stdout %q, stderr %q; want 0 and one line saying so", code, out, errs)
	}
	if _, err := os.Lstat(state); !os.IsNotExist(err) {
		t.Errorf("relay logs created the state home: %v", err)
	}

	dir := filepath.Join(state, relay.Dir)
	os.MkdirAll(dir, 0o700)
	var older, newer []string
	for i := range 30 {
		older = append(older, fmt.Sprintf("2026-12-01 09:00:%02d update %d: refused a tap by user 43: user 43 is not allowed", i, i))
	}
	for i := range 60 {
		newer = append(newer, fmt.Sprintf("2026-12-01 10:%02d:00 update %d: Ada asked monitor-agent to answer \"Yes\" (1a1a1a1a…)", i, 100+i))
	}
	os.WriteFile(filepath.Join(dir, relay.LogFile+".1"), []byte(strings.Join(older, "\n")+"\n"), 0o600)
	// An escape sequence planted in a line does not reach the terminal.
	os.WriteFile(filepath.Join(dir, relay.LogFile), []byte(strings.Join(newer, "\n")+"\x1b]0;owned\x07\nhalf"), 0o600)
	all := append(append([]string{}, older...), newer...)
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"logs"}, newer[10:]},
		{[]string{"logs", "-n", "3"}, newer[57:]},
		{[]string{"logs", "-n", "70"}, all[20:]},
		{[]string{"logs", "-n", "0"}, all},
	} {
		code, out, errs := run(tt.args...)
		if code != 0 || errs != "" {
			t.Errorf("%q: exit %d, stderr %q", tt.args, code, errs)
		}
		if diff := cmp.Diff(strings.Join(tt.want, "\n")+"\n", out); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tt.args, diff)
		}
	}

	for _, args := range [][]string{{"logs", "-n", "-1"}, {"logs", "extra"}, {"logs", "--bogus"}, {"--wait", "1s", "logs"}} {
		if code, _, errs := run(args...); code != 2 || strings.Count(errs, "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q; want 2 and one line", args, code, errs)
		}
	}
	code, out, _ = run("logs", "--help")
	if code != 0 || !strings.Contains(out, "usage: omega-monitor relay logs [-n N] [-f]") || !strings.Contains(out, "-f") || !strings.Contains(out, "-n N") {
		t.Errorf("relay logs --help: exit %d: %s", code, out)
	}
	code, out, _ = run("--help")
	if code != 0 || !strings.Contains(out, "omega-monitor relay logs [-n N] [-f]") || !strings.Contains(out, "  logs ") {
		t.Errorf("relay --help does not list logs: exit %d: %s", code, out)
	}

	// A log that is a link is not followed.
	os.Remove(filepath.Join(dir, relay.LogFile))
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("secret\n"), 0o600)
	os.Symlink(secret, filepath.Join(dir, relay.LogFile))
	code, out, errs = run("logs")
	if code != 1 || strings.Contains(out, "secret") || !strings.Contains(errs, "is a symbolic link; refusing it") {
		t.Errorf("a log that is a link: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// TestRelayLogsFollow: relay logs -f, as a user runs it: the last lines,
// then those written later, across a rotation, until Ctrl-C, which ends it
// with exit 0; with no log yet it says so and waits for one.
func TestRelayLogsFollow(t *testing.T) {
	t.Parallel()
	state := filepath.Join(t.TempDir(), "state")
	dir := filepath.Join(state, relay.Dir)
	os.MkdirAll(dir, 0o700)
	cmd := exec.Command(omegaMonitor(t), "relay", "logs", "-f", "-n", "1")
	cmd.Env = append(os.Environ(), "OMEGA_MONITOR_HOME="+state)
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		cmd.Process.Kill()
		<-done
	}()
	waitFor := func(what string, in *syncBuffer) {
		t.Helper()
		poll.WaitOn(t, func(poll.LogT) poll.Result {
			if strings.Contains(in.String(), what) {
				return poll.Success()
			}
			return poll.Continue("no %q yet:\n%s\n%s", what, stdout.String(), stderr.String())
		}, poll.WithTimeout(20*time.Second))
	}
	waitFor("the answer receiver has no log yet; waiting for", &stderr)
	waitFor("the answer receiver does not run; its next lines come when it starts again (Ctrl-C ends)", &stderr)
	l := relay.NewLog(dir)
	for _, line := range []string{"first", "second"} {
		if err := l.Append(line); err != nil {
			t.Fatal(err)
		}
	}
	waitFor("first\nsecond\n", &stdout)
	// Rotated by hand, as the receiver rotates it.
	os.Rename(filepath.Join(dir, relay.LogFile), filepath.Join(dir, relay.LogFile+".1"))
	l.Append("third")
	waitFor("first\nsecond\nthird\n", &stdout)
	syscall.Kill(cmd.Process.Pid, syscall.SIGINT)
	select {
	case err := <-done:
		done <- err
		if err != nil {
			t.Errorf("relay logs -f after Ctrl-C: %v\n%s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("relay logs -f did not end on Ctrl-C")
	}
	if got := stdout.String(); got != "first\nsecond\nthird\n" {
		t.Errorf("followed %q, want each line once", got)
	}
}
