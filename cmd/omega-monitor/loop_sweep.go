package main

import (
	"fmt"

	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

const sweepUsage = `usage: omega-monitor sweep --state DIR

Keeps the last 10,000 lines of DIR/history.jsonl, at most 8 MiB of them, by
atomic replace under the history's lock. A watcher sweeps when it starts, and
again whenever its history passes 16 MiB.
`

func runSweep(e *Env, args []string) int {
	fs := newFlagSet("sweep")
	dir := fs.String("state", "", "the watcher's state directory")
	positional, code, ok := e.parse(fs, args, sweepUsage)
	if !ok {
		return code
	}
	if *dir == "" || len(positional) > 0 {
		return e.usageError("sweep", "--state is needed, and nothing else")
	}
	dropped, err := statedir.Dir(*dir).SweepHistory(statedir.HistoryKeep)
	if err != nil {
		return e.exitf(1, "omega-monitor sweep: %v", err)
	}
	if dropped > 0 {
		fmt.Fprintf(e.Stdout, "history: dropped %d old line(s), kept the last %d\n", dropped, statedir.HistoryKeep)
	}
	return 0
}
