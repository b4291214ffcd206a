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
// zone), or, when Relative, a duration In from now.
type Reset struct {
	Hour, Minute int
	Zone         string
	Relative     bool
	In           time.Duration
}

// The reset times a usage-limit line names: "resets 5:40pm
// (Europe/Berlin)", "will reset at 9am (America/Chicago)", "Try again in 4
// hours". The line is already known to be a usage limit's; the time sits
// anywhere in it.
var (
	resetClock = free(`(?i)\breset(?:s)?(?: at)? (\d{1,2})(?::(\d{2}))? ?(am|pm)(?: \(([^)]+)\))?`, "inside a usage-limit line, after its words")
	resetIn    = free(`(?i)\b(?:try again|resets?) in (?:(\d+) hours?)?(?: ?(\d+) minutes?)?`, "inside a usage-limit line, after its words")
)

// ReadReset reads the reset time a usage-limit line names. It reports false
// when it names none it can read.
func ReadReset(line string) (Reset, bool) {
	if m := resetClock.FindStringSubmatch(line); m != nil {
		hour, _ := strconv.Atoi(m[1])
		minute := 0
		if m[2] != "" {
			minute, _ = strconv.Atoi(m[2])
		}
		if hour < 1 || hour > 12 || minute > 59 {
			return Reset{}, false
		}
		hour %= 12
		if strings.EqualFold(m[3], "pm") {
			hour += 12
		}
		return Reset{Hour: hour, Minute: minute, Zone: m[4]}, true
	}
	if m := resetIn.FindStringSubmatch(line); m != nil && (m[1] != "" || m[2] != "") {
		h, _ := strconv.Atoi(m[1])
		mins, _ := strconv.Atoi(m[2])
		if h > 1000 || mins > 100000 {
			return Reset{}, false
		}
		return Reset{Relative: true, In: time.Duration(h)*time.Hour + time.Duration(mins)*time.Minute}, true
	}
	return Reset{}, false
}
