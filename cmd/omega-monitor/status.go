package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/board/hosts"
	"github.com/omega-monitor/omega-monitor/internal/board/live"
	"github.com/omega-monitor/omega-monitor/internal/board/render"
	"github.com/omega-monitor/omega-monitor/internal/cmdline"
	"github.com/omega-monitor/omega-monitor/internal/pkgerr"
	"github.com/omega-monitor/omega-monitor/internal/printable"
	"github.com/omega-monitor/omega-monitor/internal/setup"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

func runStatus(e *Env, args []string) int {
	fs := newFlagSet("status")
	liveForm := fs.Bool("live", false, "the live form, full-screen (needs a terminal)")
	once := fs.Bool("once", false, "print the compact form once")
	asJSON := fs.Bool("json", false, "print the census as JSON")
	tmux := fs.Bool("tmux", false, "print a tmux status segment")
	interval := 3 * time.Second
	fs.Var((*cmdline.Duration)(&interval), "interval", "the live form's refresh, a `duration` (3, or 3s, 500ms)")
	hostFlags := hosts.BindFlags(fs)
	positional, code, ok := e.parse(fs, args, render.StatusUsage)
	if !ok {
		return code
	}
	if len(positional) > 0 {
		return e.usageError("status", fmt.Sprintf("unexpected argument %q", positional[0]))
	}
	forms := 0
	for _, b := range []bool{*liveForm, *once, *asJSON, *tmux} {
		if b {
			forms++
		}
	}
	out, _ := e.Stdout.(*os.File)
	terminal := out != nil && live.IsTerminal(out)
	switch {
	case forms > 1:
		return e.exitf(2, "omega-monitor status: --live, --once, --json and --tmux are four forms: give one")
	case *liveForm && !terminal:
		return e.exitf(2, "omega-monitor status: --live draws on a terminal, and standard output is not one (--once prints the board once)")
	}
	if interval < 100*time.Millisecond {
		return e.exitf(2, "omega-monitor status: --interval must be 100ms or more")
	}
	root, err := statedir.Home(e.Getenv)
	if err != nil {
		return e.exitf(1, "omega-monitor status: %v", err)
	}
	b, err := hostFlags.Open(root, e.Getenv)
	if err != nil {
		return e.fail(2, err)
	}
	if *tmux {
		f, err := b.Once(e.Now(), true)
		if err != nil {
			fmt.Fprintln(e.Stdout, "omega-monitor: ?")
			return 1
		}
		fmt.Fprintln(e.Stdout, printable.String(render.Tmux(f)))
		return 0
	}
	if !*once && !*asJSON && terminal {
		in, _ := e.Stdin.(*os.File)
		if err := live.Run(b.Census, interval, in, out); err != nil {
			return e.exitf(1, "omega-monitor status: %v", err)
		}
		return 0
	}
	f, err := b.Once(e.Now(), false)
	if err != nil {
		return e.exitf(1, "omega-monitor status: %v", err)
	}
	hooks, line := setup.WatchedHooks(e.Home(), e.Getenv, f)
	if *asJSON {
		f.Hooks = hooks
		enc := json.NewEncoder(e.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(f); err != nil {
			return e.exitf(1, "omega-monitor status: %v", err)
		}
		return 0
	}
	// The compact form: as wide as the terminal, or of no width limit.
	io.WriteString(e.Stdout, printable.String(render.CompactWidth(f, live.Width(out))))
	if line != "" {
		fmt.Fprintln(e.Stdout, line)
	}
	switch {
	case f.Fleet.Running > 0:
		return 0
	case f.Degraded:
		return exitDegraded
	}
	return exitNoWatchers
}

// The one-line form's exit statuses beyond 0, 1 and 2.
const (
	exitNoWatchers = 3 // the whole fleet was read, and nothing watches
	exitDegraded   = 4 // nothing live was found, but some state was unreadable
)

// runReadWatcher is read-watcher, which another machine's board runs over
// ssh: 1 when there is no such watcher, 2 on a usage error.
func runReadWatcher(e *Env, args []string) int {
	var f hosts.ReadFlags
	positional, code, ok := e.parse(f.FlagSet(), args, hosts.ReadWatcherUsage)
	if !ok {
		return code
	}
	q, err := f.Query(positional)
	if err != nil {
		return e.exitf(2, "omega-monitor: read-watcher: %v; %s", err, cmdline.HelpHint("read-watcher"))
	}
	home, err := statedir.Home(e.Getenv)
	if err != nil {
		return e.exitf(1, "omega-monitor: read-watcher: %v", err)
	}
	if err := hosts.ServeWatcher(e.Stdout, home, positional[0], q, e.Now()); err != nil {
		return e.exitf(1, "omega-monitor: read-watcher: %s", pkgerr.Why(err))
	}
	return 0
}
