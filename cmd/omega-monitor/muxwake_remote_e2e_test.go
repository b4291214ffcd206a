package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/icmd"
	"gotest.tools/v3/poll"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/muxwake"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// muxHost serves s's tmux on the sshd alias "box", whose multiplexer is
// mux (s's own when empty), with no omega-monitor there; it returns the
// ssh config's path.
func muxHost(t *testing.T, s *testenv.TmuxServer, mux string) string {
	t.Helper()
	if mux == "" {
		mux = s.Mux
	}
	cfg := testenv.NewSSHConfig(t)
	testenv.SSHD(t, cfg, "box", "HOME="+t.TempDir(), "OMEGA_MONITOR_MUX="+mux, "LANG=C.UTF-8")
	return cfg.Path
}

// TestMuxWakeRemotePagesAQuestionWithoutHooks: an agent with no hooks on
// an ssh host with tmux and no omega-monitor, watched at --interval 60
// with --mux-wake at its default (auto): the host's silence alert, armed
// and waited on over the watcher's connection, wakes the watcher, and the
// question is paged
// long before the interval would have looked. Stopped, the watcher leaves
// the host's options and hooks as they were; killed outright with its
// listener, the next start (with --mux-wake 0) puts them back.
func TestMuxWakeRemotePagesAQuestionWithoutHooks(t *testing.T) {
	t.Parallel()
	testenv.EndToEnd(t)
	s := testenv.Tmux(t)
	pane, asked := startMuxAgent(t, s, "agent", "AGENT_WORK_MIN=8", "AGENT_WORK_MAX=8")
	s.Run(t, "set-option", "-w", "-t", "agent:", "monitor-silence", "45")
	s.Run(t, "set-hook", "-t", "agent", "alert-silence[0]", "display-message quiet")
	before := muxOptions(t, s, "agent")
	home := t.TempDir()
	flags := []string{"--ssh-config", muxHost(t, s, ""), "--interval", "60", "--pane", pane}
	r := startLoop(t, loopOptions{target: "box:agent", home: home, flags: flags, muxWakeDefault: true})
	r.waitLines(1, 60*time.Second)
	drawn := waitAsked(t, asked, 1)
	paged := waitPaged(t, r, 1)
	t.Logf("question drawn on the host to its page: %.1fs, at --interval 60 without the agent's hooks", paged.Sub(drawn).Seconds())
	var loop statedir.LoopRecord
	statedir.Dir(r.state).ReadRecord(statedir.Loop, &loop)
	if paged.Sub(loop.StartedAt) > 55*time.Second {
		t.Errorf("the page came %v after the loop started: the interval's poll, not a wake", paged.Sub(loop.StartedAt))
	}
	if diff := cmp.Diff(before, muxOptions(t, s, "agent")); diff == "" {
		t.Errorf("the host's window options are unchanged while it watches: nothing armed")
	}
	channel, _ := muxwake.Name(r.state)
	if waits := marked(t, "wait-for "+channel); len(waits) == 0 {
		t.Errorf("no wait-for of the watcher's channels runs on the host")
	}
	r.stop()
	waitOptions(t, s, "agent", before, "after the watcher's stop")
	// No wait of the watcher's is left, here or on the host.
	waitUnmarked(t, channel, 20*time.Second)
	// The host's server has it all back a moment before the last ssh
	// call returns, and the record goes then.
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if _, err := os.Stat(filepath.Join(r.state, statedir.MuxWake)); err == nil {
			log, _ := os.ReadFile(filepath.Join(r.state, "watcher.log"))
			return poll.Continue("%s left behind; watcher.log:\n%s", statedir.MuxWake, log)
		}
		return poll.Success()
	}, poll.WithTimeout(30*time.Second), poll.WithDelay(100*time.Millisecond))

	armed := waitArmed(t, r.state, 0)
	r = startLoop(t, loopOptions{target: "box:agent", home: home, flags: flags, muxWakeDefault: true})
	r.waitLines(1, 60*time.Second)
	armed = waitArmed(t, r.state, armed)
	for _, p := range marked(t, "wake --mux --state "+r.state) {
		pid, _ := strconv.Atoi(strings.Fields(p)[0])
		syscall.Kill(pid, syscall.SIGKILL)
	}
	syscall.Kill(r.cmd.Process.Pid, syscall.SIGKILL)
	if diff := cmp.Diff(before, muxOptions(t, s, "agent")); diff == "" {
		t.Fatalf("the options were put back, with nobody left to do it")
	}
	waitUnmarked(t, channel, 20*time.Second) // its waits end with its connections
	r = startLoop(t, loopOptions{target: "box:agent", home: home, flags: append(flags, "--mux-wake", "0")})
	r.waitLines(1, 60*time.Second)
	waitOptions(t, s, "agent", before, "at the next start, over ssh")
	r.stop()
	r = startLoop(t, loopOptions{target: "box:agent", home: home, flags: flags, muxWakeDefault: true})
	r.waitLines(1, 60*time.Second)
	waitArmed(t, r.state, armed)
	r.stop()
	waitOptions(t, s, "agent", before, "after the next watcher's stop")
}

// TestMuxWakeRemoteHostileHost: a host whose multiplexer answers the
// arming calls with escape sequences and commands, a megabyte, or never:
// each costs one clear line in the watcher's log and no wake, within the
// calls' wall clock; nothing the host said reaches the log or tmux, and
// the host's options are as they were.
func TestMuxWakeRemoteHostileHost(t *testing.T) {
	t.Parallel()
	testenv.EndToEnd(t)
	for _, tc := range []struct {
		name, answer, said string
	}{
		{"garbage", `show-options) printf '\033]0;PWNED\007on ; run-shell "touch /tmp/PWNED"\n'; exit 0 ;;`,
			"the server's answer is not one to the questions asked"},
		{"megabyte", `display-message) case "$*" in *window_id*) head -c 1048576 /dev/zero | tr '\0' A; exit 0 ;; esac ;;`,
			"answered more than 65536 bytes to display-message"},
		// Arm's questions are one call, which starts with show-options.
		{"silence", `show-options) exec sleep 3600 ;;`, "no answer within 10s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := testenv.Tmux(t)
			pane, _ := startMuxAgent(t, s, "agent", "AGENT_MODE=idle")
			before := muxOptions(t, s, "agent")
			mux := filepath.Join(t.TempDir(), "tmux")
			script := "#!/bin/sh\ncase \"$1\" in\n" + tc.answer + "\nesac\nexec " + coord.ShellQuote(s.Mux) + " \"$@\"\n"
			if err := os.WriteFile(mux, []byte(script), 0o700); err != nil {
				t.Fatal(err)
			}
			flags := []string{"--ssh-config", muxHost(t, s, mux), "--interval", "60", "--pane", pane, "--mux-wake", "2"}
			r := startLoop(t, loopOptions{target: "box:agent", flags: flags})
			r.waitLines(1, 60*time.Second)
			log := filepath.Join(r.state, "watcher.log")
			poll.WaitOn(t, func(poll.LogT) poll.Result {
				data, _ := os.ReadFile(log)
				if strings.Contains(string(data), "mux wake: not armed") {
					return poll.Success()
				}
				return poll.Continue("no reason said yet:\n%s", data)
			}, poll.WithTimeout(60*time.Second), poll.WithDelay(100*time.Millisecond))
			time.Sleep(5 * time.Second) // the idle pane's silence would have armed and fired
			data, _ := os.ReadFile(log)
			if strings.Contains(string(data), "mux wake: armed") {
				t.Errorf("armed on a hostile host:\n%s", data)
			}
			var said []string
			for l := range strings.SplitSeq(string(data), "\n") {
				if strings.Contains(l, "mux wake: not armed") {
					said = append(said, l)
				}
			}
			if len(said) != 1 || !strings.Contains(said[0], tc.said) {
				t.Errorf("want one line saying %q, got:\n%s", tc.said, strings.Join(said, "\n"))
			}
			// What the host said is shown quoted, if at all: no raw
			// escape, and no more than a few bytes of it.
			if strings.ContainsAny(string(data), "\x1b\a") || strings.Contains(string(data), strings.Repeat("A", 100)) {
				t.Errorf("watcher.log carries what the host printed:\n%.2000s", data)
			}
			if diff := cmp.Diff(before, muxOptions(t, s, "agent")); diff != "" {
				t.Errorf("the host's options (-before +after):\n%s", diff)
			}
			if _, err := os.Stat("/tmp/PWNED"); err == nil {
				t.Error("/tmp/PWNED exists")
			}
			r.stop()
		})
	}
}

// TestMuxWakeRemoteWatchAndStop: watch --mux-wake of an ssh target arms
// the host's window; once stop has returned, every option is as it was.
func TestMuxWakeRemoteWatchAndStop(t *testing.T) {
	t.Parallel()
	testenv.EndToEnd(t)
	f := newFleet(t)
	f.tmux.NewSession(t, "agent", "sleep 300")
	testenv.SSHD(t, f.ssh, "box", "HOME="+t.TempDir(), "OMEGA_MONITOR_MUX="+f.tmux.Mux, "LANG=C.UTF-8")
	before := muxOptions(t, f.tmux, "agent")
	f.run(t, "box:agent", "--ssh-config", f.ssh.Path, "--mux-wake", "2").Assert(t, icmd.Success)
	waitArmed(t, filepath.Join(f.state, coord.WatcherName(coord.Target{Host: "box", Session: "agent"})), 0)
	if diff := cmp.Diff(before, muxOptions(t, f.tmux, "agent")); diff == "" {
		t.Errorf("armed, and the host's options are unchanged")
	}
	f.run(t, "stop", "box:agent").Assert(t, icmd.Success)
	if diff := cmp.Diff(before, muxOptions(t, f.tmux, "agent")); diff != "" {
		t.Errorf("after stop returned, the host's options (-before +after):\n%s", diff)
	}
}

// TestMuxWakeRemoteWaitsReturningAtOnce: a host whose wait-for returns at
// once, again and again, costs at most one wait a second per channel, not
// a busy loop of ssh calls.
func TestMuxWakeRemoteWaitsReturningAtOnce(t *testing.T) {
	t.Parallel()
	testenv.EndToEnd(t)
	s := testenv.Tmux(t)
	pane, _ := startMuxAgent(t, s, "agent", "AGENT_MODE=idle")
	dir := t.TempDir()
	mux, waits := filepath.Join(dir, "tmux"), filepath.Join(dir, "waits")
	script := "#!/bin/sh\n[ \"$1\" != wait-for ] || { echo >>" + coord.ShellQuote(waits) + "; exit 0; }\nexec " +
		coord.ShellQuote(s.Mux) + " \"$@\"\n"
	if err := os.WriteFile(mux, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	flags := []string{"--ssh-config", muxHost(t, s, mux), "--interval", "60", "--pane", pane, "--mux-wake", "2"}
	r := startLoop(t, loopOptions{target: "box:agent", flags: flags})
	r.waitLines(1, 60*time.Second)
	waitArmed(t, r.state, 0)
	count := func() int { data, _ := os.ReadFile(waits); return strings.Count(string(data), "\n") }
	start, n0 := time.Now(), count()
	time.Sleep(8 * time.Second)
	n, secs := count()-n0, time.Since(start).Seconds()
	t.Logf("%d waits in %.1fs", n, secs)
	if max := 3 * (int(secs) + 2); n > max { // three channels: silence, activity, the clients'
		t.Errorf("%d waits on the host in %.1fs, want %d at most: a busy loop", n, secs, max)
	}
	r.stop()
}

// TestMuxWakeRemoteConnectionDropped: the watcher's ssh master killed
// under the listener's waits, the drop is said once for each alert, the
// waits are made again, and the host's silence still pages the question
// within seconds.
func TestMuxWakeRemoteConnectionDropped(t *testing.T) {
	t.Parallel()
	testenv.EndToEnd(t)
	s := testenv.Tmux(t)
	pane, asked := startMuxAgent(t, s, "agent", "AGENT_WORK_MIN=12", "AGENT_WORK_MAX=12")
	cfg := muxHost(t, s, "")
	r := startLoop(t, loopOptions{target: "box:agent", flags: []string{"--ssh-config", cfg, "--interval", "60", "--pane", pane, "--mux-wake", "2"}})
	r.waitLines(1, 60*time.Second)
	waitArmed(t, r.state, 0)
	control := coord.ControlPath(r.state, os.Getuid())
	out, _ := exec.Command("ssh", "-F", cfg, "-o", "ControlPath="+control, "-O", "check", "box").CombinedOutput()
	m := regexp.MustCompile(`pid=(\d+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no ssh master: %s", out)
	}
	pid, _ := strconv.Atoi(string(m[1]))
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	paged := waitPaged(t, r, 1)
	t.Logf("question drawn to its page after the connection dropped: %.1fs", paged.Sub(askedAt(t, asked, 1)).Seconds())
	if d := paged.Sub(askedAt(t, asked, 1)); d > 30*time.Second {
		t.Errorf("paged %v after it was drawn: the interval's poll, not a wake", d)
	}
	log, _ := os.ReadFile(filepath.Join(r.state, "watcher.log"))
	for l := range strings.SplitSeq(string(log), "\n") {
		if strings.Contains(l, "mux wake:") {
			t.Logf("watcher.log: %s", l)
		}
	}
	if n := strings.Count(string(log), "cannot wait for the multiplexer's silence alerts"); n > 1 {
		t.Errorf("the drop said %d times, want once at most:\n%s", n, log)
	}
	r.stop()
}

// TestMuxWakeRemoteRestartedAtOnce: a watcher of an ssh target stopped
// and started again at once is armed, and stays armed: its loop ended
// only once its listener had put the host's options back, so that the
// old listener's undoing never comes after the new one's arming.
func TestMuxWakeRemoteRestartedAtOnce(t *testing.T) {
	t.Parallel()
	testenv.EndToEnd(t)
	s := testenv.Tmux(t)
	pane, _ := startMuxAgent(t, s, "agent", "AGENT_MODE=idle")
	before := muxOptions(t, s, "agent")
	home := t.TempDir()
	flags := []string{"--ssh-config", muxHost(t, s, ""), "--interval", "60", "--pane", pane, "--mux-wake", "2"}
	r := startLoop(t, loopOptions{target: "box:agent", home: home, flags: flags})
	r.waitLines(1, 60*time.Second)
	armed := waitArmed(t, r.state, 0)
	r.stop()
	if _, err := os.Stat(filepath.Join(r.state, statedir.MuxWake)); err == nil {
		t.Errorf("the loop ended with %s still there: its listener had not put the options back", statedir.MuxWake)
	}
	r = startLoop(t, loopOptions{target: "box:agent", home: home, flags: flags})
	r.waitLines(1, 60*time.Second)
	waitArmed(t, r.state, armed)
	armedOptions := muxOptions(t, s, "agent")
	if diff := cmp.Diff(before, armedOptions); diff == "" {
		t.Fatalf("armed, and the options are unchanged")
	}
	time.Sleep(12 * time.Second) // longer than any undoing left behind would take
	// The session's actions and hooks (the window's monitor options move
	// between silence and activity as the listener arms one or the other).
	if diff := cmp.Diff(armedOptions[4:], muxOptions(t, s, "agent")[4:]); diff != "" {
		t.Errorf("the new watcher's options were undone (-armed +now):\n%s", diff)
	}
	r.stop()
	waitOptions(t, s, "agent", before, "after the stop")
}
