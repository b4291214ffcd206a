package main

import (
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/cmdline"
	"github.com/omega-monitor/omega-monitor/internal/companion"
	"github.com/omega-monitor/omega-monitor/relay"
	"github.com/omega-monitor/omega-monitor/statedir"
)

const relayUsage = `usage: omega-monitor relay start|stop|status [--mux PATH] [--wait D]

The answer receiver carries the operator's taps on a relayed question's
buttons, in Telegram, to the watcher that asked it, which types the answer
after its own checks. One runs per state home, in the detached multiplexer
session omega-relay (omega-monitor-relay serve).

  start   start it, once its config is checked (answers=on, and for a group
          allow_users=ID[,ID...], in the funnel's telegram.conf)
  stop    end it, and wait until it has let go of its lock
  status  whether it runs, since when, its last update, and the config's
          answer settings (exit 3 when it does not run)

flags:
`

func runRelay(e *Env, args []string) int {
	fs := flag.NewFlagSet("relay", flag.ContinueOnError)
	muxFlag := fs.String("mux", "", "multiplexer binary `path` (default $OMEGA_MONITOR_MUX, ~/.local/bin/rmux, tmux)")
	wait := fs.Duration("wait", 30*time.Second, "how long stop waits for the receiver to finish (a `duration`)")
	positional, code, ok := e.parse(fs, args, relayUsage)
	if !ok {
		return code
	}
	if len(positional) != 1 {
		fmt.Fprintf(e.Stderr, "omega-monitor: relay takes one of start, stop, status\n")
		cmdline.WriteUsage(e.Stderr, fs, relayUsage)
		return 2
	}
	home, err := statedir.Home(e.Getenv)
	if err != nil {
		fmt.Fprintf(e.Stderr, "omega-monitor: %v\n", err)
		return 1
	}
	verb := positional[0]
	if verb == "status" {
		report, running, err := relay.Status(home, e.Getenv, e.Now())
		if err != nil {
			fmt.Fprintf(e.Stderr, "omega-monitor: %v\n", err)
			return 1
		}
		fmt.Fprint(e.Stdout, report)
		if !running {
			return 3
		}
		return 0
	}
	if verb != "start" && verb != "stop" {
		fmt.Fprintf(e.Stderr, "omega-monitor: relay %s: want start, stop or status\n", verb)
		return 2
	}
	m, err := resolveMux(e, *muxFlag, "", coord.DefaultTimeout)
	if err != nil {
		fmt.Fprintf(e.Stderr, "omega-monitor: %v\n", err)
		return 1
	}
	var said string
	if verb == "start" {
		// The config first: a receiver that would refuse is not
		// started, whether or not its binary is installed.
		if _, err = relay.Load(e.Getenv, e.Home()); err == nil {
			var bin string
			if bin, err = companion.Find(companion.Relay); err == nil {
				said, err = relay.Start(e.Ctx, m, bin, e.Getenv)
			}
		}
	} else {
		said, err = relay.Stop(e.Ctx, m, home, *wait)
	}
	if err != nil {
		fmt.Fprintf(e.Stderr, "omega-monitor: %v\n", err)
		if errors.Is(err, relay.ErrNotRunning) {
			return 3
		}
		return 1
	}
	fmt.Fprintln(e.Stdout, said)
	return 0
}
