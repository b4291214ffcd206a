package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os/signal"
	"syscall"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/remotewake"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/watcher"
)

const wakeUsage = `usage: omega-monitor wake [--home DIR] [PAYLOAD]

What an agent's hook runs (omega-monitor install --hooks writes it): wakes
the watcher of the pane the hook runs in ($TMUX_PANE with $TMUX, or
$RMUX_PANE with $RMUX), so that it polls now instead of at the end of its
interval; on an ssh host, it wakes the watcher on the operator's machine
that listens there (wake --listen). The poll judges the screen as any
other: a wake carries no verdict. A pane no watcher follows wakes nothing.

The hook's payload (standard input, or Codex's notify argument) is read,
at most 1 MiB, and discarded: nothing in it is parsed, stored or opened.
It prints nothing and exits 0 whatever happens, so that a hook of ours
never disturbs the agent.

  --home DIR   the state home (default $OMEGA_MONITOR_HOME, else ~/.omega/monitor)

The watcher of an ssh target runs two more forms itself, never a hook:
  wake --listen --target T [--home DIR]   on the host, over the watcher's
      ssh connection: prints one line a wake of the server of T's panes
  wake --relay --state DIR [--timeout SECS] -- COMMAND...   beside the
      loop: keeps COMMAND (that listener, through ssh) running and wakes
      the loop for the wakes of its own pane
`

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
		}
	}
	if wantsHelp(args) {
		fmt.Fprint(e.Stdout, wakeUsage)
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
		fmt.Fprintf(e.Stderr, "omega-monitor wake --listen: %v\n", err)
		return 1
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
		fmt.Fprintln(e.Stderr, "usage: omega-monitor wake --relay --state DIR [--timeout SECS] -- COMMAND...")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer stop()
	err := watcher.NewRelay(*state, fs.Args(), time.Duration(*timeout)*time.Second, e.Stderr).Run(ctx)
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, remotewake.ErrLoopGone) {
		fmt.Fprintf(e.Stderr, "omega-monitor wake --relay: %v\n", err)
		return 1
	}
	return 0
}
