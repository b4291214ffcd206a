package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/cmdline"
	"github.com/omega-monitor/omega-monitor/internal/companion"
	"github.com/omega-monitor/omega-monitor/internal/printable"
	"github.com/omega-monitor/omega-monitor/internal/relay"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

func runRelay(e *Env, args []string) int {
	if len(args) > 0 && args[0] == "logs" {
		return runRelayLogs(e, args[1:])
	}
	fs := flag.NewFlagSet("relay", flag.ContinueOnError)
	muxFlag := fs.String("mux", "", "multiplexer binary `path` (default $OMEGA_MONITOR_MUX, ~/.local/bin/rmux, tmux)")
	wait := new(time.Duration)
	*wait = 30 * time.Second
	fs.Var((*cmdline.Duration)(wait), "wait", "how long stop waits for the receiver to finish, a `duration`")
	positional, code, ok := e.parse(fs, args, relay.Usage)
	if !ok {
		return code
	}
	if len(positional) != 1 {
		return e.exitf(2, "omega-monitor: relay takes one of start, stop, status, logs; %s", cmdline.HelpHint("relay"))
	}
	if positional[0] == "logs" {
		return e.exitf(2, "omega-monitor: relay logs takes its own flags, after it: omega-monitor relay logs [-n N] [-f]")
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

func runRelayLogs(e *Env, args []string) int {
	fs := flag.NewFlagSet("relay logs", flag.ContinueOnError)
	n := fs.Int("n", 50, "print the last `N` lines (0: all)")
	follow := fs.Bool("f", false, "keep printing lines as they are written, until interrupted")
	positional, code, ok := e.parse(fs, args, relay.LogsUsage)
	if !ok {
		return code
	}
	switch {
	case len(positional) > 0:
		return e.exitf(2, "omega-monitor: relay logs takes no arguments; got %q; %s", positional[0], cmdline.HelpHint("relay logs"))
	case *n < 0:
		return e.exitf(2, "omega-monitor: relay logs -n must be 0 or more; got %d", *n)
	}
	home, err := statedir.Home(e.Getenv)
	if err != nil {
		return e.fail(1, err)
	}
	ctx, stop := signal.NotifyContext(e.Ctx, os.Interrupt)
	defer stop()
	// Nothing the log holds reaches the terminal as an escape sequence.
	out := printable.NewWriter(e.Stdout)
	defer out.Flush()
	err = relay.Logs(ctx, home, relay.LogsUsing{N: *n, Follow: *follow, Out: out,
		Note: func(s string) { fmt.Fprintf(e.Stderr, "omega-monitor: %s\n", s) }})
	if err != nil {
		return e.fail(1, err)
	}
	return 0
}
