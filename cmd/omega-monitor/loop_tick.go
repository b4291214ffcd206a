package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/cmdline"
	"github.com/omega-monitor/omega-monitor/internal/judge"
	"github.com/omega-monitor/omega-monitor/internal/poll"
	"github.com/omega-monitor/omega-monitor/internal/pollset"
)

func runTick(e *Env, args []string) int {
	fs := newFlagSet("tick")
	stateDir := fs.String("state", "", "state directory")
	var readings poll.Readings
	poll.ReadingFlags(fs, &readings)
	given := pollset.Default("")
	poll.SettingsFlags(fs, &given)
	captureErr := fs.String("capture-error", "", "the capture failed")
	nowFlag := fs.String("now", "", "the poll's time, RFC 3339")
	framed := fs.Bool("frame", false, "standard input is a capture frame")
	statusFile := fs.String("agent-status", "", "the agent's own status file")
	pane := fs.String("pane", "", "the watched pane")
	explain := fs.Bool("explain", false, "explain on standard error")
	diffOutput := fs.String("diff-output", "", "what the last poll's diff command printed")
	diffFailed := fs.String("diff-error", "", "the last poll's diff command failed")
	positional, code, ok := e.parse(fs, args, poll.TickUsage)
	if !ok {
		return code
	}
	if len(positional) > 0 {
		return e.exitf(2, "omega-monitor tick: unexpected argument %q (the pane comes on standard input)", positional[0])
	}
	if *stateDir == "" {
		return e.exitf(2, "omega-monitor tick: --state is required")
	}
	set, err := poll.ResolveSettings(fs, *stateDir, given)
	if err != nil {
		return e.exitf(2, "omega-monitor tick: %v", err)
	}
	now, ok := parseNow(e, *nowFlag)
	if !ok {
		return 2
	}
	return withDeadline(e, callDeadline, func(e *Env) int {
		local, rulesErr := poll.WatcherRules(e.Getenv)
		r := poll.Request{
			Dir: *stateDir, Settings: set, Readings: readings, Local: local, RulesErr: rulesErr,
			CaptureError: *captureErr,
			Capture:      captureOptions(e, *framed, set.AgentStatusDir, local),
			Now:          now,
			DiffOutput:   *diffOutput, DiffError: *diffFailed,
		}
		r.Capture.Pane, r.Capture.StatusFile = *pane, *statusFile
		if *explain {
			r.Explain = e.Stderr
		}
		// A poll that handed a nudge over prints no line: the nudge's
		// last step says it, as typed or not (poll.Tick).
		line, err := poll.Tick(r, e.Stdin)
		if line != "" {
			fmt.Fprintln(e.Stdout, line)
		}
		if err != nil {
			fmt.Fprintf(e.Stderr, "omega-monitor tick: %v\n", err)
		}
		return 0
	})
}

// parseNow reads --now, or takes the time now.
func parseNow(e *Env, flagValue string) (time.Time, bool) {
	if flagValue == "" {
		return e.Now(), true
	}
	t, err := time.Parse(time.RFC3339, flagValue)
	if err != nil {
		fmt.Fprintf(e.Stderr, "omega-monitor: --now %q is not an RFC 3339 time\n", flagValue)
		return time.Time{}, false
	}
	return t, true
}

// onChangeUsage is on-change's help.
const onChangeUsage = `usage: omega-monitor on-change --state DIR [--timeout SECONDS]

Runs the operator's command for a change of state (--on-change CMD of
watch), with the change in its environment; tick starts it in a session of
its own and does not wait for it. Not for an operator to run. A failure, or
an overrun of its clock (its whole process group is killed then), is a
line in the watcher's log. Exit 0: the command succeeded; 1: it failed;
2: a usage error.

flags:
`

func runOnChange(e *Env, args []string) int {
	fs := newFlagSet("on-change")
	dir := fs.String("state", "", "the watcher's state `directory`")
	timeout := fs.Int("timeout", 20, "the command's wall clock, in `seconds`")
	positional, code, ok := e.parse(fs, args, onChangeUsage)
	if !ok {
		return code
	}
	if *dir == "" || len(positional) > 0 || *timeout < 1 {
		return e.usageError("on-change", "--state and a --timeout of 1 or more are needed, and nothing else")
	}
	err := poll.OnChange(*dir, time.Duration(*timeout)*time.Second, e.Getenv)
	switch {
	case errors.Is(err, poll.ErrNoOnChangeCommand):
		return e.usageError("on-change", "no command in the environment")
	case err != nil:
		return 1 // said in the watcher's log
	}
	return 0
}

// runJudge is the loop's judge: it serves the loop's calls on stdin with run.
func runJudge(e *Env, args []string) int {
	var f judge.Flags
	positional, code, ok := cmdline.ParseInterspersed(f.FlagSet(), args, judge.Usage, e.Stdout, e.Stderr)
	if !ok {
		return code
	} else if err := f.Check(positional); err != nil {
		return e.exitf(2, "omega-monitor judge: %v; %s", err, cmdline.HelpHint("judge"))
	} else if err := judge.Serve(e.Stdin, e.Stdout, judge.Options{Self: f.Self, Requests: f.Requests, Run: run}); err != nil {
		return e.exitf(1, "omega-monitor: %v", err)
	}
	return 0
}
