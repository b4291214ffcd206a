package main

import (
	"flag"
	"time"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/cmdline"
	"github.com/omega-monitor/omega-monitor/internal/watcher"
)

const stopUsage = `usage: omega-monitor stop <target | watcher> [--mux PATH]

Stops the watcher of a target (or the watcher named as the board shows
it, monitor-agent) by ending its multiplexer session, and with it
the loop, and returns once the loop has finished its cleanup (it holds the
state directory's lock until then), or says when it gave up waiting
(--wait). The watcher's state directory is kept. A watcher whose loop
died without a stop (the board shows it stale) is marked stopped.

flags:
`

func runStop(e *Env, args []string) int {
	fs := flag.NewFlagSet("stop", flag.ContinueOnError)
	muxFlag := fs.String("mux", "", "multiplexer binary `path` (default $OMEGA_MONITOR_MUX, ~/.local/bin/rmux, tmux)")
	wait := new(time.Duration)
	*wait = 30 * time.Second
	fs.Var((*cmdline.Duration)(wait), "wait", "how long to wait for the loop's cleanup, a `duration`")
	positional, code, ok := e.parse(fs, args, stopUsage)
	if !ok {
		return code
	}
	home, target, code := e.watcherOf("stop", positional)
	if code != 0 {
		return code
	}
	m, err := resolveMux(e, *muxFlag, "", coord.DefaultTimeout)
	if err != nil {
		return e.fail(1, err)
	}
	return e.said(watcher.Stop(e.Ctx, m, home, target, *wait))
}
