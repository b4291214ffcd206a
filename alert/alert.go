// Package alert turns an escalation into the messages the operator reads: it
// renders an [Alert] as Telegram HTML, names it with a stable [Alert.Key] so
// that a watcher pages once per distinct escalation, and masks secrets with
// [Redact] before any pane text leaves the machine.
//
// The package is pure: it has no clock, no network and no files. The caller
// supplies the time; delivery belongs to scripts/omega-alert-send.sh, and
// deciding whether an alert is due (the latches) belongs to the tick.
//
// An alert relays; it never answers. A QUESTION carries the question and its
// options as the pane shows them, in the pane's order, with nothing marked as
// preferred.
package alert

import (
	"encoding/hex"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/omega-monitor/omega-monitor/internal/digest"
)

// Kind is what an alert is about.
type Kind int

// The kinds of alert.
const (
	// Notice is a generic error or notice from the watcher itself.
	Notice Kind = iota
	// Question: a dialog waits for a human answer.
	Question
	// Blocked: the session stopped and the work probe reports no work left.
	Blocked
	// BudgetExhausted: the nudges that the budget allows produced no progress.
	BudgetExhausted
	// Failure: the pane shows a runner's failure line.
	Failure
	// UsageLimit: the agent's usage limit stopped it until a reset.
	UsageLimit
)

var kindNames = [...]string{
	Notice:          "notice",
	Question:        "question",
	Blocked:         "blocked",
	BudgetExhausted: "budget-exhausted",
	Failure:         "failure",
	UsageLimit:      "usage-limit",
}

// String returns the kind's name: "question", "blocked", "budget-exhausted",
// "failure", "usage-limit" or "notice".
func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// ParseKind returns the Kind that String names.
func ParseKind(s string) (Kind, bool) {
	for k, name := range kindNames {
		if s == name {
			return Kind(k), true
		}
	}
	return 0, false
}

// An Alert is one escalation to the operator. Common fields come first; the
// others belong to the kinds their comments name, and the rest are ignored.
// Every field that holds pane text is redacted, cleaned of terminal control
// sequences and escaped when it is rendered.
type Alert struct {
	Kind   Kind
	Target string    // the watched session, as the MONITOR line names it
	State  string    // the classifier's state: QUESTION, STALLED, BLOCKED, WORKING
	Time   time.Time // when the tick saw it; rendered in Time's location

	// Question: the question and its options, verbatim from the pane.
	// Options are relayed in order; a selection cursor (❯, ›, ●, ▸, >)
	// in front of a numbered option is UI state, not content, and is
	// replaced by a space so the message does not suggest the default.
	Question string
	Options  []string
	// Keys is the dialog's line of key hints ("Enter to select · Esc to
	// cancel"): some dialogs offer their choices only there.
	Keys string
	// Reply, when set, names the option whose field a reply to the
	// message is typed into ("3. Type something."), with the most
	// characters it takes: the message says so under the options.
	Reply    string
	ReplyMax int
	// NoButtons, when set, says why a question that answers from the
	// chat are on for carries no buttons ("the pane's foreground process
	// is bash (pid 12), not Claude Code"): the message says so.
	NoButtons string

	// Blocked and BudgetExhausted: the work probe's figure as the MONITOR
	// line prints it ("0", "7", "?"), and the last in-progress transition
	// line. Empty Work renders as "?".
	Work       string
	Transition string

	// BudgetExhausted: the nudge budget that ran out and the progress
	// figure that did not move ("?" when there is no progress probe).
	Budget   int
	Progress string

	// Failure: the failing line, with whatever surrounds it that the
	// caller wants shown.
	FailLine string

	// UsageLimit: the agent's name, the limit's words as the pane shows
	// them, and its reset as the pane gives it ("" when it gives none).
	Agent string
	Limit string
	Reset string

	// Notice: the text of the notice.
	Text string
}

// Key returns a stable identity for the escalation: the kind, the target and
// a digest of the normalised question and options, or failure line, or notice
// text (BudgetExhausted adds the stuck progress figure; Blocked has no text).
// Normalising redacts, drops selection cursors and collapses white space, so
// a re-wrapped pane or a moved cursor keeps the key, and a key holds no
// secret. The tick pages once per distinct key.
func (a Alert) Key() string {
	var text string
	switch a.Kind {
	case Question:
		parts := []string{normalise(a.Question)}
		for _, o := range a.Options {
			parts = append(parts, normalise(uncursor(o)))
		}
		text = strings.Join(parts, "\n")
	case BudgetExhausted:
		text = figure(a.Progress)
	case Failure:
		text = normalise(a.FailLine)
	case UsageLimit:
		text = normalise(a.Limit)
	case Notice:
		text = normalise(a.Text)
	}
	h := digest.New()
	for _, s := range []string{a.Kind.String(), a.Target, text} {
		h.Write([]byte(strconv.Itoa(len(s))))
		h.Write([]byte{':'})
		h.Write([]byte(s))
	}
	return a.Kind.String() + "/" + clean(a.Target) + "/" + hex.EncodeToString(h.Sum(nil)[:8])
}

// normalise is the text Key digests: redacted, cleaned, and with every run of
// white space (a hard wrap included) collapsed to one space.
func normalise(s string) string {
	return strings.Join(strings.Fields(clean(s)), " ")
}

// FirstLine returns the alert's headline as one line of plain text, for logs
// and replay output (`→ alert: FIRST LINE`): the headline, the target and the
// gist, redacted, at most firstLineMax characters.
func (a Alert) FirstLine() string {
	parts := []string{a.headline(), oneLine(a.Target)}
	switch a.Kind {
	case Question:
		parts = append(parts, oneLine(a.Question))
	case Blocked:
		parts = append(parts, "work="+figure(a.Work), firstNonBlank(a.Transition))
	case BudgetExhausted:
		parts = append(parts, a.budgetGist())
	case Failure:
		parts = append(parts, firstNonBlank(a.FailLine))
	case UsageLimit:
		// The limit's line names its reset already, when it gives one.
		parts = append(parts, oneLine(a.Limit))
		if oneLine(a.Reset) == "" {
			parts = append(parts, a.ResetGist())
		}
	case Notice:
		parts = append(parts, firstNonBlank(a.Text))
	}
	var kept []string
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	return cutRunes(strings.Join(kept, " · "), firstLineMax)
}

const firstLineMax = 200

func (a Alert) headline() string {
	switch a.Kind {
	case Question:
		return "QUESTION"
	case Blocked:
		return "BLOCKED"
	case BudgetExhausted:
		if a.Budget == 0 {
			return "STALLED"
		}
		return "NUDGE BUDGET EXHAUSTED"
	case Failure:
		return "FAILURE"
	case UsageLimit:
		return "USAGE LIMIT"
	}
	return "NOTICE"
}

// ResetGist says when a usage limit resets, as the pane gave it.
func (a Alert) ResetGist() string {
	if r := oneLine(a.Reset); r != "" {
		return "resets " + cutRunes(r, 40)
	}
	return "no reset time shown"
}

func (a Alert) budgetGist() string {
	if a.Budget == 0 {
		return "stopped with work left, nudging off (--nudge-budget 0), needs a human"
	}
	return nudges(a.Budget) + " without progress, needs a human"
}

func nudges(n int) string {
	if n == 1 {
		return "1 nudge"
	}
	return strconv.Itoa(n) + " nudges"
}

// figure is a probe figure as the MONITOR line prints it.
func figure(s string) string {
	s = oneLine(s)
	if s == "" {
		return "?"
	}
	return cutRunes(s, 24)
}

// oneLine cleans s and joins its lines with spaces.
func oneLine(s string) string {
	return strings.Join(strings.Fields(clean(s)), " ")
}

// firstNonBlank is the first line of s that has something on it, cleaned.
func firstNonBlank(s string) string {
	for line := range strings.SplitSeq(clean(s), "\n") {
		if t := strings.Join(strings.Fields(line), " "); t != "" {
			return t
		}
	}
	return ""
}

// cutRunes shortens s to at most n runes, ending it with "…" when it cuts.
func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// And joins items for a sentence: "Up", "Up and Down", "Up, Up and Enter";
// "" for none.
func And(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
