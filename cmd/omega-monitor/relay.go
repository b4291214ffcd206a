package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/cmdline"
	"github.com/omega-monitor/omega-monitor/internal/companion"
	"github.com/omega-monitor/omega-monitor/relay"
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
	wait := new(time.Duration)
	*wait = 30 * time.Second
	fs.Var((*cmdline.Duration)(wait), "wait", "how long stop waits for the receiver to finish, a `duration`")
	positional, code, ok := e.parse(fs, args, relayUsage)
	if !ok {
		return code
	}
	if len(positional) != 1 {
		fmt.Fprintf(e.Stderr, "omega-monitor: relay takes one of start, stop, status; %s\n", cmdline.HelpHint("relay"))
		return 2
	}
	m, muxErr := resolveMux(e, *muxFlag, "", coord.DefaultTimeout)
	said, err := relay.Do(e.Ctx, positional[0], relay.Using{Mux: m, MuxErr: muxErr, Getenv: e.Getenv, Now: e.Now(), Wait: *wait,
		Find: func() (string, error) { return companion.Find(companion.Relay) }})
	io.WriteString(e.Stdout, said)
	switch {
	case errors.Is(err, relay.ErrUsage):
		return e.fail(2, err)
	case errors.Is(err, relay.ErrNotRunning):
		if positional[0] != "status" { // whose report says so
			fmt.Fprintf(e.Stderr, "omega-monitor: %v\n", err)
		}
		return 3
	case err != nil:
		return e.fail(1, err)
	}
	return 0
}
