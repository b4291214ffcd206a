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
	"github.com/omega-monitor/omega-monitor/answer"
	"github.com/omega-monitor/omega-monitor/capture"
	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/printable"
	"github.com/omega-monitor/omega-monitor/statedir"
	"github.com/omega-monitor/omega-monitor/statedir/event"
	"github.com/omega-monitor/omega-monitor/tick"
)

// An operator's answer from the chat reaches the agent in four steps, each
// of which can only refuse it (statedir/answers.go draws the exchange):
//
//  1. The poll that relays a question whose dialog package answer can read
//     offers its options (offer): a nonce each, and the alert's buttons.
//  2. A later poll takes the request the relay receiver wrote for a tap
//     (takeRequests) and accepts it only if its offer is live and the
//     dialog on the screen is the one offered, in the pane it was asked
//     in, with the option there; then it hands the loop an answer action.
//  3. The loop judges a fresh capture before it moves the cursor, again
//     before Enter (the cursor must be on the option), and after Enter
//     (the dialog must have moved on): ConfirmAnswer.
//  4. Its ack, or a refusal, is the result the receiver reports.

// AnswerSuffix names the action that types an answer.
const AnswerSuffix = ".answer"

// The stages of an answer the loop asks ConfirmAnswer about.
const (
	AnswerBefore   = "answer"   // before the first key
	AnswerSelected = "selected" // after the moves, before Enter
	AnswerDone     = "answered" // after Enter
)

// An answerAction is what the loop is handed to type an answer: its first
// line the keys (up|down COUNT, and field or tab for words), for the shell;
// for words, a second line with them; last this, for the checks.
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
}

// offer writes the offers of the question relayed on this poll, when its
// dialog can be answered, and returns its alert's buttons: none when it
// cannot. Options that open a text field get no button; with freeText, the
// dialog's one field the watcher can type into gets an offer and a button
// that says to reply, and reply names the option.
func (d stateDirectory) offer(screen classify.Result, pane string, now time.Time, freeText bool) (buttons []alert.Button, reply string, err error) {
	m, ok := answer.Read(screen)
	if !ok {
		return nil, "", nil
	}
	rec := statedir.OffersRecord{Key: m.Key(), Pane: pane, At: now}
	for _, o := range m.Options {
		if o.FreeText {
			continue
		}
		nonce, err := statedir.NewNonce()
		if err != nil {
			return nil, "", err
		}
		label := alert.Scrub(o.Label)
		rec.Offers = append(rec.Offers, statedir.Offer{Nonce: nonce, Pos: o.Pos,
			Label: label, Widens: o.Widens, Expires: now.Add(statedir.OfferLife)})
		buttons = append(buttons, alert.Button{Label: fmt.Sprintf("%d. %s", o.Pos, label), Data: nonce})
	}
	if m.Esc {
		nonce, err := statedir.NewNonce()
		if err != nil {
			return nil, "", err
		}
		label := "Esc: " + alert.Scrub(m.EscAction)
		rec.Offers = append(rec.Offers, statedir.Offer{Nonce: nonce, Label: label, Esc: true, Expires: now.Add(statedir.OfferLife)})
		buttons = append(buttons, alert.Button{Label: label, Data: nonce})
	}
	if freeText {
		o, b, ok, err := fieldOffer(m, now)
		if err != nil {
			return nil, "", err
		}
		if ok {
			rec.Offers = append(rec.Offers, o)
			buttons = append(buttons, b)
			reply = fmt.Sprintf("%d. %s", o.Pos, o.Label)
		}
	}
	if len(buttons) == 0 {
		return nil, "", nil
	}
	if err := d.sd().WriteOffers(rec); err != nil {
		return nil, "", err
	}
	return buttons, reply, nil
}

// takeRequests takes the requests waiting, under the state lock the tick
// holds: at most one is accepted a poll, and handed to the loop as an
// answer action; every other is refused, with its reason as its result,
// and every offer a request named is spent. A request waits, untouched,
// while the screen cannot be read.
func (d stateDirectory) takeRequests(screen classify.Result, pane, captureErr string, now time.Time, freeText bool) (events []tick.Event, problems []string) {
	sd := d.sd()
	reqs, err := sd.Requests()
	if err != nil || len(reqs) == 0 {
		if err != nil {
			problems = append(problems, "answers: "+err.Error())
		}
		return nil, problems
	}
	if captureErr != "" {
		return nil, nil
	}
	offers, err := sd.ReadOffers()
	if err != nil {
		problems = append(problems, "answers: "+err.Error())
	}
	m, live := answer.Read(screen)
	accepted := false
	for _, r := range reqs {
		o, why := acceptable(r, offers, m, live, pane, now)
		var f answer.Field
		if why == "" {
			f, why = acceptText(r, o, m, freeText)
		}
		if why == "" && accepted {
			why = "another answer to this question was taken first"
		}
		if i := offerIndex(offers, r.Nonce); i >= 0 {
			offers.Offers[i].Spent = true
		}
		// Taken once, whatever becomes of it.
		sd.Take(r.Nonce)
		if why == "" && r.Text != "" {
			if err := d.recordText(r.Text); err != nil {
				why = err.Error()
			}
		}
		if why == "" {
			moves, _ := answer.Moves(m, o.Pos)
			if o.Esc {
				moves = []string{"Esc"}
			}
			var field *fieldAction
			if r.Text != "" {
				field = &fieldAction{Tab: f.Tab, Label: f.Label, Prefix: f.Prefix, Notes: f.Notes, Key: m.FieldKey(f), Text: r.Text}
			}
			if err := d.writeAnswer(offers, o, r, moves, field); err != nil {
				why = "not handed to the loop: " + err.Error()
			} else {
				accepted = true
				fields := map[string]any{"option": o.Label, "pos": o.Pos, "keys": answerKeys(moves, field), "from": r.From, "from_id": r.FromID, "nonce": r.Nonce}
				if field != nil {
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
	case o.Widens && !r.Confirmed:
		return o, "this option widens what the agent may do: it takes a second tap to confirm"
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
		return o, strings.TrimPrefix(err.Error(), "answer: ")
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

// writeAnswer hands the loop the answer action: the keys that move the
// cursor, how the field opens and the words for it, if any, and what the
// checks compare.
func (d stateDirectory) writeAnswer(offers statedir.OffersRecord, o statedir.Offer, r statedir.AnswerRequest, moves []string, field *fieldAction) error {
	keys := "none 0"
	switch {
	case o.Esc:
		keys = "esc 1"
	case len(moves) > 0:
		keys = fmt.Sprintf("%s %d", strings.ToLower(moves[0]), len(moves))
	}
	if field != nil {
		// The words were checked: one printable line.
		form := formField
		if field.Tab {
			form = formTab
		}
		keys += " " + form + "\n" + field.Text
	}
	data, err := json.Marshal(answerAction{Nonce: r.Nonce, Key: offers.Key, Pane: offers.Pane, Pos: o.Pos, Label: o.Label, From: r.From, FromID: r.FromID, Field: field, Esc: o.Esc})
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(d.path(statedir.Actions), "000"+AnswerSuffix), []byte(keys+"\n"+string(data)+"\n"))
}

// answerKeys are the keys an answer sends, for the history: the moves,
// Tab where it opens the field, the words (said so), Enter.
func answerKeys(moves []string, field *fieldAction) []string {
	if len(moves) == 1 && moves[0] == "Esc" {
		return moves // Esc is the whole answer: no Enter follows
	}
	keys := append([]string(nil), moves...)
	if field != nil {
		if field.Tab {
			keys = append(keys, "Tab")
		}
		keys = append(keys, "(the words, pasted)")
	}
	return append(keys, "Enter")
}

// readAnswer reads an answer action: its checks are its last line.
func readAnswer(path string) (answerAction, error) {
	var a answerAction
	data, err := os.ReadFile(path)
	if err != nil {
		return a, err
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) < 2 {
		return a, errors.New("an answer action without its checks")
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &a); err != nil || !statedir.IsNonce(a.Nonce) {
		return a, errors.New("an answer action that cannot be read")
	}
	if a.Field != nil && (len(lines) != 3 || lines[1] != a.Field.Text || answer.CheckText(a.Field.Text) != nil) {
		return a, errors.New("an answer action whose words are not one checked line")
	}
	return a, nil
}

// ConfirmAnswer says whether the loop may go on with an answer at stage:
// before its first key, the dialog on a fresh capture must be the one the
// answer was accepted for, in its pane; before Enter, its cursor must be on
// the option chosen as well; after Enter, the dialog must be gone or
// another. Otherwise it records the answer refused, with why, and removes
// the action: nothing more is typed for it.
func ConfirmAnswer(r ConfirmRequest, frame io.Reader) (line string, ok bool) {
	d := stateDirectory(r.Dir)
	a, err := readAnswer(r.Action)
	why := ""
	if err != nil {
		why = err.Error()
	} else if c, err := capture.Read(frame, r.Capture); err != nil {
		why = err.Error()
	} else {
		s := classify.Classify(c.Screen, classify.Options{Local: r.Local})
		m, live := answer.Read(s)
		samePane := a.Pane == "" || c.Pane == "" || c.Pane == a.Pane
		same := live && m.Key() == a.Key && samePane
		w, _ := c.Witness(r.Now)
		// The answer is the operator's own act, so a human at the agent
		// does not hold it; but keys from the agent's keyboard and ours
		// in one dialog at once can pick an option nobody chose (their
		// arrow between our arrows and our Enter): while a human's input
		// is fresh, no key of the answer goes.
		typing := c.Humans.TypingReason()
		switch string(r.Stage) {
		case AnswerBefore:
			switch {
			case !same:
				why = "the question on the screen changed before the answer was typed"
			case !witnessWaits(w, m.Agent):
				why = "the agent's own status says it is " + w.Status + ", not waiting for an answer"
			case typing != "":
				why = typing + ": the dialog may be being answered there"
			}
		case AnswerSelected:
			switch {
			case !witnessWaits(w, m.Agent):
				why = "the agent's own status says it is " + w.Status + ", not waiting for an answer; Enter withheld"
			case !same:
				why = "the question on the screen changed while the cursor moved; Enter withheld"
			case answer.Highlighted(m) != a.Pos:
				why = fmt.Sprintf("the cursor is on option %d, not on %d; Enter withheld", answer.Highlighted(m), a.Pos)
			case typing != "":
				why = typing + ", as the cursor moved; Enter withheld"
			}
		case AnswerOpened, AnswerFilled:
			// Codex's open notes line is no Menu to Read: the screen's
			// agent is the dialog's.
			switch {
			case !witnessWaits(w, s.Agent):
				why = "the agent's own status says it is " + w.Status + ", not waiting for an answer; Enter withheld"
			case !samePane:
				why = "the question is not in the pane it was asked in; Enter withheld"
			default:
				why = confirmField(a, string(r.Stage), s)
			}
		case AnswerDone:
			key := "Enter"
			if a.Esc {
				key = "Esc"
			}
			if same || samePane && stillField(a, s) {
				why = key + " was pressed, but the dialog is still on the screen"
			}
		default:
			why = fmt.Sprintf("no stage %q of an answer", r.Stage)
		}
	}
	if why == "" {
		return "", true
	}
	line, _ = d.answerOutcome(r.Now, r.Target, r.Action, event.AnswerRefused, why)
	return line, false
}

// answerOutcome records what came of an answer action: its result for the
// receiver, an event in the history, the action file removed. It returns a
// MONITOR line, and 1 when the answer was not typed.
func (d stateDirectory) answerOutcome(now time.Time, target, action, ev, why string) (string, int) {
	a, err := readAnswer(action)
	var problems []string
	if err != nil {
		problems = append(problems, err.Error())
	}
	if err := os.Remove(action); err != nil && !errors.Is(err, os.ErrNotExist) {
		problems = append(problems, "action file not removed: "+err.Error())
	}
	outcome, said := statedir.AnswerTyped, "answer typed: "+a.Label
	if a.Field != nil {
		said += fmt.Sprintf(" %q", a.Field.Text)
	}
	if ev != event.AnswerTyped {
		outcome, said = statedir.AnswerRefused, "answer NOT typed: "+why
	}
	if a.Nonce != "" {
		if err := d.sd().WriteResult(statedir.AnswerResult{Nonce: a.Nonce, Outcome: outcome, Why: why, Label: a.Label, At: now}); err != nil {
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
	if err := d.sd().AppendHistory(now, target, redactEvents([]tick.Event{{Name: ev, Fields: fields}})); err != nil {
		problems = append(problems, err.Error())
	}
	line := tick.Line(target, "QUESTION", said, "by "+a.From, now.Format("15:04:05"))
	for _, p := range problems {
		line += " · error: " + printable.String(p)
	}
	if ev == event.AnswerTyped && len(problems) == 0 {
		return alert.Redact(line), 0
	}
	return alert.Redact(line), 1
}

// queueQuestion queues a relayed question with its options as buttons,
// when its dialog can be answered; as any urgent alert otherwise. The
// buttons go under the last part of a message long enough to be split.
func (d stateDirectory) queueQuestion(q alert.Alert, judged classify.Result, o handOverOptions, problems *[]string) {
	buttons, reply, err := d.offer(judged, o.pane, o.now, o.freeText)
	q.Reply, q.ReplyMax = reply, answer.MaxText
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

// witnessWaits says whether the agent's own status, where there is one,
// agrees that it waits for a human: Claude Code's status file says
// "waiting" while a dialog is up; Codex's session log cannot say it (its
// turn is open while it asks), but an ended turn contradicts a dialog.
func witnessWaits(w *tick.Witness, agent string) bool {
	switch {
	case w == nil:
		return true
	case w.Status == "idle":
		return false
	case strings.HasPrefix(agent, "Claude"):
		return w.Status == "waiting"
	}
	return true
}

func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
