package main

import (
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
	"github.com/omega-monitor/omega-monitor/internal/fsutil"
	"github.com/omega-monitor/omega-monitor/ledger"
	"github.com/omega-monitor/omega-monitor/tick"
)

const replayUsage = `usage: omega-monitor replay FILE

Runs the tick logic over a recorded session, offline, with a simulated clock,
and prints each poll's MONITOR line followed by the actions it took:

  MONITOR · agent · STALLED · work=7 · progress=41 · nudged (1/5)
    → nudge: continue with the next step
    → alert: QUESTION · agent · Which format should the history use?

A recorded session is a txtar archive: free comment lines, then sections
that each start with a line "-- NAME --":

  flags          tick flags for the whole run, split as a shell splits words
                 (--target T, --nudge-budget N, --nudge-text TEXT, and
                 --start TIME in RFC 3339 for the first poll's time)
  NNN.pane       poll NNN's capture
  NNN.work       the work probe's raw output (absent: no probe)
  NNN.progress   the progress probe's raw output (absent: no probe)
  NNN.capture-error, NNN.work-error, NNN.progress-error
                 what failed on that poll

Polls run in NNN order, 60 s apart. Nudges are recorded in an echo ledger
kept in memory, as the watcher records them before they are typed.
`

// defaultReplayStart is the simulated time of a recording's first poll.
var defaultReplayStart = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

// maxReplayFile caps a recorded session.
const maxReplayFile = 64 << 20

func runReplay(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("replay", replayUsage, stderr)
	if code, stop := parseFlags(fs, args, stdout, replayUsage); stop {
		return code
	}
	if fs.NArg() != 1 {
		io.WriteString(stderr, replayUsage)
		return 2
	}
	// A recorded session is a few hundred kilobytes; a device or a file
	// far past that is not one.
	data, err := fsutil.ReadCapped(fs.Arg(0), maxReplayFile)
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor replay: %v\n", err)
		return 1
	}
	if err := replay(txtar.Parse(data), stdout); err != nil {
		fmt.Fprintf(stderr, "omega-monitor replay: %s: %v\n", fs.Arg(0), err)
		return 1
	}
	return 0
}

// Compiled on first use: a pattern at package init costs every subcommand's start.
var pollSection = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(\d{1,6})\.(pane|work|progress|capture-error|work-error|progress-error)$`)
})

// A recordedPoll is one poll of a recording.
type recordedPoll struct {
	number   int
	sections map[string]string
}

// replay runs a recording and writes what each poll said and did.
func replay(a *txtar.Archive, w io.Writer) error {
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
	fs := newFlagSet("replay flags", replayUsage, io.Discard)
	tf := addTickFlags(fs)
	start := fs.String("start", "", "first poll's time")
	if err := fs.Parse(flagWords); err != nil {
		return fmt.Errorf("flags: %v", err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("flags: unexpected word %q", fs.Arg(0))
	}
	if *tf.target == "" {
		*tf.target = "replay"
	}
	if err := tf.check(); err != nil {
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
	cfg := tf.config()
	var state tick.State
	var sent []string // the in-memory echo ledger
	for _, n := range order {
		p := polls[n]
		pf := *tf
		work, hasWork := p.sections["work"]
		pf.work = optionalString{strings.TrimSuffix(work, "\n"), hasWork}
		progress, hasProgress := p.sections["progress"]
		pf.progress = optionalString{strings.TrimSuffix(progress, "\n"), hasProgress}
		workErr, progressErr := strings.TrimSpace(p.sections["work-error"]), strings.TrimSpace(p.sections["progress-error"])
		pf.workErr, pf.progressErr = &workErr, &progressErr
		var echo classify.Masker // the in-memory ledger, as the tick loads its file
		if len(sent) > 0 {
			echo = ledger.NewMatcher(sent[max(len(sent)-classify.MaxTailLines, 0):]...)
		}
		captureErr := strings.TrimSpace(p.sections["capture-error"])
		c := cfg
		c.HasProgress = cfg.HasProgress || hasProgress || progressErr != ""
		var screen *classify.Screen
		if captureErr == "" {
			screen = classify.ParseScreen([]byte(p.sections["pane"]))
		}
		var out tick.Outcome
		state, out, _ = judge(state, c, &pf, now, screen, captureErr, echo, nil)
		fmt.Fprintln(w, out.Line)
		for _, act := range out.Actions {
			switch act.Kind {
			case tick.Nudge:
				sent = append(sent, act.Text)
				fmt.Fprintf(w, "  → nudge: %s\n", act.Text)
			case tick.Enter:
				fmt.Fprintf(w, "  → enter: %s\n", act.Text)
			case tick.Alert:
				fmt.Fprintf(w, "  → alert: %s\n", act.Alert.FirstLine())
			}
		}
		now = now.Add(time.Minute)
	}
	return nil
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
