package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/capture"
	"github.com/omega-monitor/omega-monitor/poll"
	"github.com/omega-monitor/omega-monitor/tick"
)

const confirmUsage = `usage: omega-monitor confirm --state DIR --target T --action FILE
                            --step N [--try K] [--frame] < capture
       omega-monitor confirm --state DIR --target T --action FILE
                            --stage STAGE [--frame] < capture

The poll loop's look at a fresh capture, at the confirm step N of an
action's steps (the step names the stage), before a key of ours. Exits 0
when the loop may go on, having written the condition the next key is sent
on (the pane as this capture saw it: the multiplexer sends the key only
while it holds). Exits 3 when the screen is still being redrawn after a
key: the loop captures again and asks with --try K+1 (Go bounds the
tries). Otherwise it prints why in a MONITOR line (also in monitor.log),
records the outcome, removes the action, and exits 1.

A nudge's stages: before (the same STALLED screen, an empty box) and typed
(before Enter: the box holds exactly our text). A refusal records
nudge_not_typed (nothing typed: budget given back), enter_withheld (typed,
spent; nothing more until the box reads back) or nudge_collided (a human
typed too).

An answer's (NNN.answer) stages: answer, before the first key (the dialog
the answer was accepted for, in its pane, the agent's process in the pane's
foreground, its own status waiting, its cursor where it was); at:N, after
each move (the cursor on option N); selected, before Enter (on the option
chosen); opened and filled, for the operator's words (after Tab, the field
open and empty; before Enter, holding exactly the words); answered, after
Enter. A refusal records answer_refused, with the keys that had reached the
terminal, as its result for the relay.
`

const ackUsage = `usage: omega-monitor ack --state DIR --target T --action FILE EVENT [WHY]
       omega-monitor ack --state DIR --target T --action FILE --failed-step N WHY
       omega-monitor ack --state DIR --target T --failed-call NAME WHY
       omega-monitor ack --state DIR --target T --stopped SIGNAL

Records what the poll loop did with an action, and removes its file. EVENT
is nudge_typed, nudge_not_typed, enter_withheld, alert_delivered,
alert_not_delivered, answer_typed or answer_refused (or unknown). Only a
nudge whose text never reached the terminal (nudge_not_typed) gives its
budget back. An answer's outcome is also its result, which the relay
reports in the chat.

--failed-step N: step N of the action's steps (a capture, a key or a
paste) failed, for the reason WHY the loop read (the multiplexer's or
ssh's last word): the outcome is Go's to say (a nudge not typed before its
text was pasted, Enter withheld after; an answer refused, with the keys
that had reached the terminal). A key the multiplexer did not send because
the pane changed since the last look is said as cancelled. Any failure is
said in a MONITOR line, which monitor.log keeps too.

--failed-call NAME: the loop's call of omega-monitor NAME (tick, confirm,
ack, deliver) failed or ran past its deadline, for the reason WHY: said in
an ERROR line, which monitor.log keeps too, so that logs and the board show
it.

--stopped SIGNAL: the loop is being stopped by SIGNAL (SIGTERM, SIGHUP,
SIGINT): said in monitor.log, and recorded as a stop (ended.json), so that
the board shows the watcher gone, not stale.
`

func runConfirm(e *Env, args []string) int {
	fs := newFlagSet("confirm")
	stateDir := fs.String("state", "", "state directory")
	target := fs.String("target", "", "the watched target")
	text := fs.String("nudge-text", "", "what the nudge types (checked against the pending nudge when given)")
	action := fs.String("action", "", "the action file")
	stage := fs.String("stage", "", "the stage, when no --step names it")
	step := fs.Int("step", 0, "the confirm step of the action's steps, from 1")
	try := fs.Int("try", 1, "the look at this step, from 1")
	framed := fs.Bool("frame", true, "standard input is a capture frame")
	statusDir := fs.String("agent-status-dir", "", "the agent's status files, on this machine")
	nowFlag := fs.String("now", "", "the time, RFC 3339 (for tests)")
	positional, code, ok := e.parse(fs, args, confirmUsage)
	if !ok {
		return code
	}
	st := tick.Stage(*stage)
	stageOK := slices.Contains(poll.ConfirmStages(*action), st) || strings.HasPrefix(*stage, "at:")
	if *stateDir == "" || *target == "" || *action == "" || (*step <= 0) == (*stage == "") || *stage != "" && !stageOK ||
		*try < 1 || len(positional) > 0 {
		return e.usageError("confirm", "--state, --target, --action and either a --step of the action or a --stage are needed, and nothing else")
	}
	now, ok := parseNow(e, *nowFlag)
	if !ok {
		return 2
	}
	return withDeadline(e, callDeadline, func(e *Env) int {
		local, _ := poll.WatcherRules(e.Getenv) // a bad file was reported by the tick
		req := poll.ConfirmRequest{
			Dir: *stateDir, Target: *target, Text: *text, Action: *action, Step: *step, Stage: st, Try: *try,
			Capture: captureOptions(e, *framed, *statusDir),
			Local:   local, Now: now,
		}
		line, code := poll.ConfirmStep(req, e.Stdin)
		if line != "" {
			fmt.Fprintln(e.Stdout, line)
		}
		return code
	})
}

func runAck(e *Env, args []string) int {
	fs := newFlagSet("ack")
	stateDir := fs.String("state", "", "state directory")
	target := fs.String("target", "", "the watched target")
	action := fs.String("action", "", "the action file")
	failedStep := fs.Int("failed-step", 0, "the step of the action that failed, from 1; WHY follows")
	failedCall := fs.String("failed-call", "", "the loop's call of omega-monitor that failed; WHY follows")
	stopped := fs.String("stopped", "", "the signal that is stopping the loop")
	nowFlag := fs.String("now", "", "the time, RFC 3339 (for tests)")
	positional, code, ok := e.parse(fs, args, ackUsage)
	if !ok {
		return code
	}
	if *stopped != "" {
		if *stateDir == "" || *target == "" || *action != "" || len(positional) != 0 || !strings.HasPrefix(*stopped, "SIG") {
			return e.usageError("ack", "--state, --target and --stopped SIGNAL are needed, and nothing else")
		}
		now, ok := parseNow(e, *nowFlag)
		if !ok {
			return 2
		}
		if err := poll.Stopped(*stateDir, *target, *stopped, now); err != nil {
			return e.fail(1, err)
		}
		return 0
	}
	if *failedCall != "" {
		if *stateDir == "" || *target == "" || *action != "" || len(positional) != 1 {
			return e.usageError("ack", "--state, --target, --failed-call NAME and WHY are needed, and no --action")
		}
		now, ok := parseNow(e, *nowFlag)
		if !ok {
			return 2
		}
		fmt.Fprintln(e.Stdout, poll.FailedCall(*stateDir, *target, *failedCall, positional[0], now))
		return 0
	}
	if *failedStep > 0 {
		if *stateDir == "" || *target == "" || *action == "" || len(positional) != 1 {
			return e.usageError("ack", "--state, --target, --action, --failed-step N and WHY are needed")
		}
		now, ok := parseNow(e, *nowFlag)
		if !ok {
			return 2
		}
		return withDeadline(e, callDeadline, func(e *Env) int {
			fmt.Fprintln(e.Stdout, poll.FailedStep(*stateDir, *target, *action, *failedStep, positional[0], now))
			return 0
		})
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
