package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/poll"

	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// judgesOf lists the judges (omega-monitor judge) whose parent is the
// process pid: a loop's, one at most.
func judgesOf(t *testing.T, pid int) (judges []int) {
	t.Helper()
	procs, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc here: the judges cannot be listed")
	}
	for _, p := range procs {
		id, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		cmdline, err1 := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline"))
		stat, err2 := os.ReadFile(filepath.Join("/proc", p.Name(), "stat"))
		if err1 != nil || err2 != nil || !bytes.Contains(cmdline, []byte("\x00judge\x00--binary\x00")) {
			continue
		}
		// The fields after the command's name: state, ppid, pgrp.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) > 2 && fields[1] == strconv.Itoa(pid) {
			if fields[2] != p.Name() {
				t.Errorf("judge %d is in the process group %s, not one of its own", id, fields[2])
			}
			judges = append(judges, id)
		}
	}
	return judges
}

// oneJudge waits until the loop r has exactly one judge, and returns it.
func oneJudge(t *testing.T, r *loopRun) int {
	t.Helper()
	var judges []int
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if judges = judgesOf(t, r.cmd.Process.Pid); len(judges) == 1 {
			return poll.Success()
		}
		return poll.Continue("judges of the loop: %v", judges)
	}, poll.WithTimeout(60*time.Second), poll.WithDelay(100*time.Millisecond))
	return judges[0]
}

// TestLoopKeepsOneJudge: two loops side by side each keep a judge of their
// own, the same from poll to poll, which takes their calls (ticks, and the
// looks and acks of the nudges the scripted agent's stops bring); a binary
// rebuilt under a loop is the next judge's, and a stop leaves no judge
// behind. Nothing of it is said in the watcher's log.
func TestLoopKeepsOneJudge(t *testing.T) {
	testenv.EndToEnd(t)
	t.Parallel()
	s := testenv.Tmux(t)
	startAgent(t, s, "one", "AGENT_MODE=working")
	startAgent(t, s, "two", "AGENT_MODE=working")
	// The second loop's binary is a copy of its own, to be rebuilt.
	bin := filepath.Join(t.TempDir(), "omega-monitor")
	copyFile(t, omegaMonitor(t), bin)
	home := t.TempDir()
	flags := []string{"--mux", s.Mux, "--interval", "1", "--work-probe", "echo 5"}
	one := startLoop(t, loopOptions{target: "one", home: home, name: "one", flags: flags})
	two := startLoop(t, loopOptions{target: "two", home: home, name: "two", flags: flags, env: []string{"OMEGA_MONITOR_BIN=" + bin}})
	one.waitLines(2, 90*time.Second)
	lines := two.waitLines(2, 90*time.Second)
	j1, j2 := oneJudge(t, one), oneJudge(t, two)
	one.waitLines(5, 90*time.Second)
	lines = two.waitLines(len(lines)+3, 90*time.Second)
	if got := oneJudge(t, one); got != j1 {
		t.Errorf("the first loop's judge was %d, is %d: one judge lives from poll to poll", j1, got)
	}
	if got := oneJudge(t, two); got != j2 || j1 == j2 {
		t.Errorf("the judges are %d and %d, then %d: one for each loop, from poll to poll", j1, j2, got)
	}
	for _, l := range lines {
		if !strings.Contains(l, "MONITOR · two · ") {
			t.Errorf("a line of the second loop: %q, want its own MONITOR line", l)
		}
	}
	// A rebuild (a new file in the binary's place) ends the judge at its next
	// call; that call and the rest are the new binary's.
	copyFile(t, omegaMonitor(t), bin+".new")
	if err := os.Rename(bin+".new", bin); err != nil {
		t.Fatal(err)
	}
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if js := judgesOf(t, two.cmd.Process.Pid); len(js) == 1 && js[0] != j2 {
			return poll.Success()
		}
		return poll.Continue("the second loop's judge is still %d", j2)
	}, poll.WithTimeout(90*time.Second), poll.WithDelay(100*time.Millisecond))
	two.waitLines(len(lines)+3, 90*time.Second)
	j2 = oneJudge(t, two)
	one.stop()
	two.stop()
	for _, j := range []int{j1, j2} {
		if err := syscall.Kill(j, 0); err == nil {
			t.Errorf("judge %d outlived its loop", j)
		}
	}
	for _, r := range []*loopRun{one, two} {
		if log, _ := os.ReadFile(filepath.Join(r.state, "watcher.log")); bytes.Contains(log, []byte("judge")) {
			t.Errorf("the watcher's log speaks of its judge:\n%s", log)
		}
	}
}

// copyFile copies the file from to a new executable file to.
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o700)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(fmt.Errorf("copy: %w", err))
	}
}
