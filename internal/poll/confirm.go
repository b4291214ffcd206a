package poll

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/alert"
	"github.com/omega-monitor/omega-monitor/internal/printable"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/capture"
	"github.com/omega-monitor/omega-monitor/internal/fsutil"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/statedir/event"
	"github.com/omega-monitor/omega-monitor/tick"
)

// AckEvents are the events ack records, and whether each gives the
// nudge's budget back: only a nudge whose text never reached the terminal
// does. Text that was typed is spent, whether or not its Enter was pressed.
var AckEvents = map[string]bool{
	event.NudgeTyped: false, event.NudgeNotTyped: true, event.EnterWithheld: false,
	event.AlertDelivered: false, event.AlertNotDelivered: false, "unknown": false,
	event.AnswerTyped: false, event.AnswerRefused: false,
}

// outcome records what came of an action: an event in the history, the
// budget given back for a nudge that did not reach the agent, the action
// file removed. It returns a MONITOR line for whatever did not go as
// meant, and 1 then.
func (d stateDirectory) outcome(now time.Time, target, action, ev, why string) (string, int) {
	name := filepath.Base(action)
	fields := map[string]any{"action": name}
	if why != "" {
		fields["why"] = why
	}
	var problems []string
	nudge := strings.HasSuffix(name, ".nudge") || strings.HasSuffix(name, ".enter")
	var pending tick.Pending
	if nudge {
		if p, err := d.readPending(); err == nil && p.Action == name {
			fields["text"] = p.Text
			pending = p
		}
		os.Remove(d.path(statedir.Pending))
	}
	var said string
	switch ev {
	case event.NudgeTyped:
		if pending.Line != nil {
			said = pending.Line.Nudge
		}
	case event.NudgeNotTyped:
		said = "nudge not typed: " + why
	case event.EnterWithheld:
		said = "nudge typed, Enter withheld: " + why
	case event.NudgeCollided:
		said = "nudge collided with a human's typing, Enter withheld: " + why + "; the box is theirs"
	case event.AlertNotDelivered:
		said = "alert NOT delivered: " + why
	case "unknown":
		said = "ignored the unknown action file " + name
	}
	text := pending.Text
	state := ""
	if refund := AckEvents[ev]; refund || ev == event.NudgeTyped || ev == event.EnterWithheld || ev == event.NudgeCollided {
		// The same lock as the tick's read-modify-write: a refund must not
		// be lost to a tick saving the state it read before.
		lock, lockErr := fsutil.Lock(d.path(statedir.StateLock))
		if lockErr != nil {
			problems = append(problems, "state lock: "+lockErr.Error())
		} else {
			defer lock.Close()
		}
		// A corrupt state is the tick's to set aside (with the budget
		// spent): a refund is not saved over it.
		s, usable, err := d.loadState(now, 0, false)
		if err != nil {
			problems = append(problems, err.Error())
		}
		if usable && lockErr == nil {
			switch {
			case refund:
				s = s.Refund(pending.Resumes)
			case ev == event.EnterWithheld && strings.HasSuffix(name, ".nudge"):
				// The text reached the terminal and the box did not
				// show it: nothing more is typed until it reads back
				// (tick.State.Unconfirmed).
				s.Unconfirmed = text
				if s.Unconfirmed == "" {
					s.Unconfirmed = tick.DefaultNudgeText
				}
			case ev == event.NudgeTyped:
				s = s.Typed(pending)
			}
			// A collision is spent and leaves nothing unconfirmed: our
			// text shows, in a box that is the human's now.
			if pending.Line != nil {
				// The board shows the line as it is said now.
				s.Board.LastLine = alert.Scrub(pending.Line.Say(printable.String(said)))
			}
			if err := d.saveState(s); err != nil {
				problems = append(problems, err.Error())
			}
		}
		state = s.Last
		fields["budget"] = s.Budget.String()
	}
	if err := os.Remove(action); err != nil && !errors.Is(err, os.ErrNotExist) {
		problems = append(problems, "action file not removed: "+err.Error())
	}
	if err := d.sd().AppendHistory(now, target, redactEvents([]tick.Event{{Name: ev, State: state, Fields: fields}})); err != nil {
		problems = append(problems, err.Error())
	}
	if ev == event.NudgeTyped && len(pending.Notices) > 0 {
		if err := d.sd().QueueAlerts(now, pending.Notices); err != nil {
			problems = append(problems, "alert not queued: "+err.Error())
		}
	}
	if ev == event.NudgeTyped {
		for _, j := range pending.Joins {
			if err := joinGroup(filepath.Dir(string(d)), filepath.Base(string(d)), target, j.Group, j.Alone, now); err != nil {
				problems = append(problems, err.Error()+": told alone")
				if err := d.sd().QueueAlerts(now, j.Alone); err != nil {
					problems = append(problems, "alert not queued: "+err.Error())
				}
			}
		}
	}
	if said == "" && len(problems) == 0 {
		return "", 0
	}
	if said == "" {
		said = "recorded " + ev
	}
	var line string
	code := 1
	if pending.Line != nil {
		// The poll's line, held for this nudge, says now what came of it.
		line = pending.Line.Say(printable.String(said))
		if ev == event.NudgeTyped {
			code = 0
		}
	} else {
		line = tick.Line(target, "ERROR", said, now.Format("15:04:05"))
	}
	for _, p := range problems {
		line += " · error: " + printable.String(p)
	}
	// Every line the loop prints is in the watcher's log too.
	line = alert.Redact(line)
	d.sd().AppendLog(now, line)
	return line, code
}

// writePending keeps the nudge handed over and the screen it was judged
// on, for the checks before typing and before Enter.
func (d stateDirectory) writePending(p tick.Pending) error {
	data, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return d.sd().Write(statedir.Pending, append(data, '\n'))
}

func (d stateDirectory) readPending() (tick.Pending, error) {
	var p tick.Pending
	data, err := d.sd().ReadPending()
	if err != nil {
		return p, err
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return p, fmt.Errorf("pending nudge unreadable: %v", err)
	}
	return p, nil
}

// A ConfirmRequest is the loop's look at a fresh capture, at a confirm
// step of an action: before it types a nudge (tick.BeforeTyping) or
// presses its Enter (tick.BeforeEnter), or at a stage of an answer.
type ConfirmRequest struct {
	Dir, Target, Text string
	Action            string // the action file
	// Step is the confirm step of the action (from 1) the look is for: it
	// names the stage. Without one (0), Stage says it.
	Step  int
	Stage tick.Stage
	// Try counts the looks at this step (from 1): a screen still being
	// redrawn after a key is looked at again, up to maxTries.
	Try     int
	Capture capture.Options
	Local   *classify.Local // the operator's rules, or nil
	Now     time.Time
	// settle says the step lets the loop look again.
	settle bool
}

// ConfirmStages are the stages a check of the action file may be asked
// for: an answer's (AnswerStages), or a nudge's.
func ConfirmStages(action string) []tick.Stage {
	if strings.HasSuffix(action, AnswerSuffix) {
		return AnswerStages
	}
	return []tick.Stage{tick.BeforeTyping, tick.BeforeEnter}
}

// ConfirmAction is ConfirmStep, for a caller that needs only whether the
// loop may go on.
func ConfirmAction(r ConfirmRequest, frame io.Reader) (line string, ok bool) {
	line, look := ConfirmStep(r, frame)
	return line, look == GoOn
}

// confirmNudge judges the capture c (or why it could not be read) for a
// nudge: go on (GoOn), or the line that says why not (Refused), after it recorded
// nudge_not_typed or enter_withheld, gave the nudge's budget back and
// removed the action file.
func confirmNudge(d stateDirectory, r ConfirmRequest, c capture.Capture, readErr error) (line string, look Look) {
	why, collided := "", false
	p, err := d.readPending()
	switch {
	case err != nil:
		why = err.Error()
	case p.Action != filepath.Base(r.Action) || r.Text != "" && p.Text != r.Text:
		why = "the pending nudge is not this action"
	case readErr != nil:
		why = readErr.Error()
	}
	if why == "" {
		echo, _ := LoadLedger(d.path(statedir.Ledger))
		// The operator's rules count here too: a dialog only a local rule
		// recognises must stop the typing. A bad file was reported by the
		// tick; the built-in rules apply.
		opt := classify.Options{Ledger: echo, Local: r.Local}
		masked := classify.Classify(c.Screen, opt)
		raw := masked
		if echo != nil {
			raw = classify.Classify(c.Screen, classify.Options{Local: r.Local})
		}
		w, _ := witnessFor(c, r.Local, masked.Agent, r.Now)
		why, collided = tick.Confirm(r.Stage, p, masked, raw, w, c.Humans)
		if why == "" && c.PaneState.InMode {
			why = "the pane is in a mode (copy mode): a key would go to the mode"
		}
	}
	if why == "" {
		return "", GoOn
	}
	ev := event.NudgeNotTyped
	switch {
	case collided:
		ev = event.NudgeCollided
	case r.Stage == tick.BeforeEnter:
		ev = event.EnterWithheld
	}
	line, _ = d.outcome(r.Now, r.Target, r.Action, ev, why)
	return line, Refused
}

// Ack records what the loop did with an action (one of AckEvents, and why),
// and removes its file. It returns a MONITOR line for whatever did not go
// as meant, or "".
func Ack(dir, target, action, ev, why string, now time.Time) string {
	d := stateDirectory(dir)
	if strings.HasSuffix(action, AnswerSuffix) {
		if ev != event.AnswerTyped {
			ev = event.AnswerRefused
		}
		line, _ := d.answerOutcome(now, target, action, ev, why)
		return line
	}
	line, _ := d.outcome(now, target, action, ev, why)
	return line
}

// An AckRequest is what the loop says of an action, or of itself: an
// action's outcome (Args: EVENT [WHY]), a step of it that failed
// (FailedStep, Args: WHY), a call of the binary that failed (FailedCall,
// Args: WHY), or its stop (Stopped, the signal).
type AckRequest struct {
	Dir, Target, Action string
	FailedStep          int
	FailedCall, Stopped string
	Args                []string
	Now                 time.Time
}

// Check says what is wrong with r's words, for a usage error; nil when
// they make one request.
func (r AckRequest) Check() error {
	switch {
	case r.Dir == "" || r.Target == "":
		return errors.New("--state and --target are needed")
	case r.Stopped != "":
		if r.Action != "" || len(r.Args) != 0 || !strings.HasPrefix(r.Stopped, "SIG") {
			return errors.New("--stopped SIGNAL takes nothing else")
		}
	case r.FailedCall != "":
		if r.Action != "" || len(r.Args) != 1 {
			return errors.New("--failed-call NAME takes WHY, and no --action")
		}
	case r.Action == "":
		return errors.New("--action is needed")
	case r.FailedStep > 0:
		if len(r.Args) != 1 {
			return errors.New("--failed-step N takes WHY")
		}
	case len(r.Args) < 1 || len(r.Args) > 2:
		return errors.New("OUTCOME [WHY] is needed")
	default:
		if _, ok := AckEvents[r.Args[0]]; !ok {
			return fmt.Errorf("unknown event %q", r.Args[0])
		}
	}
	return nil
}

// Do records what r says, and returns the line to print, or "".
func (r AckRequest) Do() (string, error) {
	switch {
	case r.Stopped != "":
		return "", Stopped(r.Dir, r.Target, r.Stopped, r.Now)
	case r.FailedCall != "":
		return FailedCall(r.Dir, r.Target, r.FailedCall, r.Args[0], r.Now), nil
	case r.FailedStep > 0:
		return FailedStep(r.Dir, r.Target, r.Action, r.FailedStep, r.Args[0], r.Now), nil
	}
	why := ""
	if len(r.Args) == 2 {
		why = r.Args[1]
	}
	return Ack(r.Dir, r.Target, r.Action, r.Args[0], why, r.Now), nil
}
