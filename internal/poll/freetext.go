package poll

import (
	"errors"
	"fmt"
	"time"

	"github.com/omega-monitor/omega-monitor/alert"
	"github.com/omega-monitor/omega-monitor/answer"
	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/pkgerr"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/ledger"
	"github.com/omega-monitor/omega-monitor/tick"
)

// An operator's own words, from a reply to a question's message, reach the
// one text field of the dialog the question was asked in (package answer's
// Field) by the way a tap does, and with its checks, and these besides:
//
//   - They are offered only with free_text=on (the tick's --free-text), for
//     a dialog with exactly one field the watcher can read back: a nonce of
//     its own, and a button that only says to reply.
//   - The poll takes them only as one printable line within answer.MaxText
//     (answer.CheckText), for that field's offer, and records them in the
//     echo ledger before the loop is handed them: their echo in the
//     transcript is never read back as the agent's words.
//   - The loop moves the cursor to the option and checks it there (as for
//     a tap), presses Tab where the field opens so and checks the field
//     open and empty (AnswerOpened), types the words through the paste
//     buffer and checks that the field holds exactly them, in the same
//     dialog, before Enter (AnswerFilled); after Enter the dialog must have
//     moved on.

// The stages of typing words into a field, between AnswerSelected and
// AnswerDone.
const (
	AnswerOpened = "opened" // after Tab, before the words
	AnswerFilled = "filled" // after the words, before Enter
)

// AnswerStages are the stages of an answer, in the order the loop asks.
var AnswerStages = []tick.Stage{AnswerBefore, AnswerSelected, AnswerOpened, AnswerFilled, AnswerDone}

// How the loop opens a field: the third word of an answer action's first
// line.
const (
	formField = "field" // the cursor on the option opens it
	formTab   = "tab"   // Tab opens it
)

// A fieldAction is what the checks compare around the words typed: the
// field, the dialog's key without the field's row, and the words.
type fieldAction struct {
	Tab    bool   `json:"tab,omitempty"`
	Label  string `json:"label"`
	Prefix string `json:"prefix,omitempty"`
	// Notes is the placeholder of the dialog's notes line, where the
	// words go (answer.Field's Notes).
	Notes string `json:"notes,omitempty"`
	Key   string `json:"key"`
	Text  string `json:"text"`
}

func (f *fieldAction) field(pos int) answer.Field {
	return answer.Field{Pos: pos, Tab: f.Tab, Label: f.Label, Prefix: f.Prefix, Notes: f.Notes}
}

// fieldOffer is the offer of the menu's field, and its button, which only
// says to reply: false when the menu has no field the watcher can type
// into.
func fieldOffer(m answer.Menu, now time.Time) (statedir.Offer, alert.Button, bool, error) {
	f, err := answer.FieldOf(m)
	if err != nil {
		return statedir.Offer{}, alert.Button{}, false, nil
	}
	nonce, err := statedir.NewNonce()
	if err != nil {
		return statedir.Offer{}, alert.Button{}, false, err
	}
	label := alert.Scrub(f.Label)
	o := statedir.Offer{Nonce: nonce, Pos: f.Pos, Label: label, FreeText: true, Expires: now.Add(statedir.OfferLife)}
	return o, alert.Button{Label: fmt.Sprintf("✍ reply: %d. %s", f.Pos, label), Data: nonce}, true, nil
}

// acceptText says why the words of the request r cannot be typed into the
// field of the menu m for the offer o ("" when they can), and the field.
// It is asked once the request is acceptable as a tap.
func acceptText(r statedir.AnswerRequest, o statedir.Offer, m answer.Menu, freeText bool) (answer.Field, string) {
	switch {
	case o.FreeText && !freeText:
		return answer.Field{}, "free-text answers are off for this watcher (free_text=on in the Telegram config, then restart it)"
	case o.FreeText && r.Text == "":
		return answer.Field{}, "this option takes your words: reply to the question's message with them"
	case !o.FreeText && r.Text != "":
		return answer.Field{}, "this option takes no words: tap its button"
	case !o.FreeText:
		return answer.Field{}, ""
	}
	if err := answer.CheckText(r.Text); err != nil {
		return answer.Field{}, err.Error()
	}
	f, err := answer.FieldOf(m)
	switch {
	case err != nil:
		return f, pkgerr.Why(err)
	case f.Pos != o.Pos:
		return f, "the option that takes words is not the one offered"
	case f.Placeholder(r.Text):
		return f, "the words are the field's own placeholder: typed, they could not be told from an empty field"
	}
	return f, ""
}

// recordText records the words to be typed in the echo ledger, before
// the loop is handed them.
func (d stateDirectory) recordText(text string) error {
	if err := ledger.Record(d.path(statedir.Ledger), text); err != nil {
		return errors.New("the echo ledger could not record the words: " + err.Error())
	}
	return nil
}

// confirmField says why the loop may not go on typing the words of the
// answer a at stage ("" when it may), from the fresh screen s.
func confirmField(a answerAction, stage string, s classify.Result) string {
	if a.Field == nil {
		return fmt.Sprintf("no stage %q of an answer that types no words", stage)
	}
	f := a.Field.field(a.Pos)
	v, err := answer.ReadField(s, f)
	switch {
	case err != nil || v.Key != a.Field.Key:
		return "the question on the screen changed before the words were typed; Enter withheld"
	case !v.Cursor:
		return fmt.Sprintf("the cursor is not on option %d; Enter withheld", a.Pos)
	case stage == AnswerOpened && !v.Open(f):
		return fmt.Sprintf("the field of option %d is not open and empty after Tab; nothing typed", a.Pos)
	case stage == AnswerFilled && !v.Holds(f, a.Field.Text):
		return fmt.Sprintf("the field of option %d does not hold exactly the words typed; Enter withheld (they are in the field)", a.Pos)
	}
	return ""
}

// stillField says the screen s still shows the dialog of the answer a with
// its field: after Enter, it must not.
func stillField(a answerAction, s classify.Result) bool {
	if a.Field == nil {
		return false
	}
	v, err := answer.ReadField(s, a.Field.field(a.Pos))
	return err == nil && v.Key == a.Field.Key
}
