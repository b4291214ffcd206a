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
