//go:build unix

package probe

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

func run(ctx context.Context, command string, timeout time.Duration) (Output, error) {
	out := Output{ExitCode: -1}
	outR, outW, err := os.Pipe()
	if err != nil {
		return out, fmt.Errorf("probe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return out, fmt.Errorf("probe: %w", err)
	}
	defer outR.Close()
	defer errR.Close()

	cmd := exec.Command("/bin/sh", "-c", command)
	cmd.Stdout = outW
	cmd.Stderr = errW
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	start := time.Now()
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		return out, fmt.Errorf("probe: start: %w", err)
	}
	pgid := cmd.Process.Pid
	out.Pgid = pgid

	// The pipes are read to EOF by goroutines of their own; the shell is
	// waited for by another. The select below owns the clock.
	stdout := capped{max: MaxStdout}
	stderr := capped{max: MaxStderr}
	var readers sync.WaitGroup
	readers.Go(func() { stdout.drain(outR) })
	readers.Go(func() { stderr.drain(errR) })
	drained := make(chan struct{})
	go func() { readers.Wait(); close(drained) }()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	clock := time.NewTimer(timeout)
	defer clock.Stop()
	var (
		waitErr          error
		shellDone, eof   bool
		exitedBeforeStop bool
		stopped          error
	)
	for !(shellDone && eof) && stopped == nil {
		select {
		case waitErr = <-exited:
			shellDone = true
		case <-drained:
			eof, drained = true, nil
		case <-clock.C:
			out.TimedOut = true
			stopped = fmt.Errorf("probe: timed out after %v", timeout)
		case <-ctx.Done():
			stopped = fmt.Errorf("probe: %w", ctx.Err())
		}
	}
	if stopped != nil {
		exitedBeforeStop = shellDone
		// SIGTERM the group, give it a grace to go, then SIGKILL it.
		signalGroup(pgid, syscall.SIGTERM)
		grace := time.NewTimer(killGrace)
		for !(shellDone && eof) && grace.C != nil {
			select {
			case waitErr = <-exited:
				shellDone = true
			case <-drained:
				eof, drained = true, nil
			case <-grace.C:
				grace.C = nil
			}
		}
		grace.Stop()
		if !shellDone {
			signalGroup(pgid, syscall.SIGKILL)
			select {
			case waitErr = <-exited:
				shellDone = true
			case <-time.After(killGrace):
				// Not even SIGKILL ended it (a process stuck in the
				// kernel); the waiting goroutine reaps it later.
			}
		}
	}
	// Whatever is left in the group has finished with the pipes or is
	// holding them open past the clock: neither may outlive the probe.
	signalGroup(pgid, syscall.SIGKILL)
	// Closing the read ends ends the readers even if a process outside
	// the group still holds the write ends.
	outR.Close()
	errR.Close()
	readers.Wait()
	out.Elapsed = time.Since(start)

	out.Stdout, out.StdoutTruncated = string(stdout.buf), stdout.truncated
	out.Stderr, out.StderrTruncated = string(stderr.buf), stderr.truncated
	if shellDone {
		out.ExitCode = cmd.ProcessState.ExitCode()
	}

	switch {
	case stopped != nil && exitedBeforeStop && out.TimedOut:
		return out, fmt.Errorf("%w (the shell had exited, but a background process kept its output open)", stopped)
	case stopped != nil:
		return out, stopped
	case waitErr != nil:
		return out, withStderr(fmt.Errorf("probe: %w", waitErr), out.Stderr)
	}
	return out, nil
}

// withStderr adds the first line of a failed probe's standard error to err.
func withStderr(err error, stderr string) error {
	if line := firstLine(stderr); line != "" {
		return fmt.Errorf("%w: %s", err, line)
	}
	return err
}

// signalGroup sends sig to every process in the group pgid. A group that is
// already empty is not an error worth reporting.
func signalGroup(pgid int, sig syscall.Signal) {
	_ = syscall.Kill(-pgid, sig)
}

// capped keeps the first max bytes of what it drains and discards the rest.
type capped struct {
	buf       []byte
	max       int
	truncated bool
}

// drain reads r until EOF or an error (a closed pipe included).
func (c *capped) drain(r io.Reader) {
	var p [32 << 10]byte
	for {
		n, err := r.Read(p[:])
		keep := min(n, c.max-len(c.buf))
		c.buf = append(c.buf, p[:keep]...)
		if n > keep {
			c.truncated = true
		}
		if err != nil {
			return
		}
	}
}
