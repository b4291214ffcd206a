package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/omega-monitor/omega-monitor/capture"
	"github.com/omega-monitor/omega-monitor/poll"
	"github.com/omega-monitor/omega-monitor/tick"
)

const confirmUsage = `usage: omega-monitor confirm --state DIR --target T --nudge-text TEXT
                            --action FILE --stage before|typed [--frame] < capture

The poll loop's check of a fresh capture before it types a nudge (--stage
before) and before it presses Enter (--stage typed). Exits 0 when the loop
may go on. Otherwise it prints why in a MONITOR line, records
nudge_not_typed (nothing typed: the budget is given back) or enter_withheld
(the text was typed and is spent; nothing more is typed until the box reads
back) in the history, removes the action file, and exits 1.
`

const ackUsage = `usage: omega-monitor ack --state DIR --target T --action FILE EVENT [WHY]

Records what the poll loop did with an action, and removes its file. EVENT
is nudge_typed, nudge_not_typed, enter_withheld, alert_delivered or
alert_not_delivered (or unknown, for a file the loop does not know). Only a
nudge whose text never reached the terminal (nudge_not_typed) gives its
budget back. A failure is said in a MONITOR line.
`

func runConfirm(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("confirm", confirmUsage, stderr)
	stateDir := fs.String("state", "", "state directory")
	target := fs.String("target", "", "the watched target")
	text := fs.String("nudge-text", tick.DefaultNudgeText, "what the nudge types")
	action := fs.String("action", "", "the action file")
	stage := fs.String("stage", "", "before or typed")
	framed := fs.Bool("frame", true, "standard input is a capture frame")
	statusDir := fs.String("agent-status-dir", "", "the agent's status files, on this machine")
	nowFlag := fs.String("now", "", "the time, RFC 3339 (for tests)")
	if code, stop := parseFlags(fs, args, stdout, confirmUsage); stop {
		return code
	}
	defer selfDeadline(callDeadline, stderr)()
	st := tick.Stage(*stage)
	if *stateDir == "" || *target == "" || *action == "" || (st != tick.BeforeTyping && st != tick.BeforeEnter) || fs.NArg() > 0 {
		io.WriteString(stderr, confirmUsage)
		return 2
	}
	now, ok := parseNow(*nowFlag, stderr)
	if !ok {
		return 2
	}
	local, _ := poll.WatcherRules() // a bad file was reported by the tick
	line, ok := poll.Confirm(poll.ConfirmRequest{
		Dir: *stateDir, Target: *target, Text: *text, Action: *action, Stage: st,
		Capture: capture.Options{Framed: *framed, StatusDir: *statusDir, Now: time.Now()},
		Local:   local, Now: now,
	}, stdin)
	if ok {
		return 0
	}
	fmt.Fprintln(stdout, line)
	return 1
}

func runAck(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("ack", ackUsage, stderr)
	stateDir := fs.String("state", "", "state directory")
	target := fs.String("target", "", "the watched target")
	action := fs.String("action", "", "the action file")
	nowFlag := fs.String("now", "", "the time, RFC 3339 (for tests)")
	if code, stop := parseFlags(fs, args, stdout, ackUsage); stop {
		return code
	}
	if *stateDir == "" || *target == "" || *action == "" || fs.NArg() < 1 || fs.NArg() > 2 {
		io.WriteString(stderr, ackUsage)
		return 2
	}
	defer selfDeadline(callDeadline, stderr)()
	if _, ok := poll.AckEvents[fs.Arg(0)]; !ok {
		fmt.Fprintf(stderr, "omega-monitor ack: unknown event %q\n", fs.Arg(0))
		return 2
	}
	now, ok := parseNow(*nowFlag, stderr)
	if !ok {
		return 2
	}
	// A failure said is a failure recorded: exit 0 either way.
	if line := poll.Ack(*stateDir, *target, *action, fs.Arg(0), fs.Arg(1), now); line != "" {
		fmt.Fprintln(stdout, line)
	}
	return 0
}

// callDeadline bounds tick, confirm and ack, which the poll loop waits for
// without a clock of its own: a call past it exits 124, as a clock would
// have ended it.
const callDeadline = 60 * time.Second

// selfDeadline ends this process with status 124 once d has passed. The
// returned function disarms it.
func selfDeadline(d time.Duration, stderr io.Writer) func() bool {
	t := time.AfterFunc(d, func() {
		fmt.Fprintf(stderr, "omega-monitor: no answer within %v\n", d)
		os.Exit(124)
	})
	return t.Stop
}
