package main

import (
	"time"

	"github.com/omega-monitor/omega-monitor/internal/cmdline"
	"github.com/omega-monitor/omega-monitor/internal/watcher"
)

const resetUsage = `usage: omega-monitor reset <target | watcher>

Re-arms the nudge budget of a watcher: the nudges it counted without
progress start again from 0, and a budget it had escalated as spent may be
nudged again. Otherwise only progress re-arms it (the progress probe's
count passing its highest); a restart or a turn of yours does not. The
watcher's next poll takes it (the watcher is woken for it), and its
history records who asked.

flags:
`

func runReset(e *Env, args []string) int {
	fs := newFlagSet("reset")
	wait := 10 * time.Second
	fs.Var((*cmdline.Duration)(&wait), "wait", "how long to wait for the watcher's poll to take it, a `duration`")
	positional, code, ok := e.parse(fs, args, resetUsage)
	if !ok {
		return code
	}
	home, target, code := e.watcherOf("reset", positional)
	if code != 0 {
		return code
	}
	return e.said(watcher.Reset(home, target, "omega-monitor reset", wait))
}
