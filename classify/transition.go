package classify

import (
	"strconv"
	"strings"
	"time"
)

// What the tick diffs between polls, read here because it is knowledge of
// what agents and runners draw.

// Completed task lines re-render constantly and drown the in-progress ones,
// which say what happens now; chrome (spinners, turn-end lines, rules,
// tips) changes every poll and says nothing.
var (
	completedTask = re(`^\s*(?:⎿\s+)?[✔☒✓☑]\s`)
	chrome        = re(`^(?:(?:` + spinnerGlyphs + `|●) (?:\S.*…|\pL+ for \d[\dhms ]*(?: · .*)?$)|─{3,}|\s*⎿\s+Tip:)`)
)

// Transitions returns the lines of the body that can be a transition, oldest
// first, trimmed, without repeats: completed tasks and chrome dropped.
func (r Result) Transitions() []string {
	var out []string
	have := make(map[string]bool)
	for _, l := range r.Body {
		t := strings.TrimSpace(l.Text)
		if t == "" || completedTask.MatchString(l.Text) || chrome.MatchString(l.Text) || have[t] {
			continue
		}
		have[t] = true
		out = append(out, t)
	}
	return out
}

// The failure signal: the exact strings runners print, with their
// punctuation, never bare words ("MISSING" fired on prose about a missing
// redirect; "is RED" on "is REDundant"). They may sit anywhere in a line: a
// runner prints them inside its own output.
var failureSignals = []*pattern{
	free(`MISSING ROW:`, "a runner's line, anywhere in its output"),
	free(`\bis RED\.`, "a runner's line, anywhere in its output"),
	free(`\bexit code [1-9][0-9]*\b`, "a runner's line, anywhere in its output"),
	free(`\bTraceback \(most recent call last\):`, "a runner's line, anywhere in its output"),
}

// IsFailure reports whether a line is a runner's failure line.
func IsFailure(line string) bool {
	return matchesAny(failureSignals, line)
}

// A Reset is when a usage-limit line says the limit resets: a clock time
// (Hour 0 to 23, Minute, and Zone, an IANA name or empty for the local
// zone), on a date when the line names one (Month 1 to 12 and Day, Year 0
// when not said), or, when Relative, a duration In from now.
type Reset struct {
	Hour, Minute int
	Zone         string
	Month, Day   int
	Year         int
	Relative     bool
	In           time.Duration
}

// The reset times a usage-limit line names, as the agents draw them:
// Claude Code "resets 5:40pm (Europe/Berlin)", past a day "resets Dec 5,
// 9am (UTC)" (a year when not this one: "Jan 2, 2027, 9am"), older
// releases "will reset at 9am (America/Chicago)"; Codex CLI "try again at
// 6:06 AM", past the day "try again at Dec 29th, 2025 10:15 PM", or "Try
// again in 4 hours". The line is already known to be a usage limit's; the
// time sits anywhere in it.
var (
	resetClock = free(`(?i)\b(?:resets?(?: at)?|try again at) (?:(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]* (\d{1,2})(?:st|nd|rd|th)?,?(?: (\d{4}),?)? )?(\d{1,2})(?::(\d{2}))? ?([ap]m)\b(?: \(([^)]+)\))?`, "inside a usage-limit line, after its words")
	resetIn    = free(`(?i)\b(?:try again|resets?) in (?:(\d+) hours?)?(?: ?(\d+) minutes?)?`, "inside a usage-limit line, after its words")
	// Gemini CLI words the API's retry delay in seconds.
	resetAfter = free(`(?i)\bretry after (\d{1,7})s\b`, "inside a usage-limit line, after its words")
)

var months = map[string]int{"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12}

// ReadResetText is the reset a usage-limit line names, in the line's own
// words: "5:40pm (Europe/Berlin)", "Dec 5, 9am (UTC)", "at 6:06 AM", "in 2
// hours". It reports false when the line names none ReadReset reads.
func ReadResetText(line string) (string, bool) {
	if _, ok := ReadReset(line); !ok {
		return "", false
	}
	if m := resetClock.re().FindStringSubmatchIndex(line); m != nil {
		start := m[8] // the hour
		if m[2] >= 0 {
			start = m[2] // the month
		}
		return line[start:m[1]], true
	}
	if m := resetIn.re().FindStringIndex(line); m != nil {
		at := strings.Index(strings.ToLower(line[m[0]:m[1]]), " in ")
		return strings.TrimSpace(line[m[0]+at : m[1]]), true
	}
	m := resetAfter.re().FindStringIndex(line)
	return line[m[0]:m[1]], true
}

// ReadReset reads the reset time a usage-limit line names. It reports false
// when it names none it can read.
func ReadReset(line string) (Reset, bool) {
	if m := resetClock.FindStringSubmatch(line); m != nil {
		hour, _ := strconv.Atoi(m[4])
		minute := 0
		if m[5] != "" {
			minute, _ = strconv.Atoi(m[5])
		}
		if hour < 1 || hour > 12 || minute > 59 {
			return Reset{}, false
		}
		hour %= 12
		if strings.EqualFold(m[6], "pm") {
			hour += 12
		}
		r := Reset{Hour: hour, Minute: minute, Zone: m[7]}
		if m[1] != "" {
			r.Month = months[strings.ToLower(m[1])]
			r.Day, _ = strconv.Atoi(m[2])
			r.Year, _ = strconv.Atoi(m[3])
			if r.Day < 1 || r.Day > 31 {
				return Reset{}, false
			}
		}
		return r, true
	}
	if m := resetIn.FindStringSubmatch(line); m != nil && (m[1] != "" || m[2] != "") {
		h, _ := strconv.Atoi(m[1])
		mins, _ := strconv.Atoi(m[2])
		if h > 1000 || mins > 100000 {
			return Reset{}, false
		}
		return Reset{Relative: true, In: time.Duration(h)*time.Hour + time.Duration(mins)*time.Minute}, true
	}
	if m := resetAfter.FindStringSubmatch(line); m != nil {
		secs, _ := strconv.Atoi(m[1])
		return Reset{Relative: true, In: time.Duration(secs) * time.Second}, true
	}
	return Reset{}, false
}
