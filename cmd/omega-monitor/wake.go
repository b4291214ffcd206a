package main

import (
	"context"
	"flag"
	"fmt"
	"os/signal"
	"syscall"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/cmdline"
	"github.com/omega-monitor/omega-monitor/internal/setup"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/watcher"
)

// runWake is the hook's command, and, with --listen or --relay first, the
// two ends of a remote target's wakes. Only those exact first words choose
// them; any other argument is the hook's (an agent appends what it likes:
// Codex, a JSON argument). Whatever breaks in a hook, the agent sees
// success and silence.
func runWake(e *Env, args []string) (code int) {
	if len(args) > 0 {
		switch args[0] {
		case "--listen":
			return runWakeListen(e, args[1:])
		case "--relay":
			return runWakeRelay(e, args[1:])
		case "--mux":
			return runWakeMux(e, args[1:])
		}
	}
	if cmdline.WantsHelp(args) {
		fmt.Fprint(e.Stdout, watcher.WakeUsage)
		return 0
	}
	defer func() {
		if recover() != nil {
			code = 0
		}
	}()
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

// runWakeMux is wake --mux, which the loop of a watcher started with
// --mux-wake runs beside itself: 0 at its end, 2 for a usage error.
func runWakeMux(e *Env, args []string) int {
	var f watcher.MuxWakeFlags
	fs := f.FlagSet(e.Stderr)
	if fs.Parse(args) != nil || f.Check(fs.Args()) != nil {
		return e.exitf(2, "%v", watcher.ErrMuxWakeUsage)
	}
	f.Run(fs.Args(), e.Stderr, setup.Hooked(e.Home(), e.Getenv))
	return 0
}

// runWakeListen is wake --listen: 0 when the connection ended, 1 when it
// could not listen, 2 for a usage error.
func runWakeListen(e *Env, args []string) int {
	fs := flag.NewFlagSet("wake --listen", flag.ContinueOnError)
	fs.SetOutput(e.Stderr)
	target := fs.String("target", "", "the pane (%N) or session (=NAME:) the watcher captures")
	home := fs.String("home", "", "the state home")
	if fs.Parse(args) != nil || fs.NArg() != 0 {
		return 2
	}
	// The connection's end may come as a signal too (a hang-up): the
	// listener's FIFO is removed either way.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGHUP, syscall.SIGTERM, syscall.SIGINT, syscall.SIGPIPE)
	defer stop()
	if err := watcher.Listen(ctx, *home, *target, e.Getenv, e.Stdin, e.Stdout); err != nil {
		return e.exitf(1, "omega-monitor wake --listen: %v", err)
	}
	return 0
}

// runWakeRelay is wake --relay, which the loop of a remote target starts
// beside itself once. It ends when the loop is gone or on a signal.
func runWakeRelay(e *Env, args []string) int {
	fs := flag.NewFlagSet("wake --relay", flag.ContinueOnError)
	fs.SetOutput(e.Stderr)
	state := fs.String("state", "", "the watcher's state directory")
	timeout := fs.Int("timeout", 20, "how long the listener has to greet, in `seconds`")
	if fs.Parse(args) != nil || fs.NArg() == 0 || *state == "" || *timeout < 1 {
		return e.exitf(2, "usage: omega-monitor wake --relay --state DIR [--timeout SECS] -- COMMAND...")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer stop()
	if err := watcher.RunRelay(ctx, *state, fs.Args(), time.Duration(*timeout)*time.Second, e.Stderr); err != nil {
		return e.exitf(1, "omega-monitor wake --relay: %v", err)
	}
	return 0
}
