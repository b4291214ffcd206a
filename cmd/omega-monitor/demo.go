package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/omega-monitor/omega-monitor/internal/cmdline"
	"github.com/omega-monitor/omega-monitor/internal/demo"
)

const demoUsage = `usage: omega-monitor demo [--interval 2] [--keep]

Watches a scripted agent, for a first look without any agent of your own. It
starts a private tmux server (its own socket, none of your sessions), runs a
script there that draws Claude Code screens (it works, stalls, takes a nudge,
stalls again past the nudge budget, then asks for a permission), and runs the
real poll loop on it with a work probe and a budget of 2 nudges. It prints the
MONITOR lines as they come and what arrived in the agent's pane, then stops
everything and removes its files, Ctrl-C included. It takes about half a
minute at the default interval.

flags:
`

func runDemo(e *Env, args []string) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	interval := 2
	fs.Var((*cmdline.Seconds)(&interval), "interval", "seconds between polls (2, or 2s)")
	keep := fs.Bool("keep", false, "keep the demo's directory (state, history, watcher log) and say where")
	positional, code, ok := e.parse(fs, args, demoUsage)
	if !ok {
		return code
	}
	if len(positional) > 0 {
		return e.usageError("demo", fmt.Sprintf("unexpected argument %q", positional[0]))
	}
	if interval < 1 {
		return e.exitf(2, "omega-monitor demo: --interval must be a whole number of seconds, 1 and up; got %d", interval)
	}
	self, err := os.Executable()
	if err != nil {
		return e.exitf(1, "omega-monitor demo: cannot find this binary: %v", err)
	}
	ctx, stop := signal.NotifyContext(e.Ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	err = demo.Run(ctx, demo.Config{Bin: self, Interval: interval, Keep: *keep}, e.Stdout)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, context.Canceled):
		return 130
	}
	fmt.Fprintf(e.Stderr, "omega-monitor %v\n", err) // "demo: ..."
	return 1
}
