package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/omega-monitor/omega-monitor/coord"
)

const stopUsage = `usage: omega-monitor stop <target> [--mux PATH]

Stops the watcher of a target by ending its multiplexer session, and with it
the loop. The watcher's state directory is kept.

flags:
`

func runStop(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("stop", flag.ContinueOnError)
	muxFlag := fs.String("mux", "", "multiplexer binary `path` (default $OMEGA_MONITOR_MUX, ~/.local/bin/rmux, tmux)")
	positional, code, ok := parseInterspersed(fs, args, stopUsage, stdout, stderr)
	if !ok {
		return code
	}
	if len(positional) != 1 {
		fmt.Fprintf(stderr, "omega-monitor: stop takes one target, got %d\n", len(positional))
		writeCommandUsage(stderr, fs, stopUsage)
		return 2
	}
	target, err := coord.ParseTarget(positional[0])
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor: %v\n", err)
		return 2
	}
	m, err := resolveMux(*muxFlag, "", coord.DefaultTimeout)
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor: %v\n", err)
		return 1
	}
	ctx := context.Background()
	watcher := coord.WatcherName(target)
	running, err := m.HasSession(ctx, coord.Target{Session: watcher})
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor: %v\n", err)
		return 1
	}
	if !running {
		fmt.Fprintf(stderr, "omega-monitor: %s is not watched (no session %s)\n", target, watcher)
		return 1
	}
	if _, err := m.Run(ctx, "", "kill-session", "-t", coord.Exact(watcher)); err != nil {
		fmt.Fprintf(stderr, "omega-monitor: cannot stop %s: %v\n", watcher, err)
		return 1
	}
	fmt.Fprintf(stdout, "stopped %s, the watcher of %s\n", watcher, target)
	return 0
}
