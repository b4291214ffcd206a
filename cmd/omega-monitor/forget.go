package main

import (
	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/cmdline"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/watcher"
)

const forgetUsage = `usage: omega-monitor forget <target | watcher> [--mux PATH]

Removes the state directory of a watcher that no longer runs (stopped, or
its loop died), and with it its line on the board: its history, its log and
its alerts not delivered. It takes the target or the watcher's own name, as
stop does, and refuses a watcher that still runs, saying how to stop it.

flags:
`

func runForget(e *Env, args []string) int {
	fs := newFlagSet("forget")
	muxFlag := fs.String("mux", "", "multiplexer binary `path` (default $OMEGA_MONITOR_MUX, ~/.local/bin/rmux, tmux)")
	positional, code, ok := e.parse(fs, args, forgetUsage)
	if !ok {
		return code
	}
	if len(positional) != 1 {
		return e.exitf(2, "omega-monitor: forget takes one target, got %d; %s", len(positional), cmdline.HelpHint("forget"))
	}
	home, err := statedir.Home(e.Getenv)
	if err != nil {
		return e.fail(1, err)
	}
	// Not watcherOf: a directory whose target cannot be read back is
	// forgotten by its name.
	name, err := watcher.ForgetName(home, positional[0])
	if err != nil {
		return e.fail(2, err)
	}
	m, err := resolveMux(e, *muxFlag, "", coord.DefaultTimeout)
	if err != nil {
		return e.fail(1, err)
	}
	return e.said(watcher.Forget(e.Ctx, m, home, name, e.Now()))
}
