package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

const holdUsage = `usage: omega-monitor hold --fd N --state DIR --pid PID --watcher NAME --target T

The poll loop's lock on its state directory, taken once at start: the loop
opens DIR/loop.lock on descriptor N (exec N>>"$state/loop.lock") and hold
takes an exclusive flock on that descriptor, which the loop keeps until it
exits. When another loop holds it, hold says which (its watcher and pid)
and exits 1; the loop must not start.
`

func runHold(e *Env, args []string) int {
	fs := newFlagSet("hold")
	fd := fs.Int("fd", -1, "the descriptor of the lock file")
	state := fs.String("state", "", "state directory")
	pid := fs.Int("pid", 0, "the loop's process id")
	watcher := fs.String("watcher", "", "the watcher's name")
	target := fs.String("target", "", "the watched target")
	positional, code, ok := e.parse(fs, args, holdUsage)
	if !ok {
		return code
	}
	if *fd < 3 || *state == "" || *pid <= 0 || len(positional) > 0 {
		return e.usageError("hold", "--fd 3 or more, --state and --pid are needed, and nothing else")
	}
	d := statedir.Dir(*state)
	err := d.Hold(*fd, statedir.HolderRecord{PID: *pid, Watcher: *watcher, Target: *target, Since: e.Now().UTC().Format(time.RFC3339)})
	if errors.Is(err, statedir.ErrHeld) {
		h := d.ReadHolder()
		fmt.Fprintf(e.Stderr, "omega-monitor: %s is held by %s: one loop per state directory (stop it first: omega-monitor stop %s)\n",
			*state, h, h.Target)
		return 1
	}
	if err != nil {
		return e.exitf(2, "omega-monitor hold: %v", err)
	}
	// The start's mark in the log: a restart is seen where it happened.
	d.AppendLog(e.Now(), fmt.Sprintf("MONITOR · %s · started (pid %d)", *target, *pid))
	return 0
}
