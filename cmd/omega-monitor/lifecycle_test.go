package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	"gotest.tools/v3/icmd"
	"gotest.tools/v3/poll"

	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// holdAsALoop starts what a loop does at start: open the lock file on
// descriptor 9 and ask hold to lock it, then keep running. It returns the
// process, and ends it when the test ends.
func holdAsALoop(t *testing.T, f *fleet, watcher, target string) *exec.Cmd {
	t.Helper()
	state := filepath.Join(f.state, watcher)
	assert.NilError(t, os.MkdirAll(state, 0o700))
	script := `exec 9>>"$1/loop.lock" && "$2" hold --fd 9 --state "$1" --pid $$ --watcher "$3" --target "$4" || exit 1; echo held; exec sleep 300`
	cmd := exec.Command(testenv.Need(t, "sh")[0], "-c", script, "sh", state, omegaMonitor(t), watcher, target)
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	assert.NilError(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if strings.Contains(out.String(), "held") {
			return poll.Success()
		}
		return poll.Continue("hold said: %s", out.String())
	}, poll.WithTimeout(20*time.Second))
	return cmd
}

// TestOneLoopPerStateDirectory: a loop that holds the state directory (here
// one started by hand) makes watch and a second loop refuse, naming it.
func TestOneLoopPerStateDirectory(t *testing.T) {
	t.Parallel()
	f := newFleet(t)
	f.tmux.NewSession(t, "agent", "sleep 300")
	holder := holdAsALoop(t, f, "monitor-agent", "agent")
	pid := strconv.Itoa(holder.Process.Pid)

	f.run(t, "agent", "--interval", "5").Assert(t, icmd.Expected{
		ExitCode: 1,
		Err:      "agent is already watched: its state directory is held by the watcher monitor-agent of agent (pid " + pid,
	})
	assert.Assert(t, !f.has(t, "monitor-agent"), "a second watcher started")

	state := filepath.Join(f.state, "monitor-agent")
	second := exec.Command("sh", "-c", `exec 9>>"$1/loop.lock" && "$2" hold --fd 9 --state "$1" --pid $$ --watcher w --target agent`,
		"sh", state, omegaMonitor(t))
	out, err := second.CombinedOutput()
	assert.Assert(t, err != nil, "a second loop took the lock: %s", out)
	assert.Assert(t, strings.Contains(string(out), "is held by the watcher monitor-agent of agent (pid "+pid), string(out))

	// Once the holder is gone, watch starts.
	holder.Process.Kill()
	holder.Wait()
	f.run(t, "agent", "--interval", "5").Assert(t, icmd.Expected{Out: "watching agent in monitor-agent"})
	f.run(t, "stop", "agent").Assert(t, icmd.Success)
}

// TestStopSaysWhenItGaveUp: a loop that does not let go of the state
// directory (its process outlives the session) makes stop say so, and when.
func TestStopSaysWhenItGaveUp(t *testing.T) {
	t.Parallel()
	f := newFleet(t)
	f.tmux.NewSession(t, "monitor-agent", "sleep 300")
	holdAsALoop(t, f, "monitor-agent", "agent")
	res := f.run(t, "stop", "agent", "--wait", "1s")
	res.Assert(t, icmd.Expected{ExitCode: 1, Err: "but its loop still holds the state directory: gave up waiting at "})
	assert.Assert(t, strings.Contains(res.Stderr(), "after 1s"), res.Stderr())
}

func TestHoldUsage(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other")
	assert.NilError(t, os.WriteFile(other, nil, 0o600))
	f, err := os.Open(other)
	assert.NilError(t, err)
	defer f.Close()
	for _, args := range [][]string{
		{"hold"},
		{"hold", "--fd", "1", "--state", dir, "--pid", "1"},
		{"hold", "--fd", strconv.Itoa(int(f.Fd())), "--state", dir, "--pid", "1"}, // not loop.lock
	} {
		res := icmd.RunCmd(icmd.Command(omegaMonitor(t), args...))
		assert.Equal(t, res.ExitCode, 2, "%q: %s", args, res.Combined())
	}
}

// monitorLines are the lines of a watcher's monitor.log.
func monitorLines(t *testing.T, f *fleet, watcher string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(f.state, watcher, "monitor.log"))
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

// TestStopThenStartFiveTimes: stop returns once the old loop has cleaned
// up, so the watcher started right after it works: its polls are judged,
// never "tick failed".
func TestStopThenStartFiveTimes(t *testing.T) {
	t.Parallel()
	f := newFleet(t)
	startAgent(t, f.tmux, "agent", "AGENT_MODE=question")
	for i := range 5 {
		f.run(t, "agent", "--interval", "1", "--work-probe", "echo 3").Assert(t, icmd.Expected{Out: "watching agent in monitor-agent"})
		before := len(monitorLines(t, f, "monitor-agent"))
		poll.WaitOn(t, func(poll.LogT) poll.Result {
			if len(monitorLines(t, f, "monitor-agent")) >= before+2 {
				return poll.Success()
			}
			return poll.Continue("start %d: no two polls yet", i+1)
		}, poll.WithTimeout(60*time.Second))
		for _, l := range monitorLines(t, f, "monitor-agent")[before:] {
			if strings.Contains(l, "ERROR") || strings.Contains(l, "tick failed") {
				t.Errorf("start %d: %s", i+1, l)
			}
		}
		f.run(t, "stop", "agent").Assert(t, icmd.Expected{Out: "stopped monitor-agent, the watcher of agent"})
		free, h, err := statedir.Dir(filepath.Join(f.state, "monitor-agent")).Free()
		assert.NilError(t, err)
		assert.Assert(t, free, "stop returned while %s held the state directory", h)
	}
}

// TestWatchReportsADeathAtStart: a loop that cannot start (here its poll
// directory is a file) is reported by watch, with what it said.
func TestWatchReportsADeathAtStart(t *testing.T) {
	t.Parallel()
	f := newFleet(t)
	f.tmux.NewSession(t, "agent", "sleep 300")
	state := filepath.Join(f.state, "monitor-agent")
	assert.NilError(t, os.MkdirAll(state, 0o700))
	assert.NilError(t, os.WriteFile(filepath.Join(state, "poll"), nil, 0o600))
	res := f.run(t, "agent", "--interval", "5")
	res.Assert(t, icmd.Expected{ExitCode: 1, Err: "omega-monitor: the watcher of agent died at start: "})
	assert.Assert(t, strings.Contains(res.Stderr(), "poll: not a directory"), res.Stderr())
	assert.Assert(t, !strings.Contains(res.Stdout(), "watching"), res.Stdout())
	assert.Assert(t, !f.has(t, "monitor-agent"), "the dead watcher's session is left")
}

// TestWatchHandsOverSettings: the caller's settings reach the detached
// watcher, whatever the multiplexer server's environment holds; they are
// recorded in loop.json and said once in its log, and an alert goes to the
// Telegram API the caller named.
func TestWatchHandsOverSettings(t *testing.T) {
	testenv.Need(t, "bash", "curl")
	t.Parallel()
	tg := &telegram{}
	api := newTelegramServer(t, tg)
	f := newFleet(t)
	startAgent(t, f.tmux, "agent", "AGENT_MODE=question")
	conf := filepath.Join(f.home, "my-telegram.conf")
	assert.NilError(t, os.WriteFile(conf, []byte(readmeTelegramConf(t)), 0o600))
	// The server's environment points elsewhere: it must not win.
	f.tmux.Run(t, "set-environment", "-g", "OMEGA_TELEGRAM_API", "http://127.0.0.1:9/wrong")
	f.tmux.Run(t, "set-environment", "-g", "OMEGA_MONITOR_TIMEOUT", "99")
	home := icmd.RunCmd(icmd.Command(omegaMonitor(t), "install"), icmd.WithEnv("HOME="+f.home, "PATH="+os.Getenv("PATH"), "OMEGA_MONITOR_HOME="+f.state))
	home.Assert(t, icmd.Success)
	cmd := icmd.Command(omegaMonitor(t), "agent", "--interval", "1", "--work-probe", "echo 3", "--mux-wake", "0")
	cmd.Env = []string{
		"HOME=" + f.home, "PATH=" + os.Getenv("PATH"), "OMEGA_MONITOR_HOME=" + f.state, "OMEGA_MONITOR_MUX=" + f.tmux.Mux,
		"OMEGA_TELEGRAM_API=" + api, "OMEGA_TELEGRAM_CONF=" + conf, "OMEGA_MONITOR_TIMEOUT=7",
	}
	icmd.RunCmd(cmd).Assert(t, icmd.Expected{Out: "watching agent"})
	defer f.run(t, "stop", "agent")
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if len(tg.messages()) > 0 {
			return poll.Success()
		}
		return poll.Continue("no alert at the caller's Telegram API yet")
	}, poll.WithTimeout(60*time.Second))
	assert.Assert(t, strings.Contains(tg.messages()[0], "QUESTION"), tg.messages()[0])
	loopJSON, err := os.ReadFile(filepath.Join(f.state, "monitor-agent", "loop.json"))
	assert.NilError(t, err)
	for _, want := range []string{`"OMEGA_MONITOR_TIMEOUT": "7"`, `"OMEGA_TELEGRAM_API": "` + api + `"`, `"OMEGA_TELEGRAM_CONF": "` + conf + `"`} {
		assert.Assert(t, strings.Contains(string(loopJSON), want), "loop.json lacks %s:\n%s", want, loopJSON)
	}
	log, err := os.ReadFile(filepath.Join(f.state, "monitor-agent", "watcher.log"))
	assert.NilError(t, err)
	assert.Equal(t, strings.Count(string(log), "settings: "), 1, string(log))
	assert.Assert(t, strings.Contains(string(log), `OMEGA_TELEGRAM_API="`+api+`"`), string(log))
	assert.Assert(t, strings.Contains(string(log), "wall clock 7s"), string(log))
}
