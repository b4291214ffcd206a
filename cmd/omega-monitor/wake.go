package main

import (
	"github.com/omega-monitor/omega-monitor/statedir"
	"github.com/omega-monitor/omega-monitor/watcher"
)

const wakeUsage = `usage: omega-monitor wake [--home DIR] [PAYLOAD]

What an agent's hook runs (omega-monitor install --hooks writes it): wakes
the watcher of the pane the hook runs in ($TMUX_PANE with $TMUX, or
$RMUX_PANE with $RMUX), so that it polls now instead of at the end of its
interval. The poll judges the screen as any other: a wake carries no
verdict. A pane no watcher follows wakes nothing.

The hook's payload (standard input, or Codex's notify argument) is read,
at most 1 MiB, and discarded: nothing in it is parsed, stored or opened.
It prints nothing and exits 0 whatever happens, so that a hook of ours
never disturbs the agent.

  --home DIR   the state home (default $OMEGA_MONITOR_HOME, else ~/.omega/monitor)
`

// runWake is the hook's command. Its arguments are not parsed as flags: an
// agent appends what it likes (Codex, a JSON argument), and no argument may
// make it fail. Only a leading --home DIR is taken.
func runWake(e *Env, args []string) (code int) {
	// Whatever breaks, the agent's hook sees success and silence.
	defer func() {
		recover()
		code = 0
	}()
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
		e.Stdout.Write([]byte(wakeUsage))
		return 0
	}
	home := ""
	if len(args) >= 2 && args[0] == "--home" {
		home = args[1]
	}
	if home == "" {
		home, _ = statedir.Home(e.Getenv)
	}
	watcher.Hook(home, e.Getenv, e.Stdin)
	return 0
}
