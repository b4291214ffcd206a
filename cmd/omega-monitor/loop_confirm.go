package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/capture"
	"github.com/omega-monitor/omega-monitor/internal/poll"
	"github.com/omega-monitor/omega-monitor/tick"
)

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
	positional, code, ok := e.parse(fs, args, poll.ConfirmUsage)
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
			Capture: captureOptions(e, *framed, *statusDir, local),
			Local:   local, Now: now,
		}
		line, look := poll.ConfirmStep(req, e.Stdin)
		if line != "" {
			fmt.Fprintln(e.Stdout, line)
		}
		return confirmExit[look]
	})
}

// confirmExit is the exit status the loop reads of each look: 0 go on, 1
// refused, 3 look again.
var confirmExit = map[poll.Look]int{poll.GoOn: 0, poll.Refused: 1, poll.LookAgain: 3}

func runAck(e *Env, args []string) int {
	fs := newFlagSet("ack")
	var r poll.AckRequest
	fs.StringVar(&r.Dir, "state", "", "state directory")
	fs.StringVar(&r.Target, "target", "", "the watched target")
	fs.StringVar(&r.Action, "action", "", "the action file")
	fs.IntVar(&r.FailedStep, "failed-step", 0, "the step of the action that failed, from 1; WHY follows")
	fs.StringVar(&r.FailedCall, "failed-call", "", "the loop's call of omega-monitor that failed; WHY follows")
	fs.StringVar(&r.Stopped, "stopped", "", "the signal that is stopping the loop")
	nowFlag := fs.String("now", "", "the time, RFC 3339 (for tests)")
	positional, code, ok := e.parse(fs, args, poll.AckUsage)
	if !ok {
		return code
	}
	r.Args = positional
	if err := r.Check(); err != nil {
		return e.usageError("ack", err.Error())
	}
	if r.Now, ok = parseNow(e, *nowFlag); !ok {
		return 2
	}
	return withDeadline(e, callDeadline, func(e *Env) int {
		// A failure said is a failure recorded: exit 0 either way.
		line, err := r.Do()
		if line != "" {
			fmt.Fprintln(e.Stdout, line)
		}
		if err != nil {
			return e.fail(1, err)
		}
		return 0
	})
}

// callDeadline bounds tick, confirm and ack, which the poll loop waits for
// without a clock of its own: a call past it exits 124, as a clock would
// have ended it.
const callDeadline = 60 * time.Second

// captureOptions are how a loop-facing call reads its capture: framed or
// not, with the agents' own records found on this machine (local's too).
func captureOptions(e *Env, framed bool, statusDir string, local *classify.Local) capture.Options {
	return capture.LocalOptions(e.Getenv, framed, statusDir, e.Now(), local)
}
