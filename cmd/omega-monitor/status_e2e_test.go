package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/icmd"
	"gotest.tools/v3/poll"

	"github.com/omega-monitor/omega-monitor/board"
	"github.com/omega-monitor/omega-monitor/coord"
)

// loopPid is the pid of a watcher's loop: the watcher session's pane runs
// the loop script by exec.
func (f *fleet) loopPid(t *testing.T, watcher string) int {
	t.Helper()
	out := f.tmux.Run(t, "display-message", "-p", "-t", coord.Exact(watcher), "#{pane_pid}")
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		t.Fatalf("pane pid of %s: %q", watcher, out)
	}
	return pid
}

// ensureLoopRecord waits for the watcher's loop.json and writes one from
// the pane's pid where the loop does not record it itself.
func (f *fleet) ensureLoopRecord(t *testing.T, watcher, target string, interval int) board.LoopRecord {
	t.Helper()
	path := filepath.Join(f.state, watcher, "loop.json")
	var rec board.LoopRecord
	if data, err := os.ReadFile(path); err == nil && json.Unmarshal(data, &rec) == nil && rec.Pid > 0 {
		return rec
	}
	pid := f.loopPid(t, watcher)
	token, ok := board.SystemProcs{}.StartToken(pid)
	if !ok {
		t.Fatalf("loop pid %d of %s does not run", pid, watcher)
	}
	rec = board.LoopRecord{Pid: pid, StartToken: token, StartedAt: time.Now().UTC().Truncate(time.Second),
		IntervalS: interval, Target: target, Watcher: watcher, Version: "test"}
	data, _ := json.Marshal(rec)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return rec
}

func (f *fleet) census(t *testing.T) board.Fleet {
	t.Helper()
	res := f.run(t, "status", "--json")
	res.Assert(t, icmd.Success)
	var fl board.Fleet
	if err := json.Unmarshal([]byte(res.Stdout()), &fl); err != nil {
		t.Fatalf("status --json: %v\n%s", err, res.Stdout())
	}
	return fl
}

func livenessOf(fl board.Fleet) map[string]string {
	m := map[string]string{}
	for _, w := range fl.Watchers {
		m[w.Target] = w.Liveness
	}
	return m
}

// Real watchers on a real tmux server, each in the state the board must
// tell apart: one runs (live), one's loop was killed with SIGKILL (stale),
// one was stopped (gone), one is frozen by SIGSTOP (quiet), and one's
// recorded pid is now another process (pid reuse: stale, never live).
func TestStatusOfRealWatchers(t *testing.T) {
	f := newFleet(t)
	const interval = 2
	targets := []string{"alpha", "bravo", "charlie", "delta", "echo"}
	for _, s := range targets {
		f.tmux.NewSession(t, s, "sleep 600")
		f.run(t, s, "--interval", strconv.Itoa(interval)).Assert(t, icmd.Success)
	}
	recs := map[string]board.LoopRecord{}
	for _, s := range targets {
		recs[s] = f.ensureLoopRecord(t, "monitor-"+s, s, interval)
	}
	// Every watcher has polled.
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		for _, s := range targets {
			if _, err := os.Stat(filepath.Join(f.state, "monitor-"+s, "state.json")); err != nil {
				return poll.Continue("%s has not polled", s)
			}
		}
		return poll.Success()
	}, poll.WithTimeout(60*time.Second), poll.WithDelay(100*time.Millisecond))

	kill(t, recs["bravo"].Pid, syscall.SIGKILL)
	f.run(t, "stop", "charlie").Assert(t, icmd.Success)
	freeze(t, recs["delta"].Pid)
	t.Cleanup(func() { syscall.Kill(recs["delta"].Pid, syscall.SIGKILL) })
	// Pid reuse: echo's loop dies, and its pid now names another process.
	kill(t, recs["echo"].Pid, syscall.SIGKILL)
	other := exec.Command("sleep", "600")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Process.Kill(); other.Wait() })
	reused := recs["echo"]
	reused.Pid = other.Process.Pid
	data, _ := json.Marshal(reused)
	if err := os.WriteFile(filepath.Join(f.state, "monitor-echo", "loop.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}

	want := map[string]string{"alpha": board.Live, "bravo": board.Stale, "charlie": board.Gone, "delta": board.Quiet, "echo": board.Stale}
	var last board.Fleet
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		last = f.census(t)
		got := livenessOf(last)
		for s, w := range want {
			if got[s] != w {
				for _, x := range last.Watchers {
					if x.Target == s {
						return poll.Continue("%s is %s, want %s: %s (last poll %v)", s, got[s], w, x.LivenessReason, x.LastPoll)
					}
				}
				return poll.Continue("%s is %s, want %s", s, got[s], w)
			}
		}
		return poll.Success()
	}, poll.WithTimeout(60*time.Second), poll.WithDelay(200*time.Millisecond))
	for _, w := range last.Watchers {
		if w.Target == "echo" && !strings.Contains(w.LivenessReason, "another process now") {
			t.Errorf("echo: %s", w.LivenessReason)
		}
	}
	if last.Fleet.Running != 2 || last.Degraded {
		t.Errorf("running %d degraded %v (%v)", last.Fleet.Running, last.Degraded, last.Errors)
	}

	res := f.run(t, "status", "--once")
	res.Assert(t, icmd.Success)
	if lines := strings.Split(strings.TrimSuffix(res.Stdout(), "\n"), "\n"); len(lines) != 1+len(targets) {
		t.Errorf("--once printed %d lines, want %d:\n%s", len(lines), 1+len(targets), res.Stdout())
	}
	t.Logf("status --once:\n%s", res.Stdout())
	if seg := f.run(t, "status", "--tmux"); !strings.Contains(seg.Stdout(), "●2") || !strings.Contains(seg.Stdout(), "✗2") {
		t.Errorf("--tmux: %q", seg.Stdout())
	}

	// With no loop left running, --once says so and exits 3.
	kill(t, recs["alpha"].Pid, syscall.SIGKILL)
	kill(t, recs["delta"].Pid, syscall.SIGKILL)
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		res = f.run(t, "status", "--once")
		if res.ExitCode != 3 {
			return poll.Continue("exit %d:\n%s", res.ExitCode, res.Stdout())
		}
		return poll.Success()
	}, poll.WithTimeout(30*time.Second), poll.WithDelay(100*time.Millisecond))
	if !strings.HasSuffix(res.Stdout(), "\nno live watchers\n") {
		t.Errorf("--once without a live watcher:\n%s", res.Stdout())
	}
}

func kill(t *testing.T, pid int, sig syscall.Signal) {
	t.Helper()
	if err := syscall.Kill(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("kill -%d %d: %v", sig, pid, err)
	}
}

// freeze stops the loop with SIGSTOP where it waits: tmux continues a pane's
// own process the moment it stops (it answers SIGCHLD with SIGCONT), so the
// loop itself cannot stay stopped; its children can, and the loop then
// waits on a call that never returns, the hung call that quiet is for.
func freeze(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
		if err != nil {
			t.Skipf("no /proc children list: %v", err)
		}
		kids := strings.Fields(string(data))
		for _, k := range kids {
			if c, err := strconv.Atoi(k); err == nil {
				syscall.Kill(c, syscall.SIGSTOP)
				t.Cleanup(func() { syscall.Kill(c, syscall.SIGKILL) })
			}
		}
		if len(kids) > 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the loop %d never ran a child to freeze", pid)
}
