package tick

import (
	"encoding/hex"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/omega-monitor/omega-monitor/internal/statedir/event"

	"github.com/omega-monitor/omega-monitor/alert"
	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/digest"
	"github.com/omega-monitor/omega-monitor/ledger"

	_ "time/tzdata" // reset times name zones; read them the same everywhere
)

// maxSeen bounds the lines kept for the next poll's diff.
const maxSeen = 400

// LineKey is what the state keeps of a screen line, for the next poll's
// diff, the failure latch and a pending nudge's screen: a digest, so that
// no pane text (a key the agent printed) is written to state.json or
// pending.json; the state only ever asks whether it saw a line before.
func LineKey(l string) string {
	sum := digest.Sum256([]byte(l))
	return "#" + hex.EncodeToString(sum[:12])
}

// meaningful returns the screen's lines that can be a transition, as
// classify reads them, the newest maxSeen.
func meaningful(screen classify.Result) []string {
	out := screen.Transitions()
	if len(out) > maxSeen {
		out = out[len(out)-maxSeen:]
	}
	return out
}

// screenChanges diffs the screen against the last poll: the last new line
// is the transition, and new failure text alerts once. On the first poll
// there is nothing to diff against: what is on screen is the baseline, and
// failures already there are latched without an alert.
func (p *poll) screenChanges() {
	lines := meaningful(p.in.Screen)
	first := p.next.Polls == 1 && len(p.next.Seen) == 0
	seen := make(map[string]bool, len(p.next.Seen))
	for _, l := range p.next.Seen {
		seen[l] = true
	}
	var fresh []string
	keys := make([]string, len(lines))
	for i, l := range lines {
		keys[i] = LineKey(l)
		// A state an older version wrote holds the lines themselves.
		if first || !seen[keys[i]] && !seen[l] {
			fresh = append(fresh, l)
		}
	}
	p.next.Seen = keys
	if p.in.Ledger != nil {
		fresh = dropOurs(fresh, p.in.Ledger)
	}
	if len(fresh) > 0 {
		// Kept in the state and shown to the operator and to agents
		// that read the fleet: scrubbed before it is stored.
		p.next.Transition = alert.Scrub(fresh[len(fresh)-1])
	}
	latched := make(map[string]bool, len(p.next.FailureLatch))
	for _, f := range p.next.FailureLatch {
		latched[f] = true
	}
	var failed []string
	for _, l := range fresh {
		key := LineKey(l)
		if latched[key] || latched[l] || !classify.IsFailure(l) {
			continue
		}
		latched[key] = true
		p.next.FailureLatch = append(p.next.FailureLatch, key)
		if !first {
			failed = append(failed, l)
		}
	}
	// A poll's new failures are one alert and one event, however many
	// lines the pane printed: three hundred failing tests are one page.
	if len(failed) > 0 {
		shown := failed[:min(len(failed), maxFailuresShown)]
		text := strings.Join(shown, "\n")
		if more := len(failed) - len(shown); more > 0 {
			text += fmt.Sprintf("\n… and %d more failure line(s)", more)
		}
		fields := map[string]any{"line": failed[0], "lines": len(failed)}
		note := "failure alerted: " + oneLine(failed[0])
		if p.human != "" {
			// Latched all the same: the human at the agent saw it.
			fields["not_paged"] = p.human
			note = "failure not paged (a human is at the agent): " + oneLine(failed[0])
		} else {
			a := alert.Alert{Kind: alert.Failure, Target: p.cfg.Target, State: p.in.Screen.State.String(), Time: p.in.Now, FailLine: text}
			p.actions = append(p.actions, Action{Kind: Alert, Alert: a})
		}
		p.event(event.Failure, p.in.Screen.State.String(), fields)
		if len(failed) > 1 {
			note += fmt.Sprintf(" (and %d more)", len(failed)-1)
		}
		p.notes = append(p.notes, note)
	}
	if n := len(p.next.FailureLatch); n > maxFailureLatch {
		p.next.FailureLatch = p.next.FailureLatch[n-maxFailureLatch:]
	}
}

// maxFailuresShown is how many of a poll's new failure lines its one alert
// quotes.
const maxFailuresShown = 10

// A fragmentLedger can also tell whether a short fragment is ours.
type fragmentLedger interface {
	Contains(fragment string) bool
}

// shortFragment is the length below which the ledger's slices cannot see a
// fragment.
const shortFragment = ledger.SliceLen

// dropOurs masks our own words out of the lines: they are never a
// transition or a failure. The last piece of a wrapped echo can be too
// short for the ledger's slices ("is RED." under a narrow pane); a short
// line right after a masked one is ours when it is part of a recorded text.
func dropOurs(lines []string, m classify.Masker) []string {
	fl, _ := m.(fragmentLedger)
	kept := lines[:0:0]
	afterMasked := false
	for _, l := range lines {
		masked := strings.TrimSpace(m.Mask(l))
		switch {
		case masked == "":
		case afterMasked && fl != nil && utf8.RuneCountInString(masked) < shortFragment && fl.Contains(masked):
			masked = ""
		default:
			kept = append(kept, masked)
		}
		afterMasked = masked != strings.TrimSpace(l)
	}
	return kept
}

// questionAlert relays a dialog verbatim, as classify read it: the
// question, its options as the pane lists them, and its key hints.
func questionAlert(target string, now time.Time, d *classify.DialogText) alert.Alert {
	a := alert.Alert{Kind: alert.Question, Target: target, State: "QUESTION", Time: now}
	if d != nil {
		a.Question, a.Options, a.Keys = d.Question, d.Options, d.Hint
	}
	return a
}

// maxFrame bounds the lines above a dialog that its key takes in.
const maxFrame = 40

// questionKey is the question latch's identity of a question: its content,
// never the time it came. The relay's own key covers the question and the
// options it relays; the frame the dialog is drawn in adds what the relay
// may leave out and what tells two alike questions apart (the diff above an
// edit prompt, the command above "Do you want to proceed?"): the unbroken
// block of lines directly above the dialog, masked by the echo ledger and
// with white space collapsed, so that a redraw or a re-wrap keeps the key.
func questionKey(q alert.Alert, s classify.Result, ledger classify.Masker) string {
	key := q.Key()
	if len(s.Live) == 0 {
		return key
	}
	top := s.Live[0].N
	var frame []string
	for i := len(s.Body) - 1; i >= 0 && len(frame) < maxFrame; i-- {
		l := s.Body[i]
		if l.N >= top {
			continue
		}
		if l.N < top-len(frame)-1 {
			break // a gap: the block above has ended
		}
		text := l.Text
		if ledger != nil {
			text = ledger.Mask(text)
		}
		text = strings.Join(strings.Fields(text), " ")
		if text == "" {
			break
		}
		frame = append(frame, text)
	}
	if len(frame) == 0 {
		return key
	}
	h := digest.Sum256([]byte(strings.Join(frame, "\n")))
	return key + "+" + hex.EncodeToString(h[:6])
}

// PassedResetWindow is how far in the past a usage limit's clock-time
// reset may be, when first read, and still be taken for one that passed.
const PassedResetWindow = 12 * time.Hour

// ResetTime reads when a usage limit resets from the line that announced it
// (classify.ReadReset reads the line): a clock time with no zone is read in
// now's zone, and a clock time already past is tomorrow's. It reports false
// when the line names no time it can read, or a zone this machine does not
// know.
func ResetTime(line string, now time.Time) (time.Time, bool) {
	r, ok := classify.ReadReset(line)
	if !ok {
		return time.Time{}, false
	}
	if r.Relative {
		return now.Add(r.In), true
	}
	loc := now.Location()
	if r.Zone != "" {
		l, err := time.LoadLocation(r.Zone)
		if err != nil {
			return time.Time{}, false
		}
		loc = l
	}
	local := now.In(loc)
	if r.Month != 0 {
		// A date: this year's unless said, and a date well past (the
		// agent names the next reset) is next year's.
		year := r.Year
		if year == 0 {
			year = local.Year()
		}
		t := time.Date(year, time.Month(r.Month), r.Day, r.Hour, r.Minute, 0, 0, loc)
		if r.Year == 0 && now.Sub(t) > 24*time.Hour {
			t = t.AddDate(1, 0, 0)
		}
		return t, true
	}
	t := time.Date(local.Year(), local.Month(), local.Day(), r.Hour, r.Minute, 0, 0, loc)
	// The minute shown is the reset's, rounded down: within it, the reset
	// has not come yet. An agent draws a reset still to come, a clock time
	// alone when it is within the day (a later one gets its date): a time
	// already past when first read is one that passed while the line stood
	// (the watcher started, or looked, after it), unless it is more than
	// PassedResetWindow past: then it is tomorrow's. Read wrong the one
	// way, a nudge meets the limit again and its new line holds; the other
	// way, the agent would wait a day.
	if !t.Add(time.Minute).After(now) && now.Sub(t) > PassedResetWindow {
		t = t.AddDate(0, 0, 1)
	}
	return t, true
}
