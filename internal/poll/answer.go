package poll

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/alert"
	"github.com/omega-monitor/omega-monitor/answer"
	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/capture"
	"github.com/omega-monitor/omega-monitor/internal/fsutil"
	"github.com/omega-monitor/omega-monitor/internal/pkgerr"
	"github.com/omega-monitor/omega-monitor/internal/printable"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/statedir/event"
	"github.com/omega-monitor/omega-monitor/tick"
)

// An operator's answer from the chat reaches the agent in four steps, each
// of which can only refuse it (statedir/answers.go draws the exchange):
//
//  1. The poll that relays a question whose dialog package answer can read
//     offers its options (offer): a nonce each, and the alert's buttons;
//     only while the pane's foreground process group holds the agent's own
//     process and, where the agent keeps its own status, that status says
//     it waits for a human. Otherwise the message says why it has none.
//  2. A later poll judges the request the relay receiver wrote for a tap
//     (judgeRequests) and takes it as it commits (takeRequests): it is
//     accepted only if its offer is live and the dialog on the screen is
//     the one offered, in the pane it was asked in, with the option there;
//     then the poll hands the loop the answer's steps (answerSteps): a look
//     before each key, one key at a time.
//  3. Each look (confirmAnswer) checks the same dialog, pane and agent's
//     process, the agent's own status, nobody typing at the agent, and
//     where the cursor must be; each key is sent only while the pane is as
//     that look saw it.
//  4. Its ack, or a refusal, is the result the receiver reports. An answer
//     typed ends its question: every offer of it is spent, and the same
//     dialog drawn again is a new question, relayed with new buttons.

// AnswerSuffix names the action that types an answer.
const AnswerSuffix = ".answer"

// The stages of an answer the loop asks ConfirmAnswer about.
const (
	AnswerBefore   = "answer"   // before the first key
	AnswerSelected = "selected" // after the moves, before Enter
	AnswerDone     = "answered" // after Enter
)

// An answerAction is the answer handed to the loop, kept as
// statedir.Answering for the looks at its steps to compare.
type answerAction struct {
	Nonce  string       `json:"nonce"`
	Key    string       `json:"key"`
	Pane   string       `json:"pane,omitempty"`
	Pos    int          `json:"pos"`
	Label  string       `json:"label"`
	From   string       `json:"from,omitempty"`
	FromID int64        `json:"from_id,omitempty"`
	Field  *fieldAction `json:"field,omitempty"`
	// Esc says the answer is the dialog's Esc, with no Enter after it.
	Esc bool `json:"esc,omitempty"`
	// Agent is the agent's process the question was offered for.
	Agent statedir.AgentProcess `json:"agent"`
	// Start is the cursor's option when the answer was accepted; Moves
	// the keys that take it to Pos.
	Start int      `json:"start"`
	Moves []string `json:"moves,omitempty"`
	// Again says the look after Enter still found the same dialog: typed,
	// and asked again (or not taken): its next message says.
	Again bool `json:"again,omitempty"`
}

// offerGate says why a question on the screen may not carry buttons (""
// when it may), and the agent's process they would answer: the pane's
// foreground process group must hold the process of the agent whose
// dialog it is (its program, not the screen's look), the agent's own
// status must say it waits for a human where the agent keeps one, and no
// answer may have stopped half typed since the agent's screen was last
// seen.
func offerGate(screen classify.Result, programs []string, fg tick.Foreground, w *tick.Witness, half *tick.HalfTyped) (tick.Process, string) {
	if half != nil {
		return tick.Process{}, "an answer from the chat stopped half typed at " + half.At.Local().Format("15:04:05") +
			" (" + keysSaid(half.Keys) + " reached the terminal): no buttons until the agent's own screen is back"
	}
	if !fg.Known {
		return tick.Process{}, "the pane's processes cannot be read (" + fg.Unknown + "), and keys go only to the agent's own process"
	}
	p, ok := fg.Agent(programs)
	if !ok {
		return tick.Process{}, fg.NotAgent(screen.Agent, programs)
	}
	if why := agentWaits(w, screen.Agent); why != "" {
		return tick.Process{}, why
	}
	return p, ""
}

// offer writes the offers of the question relayed on this poll, when its
// dialog can be answered and the gate lets it (offerGate), and returns its
// alert's buttons; none, and why, when it cannot. Options that open a text
// field get no button; with freeText, the dialog's one field the watcher
// can type into gets an offer and a button that says to reply, and reply
// names the option.
func (d stateDirectory) offer(screen classify.Result, o handOverOptions) (buttons []alert.Button, reply, none string, err error) {
	now := o.now
	m, err := answer.Inspect(screen)
	if err != nil {
		return nil, "", pkgerr.Why(err), nil
	}
	agent, why := offerGate(screen, classify.Programs(o.local, screen.Agent), o.fg, o.witness, o.half)
	if why != "" {
		return nil, "", why, nil
	}
	rec := statedir.OffersRecord{Key: m.Key(), Pane: o.pane, At: now,
		Agent: &statedir.AgentProcess{PID: agent.PID, Start: agent.Start, Name: agent.Name()}}
	for _, o := range m.Options {
		if o.FreeText {
			continue
		}
		nonce, err := statedir.NewNonce()
		if err != nil {
			return nil, "", "", err
		}
		label := alert.Scrub(o.Label)
		rec.Offers = append(rec.Offers, statedir.Offer{Nonce: nonce, Pos: o.Pos,
			Label: label, Widens: o.Widens, Expires: now.Add(statedir.OfferLife)})
		buttons = append(buttons, alert.Button{Label: fmt.Sprintf("%d. %s", o.Pos, label), Data: nonce})
	}
	if m.Esc {
		nonce, err := statedir.NewNonce()
		if err != nil {
			return nil, "", "", err
		}
		label := "Esc: " + alert.Scrub(m.EscAction)
		rec.Offers = append(rec.Offers, statedir.Offer{Nonce: nonce, Label: label, Esc: true, Expires: now.Add(statedir.OfferLife)})
		buttons = append(buttons, alert.Button{Label: label, Data: nonce})
	}
	if o.freeText {
		fo, b, ok, err := fieldOffer(m, now)
		if err != nil {
			return nil, "", "", err
		}
		if ok {
			rec.Offers = append(rec.Offers, fo)
			buttons = append(buttons, b)
			reply = fmt.Sprintf("%d. %s", fo.Pos, fo.Label)
		}
	}
	if len(buttons) == 0 {
		return nil, "", "no option of the dialog can be chosen from the chat", nil
	}
	if err := d.sd().WriteOffers(rec); err != nil {
		return nil, "", "", err
	}
	return buttons, reply, "", nil
}

// A verdict is what a poll judged of one request of the chat, before
// anything is written: the offer it names, and why it cannot be typed (""
// when it can) and, for words, the field they go in.
type verdict struct {
	r     statedir.AnswerRequest
	o     statedir.Offer
	field answer.Field
	why   string
}

// requests are the chat's requests a poll judged, for commit to take:
// the verdicts, in the order the requests came, and the offers they
// spend, with the dialog on the screen they were judged on.
type requests struct {
	verdicts []verdict
	offers   statedir.OffersRecord
	menu     answer.Menu
}

// judgeRequests judges the requests waiting for the screen just judged,
// reading only: offers is the offers record, read by the caller (readErr
// why it could not be). A request waits, untouched, while the screen cannot
// be read. Every offer a request names is marked spent in the record
// returned, which commit writes (takeRequests).
func (d stateDirectory) judgeRequests(screen classify.Result, pane, captureErr string, offers statedir.OffersRecord, readErr error, now time.Time, freeText bool) (rs requests, problems []string) {
	reqs, err := d.sd().Requests()
	if err != nil || len(reqs) == 0 {
		if err != nil {
			problems = append(problems, "answers: "+err.Error())
		}
		return requests{offers: offers}, problems
	}
	if captureErr != "" {
		return requests{offers: offers}, nil
	}
	if readErr != nil {
		problems = append(problems, "answers: "+readErr.Error())
	}
	m, live := answer.Read(screen)
	rs = requests{menu: m}
	for _, r := range reqs {
		o, why := acceptable(r, offers, m, live, pane, now)
		if why == "" && o.Widens {
			why = d.confirmedWidening(r)
		}
		var f answer.Field
		if why == "" {
			f, why = acceptText(r, o, m, freeText)
		}
		if i := offerIndex(offers, r.Nonce); i >= 0 {
			offers.Offers[i].Spent = true
		}
		rs.verdicts = append(rs.verdicts, verdict{r: r, o: o, field: f, why: why})
	}
	rs.offers = offers
	return rs, problems
}

// takeRequests takes the requests a poll judged, under the state lock the
// tick holds: at most one is accepted a poll, and handed to the loop as an
// answer's steps; every other is refused, with its reason as its result,
// and every offer a request named is spent. Each request is taken once,
// whatever becomes of it: the lock keeps any other poll from judging it
// between judgeRequests and here, and nothing but a poll takes a request.
func (d stateDirectory) takeRequests(rs requests, now time.Time) (events []tick.Event, problems []string) {
	if len(rs.verdicts) == 0 {
		return nil, nil
	}
	sd := d.sd()
	offers, m := rs.offers, rs.menu
	accepted := false
	for _, v := range rs.verdicts {
		r, o, f, why := v.r, v.o, v.field, v.why
		if why == "" && accepted {
			why = "another answer to this question was taken first"
		}
		// Taken once, whatever becomes of it.
		sd.Take(r.Nonce)
		if why == "" && r.Text != "" {
			if err := d.recordText(r.Text); err != nil {
				why = err.Error()
			}
		}
		if why == "" {
			a := answerAction{Nonce: r.Nonce, Key: offers.Key, Pane: offers.Pane, Pos: o.Pos, Label: o.Label,
				From: r.From, FromID: r.FromID, Esc: o.Esc, Agent: *offers.Agent, Start: answer.Highlighted(m)}
			if !o.Esc {
				a.Moves, _ = answer.Moves(m, o.Pos)
			}
			if r.Text != "" {
				a.Field = &fieldAction{Tab: f.Tab, Label: f.Label, Prefix: f.Prefix, Notes: f.Notes, Key: m.FieldKey(f), Text: r.Text}
			}
			if err := d.writeAnswer(a); err != nil {
				why = "not handed to the loop: " + err.Error()
			} else {
				accepted = true
				fields := map[string]any{"option": o.Label, "pos": o.Pos, "keys": answerKeys(a), "from": r.From, "from_id": r.FromID, "nonce": r.Nonce}
				if a.Field != nil {
					fields["text"] = r.Text
				}
				events = append(events, tick.Event{Name: event.AnswerAccepted, Fields: fields})
				continue
			}
		}
		result := statedir.AnswerResult{Nonce: r.Nonce, Outcome: statedir.AnswerRefused, Why: why, Label: o.Label, At: now}
		if err := sd.WriteResult(result); err != nil {
			problems = append(problems, "answers: "+err.Error())
		}
		events = append(events, tick.Event{Name: event.AnswerRefused, Fields: map[string]any{
			"why": why, "option": o.Label, "from": r.From, "from_id": r.FromID, "nonce": r.Nonce}})
	}
	if len(offers.Offers) > 0 {
		if err := sd.WriteOffers(offers); err != nil {
			problems = append(problems, "answers: "+err.Error())
		}
	}
	return events, problems
}

// confirmedWidening says why the request r for an option that widens what
// the agent may do is not confirmed ("" when it is): the request says it
// is the second tap, and the receiver recorded the first, by the same
// person, on the same message, before it. A client can send any button
// data; only the record of a first tap, which the receiver writes when it
// asks for the second, is taken for one.
func (d stateDirectory) confirmedWidening(r statedir.AnswerRequest) string {
	const why = "this option widens what the agent may do: it takes a second tap to confirm"
	if !r.Confirmed {
		return why
	}
	c, err := d.sd().ReadConfirmAsked(r.Nonce)
	switch {
	case err != nil:
		return why + " (no first tap was recorded)"
	case c.FromID != r.FromID:
		return why + " (the first tap was someone else's)"
	case r.MessageID != 0 && c.MessageID != 0 && c.MessageID != r.MessageID:
		return why + " (the first tap was on another message)"
	case r.At.Before(c.At):
		return why + " (the confirmation came before the first tap)"
	}
	return ""
}

// acceptable says why the request r cannot be typed into the dialog m on
// the screen ("" when it can), and the offer it names.
func acceptable(r statedir.AnswerRequest, offers statedir.OffersRecord, m answer.Menu, live bool, pane string, now time.Time) (statedir.Offer, string) {
	i := offerIndex(offers, r.Nonce)
	if i < 0 {
		return statedir.Offer{}, "not a button of the question waiting (it was replaced, or never offered)"
	}
	o := offers.Offers[i]
	switch {
	case o.Spent:
		return o, "this button was already answered"
	case !now.Before(o.Expires):
		return o, fmt.Sprintf("the question was relayed more than %v ago", statedir.OfferLife)
	case offers.MessageID != 0 && r.MessageID != 0 && (r.MessageID != offers.MessageID || r.ChatID != offers.ChatID):
		return o, "the button is not on the message the question was relayed in"
	case offers.Agent == nil:
		return o, "the question was offered for no agent's process"
	case !live:
		return o, "the question is no longer on the screen"
	case m.Key() != offers.Key:
		return o, "the dialog on the screen is not the question relayed"
	case offers.Pane != "" && pane != "" && offers.Pane != pane:
		return o, "the question is not in the pane it was asked in"
	}
	if o.Esc {
		if !m.Esc {
			return o, "the dialog on the screen offers no Esc"
		}
		return o, ""
	}
	if _, err := answer.Moves(m, o.Pos); err != nil {
		return o, pkgerr.Why(err)
	}
	return o, ""
}

func offerIndex(offers statedir.OffersRecord, nonce string) int {
	for i, o := range offers.Offers {
		if o.Nonce == nonce {
			return i
		}
	}
	return -1
}

// writeAnswer hands the loop the answer a: its record, for the looks to
// compare, then its steps (with the words, if any, as their paste).
func (d stateDirectory) writeAnswer(a answerAction) error {
	if err := d.sd().WriteRecord(statedir.Answering, a); err != nil {
		return err
	}
	steps, pastes := answerSteps(a)
	return d.sd().WriteSteps("000"+AnswerSuffix, steps, pastes)
}

// answerKeys are the keys an answer sends, for the history: the moves,
// Tab where it opens the field, the words (said so), Enter.
func answerKeys(a answerAction) []string {
	if a.Esc {
		return []string{"Escape"} // Esc is the whole answer: no Enter follows
	}
	keys := append([]string(nil), a.Moves...)
	if a.Field != nil {
		if a.Field.Tab {
			keys = append(keys, "Tab")
		}
		keys = append(keys, "(the words, pasted)")
	}
	return append(keys, "Enter")
}

// keysSaid names keys for a sentence: "Up, Up and Enter", "no key".
func keysSaid(keys []string) string {
	if len(keys) == 0 {
		return "no key"
	}
	return alert.And(keys)
}

// readAnswer reads the answer handed over, for the action file path.
func (d stateDirectory) readAnswer(path string) (answerAction, error) {
	var a answerAction
	if filepath.Base(path) != "000"+AnswerSuffix {
		return a, errors.New("not an answer's action")
	}
	if err := d.sd().ReadRecord(statedir.Answering, &a); err != nil || !statedir.IsNonce(a.Nonce) {
		return a, errors.New("the answer handed over cannot be read")
	}
	if a.Field != nil && answer.CheckText(a.Field.Text) != nil {
		return a, errors.New("an answer whose words are not one checked line")
	}
	return a, nil
}

// ConfirmAnswer is ConfirmAction for an answer at r.Stage.
func ConfirmAnswer(r ConfirmRequest, frame io.Reader) (line string, ok bool) {
	return ConfirmAction(r, frame)
}

// confirmAnswer judges the capture c at r.Stage of the answer r.Action,
// and returns the look ConfirmStep does. Before the first key, the dialog
// must be the one the answer was accepted for, in its pane, its cursor
// where it was then; after each move, on the option the move leads to;
// before Enter, on the option chosen; at every look before a key, the
// pane's foreground group must still hold the agent's process the question
// was offered for, the agent's own status must say it waits, and nobody
// may be typing at the agent. A screen not yet redrawn after a key (the
// cursor still where it was) is looked at again. After Enter, the dialog
// must be gone or another: the same dialog still there is looked at again,
// then taken as asked again. Otherwise the answer is refused, with why,
// and nothing more is typed.
func confirmAnswer(d stateDirectory, r ConfirmRequest, c capture.Capture) (string, Look) {
	a, err := d.readAnswer(r.Action)
	if err != nil {
		line, _ := d.refuseAnswer(r.Now, r.Target, r.Action, r.Step, err.Error())
		return line, Refused
	}
	s := classify.Classify(c.Screen, classify.Options{Local: r.Local})
	m, live := answer.Read(s)
	samePane := a.Pane == "" || c.Pane == "" || c.Pane == a.Pane
	same := live && m.Key() == a.Key && samePane
	w, _ := witnessFor(c, r.Local, s.Agent, r.Now)
	stage := string(r.Stage)
	// Every look before a key: the agent's own process in the pane's
	// foreground, its own word that it waits, nobody typing at it (their
	// arrow between ours can pick an option nobody chose), no mode.
	before := func() string {
		if a.Field != nil {
			// The words the loop pastes are the words checked.
			if p, err := d.sd().ReadPaste(answerWords); err != nil || string(p) != a.Field.Text {
				return "the words to be typed are not the words checked"
			}
		}
		agent := tick.Process{PID: a.Agent.PID, Start: a.Agent.Start}
		switch {
		case !c.Foreground.Known:
			return "the pane's processes cannot be read (" + c.Foreground.Unknown + ")"
		case !c.Foreground.Holds(agent):
			return "the pane's foreground process is " + c.Foreground.Says() + ", not the agent's " + a.Agent.Name
		case c.PaneState.InMode:
			return "the pane is in a mode (copy mode): a key would go to the mode"
		}
		if why := agentWaits(w, s.Agent); why != "" {
			return why
		}
		if typing := c.Humans.TypingReason(); typing != "" {
			return typing + ": the dialog may be being answered there"
		}
		return ""
	}
	why, settling := "", false
	cursor := answer.Highlighted(m)
	switch pos, at := atStage(stage); {
	case stage == AnswerBefore:
		switch {
		case !same:
			why = "the question on the screen changed before the answer was typed"
		case !a.Esc && cursor != a.Start:
			why = fmt.Sprintf("the cursor moved to option %d since the answer was taken; nothing typed", cursor)
		default:
			why = before()
		}
	case at || stage == AnswerSelected:
		if !at {
			pos = a.Pos
		}
		prev := pos + 1 // where the last move came from
		if len(a.Moves) > 0 && (a.Moves[0] == "Down" || a.Moves[0] == "Right") {
			prev = pos - 1
		}
		switch {
		case !same:
			// A capture can catch the dialog half redrawn after the
			// key: looked at again before it counts as changed.
			why, settling = "the question on the screen changed while the cursor moved", true
		case cursor == prev:
			why, settling = fmt.Sprintf("the cursor is still on option %d after the key, not on %d", cursor, pos), true
		case cursor != pos:
			why = fmt.Sprintf("the cursor is on option %d, not on %d", cursor, pos)
		default:
			why = before()
		}
		if why != "" && at {
			why += "; nothing more typed"
		} else if why != "" {
			why += "; Enter withheld"
		}
	case stage == AnswerOpened || stage == AnswerFilled:
		// Codex's open notes line is no Menu to Read: the screen's
		// agent is the dialog's.
		if why = before(); why == "" && !samePane {
			why = "the question is not in the pane it was asked in"
		}
		if why == "" {
			why = confirmField(a, stage, s)
			settling = why != "" && !strings.Contains(why, "changed")
		}
		if why != "" && !strings.Contains(why, "withheld") && !strings.HasSuffix(why, "nothing typed") {
			why += "; Enter withheld"
		}
	case stage == AnswerDone:
		// The key reached the dialog: the answer is typed, whatever the
		// screen shows now. The same dialog still there is looked at
		// again; still there at the last look, it was asked again (a
		// model that retries the same command), or the key was not
		// taken: either way the question's next message carries it.
		if same || samePane && stillField(a, s) {
			if r.settle && r.Try < maxTries {
				return "", LookAgain
			}
			a.Again = true
			if err := d.sd().WriteRecord(statedir.Answering, a); err != nil {
				line, _ := d.refuseAnswer(r.Now, r.Target, r.Action, r.Step, err.Error())
				return line, Refused
			}
		}
		return "", GoOn
	default:
		why = fmt.Sprintf("no stage %q of an answer", r.Stage)
	}
	if why == "" {
		return "", GoOn
	}
	if settling && r.settle && r.Try < maxTries {
		return "", LookAgain
	}
	line, _ := d.refuseAnswer(r.Now, r.Target, r.Action, r.Step, why)
	return line, Refused
}

// refuseAnswer records the answer of action refused at step n (0: not at
// a step), with the keys of its steps before n, which reached the
// terminal: an answer stopped half typed holds the buttons of the
// questions after it until the agent's own screen is back.
func (d stateDirectory) refuseAnswer(now time.Time, target, action string, n int, why string) (string, int) {
	var reached []string
	if n > 0 {
		if steps, err := statedir.ReadSteps(action); err == nil {
			reached = reachedKeys(steps, n)
		}
	}
	return d.answerDone(now, target, action, event.AnswerRefused, why, reached)
}

// answerOutcome records what the loop's ack says came of an answer.
func (d stateDirectory) answerOutcome(now time.Time, target, action, ev, why string) (string, int) {
	if ev != event.AnswerTyped {
		return d.refuseAnswer(now, target, action, 0, why)
	}
	return d.answerDone(now, target, action, ev, why, nil)
}

// answerDone records what came of an answer action: its result for the
// receiver, an event in the history, the action and its record removed.
// Typed, it ends the question: every offer of it is spent, and the
// question's latch cleared, so that the same dialog drawn again is a new
// question, relayed with buttons of its own; refused after some of its
// keys reached the terminal, the state says so (tick.State.HalfTyped). It
// returns a MONITOR line, also in the watcher's log, and 1 when the answer
// was not typed.
func (d stateDirectory) answerDone(now time.Time, target, action, ev, why string, reached []string) (string, int) {
	a, err := d.readAnswer(action)
	var problems []string
	if err != nil {
		problems = append(problems, err.Error())
	}
	for _, p := range []string{action, d.path(statedir.Answering)} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			problems = append(problems, "action file not removed: "+err.Error())
		}
	}
	typed := ev == event.AnswerTyped
	result := statedir.AnswerResult{Nonce: a.Nonce, Outcome: statedir.AnswerTyped, Label: a.Label, At: now}
	said := "answer typed: " + a.Label
	if a.Field != nil {
		said += fmt.Sprintf(" %q", a.Field.Text)
	}
	if typed && a.Again {
		result.Note = "typed; the same question is on the screen again: if the agent asked it again, the next message carries it"
		said += " (the same question is on the screen again: relayed anew)"
	}
	if !typed {
		result.Outcome, result.Why, result.Keys = statedir.AnswerRefused, why, reached
		said = "answer NOT typed: " + why
		if len(reached) > 0 {
			said += " (" + keysSaid(reached) + " had reached the terminal)"
		}
	}
	if a.Nonce != "" {
		if err := d.sd().WriteResult(result); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if typed || len(reached) > 0 {
		if err := d.endQuestion(now, typed, reached); err != nil {
			problems = append(problems, err.Error())
		}
	}
	fields := map[string]any{"option": a.Label, "pos": a.Pos, "from": a.From, "from_id": a.FromID, "nonce": a.Nonce}
	if a.Field != nil {
		fields["text"] = a.Field.Text
	}
	if why != "" {
		fields["why"] = why
	}
	if len(reached) > 0 {
		fields["keys_reached"] = reached
	}
	if a.Again {
		fields["again"] = true
	}
	if err := d.sd().AppendHistory(now, target, redactEvents([]tick.Event{{Name: ev, Fields: fields}})); err != nil {
		problems = append(problems, err.Error())
	}
	line := tick.Line(target, "QUESTION", said, "by "+a.From, now.Format("15:04:05"))
	for _, p := range problems {
		line += " · error: " + printable.String(p)
	}
	line = alert.Redact(line)
	d.sd().AppendLog(now, line)
	if typed && len(problems) == 0 {
		return line, 0
	}
	return line, 1
}

// endQuestion is what an answer's keys leave, under the state lock: every
// offer of the question is spent; typed, the question is over (its latch
// and its first sighting cleared); stopped after keys reached the
// terminal, the answer is half typed, and no question carries buttons
// until the agent's own screen is back.
func (d stateDirectory) endQuestion(now time.Time, typed bool, reached []string) error {
	lock, err := fsutil.Lock(d.path(statedir.StateLock))
	if err != nil {
		return fmt.Errorf("state lock: %w", err)
	}
	defer lock.Close()
	// Every offer of the question is spent once any key of an answer to
	// it reached the terminal: its message's buttons go with the
	// receiver's report, and none of them answers what is drawn after.
	errs := []error{d.sd().DropOffers()}
	s, usable, err := d.loadState(now, 0, false)
	if err != nil || !usable {
		return errors.Join(append(errs, err)...)
	}
	if typed {
		s.QuestionLatch, s.QuestionSeen = nil, nil
	} else {
		s.HalfTyped = &tick.HalfTyped{At: now, Keys: reached}
	}
	errs = append(errs, d.saveState(s))
	return errors.Join(errs...)
}

// halfTypedOver ends a half-typed answer's hold on buttons once a poll
// sees the agent's own screen back: a screen the agent draws that is not a
// question, with its process in the pane's foreground; it returns a note
// for the line when it does.
func halfTypedOver(next *tick.State, screen classify.Result, captureErr string, fg tick.Foreground, programs []string) string {
	if next.HalfTyped == nil || captureErr != "" || screen.State == classify.Question || screen.Agent == "" {
		return ""
	}
	if _, ok := fg.Agent(programs); !ok {
		return ""
	}
	next.HalfTyped = nil
	return " · the agent's own screen is back: questions carry buttons again"
}

// queueQuestion queues a relayed question with its options as buttons,
// when its dialog can be answered; as any urgent alert otherwise. The
// buttons go under the last part of a message long enough to be split.
func (d stateDirectory) queueQuestion(q alert.Alert, judged classify.Result, o handOverOptions, problems *[]string) {
	buttons, reply, none, err := d.offer(judged, o)
	q.Reply, q.ReplyMax, q.NoButtons = reply, answer.MaxText, none
	parts := q.HTML()
	if err != nil {
		*problems = append(*problems, "answers: no buttons: "+err.Error())
	}
	var markup []byte
	if len(buttons) > 0 {
		if markup, err = alert.ReplyMarkup(buttons); err != nil {
			*problems = append(*problems, "answers: no buttons: "+err.Error())
		}
	}
	sd := d.sd()
	if markup == nil || len(parts) == 0 {
		if err := sd.QueueUrgent(o.now, parts); err != nil {
			*problems = append(*problems, "alert not queued: "+err.Error())
		}
		return
	}
	last := len(parts) - 1
	if err := sd.QueueUrgent(o.now, parts[:last]); err != nil {
		*problems = append(*problems, "alert not queued: "+err.Error())
	}
	if err := sd.QueueQuestion(o.now, parts[last], markup); err != nil {
		*problems = append(*problems, "alert not queued: "+err.Error())
	}
}

// answerNotes says in the MONITOR line what became of the answers taken
// on this poll.
func answerNotes(events []tick.Event) string {
	var b strings.Builder
	for _, e := range events {
		from, _ := e.Fields["from"].(string)
		if from == "" {
			from = "the chat"
		}
		switch e.Name {
		case event.AnswerAccepted:
			fmt.Fprintf(&b, " · answer from %s taken: %q, to be typed", from, e.Fields["option"])
			if text, ok := e.Fields["text"].(string); ok {
				fmt.Fprintf(&b, " with the words %q", text)
			}
		case event.AnswerRefused:
			fmt.Fprintf(&b, " · answer from %s refused: %s", from, e.Fields["why"])
		}
	}
	return b.String()
}

// agentWaits says why the agent's own word does not let an answer's keys
// go ("" when it does). Where the agent keeps its own status, it must be
// there and say it waits for a human: Claude Code's status file must say
// "waiting"; Codex's session log cannot say that it waits (its turn is
// open while it asks), so its turn must be open, not ended. Gemini CLI
// keeps none: its process in the pane's foreground is the whole check.
func agentWaits(w *tick.Witness, agent string) string {
	switch {
	case strings.HasPrefix(agent, "Claude"):
		if w == nil {
			return "Claude Code's own status file for this pane is not found, and it alone says whether it waits for a human"
		}
		if w.Status != "waiting" {
			return "the agent's own status says it is " + w.Status + ", not waiting for an answer"
		}
	case strings.HasPrefix(agent, "Codex"):
		if w == nil {
			return "Codex's session log for this pane is not found, and it alone says whether its turn is open"
		}
		if w.Status == "idle" {
			return "Codex's session log says its turn has ended: the dialog is no question of its own"
		}
	case w != nil && w.Status == "idle":
		return "the agent's own status says it is idle, not waiting for an answer"
	}
	return ""
}

func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
