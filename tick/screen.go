package tick

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/omega-monitor/omega-monitor/alert"
	"github.com/omega-monitor/omega-monitor/classify"

	_ "time/tzdata" // reset times name zones; read them the same everywhere
)

// The failure signal: the exact strings runners print, with their
// punctuation, never bare words ("MISSING" fired on prose about a missing
// redirect; "is RED" on "is REDundant").
var failureSignals = []*regexp.Regexp{
	regexp.MustCompile(`MISSING ROW:`),
	regexp.MustCompile(`\bis RED\.`),
	regexp.MustCompile(`\bexit code [1-9][0-9]*\b`),
	regexp.MustCompile(`\bTraceback \(most recent call last\):`),
}

// Lines dropped before the screen is diffed. Completed task lines re-render
// constantly and drown the in-progress ones, which say what happens now;
// chrome (spinners, rules, tips) changes every poll and says nothing.
var (
	completedTask = regexp.MustCompile(`^\s*(?:⎿\s+)?[✔☒✓☑]\s`)
	chrome        = regexp.MustCompile(`^(?:[·✢✳✶✻✽*●] \S.*…|[·✢✳✶✻✽*●] \pL+ for \d[\dhms ]*(?: · .*)?$|─{3,}|\s*⎿\s+Tip:)`)
)

// maxSeen bounds the lines kept for the next poll's diff.
const maxSeen = 400

// meaningful returns the body's lines that can be a transition, oldest
// first, without repeats.
func meaningful(body []classify.Line) []string {
	var out []string
	have := make(map[string]bool)
	for _, l := range body {
		t := strings.TrimSpace(l.Text)
		if t == "" || completedTask.MatchString(l.Text) || chrome.MatchString(l.Text) || have[t] {
			continue
		}
		have[t] = true
		out = append(out, t)
	}
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
	lines := meaningful(p.in.Screen.Body)
	first := p.next.Polls == 1 && len(p.next.Seen) == 0
	seen := make(map[string]bool, len(p.next.Seen))
	for _, l := range p.next.Seen {
		seen[l] = true
	}
	var fresh []string
	for _, l := range lines {
		if first || !seen[l] {
			fresh = append(fresh, l)
		}
	}
	p.next.Seen = lines
	if p.in.Ledger != nil {
		fresh = dropOurs(fresh, p.in.Ledger)
	}
	if len(fresh) > 0 {
		p.next.Transition = fresh[len(fresh)-1]
	}
	latched := make(map[string]bool, len(p.next.FailureLatch))
	for _, f := range p.next.FailureLatch {
		latched[f] = true
	}
	for _, l := range fresh {
		if latched[l] || !isFailure(l) {
			continue
		}
		latched[l] = true
		p.next.FailureLatch = append(p.next.FailureLatch, l)
		if first {
			continue
		}
		a := alert.Alert{Kind: alert.Failure, Target: p.cfg.Target, State: p.in.Screen.State.String(), Time: p.in.Now, FailLine: l}
		p.actions = append(p.actions, Action{Kind: Alert, Alert: a})
		p.event("failure", p.in.Screen.State.String(), map[string]any{"line": l})
		p.notes = append(p.notes, "failure alerted: "+oneLine(l))
	}
	if n := len(p.next.FailureLatch); n > maxFailureLatch {
		p.next.FailureLatch = p.next.FailureLatch[n-maxFailureLatch:]
	}
}

// A fragmentLedger can also tell whether a short fragment is ours.
type fragmentLedger interface {
	Contains(fragment string) bool
}

// shortFragment is the length below which the ledger's slices cannot see a
// fragment; it matches ledger.SliceLen.
const shortFragment = 12

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

func isFailure(line string) bool {
	for _, re := range failureSignals {
		if re.MatchString(line) {
			return true
		}
	}
	return false
}

var (
	optionStart = regexp.MustCompile(`^ *(?:[❯›●>] *)?\d+\. +\S`)
	footer      = regexp.MustCompile(`(?i)enter to select|esc to cancel|enter to confirm|esc to exit|enter to set as default|ctrl-g to edit|press enter to confirm|use enter to select|waiting for user confirmation`)
)

// questionAlert relays a dialog verbatim: the question, then its options as
// the pane lists them, without the key hints under them.
func questionAlert(target string, now time.Time, dialog []classify.Line) alert.Alert {
	end := len(dialog)
	for end > 0 && (strings.TrimSpace(dialog[end-1].Text) == "" || footer.MatchString(dialog[end-1].Text)) {
		end--
	}
	lines := dialog[:end]
	split := len(lines)
	for i, l := range lines {
		if optionStart.MatchString(l.Text) {
			split = i
			break
		}
	}
	var question strings.Builder
	for _, l := range lines[:split] {
		question.WriteString(l.Text)
		question.WriteByte('\n')
	}
	var options []string
	for _, l := range lines[split:] {
		options = append(options, l.Text)
	}
	return alert.Alert{Kind: alert.Question, Target: target, State: "QUESTION", Time: now,
		Question: strings.TrimRight(question.String(), "\n"), Options: options}
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
	h := sha256.Sum256([]byte(strings.Join(frame, "\n")))
	return key + "+" + hex.EncodeToString(h[:6])
}

var (
	resetClock = regexp.MustCompile(`(?i)\breset(?:s)?(?: at)? (\d{1,2})(?::(\d{2}))? ?(am|pm)(?: \(([^)]+)\))?`)
	resetIn    = regexp.MustCompile(`(?i)\b(?:try again|resets?) in (?:(\d+) hours?)?(?: ?(\d+) minutes?)?`)
)

// ResetTime reads when a usage limit resets from the line that announced it:
// "resets 5:40pm (Europe/Berlin)", "will reset at 9am (America/Chicago)",
// "Try again in 4 hours". A clock time with no zone is read in now's zone.
// It reports false when the line names no time it can read.
func ResetTime(line string, now time.Time) (time.Time, bool) {
	if m := resetClock.FindStringSubmatch(line); m != nil {
		hour, _ := strconv.Atoi(m[1])
		minute := 0
		if m[2] != "" {
			minute, _ = strconv.Atoi(m[2])
		}
		if hour < 1 || hour > 12 || minute > 59 {
			return time.Time{}, false
		}
		hour %= 12
		if strings.EqualFold(m[3], "pm") {
			hour += 12
		}
		loc := now.Location()
		if m[4] != "" {
			l, err := time.LoadLocation(m[4])
			if err != nil {
				return time.Time{}, false
			}
			loc = l
		}
		local := now.In(loc)
		t := time.Date(local.Year(), local.Month(), local.Day(), hour, minute, 0, 0, loc)
		if !t.After(now) {
			t = t.AddDate(0, 0, 1)
		}
		return t, true
	}
	if m := resetIn.FindStringSubmatch(line); m != nil && (m[1] != "" || m[2] != "") {
		h, _ := strconv.Atoi(m[1])
		mins, _ := strconv.Atoi(m[2])
		if h > 1000 || mins > 100000 {
			return time.Time{}, false
		}
		return now.Add(time.Duration(h)*time.Hour + time.Duration(mins)*time.Minute), true
	}
	return time.Time{}, false
}
