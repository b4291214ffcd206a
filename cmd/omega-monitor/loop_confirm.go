package main

import (
	"fmt"
	"slices"
	"time"

	"github.com/omega-monitor/omega-monitor/capture"
	"github.com/omega-monitor/omega-monitor/poll"
	"github.com/omega-monitor/omega-monitor/tick"
)

const confirmUsage = `usage: omega-monitor confirm --state DIR --target T --nudge-text TEXT
                            --action FILE --stage before|typed [--frame] < capture
       omega-monitor confirm --state DIR --target T --action NNN.answer
             --stage answer|selected|opened|filled|answered [--frame] < capture

The poll loop's check of a fresh capture before it types a nudge (--stage
before) and before it presses Enter (--stage typed). Exits 0 when the loop
may go on. Otherwise it prints why in a MONITOR line, records
nudge_not_typed (nothing typed: budget given back), enter_withheld (typed,
spent; nothing more until the box reads back) or nudge_collided (a human
typed too) in the history, removes the action file, and exits 1.

For an answer from the chat (NNN.answer), the stages are: answer, before
the first key (the dialog must be the one the answer was accepted for, in
its pane); selected, before Enter (and its cursor on the option chosen);
for the operator's words, opened (after Tab: the field open and empty) and
filled (the field holding exactly the words, before Enter); answered, after
Enter (the dialog must be gone or another). A refusal is
recorded as answer_refused, with its result for the relay.
`

const ackUsage = `usage: omega-monitor ack --state DIR --target T --action FILE EVENT [WHY]

Records what the poll loop did with an action, and removes its file. EVENT
is nudge_typed, nudge_not_typed, enter_withheld, alert_delivered,
alert_not_delivered, answer_typed or answer_refused (or unknown, for a file
the loop does not know). Only a nudge whose text never reached the terminal
(nudge_not_typed) gives its budget back. An answer's outcome is also its
result, which the relay reports in the chat. A failure is said in a MONITOR
line.
`

func runConfirm(e *Env, args []string) int {
	fs := newFlagSet("confirm")
	stateDir := fs.String("state", "", "state directory")
	target := fs.String("target", "", "the watched target")
	text := fs.String("nudge-text", tick.DefaultNudgeText, "what the nudge types")
	action := fs.String("action", "", "the action file")
	stage := fs.String("stage", "", "before or typed")
	framed := fs.Bool("frame", true, "standard input is a capture frame")
	statusDir := fs.String("agent-status-dir", "", "the agent's status files, on this machine")
	nowFlag := fs.String("now", "", "the time, RFC 3339 (for tests)")
	positional, code, ok := e.parse(fs, args, confirmUsage)
	if !ok {
		return code
	}
	st := tick.Stage(*stage)
	if *stateDir == "" || *target == "" || *action == "" || !slices.Contains(poll.ConfirmStages(*action), st) || len(positional) > 0 {
		return e.usageError("confirm", "--state, --target, --action and a --stage of the action are needed, and nothing else")
	}
	now, ok := parseNow(e, *nowFlag)
	if !ok {
		return 2
	}
	return withDeadline(e, callDeadline, func(e *Env) int {
		local, _ := poll.WatcherRules(e.Getenv) // a bad file was reported by the tick
		req := poll.ConfirmRequest{
			Dir: *stateDir, Target: *target, Text: *text, Action: *action, Stage: st,
			Capture: captureOptions(e, *framed, *statusDir),
			Local:   local, Now: now,
		}
		line, ok := poll.ConfirmAction(req, e.Stdin)
		if ok {
			return 0
		}
		fmt.Fprintln(e.Stdout, line)
		return 1
	})
}

func runAck(e *Env, args []string) int {
	fs := newFlagSet("ack")
	stateDir := fs.String("state", "", "state directory")
	target := fs.String("target", "", "the watched target")
	action := fs.String("action", "", "the action file")
	nowFlag := fs.String("now", "", "the time, RFC 3339 (for tests)")
	positional, code, ok := e.parse(fs, args, ackUsage)
	if !ok {
		return code
	}
	if *stateDir == "" || *target == "" || *action == "" || len(positional) < 1 || len(positional) > 2 {
		return e.usageError("ack", "--state, --target, --action and OUTCOME [WHY] are needed")
	}
	event, why := positional[0], ""
	if len(positional) == 2 {
		why = positional[1]
	}
	if _, ok := poll.AckEvents[event]; !ok {
		fmt.Fprintf(e.Stderr, "omega-monitor ack: unknown event %q\n", event)
		return 2
	}
	now, ok := parseNow(e, *nowFlag)
	if !ok {
		return 2
	}
	return withDeadline(e, callDeadline, func(e *Env) int {
		// A failure said is a failure recorded: exit 0 either way.
		if line := poll.Ack(*stateDir, *target, *action, event, why, now); line != "" {
			fmt.Fprintln(e.Stdout, line)
		}
		return 0
	})
}

// callDeadline bounds tick, confirm and ack, which the poll loop waits for
// without a clock of its own: a call past it exits 124, as a clock would
// have ended it.
const callDeadline = 60 * time.Second

// captureOptions are how a loop-facing call reads its capture: framed or
// not, with the agents' own records found on this machine.
func captureOptions(e *Env, framed bool, statusDir string) capture.Options {
	return capture.Options{Framed: framed, StatusDir: statusDir, CodexHome: capture.CodexHome(e.Getenv), Now: e.Now()}
}
