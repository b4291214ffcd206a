package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/icmd"

	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
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

	f.relay(t, "status").Assert(t, icmd.Expected{ExitCode: 3, Out: "receiver: not running"})
	f.relay(t, "start").Assert(t, icmd.Expected{Out: "receiving answers in session omega-relay (pid "})
	if !f.has(t, "omega-relay") {
		t.Fatal("no session omega-relay")
	}
	start := f.tmux.Run(t, "display-message", "-p", "-t", "=omega-relay:", "#{pane_start_command}")
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

	f.relay(t, "stop").Assert(t, icmd.Expected{Out: "stopped the answer receiver"})
	if f.has(t, "omega-relay") {
		t.Error("the session omega-relay outlived stop")
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
			if f.has(t, "omega-relay") {
				t.Error("a session omega-relay was left")
			}
			f.relay(t, "status").Assert(t, icmd.Expected{ExitCode: 3, Out: "config"})
		})
	}
}

// TestWatchStartsTheReceiver: with answers on, the first watcher started
// starts the receiver too; the next finds it running and starts none.
func TestWatchStartsTheReceiver(t *testing.T) {
	f := newRelayFleet(t, "bot_token="+relayToken+"\nchat_id=42\nanswers=on\n")
	f.tmux.NewSession(t, "second", "sleep 300")
	env := []string{"OMEGA_TELEGRAM_API=" + f.tg.URL}
	res := f.runEnv(t, env, "watch", "agent", "--interval", "5")
	res.Assert(t, icmd.Success)
	if !strings.Contains(res.Stdout(), "receiving answers in session omega-relay") || !f.has(t, "omega-relay") {
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
