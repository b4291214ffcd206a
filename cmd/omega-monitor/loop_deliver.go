package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/omega-monitor/omega-monitor/internal/poll"
	"github.com/omega-monitor/omega-monitor/internal/pollset"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

func runDeliver(e *Env, args []string) int {
	fs := newFlagSet("deliver")
	stateDir := fs.String("state", "", "state directory")
	target := fs.String("target", "", "the watched target")
	funnelFlag := fs.String("funnel", "", "the alert funnel")
	worker := fs.Bool("worker", false, "keep delivering until the outbox is empty or the loop is gone")
	positional, code, ok := e.parse(fs, args, poll.DeliverUsage)
	if !ok {
		return code
	}
	if *stateDir == "" || *target == "" || len(positional) > 0 {
		return e.usageError("deliver", "--state and --target are needed, and nothing else")
	}
	o, err := pollset.DeliverOptionsFrom(e.Getenv)
	if err != nil {
		return e.usageError("deliver", err.Error())
	}
	o.Worker = *worker
	funnel, err := poll.Funnel(*funnelFlag, e.Getenv, e.Home())
	if err != nil {
		return e.exitf(1, "omega-monitor deliver: %v", err)
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
