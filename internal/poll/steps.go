package poll

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/alert"
	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/capture"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/statedir/event"
	"github.com/omega-monitor/omega-monitor/tick"
)

// Every action is handed to the loop as its steps (statedir/steps.go): Go
// writes the order of the looks and keys, the stage each look is judged
// for, and the outcome; the loop runs them. A nudge:
//
//	capture fresh
//	confirm before fresh 0      the same STALLED screen, an empty box
//	paste 001.text              the text, if the pane is as that look saw it
//	rest 1000000
//	capture typed
//	confirm typed typed 0       the box holds exactly our text
//	keys Enter                  on the same condition, from this look
//	ack nudge_typed
//
// An answer looks before each key and after it: the cursor moves one step
// at a time, each step confirmed on a fresh capture (looked at again while
// the agent redraws) before the next key; the first look that fails stops
// it, and nothing more is typed.

// maxTries bounds the looks a check takes at a screen that is still being
// redrawn after a key (ConfirmStep's code 3); settleUsecs is the pause
// between them, in microseconds.
const (
	maxTries    = 6
	settleUsecs = "200000"
)

// The names of the captures an action's steps take, in the poll
// directory.
const (
	lookFresh  = "fresh"
	lookTyped  = "typed"
	lookAfter  = "after"
	lookOpened = "opened"
	lookFilled = "filled"
)

func step(op statedir.Op, args ...string) statedir.Step { return statedir.Step{Op: op, Args: args} }

// nudgeSteps are the steps of the nudge action name: its text pasted
// (unless our text is in the box already, enterOnly), then Enter.
func nudgeSteps(name, text string, enterOnly bool) ([]statedir.Step, map[string][]byte) {
	steps := []statedir.Step{
		step(statedir.OpCapture, lookFresh),
		step(statedir.OpConfirm, string(tick.BeforeTyping), lookFresh, "0"),
	}
	var pastes map[string][]byte
	if !enterOnly {
		paste := name + ".text"
		pastes = map[string][]byte{paste: []byte(text)}
		// Let the agent draw the text before the box is looked at.
		steps = append(steps, step(statedir.OpPaste, paste), step(statedir.OpRest, "1000000"))
	}
	steps = append(steps,
		step(statedir.OpCapture, lookTyped),
		step(statedir.OpConfirm, string(tick.BeforeEnter), lookTyped, "0"),
		step(statedir.OpKeys, "Enter"),
		step(statedir.OpAck, event.NudgeTyped))
	return steps, pastes
}

// answerSteps are the steps of the answer a: a look before the first key;
// each move of the cursor, then a look that finds the cursor one step on
// (stageAt, the last one stageSelected); for words, Tab where it opens the
// field and a look at it open, the words pasted and a look at them in it;
// then Enter (or the dialog's Esc alone) and a look after it; the next
// poll comes at once, as after a wake: the agent is about to go on, or to
// ask again.
func answerSteps(a answerAction) ([]statedir.Step, map[string][]byte) {
	steps := []statedir.Step{
		step(statedir.OpCapture, lookFresh),
		step(statedir.OpConfirm, AnswerBefore, lookFresh, "0"),
	}
	if a.Esc {
		return append(steps, lastKey("Escape")...), nil
	}
	at := a.Start
	for i, k := range a.Moves {
		if k == "Up" || k == "Left" {
			at--
		} else {
			at++
		}
		look := "move" + strconv.Itoa(i+1)
		stage := stageAt(at)
		if i == len(a.Moves)-1 {
			stage = AnswerSelected
		}
		steps = append(steps, step(statedir.OpKeys, k), step(statedir.OpCapture, look), step(statedir.OpConfirm, stage, look, settleUsecs))
	}
	if len(a.Moves) == 0 {
		steps = append(steps, step(statedir.OpConfirm, AnswerSelected, lookFresh, "0"))
	}
	var pastes map[string][]byte
	if a.Field != nil {
		if a.Field.Tab {
			steps = append(steps, step(statedir.OpKeys, "Tab"), step(statedir.OpCapture, lookOpened),
				step(statedir.OpConfirm, AnswerOpened, lookOpened, settleUsecs))
		}
		pastes = map[string][]byte{answerWords: []byte(a.Field.Text)}
		steps = append(steps, step(statedir.OpPaste, answerWords), step(statedir.OpCapture, lookFilled),
			step(statedir.OpConfirm, AnswerFilled, lookFilled, settleUsecs))
	}
	return append(steps, lastKey("Enter")...), pastes
}

// lastKey are an answer's last steps: its key (Enter, or the dialog's Esc
// alone), a look after it, the next poll at once, the outcome.
func lastKey(key string) []statedir.Step {
	return []statedir.Step{
		step(statedir.OpKeys, key),
		step(statedir.OpCapture, lookAfter),
		step(statedir.OpConfirm, AnswerDone, lookAfter, settleUsecs),
		step(statedir.OpWake),
		step(statedir.OpAck, event.AnswerTyped),
	}
}

// answerWords names the paste of an operator's words.
const answerWords = "000.words"

// stageAt is the stage of the look after a move that should find the
// cursor on option pos.
func stageAt(pos int) string { return "at:" + strconv.Itoa(pos) }

// atStage reads stageAt back.
func atStage(stage string) (int, bool) {
	n, ok := strings.CutPrefix(stage, "at:")
	pos, err := strconv.Atoi(n)
	return pos, ok && err == nil && pos > 0
}

// waitSteps and measureSteps are a pause's and a diff measure's.
func waitSteps(d time.Duration) []statedir.Step {
	// Seconds, to the millisecond, never in exponent form.
	return []statedir.Step{step(statedir.OpPace, strconv.FormatFloat(d.Round(time.Millisecond).Seconds(), 'f', -1, 64))}
}

func measureSteps(name string) []statedir.Step {
	return []statedir.Step{step(statedir.OpMeasure, name)}
}

// stepOf reads step n (from 1) of the action file.
func stepOf(action string, n int) (statedir.Step, []statedir.Step, error) {
	steps, err := statedir.ReadSteps(action)
	if err != nil {
		return statedir.Step{}, nil, err
	}
	if n < 1 || n > len(steps) {
		return statedir.Step{}, steps, fmt.Errorf("the action has no step %d", n)
	}
	return steps[n-1], steps, nil
}

// A Look is what a confirm step found, which the loop acts on (the
// command says it as its exit status).
type Look int

const (
	// GoOn: the condition the next key is sent on is written.
	GoOn Look = iota
	// Refused: recorded, the action is over.
	Refused
	// LookAgain: the screen is still being redrawn after a key; a new
	// capture, try Try+1 (Go says when the tries are spent).
	LookAgain
)

// ConfirmStep is the loop's look at step Step of the action file: a
// confirm step, whose stage says what the capture frame must show. It
// returns the line to print and what the look found.
func ConfirmStep(r ConfirmRequest, frame io.Reader) (line string, look Look) {
	d := stateDirectory(r.Dir)
	os.Remove(d.conditionPath())
	if r.Step > 0 {
		s, _, err := stepOf(r.Action, r.Step)
		if err == nil && s.Op != statedir.OpConfirm {
			err = fmt.Errorf("step %d is %s, not a look", r.Step, s.Op)
		}
		if err != nil {
			return d.failed(r.Now, r.Target, r.Action, r.Step, "the action cannot be read: "+err.Error()), Refused
		}
		r.Stage = tick.Stage(s.Args[0])
		r.settle = s.Args[2] != "0"
	}
	c, err := capture.Read(frame, r.Capture)
	if strings.HasSuffix(r.Action, AnswerSuffix) {
		if err != nil {
			line, _ = d.refuseAnswer(r.Now, r.Target, r.Action, r.Step, err.Error())
			return line, Refused
		}
		line, look = confirmAnswer(d, r, c)
	} else {
		line, look = confirmNudge(d, r, c, err)
	}
	if look == GoOn {
		if err := d.writeCondition(c); err != nil {
			// No condition, no key: the step after fails, and says so.
			return "", GoOn
		}
	}
	return line, look
}

func (d stateDirectory) conditionPath() string {
	return filepath.Join(string(d), statedir.PollDir, statedir.Condition)
}

// writeCondition writes the condition the next key or paste is sent on:
// the pane as the capture c saw it; "1" (always) where the capture could
// not say, as a multiplexer that does not fill its formats (then the tick
// has said that who is at the agent is unknown).
func (d stateDirectory) writeCondition(c capture.Capture) error {
	cond, ok := c.KeyCondition()
	if !ok {
		cond = "1"
	}
	if err := os.MkdirAll(filepath.Dir(d.conditionPath()), 0o700); err != nil {
		return err
	}
	return writeAtomic(d.conditionPath(), []byte(cond+"\n"))
}

// keyCancelled is what the loop's why says of a key the multiplexer did
// not send because the pane was not as the last look saw it.
const keyCancelled = "cancelled: the pane changed between the look and the key (a human's key, its cursor, its size or a mode)"

// reachedKeys are the keys and pastes of the steps before step n, which
// the loop sent (it stops at the first that fails), for the line and the
// chat: "Up", "the words (pasted)".
func reachedKeys(steps []statedir.Step, n int) []string {
	var keys []string
	for i, s := range steps {
		if i >= n-1 {
			break
		}
		switch s.Op {
		case statedir.OpKeys:
			keys = append(keys, s.Args[0])
		case statedir.OpPaste:
			keys = append(keys, "(the text, pasted)")
		}
	}
	return keys
}

// FailedStep records what it means that step n of the action failed, why
// as the loop said it (a capture, a key or a paste: the multiplexer's or
// ssh's last word): for a nudge, nothing typed (budget back) until its
// text was pasted, Enter withheld after; for an answer, refused, with the
// keys that reached the terminal. It returns the line to print.
func FailedStep(dir, target, action string, n int, why string, now time.Time) string {
	return stateDirectory(dir).failed(now, target, action, n, why)
}

func (d stateDirectory) failed(now time.Time, target, action string, n int, why string) string {
	s, steps, err := stepOf(action, n)
	cancelled := strings.Contains(why, coord.KeyCancelled)
	if cancelled {
		why = keyCancelled
	}
	if err == nil {
		switch s.Op {
		case statedir.OpCapture:
			why = "the capture failed: " + why
		case statedir.OpKeys:
			if !cancelled {
				why = s.Args[0] + " not sent: " + why
			} else {
				why = s.Args[0] + " " + why
			}
		case statedir.OpPaste:
			why = "the text not typed: " + why
		case statedir.OpAck, statedir.OpConfirm, statedir.OpRest, statedir.OpPace, statedir.OpMeasure:
		}
	}
	if strings.HasSuffix(action, AnswerSuffix) {
		line, _ := d.refuseAnswer(now, target, action, n, why)
		return line
	}
	// Until a paste or a key of the nudge was sent, nothing reached the
	// terminal; a failed send itself is taken as not sent, as the
	// multiplexer said.
	ev := event.NudgeNotTyped
	if len(reachedKeys(steps, n)) > 0 {
		ev = event.EnterWithheld
	}
	line, _ := d.outcome(now, target, action, ev, why)
	return line
}

// FailedCall says, in an ERROR line that the watcher's log keeps too, that
// the loop's call of omega-monitor name failed, why as the loop read it.
func FailedCall(dir, target, name, why string, now time.Time) string {
	line := alert.Redact(tick.Line(target, "ERROR", "omega-monitor "+name+" failed: "+why, now.Format("15:04:05")))
	stateDirectory(dir).sd().AppendLog(now, line)
	return line
}

// Stopped records that the loop is being stopped by the signal by: the
// line in the watcher's log, and ended.json, a stop rather than a death.
func Stopped(dir, target, by string, now time.Time) error {
	d := statedir.Dir(dir)
	logErr := d.AppendLog(now, tick.Line(target, "stopped ("+printableWord(by)+")"))
	endErr := d.WriteRecord(statedir.Ended, statedir.EndedRecord{At: now.UTC().Truncate(time.Second), By: printableWord(by)})
	// The page of a group it gathered alone goes now, not never.
	return errors.Join(logErr, endErr, LeaveGroups(dir, now))
}

// printableWord is a signal's name as the loop passed it, letters and
// digits only.
func printableWord(s string) string {
	return strings.Map(func(r rune) rune {
		if 'A' <= r && r <= 'Z' || 'a' <= r && r <= 'z' || '0' <= r && r <= '9' {
			return r
		}
		return -1
	}, s)
}
