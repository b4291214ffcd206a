package main

import "github.com/omega-monitor/omega-monitor/internal/watcher"

// runWake is the hook's command (watcher.WakeUsage), and the two ends of a
// remote target's wakes (--listen, --relay). Whatever breaks in a hook,
// the agent sees success and silence.
func runWake(e *Env, args []string) (code int) {
	defer func() {
		if recover() != nil {
			code = 0
		}
	}()
	return watcher.WakeCommand(e.Getenv, e.Stdin, e.Stdout, e.Stderr, args)
}
