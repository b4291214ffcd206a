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
	// PastReset is the usage-limit line (its LineKey) the nudge was
	// decided past, its reset gone by: the line stays on the screen after
	// the reset, and the check before typing reads it as the decision did,
	// not as a hold.
	PastReset string `json:"past_reset,omitempty"`
	// Resumes is the usage-limit line this nudge resumes past
	// (Action.Resumes).
	Resumes string `json:"resumes,omitempty"`
	// Line is the poll's line, held until the nudge is typed or refused
	// (Outcome.Held); Notices are the alerts that go once it is typed
	// (Action.OnTyped), as the outbox takes them.
	Line    *HeldLine `json:"line,omitempty"`
	Notices []string  `json:"notices,omitempty"`
	// Joins are the groups the notices of a cause shared with other
	// panes join once it is typed (Action.Group), instead of Notices.
	Joins []Join `json:"joins,omitempty"`
}

// A Join is a notice that goes to the page of its cause (Group), or alone,
// as the outbox takes it, when it cannot.
type Join struct {
	Group Grouping `json:"group"`
	Alone []string `json:"alone"`
}

// A HeldLine is a poll's line that says a nudge, split around that part.
type HeldLine struct {
	Before string `json:"before"`
	Nudge  string `json:"nudge"`
	After  string `json:"after,omitempty"`
}

// Say is the held line with its nudge part said as part: the part as the
// poll said it once the nudge is typed, what became of it otherwise.
func (h HeldLine) Say(part string) string { return h.Before + lineSep + part + h.After }

// NewPending records the nudge a poll decided, over the screen it judged.
func NewPending(action string, a Action, judged classify.Result, now time.Time) Pending {
	p := Pending{Action: action, Text: a.Text, Enter: a.Kind == Enter, Live: liveText(judged.Live), At: now, Resumes: a.Resumes}
	if judged.Hold == classify.HoldUsageLimit {
		// A nudge decided over a usage limit's line is one past its reset.
		p.PastReset = LineKey(judged.HoldLine.Text)
	}
	return p
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
// status, if any; h what the multiplexer says of the humans at the pane. It
// returns "" when the shell may go on, or why not; collided says our typing
// met a human's (the box holds their text and ours).
//
// Before typing, no human's input may have reached the agent within
// KeyboardQuiet, and the screen must still read STALLED, with nothing that
// holds a nudge, the same live region as the judged one, and an empty input
// box (or, for an enter-only nudge, one holding exactly our text). Before
// Enter, no dialog may be live, the box must hold exactly our text
// (anything else there is a human's, and Enter would send it), and no
// human's input may have come since: one that did may still be arriving.
func Confirm(stage Stage, p Pending, masked, raw classify.Result, w *Witness, h Humans) (why string, collided bool) {
	if masked.State == classify.Question || raw.State == classify.Question {
		return "a dialog is live (" + masked.Rule + ")", false
	}
	if w != nil && w.Status != "idle" {
		return "the agent's own status says " + w.Says(), false
	}
	box := ""
	if raw.Hold == classify.HoldDraft {
		box = raw.Draft
	}
	if stage == BeforeEnter {
		switch {
		case !p.Enter && Collides(box, p.Text, h):
			return "the input box holds " + quoteShort(box) + ", our text and a human's", true
		case !sameText(box, p.Text) && box == "":
			return "the input box does not show our text", false
		case !sameText(box, p.Text):
			return "the input box holds " + quoteShort(box) + ", not exactly our text", false
		case h.Typing():
			return h.TypingReason() + ", as our text was typed", false
		}
		return "", false
	}
	switch {
	case h.Typing():
		return h.TypingReason(), false
	case masked.State != classify.Stalled:
		return "the screen now reads " + masked.State.String(), false
	case masked.Hold != classify.HoldNone && !(p.Enter && masked.Hold == classify.HoldDraft) && !p.pastReset(masked):
		return masked.Hold.Reason(), false
	case !slices.Equal(liveText(masked.Live), p.Live):
		return "the screen changed since it was judged", false
	case p.Enter && !sameText(box, p.Text):
		return "the input box no longer holds exactly our text", false
	case !p.Enter && box != "":
		return "the input box holds " + quoteShort(box), false
	}
	return "", false
}

// pastReset says the screen's hold is the usage limit the nudge was
// decided past: the same line, its reset gone by.
func (p Pending) pastReset(s classify.Result) bool {
	return s.Hold == classify.HoldUsageLimit && p.PastReset != "" && LineKey(s.HoldLine.Text) == p.PastReset
}

// Collides reports whether a box read after our typing of text (into a box
// that was empty) shows that a human typed too: it holds our text and
// more, or anything but exactly our text while a human's input came within
// KeyboardQuiet (a box that folds a paste away, "[Pasted text #1]", shows
// neither text).
func Collides(box, text string, h Humans) bool {
	if box == "" || sameText(box, text) {
		return false
	}
	return squash(text) != "" && strings.Contains(squash(box), squash(text)) || h.Typing()
}

// OwnText reports whether the input box holds exactly text: the same words,
// however the box wrapped them.
func OwnText(box, text string) bool { return sameText(box, text) }

func sameText(a, b string) bool {
	return a != "" && squash(a) == squash(b)
}

// squash is text without its spaces and line breaks, which a box adds and
// drops as it wraps.
func squash(s string) string { return strings.Join(strings.Fields(s), "") }

func quoteShort(s string) string {
	if r := []rune(s); len(r) > 60 {
		s = string(r[:60]) + "…"
	}
	return `"` + s + `"`
}

// Refund gives back the budget of a nudge that did not reach the agent: the
// budget counts nudges that did. A nudge that was to resume past the reset
// of the usage-limit line resumes (its key) did not: the next poll resumes
// again, rather than reading the line as said anew after a resume.
func (s State) Refund(resumes string) State {
	s.Budget.Used = max(s.Budget.Used-1, 0)
	if resumes != "" && s.UsageNudged == resumes {
		s.UsageNudged = ""
	}
	return s
}

// Typed records that the pending nudge p was typed, Enter and all: nothing
// of ours is left unconfirmed, and the usage limit it resumed past has been
// told resumed.
func (s State) Typed(p Pending) State {
	s.Unconfirmed, s.UnconfirmedLatch = "", false
	if p.Resumes != "" {
		s.UsageResumed = p.Resumes
	}
	return s
}
