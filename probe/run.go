package probe

import (
	"context"
	"errors"
	"strings"
	"time"
)

// The most a probe's output streams are kept: a count is a few bytes, and
// the rest is only for an error line. Output beyond them is read and
// discarded, so a chatty probe never blocks on a full pipe.
const (
	MaxStdout = 64 << 10
	MaxStderr = 16 << 10
)

// killGrace is how long a probe's process group has between SIGTERM and
// SIGKILL, and again between SIGKILL and Run giving up on it.
var killGrace = 500 * time.Millisecond

// Output is what one run of a probe produced.
type Output struct {
	Stdout string
	Stderr string
	// StdoutTruncated and StderrTruncated report output cut at MaxStdout
	// and MaxStderr.
	StdoutTruncated bool
	StderrTruncated bool
	// ExitCode is the shell's exit status, or -1 if it did not start, was
	// killed by a signal, or had not exited when Run gave up on it.
	ExitCode int
	// TimedOut reports that the wall clock ran out before the shell had
	// exited and closed its output.
	TimedOut bool
	// Elapsed is the wall-clock time the run took.
	Elapsed time.Duration
	// Pgid is the probe's process group id (the shell's pid), or 0 if it
	// did not start.
	Pgid int
}

// Run runs command with /bin/sh -c under a wall clock of timeout and returns
// what it printed.
//
// The shell runs in a process group of its own, with standard input from
// /dev/null. Its output is complete when the shell has exited and every
// process holding its standard output or error has closed them, as for the
// shell's own $(...). If that has not happened when timeout elapses, or when
// ctx is done, the whole process group is sent SIGTERM, then SIGKILL after a
// short grace, and Run returns: a background process holding the pipe open
// cannot keep it waiting. Run returns within timeout plus twice that grace
// (about a second), whatever the command does. When Run returns, every
// process left in the group, finished or not, has been sent SIGKILL; a probe
// must not start anything meant to outlive it.
//
// A process that leaves the group (setsid) escapes the signals; Run still
// returns on time, by closing its end of the pipes.
//
// The error is nil only when the shell exited with status zero and its
// output was complete in time. Otherwise it says why, starting "probe: ",
// and Output holds whatever was captured. Pass err == nil as Read's present
// argument: a failed probe reads as unknown.
func Run(ctx context.Context, command string, timeout time.Duration) (Output, error) {
	if strings.TrimSpace(command) == "" {
		return Output{ExitCode: -1}, errors.New("probe: empty command")
	}
	if timeout <= 0 {
		return Output{ExitCode: -1}, errors.New("probe: timeout must be positive")
	}
	if err := ctx.Err(); err != nil {
		return Output{ExitCode: -1}, errors.New("probe: not started: " + err.Error())
	}
	return run(ctx, command, timeout)
}

// Measure runs a probe with Run and returns its Reading, with the Output and
// error for an error line. An empty command means no probe was supplied: the
// Reading is unknown and the error nil. Output cut at MaxStdout is not a
// count, so it reads as unknown too.
func Measure(ctx context.Context, command string, timeout time.Duration) (Reading, Output, error) {
	if strings.TrimSpace(command) == "" {
		return Read("", false), Output{ExitCode: -1}, nil
	}
	out, err := Run(ctx, command, timeout)
	return Read(out.Stdout, err == nil && !out.StdoutTruncated), out, err
}

// firstLine returns the first non-blank line of s, trimmed and cut to a
// length fit for an error line.
func firstLine(s string) string {
	for line := range strings.Lines(s) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		const maxLen = 200
		if len(line) > maxLen {
			line = strings.ToValidUTF8(line[:maxLen], "") + "…"
		}
		return line
	}
	return ""
}
