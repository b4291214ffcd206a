package tick

import (
	"slices"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/classify"
)

// A Pending is a nudge handed to the shell and not yet done: what it types
// and the screen it was judged on. The shell types it only while a fresh
// capture still shows that screen (Confirm).
type Pending struct {
	Action string    `json:"action"` // the action file's name
	Text   string    `json:"text"`
	Enter  bool      `json:"enter_only,omitempty"` // our text is in the box already: only Enter
	Live   []string  `json:"live"`                 // the judged live region, each line's LineKey
	At     time.Time `json:"at"`
}

// NewPending records the nudge a poll decided, over the screen it judged.
func NewPending(action string, a Action, judged classify.Result, now time.Time) Pending {
	return Pending{Action: action, Text: a.Text, Enter: a.Kind == Enter, Live: liveText(judged.Live), At: now}
}

// liveText is the live region as a pending nudge keeps it: each line's
// LineKey, trailing spaces aside.
func liveText(lines []classify.Line) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = LineKey(strings.TrimRight(l.Text, " "))
	}
	return out
}

// A Stage is a moment a pending nudge is checked at.
type Stage string

const (
	// BeforeTyping: nothing is typed yet.
	BeforeTyping Stage = "before"
	// BeforeEnter: the text is typed; Enter would send it.
	BeforeEnter Stage = "typed"
)

// Confirm checks a fresh capture before the shell types a pending nudge, or
// before it presses Enter. masked is the fresh screen read with the echo
// ledger, as the poll read it; raw is the same screen read without it, for
// the input box and any dialog exactly as drawn. w is the agent's own fresh
// status, if any. It returns "" when the shell may go on, or why not.
//
// Before typing, the screen must still read STALLED, with nothing that holds
// a nudge, the same live region as the judged one, and an empty input box
// (or, for an enter-only nudge, one holding exactly our text). Before Enter,
// no dialog may be live and the box must hold exactly our text: anything
// else there is a human's, and Enter would send it.
func Confirm(stage Stage, p Pending, masked, raw classify.Result, w *Witness) string {
	if masked.State == classify.Question || raw.State == classify.Question {
		return "a dialog is live (" + masked.Rule + ")"
	}
	if w != nil && w.Status != "idle" {
		return "the agent's own status says " + w.says()
	}
	box := ""
	if raw.Hold == classify.HoldDraft {
		box = raw.Draft
	}
	if stage == BeforeEnter {
		if !sameText(box, p.Text) {
			if box == "" {
				return "the input box does not show our text"
			}
			return "the input box holds " + quoteShort(box) + ", not exactly our text"
		}
		return ""
	}
	switch {
	case masked.State != classify.Stalled:
		return "the screen now reads " + masked.State.String()
	case masked.Hold != classify.HoldNone && !(p.Enter && masked.Hold == classify.HoldDraft):
		return masked.Hold.Reason()
	case !slices.Equal(liveText(masked.Live), p.Live):
		return "the screen changed since it was judged"
	case p.Enter && !sameText(box, p.Text):
		return "the input box no longer holds exactly our text"
	case !p.Enter && box != "":
		return "the input box holds " + quoteShort(box)
	}
	return ""
}

// OwnText reports whether the input box holds exactly text: the same words,
// however the box wrapped them.
func OwnText(box, text string) bool { return sameText(box, text) }

func sameText(a, b string) bool {
	return a != "" && strings.Join(strings.Fields(a), "") == strings.Join(strings.Fields(b), "")
}

func quoteShort(s string) string {
	if r := []rune(s); len(r) > 60 {
		s = string(r[:60]) + "…"
	}
	return `"` + s + `"`
}

// Refund gives back the budget of a nudge that did not reach the agent: the
// budget counts nudges that did.
func (s State) Refund() State {
	s.Budget.Used = max(s.Budget.Used-1, 0)
	return s
}
