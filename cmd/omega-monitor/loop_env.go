package main

import (
	"errors"
	"io"

	"github.com/omega-monitor/omega-monitor/internal/relay"
	"github.com/omega-monitor/omega-monitor/internal/watcher"
)

const loopEnvUsage = `usage: omega-monitor loop-env <target> [flags] --pid PID

The poll loop's start (scripts/omega-monitor.sh calls it once): checks the
target and every flag by the rules watch uses, resolves everything the loop
needs (the multiplexer, the ssh command lines and their ControlMaster socket,
whether the nudge goes through the paste buffer, the state directory), writes
loop.json in the state directory, and prints bash assignments for the loop
to eval. A refused command line exits 2 and prints nothing on standard output.

Environment: OMEGA_MONITOR_BIN, OMEGA_MONITOR_HOME, OMEGA_MONITOR_WATCHER,
OMEGA_MONITOR_STATE, OMEGA_MONITOR_MUX, OMEGA_MONITOR_TIMEOUT (the wall clock
of one call, seconds, default 20), OMEGA_MONITOR_ALERT_SEND.

flags:
`

func runLoopEnv(e *Env, args []string) int {
	var f watcher.Settings
	fs := f.FlagSet("watch")
	pid := fs.Int("pid", 0, "the loop's process `id`")
	script := fs.String("loop-script", "", "the loop script's `path`, to check its version stamp")
	target, code, ok := parseWatchArgs("loop-env", fs, &f, args, loopEnvUsage, e)
	if !ok {
		return code
	}
	// A loop script stamped by another build shares no contract with this
	// one; an unstamped one (run from a checkout) is the checkout's own.
	if *script != "" {
		if err := watcher.CheckLoopVersion(*script); err != nil && !errors.Is(err, watcher.ErrUnstamped) {
			return e.fail(2, err)
		}
	}
	if *pid <= 0 {
		return e.exitf(2, "omega-monitor: loop-env needs --pid, the loop's process id")
	}
	env, err := watcher.NewLoopEnv(target, f, *pid, e.Getenv)
	if err != nil {
		return e.fail(1, err)
	}
	// Buttons only where a receiver can take a tap: answers on, and for
	// a group chat, someone allowed to answer.
	cfg, err := relay.Load(e.Getenv, e.Home())
	env.Answer(err == nil, err == nil && cfg.FreeText)
	if err := env.Prepare(); err != nil {
		return e.fail(1, err)
	}
	io.WriteString(e.Stdout, env.Shell())
	return 0
}
