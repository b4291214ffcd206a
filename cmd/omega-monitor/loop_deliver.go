package main

import (
	"fmt"

	"github.com/omega-monitor/omega-monitor/alert"
	"github.com/omega-monitor/omega-monitor/poll"
	"github.com/omega-monitor/omega-monitor/statedir"
)

const deliverUsage = `usage: omega-monitor deliver --state DIR --target T [--funnel PATH]

Delivers the alerts waiting in DIR/outbox/, oldest first, through the alert
funnel (--funnel, else $OMEGA_MONITOR_ALERT_SEND, else
~/.omega/bin/omega-alert-send.sh). The tick writes every escalation there
before anything tries to send it, so that none is lost when the watcher
stops or restarts: the poll loop calls deliver after each tick, and a
restarted watcher's first call delivers what the last one left.

The funnel is run as FUNNEL --stdin, with the alert on its standard input,
never on its command line (which ps shows to every user); it must read it
to the end, and exit 0 when it delivered, 1 when it gave up and kept it.

An alert leaves the outbox only when the funnel delivered it, or when it
gave up and kept it in alert-failed.log (without a funnel, deliver writes it
there itself; a funnel that exits 0 with the alert unread, one written for
the message as $1, is no delivery, and deliver keeps it there too). One the
funnel could not finish (stopped, out of time) stays for the next call.
Each outcome is a history event, alert_delivered or alert_not_delivered,
and a failure is said in a MONITOR line.
`

func runDeliver(e *Env, args []string) int {
	fs := newFlagSet("deliver")
	stateDir := fs.String("state", "", "state directory")
	target := fs.String("target", "", "the watched target")
	funnelFlag := fs.String("funnel", "", "the alert funnel")
	positional, code, ok := e.parse(fs, args, deliverUsage)
	if !ok {
		return code
	}
	if *stateDir == "" || *target == "" || len(positional) > 0 {
		return e.usageError("deliver", "--state and --target are needed, and nothing else")
	}
	funnel := *funnelFlag
	if funnel == "" {
		if e.Getenv("OMEGA_MONITOR_ALERT_SEND") == "" && e.Home() == "" {
			fmt.Fprintln(e.Stderr, "omega-monitor deliver: no home directory for the funnel: set HOME, or OMEGA_MONITOR_ALERT_SEND")
			return 1
		}
		funnel = alert.FunnelPath(e.Getenv, e.Home())
	}
	stateHome, _ := statedir.Home(e.Getenv)
	lines, ok := poll.Deliver(*stateDir, *target, funnel, stateHome, e.Environ())
	for _, l := range lines {
		fmt.Fprintln(e.Stdout, l)
	}
	if !ok {
		return 1
	}
	return 0
}
