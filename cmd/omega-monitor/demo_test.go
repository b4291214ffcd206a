package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/demo"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// agentScript is the demo's scripted agent, which the end-to-end tests run
// too.
const agentScript = demo.AgentScript

// demoCommand runs the built binary's demo with a temporary directory of the
// test's own, so that what it leaves behind can be seen.
func demoCommand(t *testing.T, tmp string, args ...string) *exec.Cmd {
	t.Helper()
	testenv.Need(t, "tmux", "bash")
	cmd := exec.Command(omegaMonitor(t), append([]string{"demo"}, args...)...)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// checkNothingLeft fails the test if the demo left files or a process.
func checkNothingLeft(t *testing.T, tmp string) {
	t.Helper()
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("the demo left %d files in its temporary directory, e.g. %s", len(entries), entries[0].Name())
	}
	if left := marked(t, tmp); len(left) != 0 {
		t.Errorf("the demo left processes behind:\n%s", strings.Join(left, "\n"))
	}
}

func TestDemo(t *testing.T) {
	testenv.EndToEnd(t)
	t.Parallel()
	tmp := t.TempDir()
	cmd := demoCommand(t, tmp, "--interval", "1")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("demo: %v\nstderr: %s", err, errOut.String())
		}
	case <-time.After(4 * time.Minute):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		t.Fatalf("the demo did not end within 4 minutes:\n%s", out.String())
	}
	got := out.String()
	t.Logf("demo output:\n%s", got)
	for _, want := range []string{
		" · WORKING · ",
		" · STALLED · work=3 · progress=? · nudged (1/2)",
		" · STALLED · work=3 · progress=? · nudged (2/2)",
		"not nudged: nudge budget spent (2/2) without progress, escalated: needs a human",
		"alert for the operator: NUDGE BUDGET EXHAUSTED · agent",
		" · QUESTION · escalated to the operator, NOT answered",
		"alert for the operator: QUESTION · agent",
		"Do you want to proceed?",
		"nothing was typed into it. Done.",
		"omega-monitor shop --once      a dry run",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the demo's output lacks %q", want)
		}
	}
	if n := strings.Count(got, "arrived in the agent's pane: \"continue with the next step"); n != 2 {
		t.Errorf("the agent received %d nudges, want the budget of 2", n)
	}
	checkNothingLeft(t, tmp)
}

func TestDemoInterrupted(t *testing.T) {
	testenv.EndToEnd(t)
	t.Parallel()
	tmp := t.TempDir()
	cmd := demoCommand(t, tmp, "--interval", "1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Ctrl-C once the loop has printed its first line.
	sc := bufio.NewScanner(stdout)
	var seen []string
	for sc.Scan() {
		seen = append(seen, sc.Text())
		if strings.Contains(sc.Text(), "MONITOR · ") {
			break
		}
	}
	syscall.Kill(cmd.Process.Pid, syscall.SIGINT)
	for sc.Scan() {
		seen = append(seen, sc.Text())
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		t.Fatalf("the demo did not stop within 60s of Ctrl-C:\n%s", strings.Join(seen, "\n"))
	}
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("exit status after Ctrl-C = %d, want 130\n%s", code, strings.Join(seen, "\n"))
	}
	checkNothingLeft(t, tmp)
}

func TestDemoUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := runDemo(newEnv(nil, nil, &out, &errOut), []string{"--interval", "0"}); code != 2 {
		t.Errorf("demo --interval 0: exit %d, want 2", code)
	}
	if code := runDemo(newEnv(nil, nil, &out, &errOut), []string{"extra"}); code != 2 {
		t.Errorf("demo extra: exit %d, want 2", code)
	}
	out.Reset()
	if code := runDemo(newEnv(nil, nil, &out, &errOut), []string{"--help"}); code != 0 || !strings.HasPrefix(out.String(), "usage: omega-monitor demo") {
		t.Errorf("demo --help: exit %d, output %q", code, out.String())
	}
}
