// Package procgroup starts a child in a process group of its own, so that
// the end of its context (a clock, a stop) kills the whole group: a script
// and whatever it started, a curl or an agent's helpers, none of which may
// outlive the call that ran it. It is not a supervisor: it neither restarts
// nor reports; the caller reads the command's error as it would any other.
package procgroup

import (
	"context"
	"os/exec"
	"syscall"
	"time"
)

// Command is exec.CommandContext for name and args, set to run in a
// process group of its own. When ctx ends the whole group is killed, and
// after wait a grandchild still holding the command's output open no
// longer keeps Wait waiting.
func Command(ctx context.Context, wait time.Duration, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	Set(cmd, wait)
	return cmd
}

// Set sets cmd, made by exec.CommandContext and not yet started, to run as
// Command's do.
func Set(cmd *exec.Cmd, wait time.Duration) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = wait
}

// Kill kills what is left of cmd's group once cmd has run: a child it
// started in the background and did not wait for.
func Kill(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
