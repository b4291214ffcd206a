package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/printable"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/watcher"
)

// logsPoll is how often logs -f looks for new lines.
const logsPoll = 250 * time.Millisecond

func runLogs(e *Env, args []string) int {
	fset := flag.NewFlagSet("logs", flag.ContinueOnError)
	follow := fset.Bool("f", false, "keep printing lines as they are written, until interrupted")
	raw := fset.Bool("raw", false, "print the lines as written, escape sequences and all (by default none reaches the terminal)")
	n := fset.Int("n", 20, "print the last `N` lines (0: all)")
	all := fset.Bool("all", false, "every watcher's lines, each after its target; with -f, those of the watchers there when it starts")
	positional, code, ok := e.parse(fset, args, watcher.LogsUsage)
	if !ok {
		return code
	}
	if *n < 0 {
		return e.exitf(2, "omega-monitor: logs -n must be 0 or more; got %d", *n)
	}
	if *all {
		if len(positional) > 0 {
			return e.usageError("logs", "--all takes no target")
		}
		ctx, stop := signal.NotifyContext(e.Ctx, os.Interrupt)
		defer stop()
		if err := watcher.LogsAll(ctx, e.Getenv, *n, *follow, *raw, e.Stdout, logsPoll); err != nil {
			return e.fail(1, err)
		}
		return 0
	}
	home, target, code := e.watcherOf("logs", positional)
	if code != 0 {
		return code
	}
	d := statedir.Dir(filepath.Join(home, coord.WatcherName(target)))
	// What a pane or a host printed can be in a line: no escape sequence
	// of it reaches the terminal, unless asked for.
	out := e.Stdout
	if !*raw {
		pw := printable.NewWriter(e.Stdout)
		defer pw.Flush()
		out = pw
	}
	offset, err := d.TailLog(*n, out)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !*follow:
		return e.exitf(1, "omega-monitor: no log for %s: it was never watched here (omega-monitor status shows the watchers)", target)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return e.fail(1, err)
	case !*follow:
		return 0
	}
	ctx, stop := signal.NotifyContext(e.Ctx, os.Interrupt)
	defer stop()
	running := func() bool { return watcher.Running(string(d)) }
	said := func(running bool) {
		if running {
			fmt.Fprintf(e.Stderr, "omega-monitor: the watcher of %s runs; following its lines (Ctrl-C ends)\n", target)
			return
		}
		fmt.Fprintf(e.Stderr, "omega-monitor: the watcher of %s is stopped; its next lines come when it starts again (Ctrl-C ends)\n", target)
	}
	if err := d.FollowLog(ctx, offset, out, logsPoll, running, said); err != nil {
		return e.exitf(1, "omega-monitor: %s: %v", d.Path(statedir.Log), err)
	}
	return 0
}
