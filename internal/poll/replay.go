package poll

import (
	"flag"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/tools/txtar"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/pollset"
	"github.com/omega-monitor/omega-monitor/ledger"
	"github.com/omega-monitor/omega-monitor/tick"
)

// defaultReplayStart is the simulated time of a recording's first poll.
var defaultReplayStart = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

// Compiled on first use: a pattern at package init costs every subcommand's start.
var pollSection = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(\d{1,6})\.(pane|work|progress|capture-error|work-error|progress-error)$`)
})

// A recordedPoll is one poll of a recording.
type recordedPoll struct {
	number   int
	sections map[string]string
}

// Replay runs a recorded session (txtar: a flags section, then per poll
// NNN.pane and its probes) offline on a simulated clock, a minute apart,
// and writes each poll's MONITOR line and the actions it took.
func Replay(a *txtar.Archive, w io.Writer) error {
	var flagWords []string
	polls := map[int]*recordedPoll{}
	for _, f := range a.Files {
		if f.Name == "flags" {
			words, err := shellWords(string(f.Data))
			if err != nil {
				return fmt.Errorf("flags: %v", err)
			}
			flagWords = words
			continue
		}
		m := pollSection().FindStringSubmatch(f.Name)
		if m == nil {
			return fmt.Errorf("section %q is neither flags nor NNN.pane, NNN.work, NNN.progress or an NNN error", f.Name)
		}
		n, _ := strconv.Atoi(m[1]) // decimal: 008 is eight, not octal
		p := polls[n]
		if p == nil {
			p = &recordedPoll{number: n, sections: map[string]string{}}
			polls[n] = p
		}
		if _, dup := p.sections[m[2]]; dup {
			return fmt.Errorf("section %q appears twice", f.Name)
		}
		p.sections[m[2]] = string(f.Data)
	}
	fs := flag.NewFlagSet("replay flags", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	set := pollset.Default("replay")
	SettingsFlags(fs, &set)
	start := fs.String("start", "", "first poll's time")
	if err := fs.Parse(flagWords); err != nil {
		return fmt.Errorf("flags: %v", err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("flags: unexpected word %q", fs.Arg(0))
	}
	if set.Target == "" {
		set.Target = "replay"
	}
	if err := pollset.Check(set); err != nil {
		return fmt.Errorf("flags: %v", err)
	}
	now := defaultReplayStart
	if *start != "" {
		t, err := time.Parse(time.RFC3339, *start)
		if err != nil {
			return fmt.Errorf("flags: --start %q is not an RFC 3339 time", *start)
		}
		now = t
	}
	order := make([]int, 0, len(polls))
	for n, p := range polls {
		if _, ok := p.sections["pane"]; !ok && p.sections["capture-error"] == "" {
			return fmt.Errorf("poll %03d has no pane", n)
		}
		order = append(order, n)
	}
	sort.Ints(order)
	var state tick.State
	var sent []string // the in-memory echo ledger
	for _, n := range order {
		p := polls[n]
		var r Readings
		work, hasWork := p.sections["work"]
		r.Work = ProbeReading{Given: hasWork, Output: strings.TrimSuffix(work, "\n"), Error: strings.TrimSpace(p.sections["work-error"])}
		progress, hasProgress := p.sections["progress"]
		r.Progress = ProbeReading{Given: hasProgress, Output: strings.TrimSuffix(progress, "\n"), Error: strings.TrimSpace(p.sections["progress-error"])}
		var echo classify.Masker // the in-memory ledger, as the tick loads its file
		if len(sent) > 0 {
			echo = ledger.NewMatcher(sent[max(len(sent)-classify.MaxTailLines, 0):]...)
		}
		captureErr := strings.TrimSpace(p.sections["capture-error"])
		look := looking{cfg: config(set, r), readings: r}
		var screen *classify.Screen
		if captureErr == "" {
			screen = classify.ParseScreen([]byte(p.sections["pane"]))
		}
		var out tick.Outcome
		var in tick.Input
		state, out, in, _ = look.judge(state, now, screen, captureErr, echo, noWitness, tick.Humans{}, false, "")
		// The check before typing, as the loop runs it, on the screen the
		// nudge was decided on: a decision the check would refuse shows
		// here, in the line held for it, and costs what it costs the loop.
		refused, line := "", out.Line
		for _, act := range out.Actions {
			if act.Kind != tick.Nudge {
				continue
			}
			if refused = replayConfirm(act, in.Screen, screen, echo); refused != "" {
				state = state.Refund(act.Resumes)
				if held, ok := out.Held(); ok {
					line = held.Say("nudge not typed: " + refused)
				}
			} else {
				state = state.Typed(tick.Pending{Resumes: act.Resumes})
			}
		}
		fmt.Fprintln(w, line)
		for _, act := range out.Actions {
			switch {
			case act.Kind == tick.Nudge && refused != "":
				fmt.Fprintf(w, "  → nudge not typed: %s\n", refused)
			case act.Kind == tick.Nudge:
				sent = append(sent, act.Text)
				fmt.Fprintf(w, "  → nudge: %s\n", act.Text)
			case act.Kind == tick.Enter:
				fmt.Fprintf(w, "  → enter: %s\n", act.Text)
			case act.Kind == tick.Alert && act.OnTyped && refused != "":
			case act.Kind == tick.Alert:
				fmt.Fprintf(w, "  → alert: %s\n", act.Alert.FirstLine())
			}
		}
		now = now.Add(time.Minute)
	}
	return nil
}

// replayConfirm is the loop's check before typing the nudge a, on the
// screen s it was decided on (judged as the poll read it): why it would
// refuse, or "".
func replayConfirm(a tick.Action, judged classify.Result, s *classify.Screen, echo classify.Masker) string {
	if s == nil {
		return "no screen"
	}
	masked := classify.Classify(s, classify.Options{Ledger: echo})
	raw := classify.Classify(s, classify.Options{})
	why, _ := tick.Confirm(tick.BeforeTyping, tick.NewPending("replay", a, judged, time.Time{}), masked, raw, nil, tick.Humans{})
	return why
}

// shellWords splits a line into words as a POSIX shell would, for the
// quoting a flags line uses: blanks separate words, single quotes keep
// everything, double quotes keep everything but backslash escapes of
// "\$` and backslash, and a backslash outside quotes keeps the next byte.
// Nothing is expanded.
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated single quote")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("unterminated double quote")
			}
			inWord = true
		case c == '\\':
			if i+1 < len(s) {
				i++
				if s[i] != '\n' {
					cur.WriteByte(s[i])
				}
			}
			inWord = true
		case c == '#' && !inWord:
			// A comment runs to the end of the line.
			for i < len(s) && s[i] != '\n' {
				i++
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
