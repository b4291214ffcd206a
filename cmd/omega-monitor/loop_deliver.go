package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/omega-monitor/omega-monitor/alert"
	"github.com/omega-monitor/omega-monitor/internal/poll"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

const deliverUsage = `usage: omega-monitor deliver --state DIR --target T [--funnel PATH] [--worker]

Delivers the alerts waiting in DIR/outbox/ to each channel: the alert
funnel (--funnel, else $OMEGA_MONITOR_ALERT_SEND, else
~/.omega/bin/omega-alert-send.sh) and each line of the state home's
channels file (through omega-monitor-notify). The tick writes every
escalation there before anything tries to send it; the poll loop starts
deliver --worker when the outbox holds one, apart from the poll, and never
waits for it: a channel that hangs or is down delays no poll.

Each channel has its own queue, urgent alerts first, then the oldest. One
that fails is tried again with backoff ($OMEGA_ALERT_RETRY, 2s by default,
doubled, at most 30 s), the
alerts behind it waiting in order, until it takes the alert or the alert
is older than $OMEGA_ALERT_EXPIRY (a Go duration, 24h by default): then it
is said, and kept in alert-failed.log. An unreachable channel is no bad
line: it is tried again. An alert leaves the outbox once every channel has
it or gave up.

Each attempt is written in the alert's record (NAME.alert.sent) before it
starts, and its outcome after: an alert reaches a channel at most once
across stops, restarts and crashes. A send whose outcome was never written
(the deliverer died mid-send) may have happened: it is said, not repeated.
A stop (SIGTERM) ends the send under way and writes it as not delivered.

The funnel is run as FUNNEL --stdin, with the alert on its standard input,
never on its command line (which ps shows to every user); it must read it
to the end, and exit 0 when it delivered, 1 when it did not.

--worker: keep delivering until the outbox is empty, the loop that started
it is gone, or a signal ends it; without it, each channel is tried once for
each alert due. delivery.json in DIR says each channel's queue, last
delivery, last failure and the send under way, for the board.
`

func runDeliver(e *Env, args []string) int {
	fs := newFlagSet("deliver")
	stateDir := fs.String("state", "", "state directory")
	target := fs.String("target", "", "the watched target")
	funnelFlag := fs.String("funnel", "", "the alert funnel")
	worker := fs.Bool("worker", false, "keep delivering until the outbox is empty or the loop is gone")
	positional, code, ok := e.parse(fs, args, deliverUsage)
	if !ok {
		return code
	}
	if *stateDir == "" || *target == "" || len(positional) > 0 {
		return e.usageError("deliver", "--state and --target are needed, and nothing else")
	}
	o, err := poll.DeliverOptionsFrom(e.Getenv)
	if err != nil {
		return e.usageError("deliver", err.Error())
	}
	o.Worker = *worker
	funnel := *funnelFlag
	if funnel == "" {
		if e.Getenv("OMEGA_MONITOR_ALERT_SEND") == "" && e.Home() == "" {
			fmt.Fprintln(e.Stderr, "omega-monitor deliver: no home directory for the funnel: set HOME, or OMEGA_MONITOR_ALERT_SEND")
			return 1
		}
		funnel = alert.FunnelPath(e.Getenv, e.Home())
	}
	ctx, stop := signal.NotifyContext(e.Ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	stateHome, _ := statedir.Home(e.Getenv)
	lines, ok := poll.Deliver(ctx, *stateDir, *target, funnel, stateHome, e.Environ(), o)
	for _, l := range lines {
		fmt.Fprintln(e.Stdout, l)
	}
	if !ok {
		return 1
	}
	return 0
}
