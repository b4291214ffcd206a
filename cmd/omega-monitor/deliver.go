package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/fsutil"
	"github.com/omega-monitor/omega-monitor/statedir"
	"github.com/omega-monitor/omega-monitor/statedir/event"
	"github.com/omega-monitor/omega-monitor/tick"
)

const deliverUsage = `usage: omega-monitor deliver --state DIR --target T [--funnel PATH]

Delivers the alerts waiting in DIR/outbox/, oldest first, through the alert
funnel (--funnel, else $OMEGA_MONITOR_ALERT_SEND, else
~/.omega/bin/omega-alert-send.sh). The tick writes every escalation there
before anything tries to send it, so that none is lost when the watcher
stops or restarts: the poll loop calls deliver after each tick, and a
restarted watcher's first call delivers what the last one left.

An alert leaves the outbox only when the funnel delivered it, or when it
gave up and kept it in alert-failed.log (without a funnel, deliver writes it
there itself). One the funnel could not finish (stopped, out of time) stays
for the next call. Each outcome is a history event, alert_delivered or
alert_not_delivered, and a failure is said in a MONITOR line.
`

// deliverTimeout bounds one funnel run; the funnel's own deadline
// (OMEGA_ALERT_DEADLINE, 60 s from here) ends it first.
const deliverTimeout = 90 * time.Second

func runDeliver(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("deliver", deliverUsage, stderr)
	stateDir := fs.String("state", "", "state directory")
	target := fs.String("target", "", "the watched target")
	funnelFlag := fs.String("funnel", "", "the alert funnel")
	if code, stop := parseFlags(fs, args, stdout, deliverUsage); stop {
		return code
	}
	if *stateDir == "" || *target == "" || fs.NArg() > 0 {
		io.WriteString(stderr, deliverUsage)
		return 2
	}
	funnel := *funnelFlag
	if funnel == "" {
		funnel = os.Getenv("OMEGA_MONITOR_ALERT_SEND")
	}
	if funnel == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			fmt.Fprintf(stderr, "omega-monitor deliver: no home directory for the funnel: %v\n", err)
			return 1
		}
		funnel = filepath.Join(home, ".omega", "bin", "omega-alert-send.sh")
	}
	d := stateDirectory(*stateDir)
	// One deliverer at a time: a watcher that restarts while the old one
	// still delivers must not send the same alert twice.
	lock, err := fsutil.TryLock(d.path(statedir.OutboxLock))
	if errors.Is(err, fsutil.ErrLocked) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stdout, "MONITOR · %s · ? · alerts not delivered: outbox lock: %v\n", *target, err)
		return 1
	}
	defer lock.Close()
	names, err := d.sd().PendingAlerts()
	if err != nil {
		fmt.Fprintf(stdout, "MONITOR · %s · ? · alerts not delivered: outbox: %v\n", *target, err)
		return 1
	}
	code := 0
	for _, name := range names {
		path := filepath.Join(d.path(statedir.Outbox), name)
		msg, err := fsutil.ReadCapped(path, 1<<20)
		if err != nil {
			continue // gone meanwhile, or not ours to send
		}
		ev, why, done := deliverOne(funnel, msg)
		if done {
			os.Remove(path)
		}
		fields := map[string]any{"alert": name}
		if why != "" {
			fields["why"] = why
			code = 1
			line := fmt.Sprintf("MONITOR · %s · ? · alert not delivered: %s", *target, why)
			fmt.Fprintln(stdout, line)
			d.sd().AppendLog(line)
		}
		d.sd().AppendHistory(time.Now(), *target, []tick.Event{{Name: ev, State: "?", Fields: fields}})
		if !done {
			break // the rest wait behind it, in order
		}
	}
	return code
}

// deliverOne runs the funnel over one message. done says the message may
// leave the outbox: delivered, or kept in alert-failed.log.
func deliverOne(funnel string, msg []byte) (ev, why string, done bool) {
	if fi, err := os.Stat(funnel); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o100 == 0 {
		why := fmt.Sprintf("no alert funnel at %s (omega-monitor install puts it there)", funnel)
		home, err := statedir.Home()
		if err == nil {
			err = statedir.KeepFailed(home, why, msg)
		}
		if err != nil {
			return event.AlertNotDelivered, why + "; and not kept: " + err.Error(), false
		}
		return event.AlertNotDelivered, why + "; kept in alert-failed.log", true
	}
	ctx, cancel := context.WithTimeout(context.Background(), deliverTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, funnel, string(msg))
	cmd.Env = os.Environ()
	if os.Getenv("OMEGA_ALERT_DEADLINE") == "" {
		cmd.Env = append(cmd.Env, "OMEGA_ALERT_DEADLINE=60")
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	var errb bytes.Buffer
	cmd.Stderr = &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return event.AlertDelivered, "", true
	case ctx.Err() != nil:
		return event.AlertNotDelivered, fmt.Sprintf("the funnel did not finish within %v; kept in the outbox", deliverTimeout), false
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		// The funnel's own failure: it has kept the message in
		// alert-failed.log.
		return event.AlertNotDelivered, lastLine(errb.String(), "the funnel failed") + "; kept in alert-failed.log", true
	default:
		return event.AlertNotDelivered, fmt.Sprintf("the funnel: %v: %s; kept in the outbox", err, lastLine(errb.String(), "no message")), false
	}
}

// lastLine is the last non-blank line of s, or def.
func lastLine(s, def string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if l := strings.TrimSpace(lines[len(lines)-1]); l != "" {
		return l
	}
	return def
}
