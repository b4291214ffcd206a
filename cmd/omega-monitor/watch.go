package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/cmdline"
	"github.com/omega-monitor/omega-monitor/internal/companion"
	"github.com/omega-monitor/omega-monitor/internal/relay"
	"github.com/omega-monitor/omega-monitor/internal/watcher"
)

const watchUsage = `usage: omega-monitor <target> [flags]
       omega-monitor watch <target> [flags]

Starts a watcher: a detached multiplexer session on this machine, named
monitor-<session> or monitor-<host>-<session> (a fingerprint where that
could be misread), running the poll loop over the target. A target is a
session name, host:session where host is an ssh config alias, or
session:window[.pane] (a local session's window, when no alias has the
session's name). The watcher pins one pane by its id when it starts (the
session's active pane, that window's, or --pane %N) and follows only it:
switching windows never moves its nudges. Use the watch form for a session
named like a command (watch list).

The probes run on this machine (not on the target's host), in --probe-dir:
by default the pane's working directory (for an ssh target, the current
one). Each runs once at start, and what it read there is said.
The watcher's files are in $OMEGA_MONITOR_HOME/<watcher>/ (default
~/.omega/monitor/<watcher>/): monitor.log holds every MONITOR line
(omega-monitor logs TARGET prints it), watcher.log the loop's own log,
state.json and history.jsonl what it decided.

` + watcher.EnvHelp + `
flags:
`

func runWatch(e *Env, args []string) int { return watchTarget(e, args, false) }

// watchTarget is watch, or omega-monitor TARGET when implicit: there a
// word near a command's name is a typo (exit 2), unless a session of
// exactly that name is here: then it is watched, and the command named.
func watchTarget(e *Env, args []string, implicit bool) int {
	var f watcher.Settings
	fs := f.FlagSet("watch")
	target, code, ok := parseWatchArgs("watch", fs, &f, args, watchUsage, e)
	if !ok {
		return code
	}
	m, err := resolveMux(e, f.Mux, f.SSHConfig, coord.DefaultTimeout)
	if err != nil {
		return e.fail(1, err)
	}
	word := target.Session
	if near := cmdline.Nearest(word, commandNames()); implicit && near != "" && target.Local() && strings.Trim(word, "abcdefghijklmnopqrstuvwxyz-") == "" {
		if here, _ := m.HasSession(e.Ctx, target); !here {
			fmt.Fprintf(e.Stderr, "omega-monitor: no command %s: did you mean %s? (no session %s here either; %s)\n", word, near, word, cmdline.HelpHint(""))
			return 2
		}
		fmt.Fprintf(e.Stderr, "omega-monitor: %s is a session here: watching it (the command is %s)\n", word, near)
	}
	if f.Mux != "" {
		f.Mux = m.Bin // absolute, so the loop finds the same one
	}
	if target, err = watcher.ResolveWindow(e.Ctx, m, target, &f); err != nil {
		return e.fail(1, err)
	}

	said, warnings, err := watcher.Start(e.Ctx, m, target, fs, f, e.Getenv)
	if fence := (*watcher.FenceError)(nil); errors.As(err, &fence) {
		fmt.Fprintf(e.Stderr, "omega-monitor: refusing target %s: %s\n", target, fence.Why)
		return 2
	}
	if err != nil {
		return e.fail(1, err)
	}
	fmt.Fprintln(e.Stdout, said)
	for _, w := range warnings {
		fmt.Fprintf(e.Stderr, "omega-monitor: warning: %s\n", w)
	}
	// Answers on: the receiver that takes the taps runs with the watchers.
	if said, err := relay.Ensure(e.Ctx, m, func() (string, error) { return companion.Find(companion.Relay) }, e.Getenv); err != nil {
		fmt.Fprintf(e.Stderr, "omega-monitor: warning: answers from the chat are on, but their receiver did not start: %v\n", err)
	} else if said != "" {
		fmt.Fprintln(e.Stdout, said)
	}
	if warning := watcher.DeliveryWarning(e.Getenv, e.Home()); warning != "" {
		fmt.Fprintf(e.Stderr, "omega-monitor: warning: %s\n", warning)
	}
	return 0
}

// parseWatchArgs reads a watcher's command line, for watch and for the
// loop's own start (loop-env), so that both refuse the same things: one
// target, safe by coord's rules, and every flag's value in range. When ok is
// false the command returns code.
func parseWatchArgs(name string, fs *flag.FlagSet, f *watcher.Settings, args []string, usage string, e *Env) (target coord.Target, code int, ok bool) {
	positional, code, ok := e.parse(fs, args, usage)
	if !ok {
		return coord.Target{}, code, false
	}
	if len(positional) != 1 {
		fmt.Fprintf(e.Stderr, "omega-monitor: %s takes one target, got %d; %s\n", name, len(positional), cmdline.HelpHint(name))
		return coord.Target{}, 2, false
	}
	target, err := f.Target(positional[0], fs, name == "watch", e.Getenv)
	if err != nil {
		fmt.Fprintf(e.Stderr, "omega-monitor: %v\n", err)
		return coord.Target{}, 2, false
	}
	return target, 0, true
}

// resolveMux resolves the multiplexer binary and the ssh options of a command.
func resolveMux(e *Env, muxFlag, sshConfig string, timeout time.Duration) (coord.Mux, error) {
	bin, err := coord.MuxBinary(muxFlag, e.Getenv)
	if err != nil {
		return coord.Mux{}, err
	}
	return coord.Mux{Bin: bin, SSH: coord.SSH{Config: sshConfig, Timeout: timeout}}, nil
}
