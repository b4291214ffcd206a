package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/capture"
	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/fsutil"
	"github.com/omega-monitor/omega-monitor/statedir"
	"github.com/omega-monitor/omega-monitor/statedir/event"
	"github.com/omega-monitor/omega-monitor/tick"
)

const confirmUsage = `usage: omega-monitor confirm --state DIR --target T --nudge-text TEXT
                            --action FILE --stage before|typed [--frame] < capture

The poll loop's check of a fresh capture before it types a nudge (--stage
before) and before it presses Enter (--stage typed). Exits 0 when the loop
may go on. Otherwise it prints why in a MONITOR line, records
nudge_not_typed or enter_withheld in the history, gives the nudge's budget
back, removes the action file, and exits 1.
`

const ackUsage = `usage: omega-monitor ack --state DIR --target T --action FILE EVENT [WHY]

Records what the poll loop did with an action, and removes its file. EVENT
is nudge_typed, nudge_not_typed, enter_withheld, alert_delivered or
alert_not_delivered (or unknown, for a file the loop does not know). A nudge
that did not reach the agent gives its budget back. A failure is said in a
MONITOR line.
`

// outcomeEvents are the events ack records, and whether each gives the
// nudge's budget back.
var outcomeEvents = map[string]bool{
	event.NudgeTyped: false, event.NudgeNotTyped: true, event.EnterWithheld: true,
	event.AlertDelivered: false, event.AlertNotDelivered: false, "unknown": false,
}

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
	d := stateDirectory(*stateDir)
	why := ""
	p, err := d.readPending()
	switch {
	case err != nil:
		why = err.Error()
	case p.Action != filepath.Base(*action) || p.Text != *text:
		why = "the pending nudge is not this action"
	}
	if why == "" {
		c, err := capture.Read(stdin, capture.Options{Framed: *framed, StatusDir: *statusDir, Now: time.Now()})
		if err != nil {
			why = err.Error()
		} else {
			echo, _ := loadLedger(d.path(statedir.Ledger))
			// The operator's rules count here too: a dialog only a
			// local rule recognises must stop the typing. A bad file
			// was reported by the tick; the built-in rules apply.
			local, _ := watcherRules()
			opt := classify.Options{Ledger: echo, Local: local}
			masked := classify.Classify(c.Screen, opt)
			raw := masked
			if echo != nil {
				raw = classify.Classify(c.Screen, classify.Options{Local: local})
			}
			w, _ := c.Witness(now)
			why = tick.Confirm(st, p, masked, raw, w)
		}
	}
	if why == "" {
		return 0
	}
	ev := event.NudgeNotTyped
	if st == tick.BeforeEnter {
		ev = event.EnterWithheld
	}
	return d.outcome(stdout, now, *target, *action, ev, why)
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
	if _, ok := outcomeEvents[fs.Arg(0)]; !ok {
		fmt.Fprintf(stderr, "omega-monitor ack: unknown event %q\n", fs.Arg(0))
		return 2
	}
	now, ok := parseNow(*nowFlag, stderr)
	if !ok {
		return 2
	}
	d := stateDirectory(*stateDir)
	code := d.outcome(stdout, now, *target, *action, fs.Arg(0), fs.Arg(1))
	if code == 1 {
		code = 0 // a failure said is a failure recorded
	}
	return code
}

// outcome records what came of an action: an event in the history, the
// budget given back for a nudge that did not reach the agent, the action
// file removed. It prints a MONITOR line for whatever did not go as meant
// and returns 1 then.
func (d stateDirectory) outcome(stdout io.Writer, now time.Time, target, action, ev, why string) int {
	name := filepath.Base(action)
	fields := map[string]any{"action": name}
	if why != "" {
		fields["why"] = why
	}
	var problems []string
	nudge := strings.HasSuffix(name, ".nudge") || strings.HasSuffix(name, ".enter")
	if nudge {
		if p, err := d.readPending(); err == nil && p.Action == name {
			fields["text"] = p.Text
		}
		os.Remove(d.path(statedir.Pending))
	}
	state := ""
	if refund := outcomeEvents[ev]; refund || ev == event.NudgeTyped {
		// The same lock as the tick's read-modify-write: a refund must not
		// be lost to a tick saving the state it read before.
		lock, lockErr := fsutil.Lock(d.path(statedir.StateLock))
		if lockErr != nil {
			problems = append(problems, "state lock: "+lockErr.Error())
		} else {
			defer lock.Close()
		}
		s, usable, err := d.loadState(now)
		if err != nil {
			problems = append(problems, err.Error())
		}
		if refund && usable && lockErr == nil {
			s = s.Refund()
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
	if err := d.sd().AppendHistory(now, target, []tick.Event{{Name: ev, State: state, Fields: fields}}); err != nil {
		problems = append(problems, err.Error())
	}
	var said string
	switch ev {
	case event.NudgeNotTyped:
		said = "nudge not typed: " + why
	case event.EnterWithheld:
		said = "nudge typed, Enter withheld: " + why
	case event.AlertNotDelivered:
		said = "alert not delivered: " + why
	case "unknown":
		said = "ignored the unknown action file " + name
	}
	if said == "" && len(problems) == 0 {
		return 0
	}
	if said == "" {
		said = "recorded " + ev
	}
	line := "MONITOR · " + target + " · ERROR · " + said + " · " + now.Format("15:04:05")
	for _, p := range problems {
		line += " · error: " + p
	}
	fmt.Fprintln(stdout, line)
	return 1
}

func (d stateDirectory) writePending(p tick.Pending) error {
	data, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return writeAtomic(d.path(statedir.Pending), append(data, '\n'))
}

func (d stateDirectory) readPending() (tick.Pending, error) {
	var p tick.Pending
	data, err := os.ReadFile(d.path(statedir.Pending))
	if err != nil {
		return p, errors.New("no pending nudge: the tick handed over none")
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return p, fmt.Errorf("pending nudge unreadable: %v", err)
	}
	return p, nil
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
