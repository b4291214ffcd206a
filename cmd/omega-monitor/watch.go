package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/cmdline"
	"github.com/omega-monitor/omega-monitor/internal/companion"
	"github.com/omega-monitor/omega-monitor/internal/poll"
	"github.com/omega-monitor/omega-monitor/internal/pollset"
	"github.com/omega-monitor/omega-monitor/internal/relay"
	"github.com/omega-monitor/omega-monitor/internal/watcher"
)

func runWatch(e *Env, args []string) int { return watchTarget(e, args, false) }

// watchTarget is watch, or omega-monitor TARGET when implicit: there a
// word near a command's name is a typo (exit 2), unless a session of
// exactly that name is here: then it is watched, and the command named.
func watchTarget(e *Env, args []string, implicit bool) int {
	var f watcher.Settings
	fs := f.FlagSet("watch")
	once := fs.Bool("once", false, "a dry run: look once, print the verdict, its explanation, the probes' readings and what the watcher would type and page, then exit; nothing is started, written, typed or paged")
	target, code, ok := parseWatchArgs("watch", fs, &f, args, watcher.WatchUsage, e)
	if !ok {
		return code
	}
	m, err := resolveMux(e, f.Mux, f.SSHConfig, coord.DefaultTimeout)
	if err != nil {
		return e.fail(1, err)
	}
	if typo, said := watcher.Typo(e.Ctx, m, target, commandNames()); implicit && said != "" {
		fmt.Fprintf(e.Stderr, "omega-monitor: %s\n", said)
		if typo {
			return 2
		}
	}
	if f.Mux != "" {
		f.Mux = m.Bin // absolute, so the loop finds the same one
	}
	if target, err = watcher.ResolveWindow(e.Ctx, m, target, &f); err != nil {
		return e.fail(1, err)
	}

	if *once {
		return dryRun(e, m, target, f)
	}
	said, warnings, err := watcher.Start(e.Ctx, m, target, fs, f, e.Getenv)
	if fence := (*watcher.FenceError)(nil); errors.As(err, &fence) {
		return e.exitf(2, "omega-monitor: refusing target %s: %s", target, fence.Why)
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

// dryRun is watch --once: one look at target, judged as the watcher's
// next poll would judge it, and printed.
func dryRun(e *Env, m coord.Mux, target coord.Target, f watcher.Settings) int {
	l, err := watcher.LookOnce(e.Ctx, m, target, f, e.Getenv)
	if err != nil {
		return e.fail(1, err)
	}
	set := pollset.Default(target.String())
	set.NudgeBudget, set.HumanIdleS = f.NudgeBudget, f.HumanIdle
	if f.NudgeTextSet {
		set.NudgeText = f.NudgeText
	}
	local, rulesErr := poll.WatcherRules(e.Getenv)
	if rulesErr != nil {
		fmt.Fprintf(e.Stderr, "omega-monitor: warning: rules: %v; the built-in rules apply\n", rulesErr)
	}
	fmt.Fprintf(e.Stdout, "%s, pane %s; the probes run in %s\n", target, l.Pane, l.ProbeDir)
	r := poll.OnceRequest{Settings: set, Local: local, Capture: captureOptions(e, l.Framed, "", local), Now: e.Now(),
		Readings: poll.Readings{Work: probeReading(l.Work), Progress: probeReading(l.Progress)}}
	r.Capture.Pane = l.Pane
	if err := poll.Once(r, bytes.NewReader(l.Frame), e.Stdout); err != nil {
		return e.fail(1, err)
	}
	return 0
}

// probeReading is a probe's run as a poll reads it.
func probeReading(p watcher.ProbeRun) poll.ProbeReading {
	if p.Command == "" {
		return poll.ProbeReading{}
	}
	return poll.ProbeReading{Given: p.Ran, Output: strings.TrimSuffix(p.Output, "\n"), Error: p.Failure, Stderr: p.Stderr}
}
