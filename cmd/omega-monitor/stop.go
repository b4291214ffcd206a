package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/atomicfile"
	"github.com/omega-monitor/omega-monitor/internal/cmdline"
	"github.com/omega-monitor/omega-monitor/statedir"
)

const stopUsage = `usage: omega-monitor stop <target> [--mux PATH]

Stops the watcher of a target by ending its multiplexer session, and with it
the loop, and returns once the loop has finished its cleanup (it holds the
state directory's lock until then), or says when it gave up waiting
(--wait). The watcher's state directory is kept.

flags:
`

func runStop(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("stop", flag.ContinueOnError)
	muxFlag := fs.String("mux", "", "multiplexer binary `path` (default $OMEGA_MONITOR_MUX, ~/.local/bin/rmux, tmux)")
	wait := fs.Duration("wait", 30*time.Second, "how long to wait for the loop's cleanup (a `duration`)")
	positional, code, ok := cmdline.ParseInterspersed(fs, args, stopUsage, stdout, stderr)
	if !ok {
		return code
	}
	if len(positional) != 1 {
		fmt.Fprintf(stderr, "omega-monitor: stop takes one target, got %d\n", len(positional))
		cmdline.WriteUsage(stderr, fs, stopUsage)
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
	markEnded(watcher)
	if _, err := m.Run(ctx, "", "kill-session", "-t", coord.Exact(watcher)); err != nil {
		fmt.Fprintf(stderr, "omega-monitor: cannot stop %s: %v\n", watcher, err)
		return 1
	}
	home, err := statedir.Home()
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor: %v\n", err)
		return 1
	}
	free, h, err := statedir.Dir(filepath.Join(home, watcher)).WaitFree(*wait)
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor: stopped %s, but cannot tell whether its loop finished: %v\n", watcher, err)
		return 1
	}
	if !free {
		fmt.Fprintf(stderr, "omega-monitor: ended the session %s, but its loop still holds the state directory: gave up waiting at %s, after %v (held by %s)\n",
			watcher, time.Now().Format("15:04:05"), *wait, h)
		return 1
	}
	fmt.Fprintf(stdout, "stopped %s, the watcher of %s\n", watcher, target)
	return 0
}

// markEnded records in the watcher's state directory that it was stopped
// (ended.json), so that the board shows it gone rather than stale: a loop
// that died without a stop is a different matter. It is written before the
// session is ended; a stop that then fails leaves a running loop, which
// the board still shows live, since a running pid with its start token
// outweighs the mark.
func markEnded(watcher string) {
	home, err := statedir.Home()
	if err != nil {
		return
	}
	dir := filepath.Join(home, watcher)
	if _, err := os.Stat(dir); err != nil {
		return
	}
	data, _ := json.Marshal(statedir.EndedRecord{At: time.Now().UTC(), By: "stop"})
	atomicfile.Write(filepath.Join(dir, statedir.Ended), append(data, '\n'), 0o600)
}
