package watcher

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"time"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/capture"
	"github.com/omega-monitor/omega-monitor/internal/procgroup"
)

// A Look is what watch --once reads of a target, as a watcher's first poll
// would, without starting one: the pane it would pin, where its probes
// run, their outputs, and the capture.
type Look struct {
	Pane, ProbeDir string
	Work, Progress ProbeRun
	Frame          []byte // the capture: a frame for a local target, the bare pane for a remote one
	Framed         bool
}

// A ProbeRun is one probe's run: its output when it exited 0 in time (Ran),
// else why not; Stderr is the last line it wrote there.
type ProbeRun struct {
	Command         string
	Ran             bool
	Output, Failure string
	Stderr          string
}

// LookOnce reads target as a watcher's poll does, and writes nothing: no
// state directory, no session, no key.
func LookOnce(ctx context.Context, m coord.Mux, target coord.Target, f Settings, getenv func(string) string) (Look, error) {
	if err := CheckFence(ctx, m, target, getenv); err != nil {
		return Look{}, err
	}
	exists, err := m.HasSession(ctx, target)
	if err != nil {
		return Look{}, fmt.Errorf("cannot check %s: %v", target, err)
	}
	if !exists {
		return Look{}, fmt.Errorf("no session %s (omega-monitor list shows what is watchable)", target)
	}
	pane, err := pinPane(ctx, m, target, f.Pane)
	if err != nil {
		return Look{}, err
	}
	l := Look{Pane: pane, ProbeDir: f.ProbeDir}
	if l.ProbeDir == "" {
		l.ProbeDir = ProbeDir(ctx, m, target, pane)
	}
	l.Work = runProbeOnce(ctx, l.ProbeDir, f.WorkProbe)
	l.Progress = runProbeOnce(ctx, l.ProbeDir, f.ProgressProbe)
	// The capture last: the screen judged is the newest thing read.
	if l.Frame, l.Framed, err = capturePane(ctx, m, target, pane); err != nil {
		return l, fmt.Errorf("cannot capture %s: %v", pane, err)
	}
	return l, nil
}

// runProbeOnce runs command in dir with bash, as the loop does, under its
// clock; an empty command is no probe.
func runProbeOnce(ctx context.Context, dir, command string) ProbeRun {
	r := ProbeRun{Command: command}
	if command == "" {
		return r
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", command)
	cmd.Dir = dir
	procgroup.Set(cmd, time.Second)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r.Stderr = lastLine(errb.String())
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		r.Failure = fmt.Sprintf("no answer within %v", probeTimeout)
	case errors.As(err, &exit):
		r.Failure = fmt.Sprintf("exit %d: %s", exit.ExitCode(), r.Stderr)
	case err != nil:
		r.Failure = err.Error()
	default:
		r.Ran, r.Output = true, out.String()
	}
	return r
}

// capturePane captures pane of target: a frame for a local target (the
// pane's coordinate, directory and marks, as the loop's capture), the bare
// pane for a remote one.
func capturePane(ctx context.Context, m coord.Mux, target coord.Target, pane string) (out []byte, framed bool, err error) {
	if target.Local() {
		out, err = m.Run(ctx, "", capture.Args(pane)...)
		return out, true, err
	}
	out, err = m.Run(ctx, target.Host, "capture-pane", "-p", "-J", "-t", pane)
	return out, false, err
}
