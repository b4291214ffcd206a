package classify

import (
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/omega-monitor/omega-monitor/internal/expect"
	"github.com/omega-monitor/omega-monitor/ledger"
	"github.com/omega-monitor/omega-monitor/probe"
)

// The property tests read the whole golden corpus (golden/panes and
// golden/real) and change what must not matter: prose quoting a marker, and
// the scrollback above the live region. They find the failures nobody wrote
// a case for; each one found becomes a named golden case.

// A corpusPane is a golden pane, parsed, with the options its case gives.
type corpusPane struct {
	name   string
	screen *Screen
	opt    Options
	want   expect.Want
}

func corpus(t *testing.T) []corpusPane {
	t.Helper()
	var out []corpusPane
	for _, dir := range []string{"../golden/panes", "../golden/real"} {
		panes, err := filepath.Glob(filepath.Join(dir, "*.pane"))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range panes {
			w, err := expect.Read(strings.TrimSuffix(p, ".pane") + ".want")
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			opt := Options{Work: WorkReading(probe.Read(w.Work, w.HasWork)), WorkPresent: w.HasWork}
			if len(w.Ledger) > 0 {
				opt.Ledger = ledger.NewMatcher(w.Ledger...)
			}
			out = append(out, corpusPane{filepath.Base(dir) + "/" + strings.TrimSuffix(filepath.Base(p), ".pane"), ParseScreen(data), opt, w})
		}
	}
	if len(out) < 400 {
		t.Fatalf("the corpus holds %d panes; the property tests need all of it", len(out))
	}
	return out
}

// markers returns every marker the rule tables quote, with whether the
// agent draws it as a ⎿ line itself, plus the lines every agent's turn ends
// with and the failure lines the tick reads.
func markers() (all []string, tool map[string]bool) {
	tool = make(map[string]bool)
	seen := make(map[string]bool)
	add := func(m string, isTool bool) {
		if !seen[m] {
			seen[m] = true
			all = append(all, m)
		}
		tool[m] = tool[m] || isTool
	}
	for _, a := range agents() {
		for _, ru := range a.rules {
			for _, m := range ru.quoted {
				add(m, ru.tool)
			}
		}
	}
	for _, m := range []string{"✻ Worked for 58s", "✻ Cooked for 18s", "─ Worked for 1m 28s ─────", "MISSING ROW: 2026-03-27",
		"the suite is RED.", "exit code 1", "Traceback (most recent call last):", "Do you want to proceed?", "❯ 1. Yes", "2. No",
		"Enter to select · ↑/↓ to navigate · Esc to cancel", "Esc to cancel · Tab to amend"} {
		add(m, false)
	}
	return all, tool
}

// quotings are the ways an answer quotes a marker as prose: an indented
// continuation line, a line of a fenced block, a ⎿ tool-output line.
var quotings = []struct {
	name  string
	lines func(m string) []string
	tool  bool // a ⎿ line, which the agent draws for some markers itself
}{
	{"an indented line of the answer", func(m string) []string { return []string{"  " + m} }, false},
	{"a fenced block in the answer", func(m string) []string { return []string{"  ```", "  " + m, "  ```"} }, false},
	{"a ⎿ tool-output line", func(m string) []string { return []string{"  ⎿  " + m} }, true},
}

// insert returns the screen with texts inserted as lines before index at.
func insert(s *Screen, at int, texts []string) *Screen {
	lines := make([]Line, 0, len(s.Lines)+len(texts))
	lines = append(lines, s.Lines[:at]...)
	for _, t := range texts {
		lines = append(lines, Line{Text: t, Loud: t})
	}
	lines = append(lines, s.Lines[at:]...)
	for i := range lines {
		lines[i].N = i + 1
	}
	return &Screen{Lines: lines, Total: len(lines), Attrs: s.Attrs}
}

// boxTop returns the index of the input box's first line, or -1.
func boxTop(s *Screen) int {
	v := look(s.Lines, s.Attrs, nil)
	if v.box == nil {
		return -1
	}
	return v.box[0].N - s.Lines[0].N
}

// liveStart returns the index of the first line any rule may read.
func liveStart(s *Screen) int {
	v := look(s.Lines, s.Attrs, nil)
	first := -1
	for _, region := range [][]Line{v.box, v.above, v.turn, v.frame, v.below, v.dialog} {
		if at := 0; len(region) > 0 {
			at = region[0].N - s.Lines[0].N
			if first < 0 || at < first {
				first = at
			}
		}
	}
	return max(first, 0)
}

// hasRegion says the classifier found a live region on s: an input box, a
// block above it, a turn, a frame, a status or a dialog.
func hasRegion(s *Screen) bool {
	v := look(s.Lines, s.Attrs, nil)
	return len(v.box)+len(v.above)+len(v.turn)+len(v.frame)+len(v.below)+len(v.dialog) > 0
}

type verdictOf struct {
	state State
	hold  Hold
	agent string
}

func verdict3(r Result) verdictOf { return verdictOf{r.State, r.Hold, r.Agent} }

// TestPropertyQuotedMarkersMoveNothing writes every marker of every agent's
// rules into every non-QUESTION pane of the corpus as an answer quotes it, in
// the block directly above the input box and further up: the verdict, the
// hold and the agent must not change.
func TestPropertyQuotedMarkersMoveNothing(t *testing.T) {
	all, tool := markers()
	var mu sync.Mutex
	failures := make(map[string][]string) // by marker and quoting: the panes
	var checked atomic.Int64
	panes := corpus(t)
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(panes); i = int(next.Add(1) - 1) {
				p := panes[i]
				for key := range quotedFailures(p, all, tool, &checked) {
					mu.Lock()
					failures[key] = append(failures[key], p.name)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	report(t, failures)
	t.Logf("%d quotings of %d markers in %d panes", checked.Load(), len(all), len(panes))
	if checked.Load() < 10000 {
		t.Errorf("checked %d quotings; the corpus should give far more", checked.Load())
	}
}

// quotedFailures returns, for one pane, each quoting of a marker that moved
// its verdict.
func quotedFailures(p corpusPane, all []string, tool map[string]bool, checked *atomic.Int64) map[string]bool {
	base := Classify(p.screen, p.opt)
	if base.State == Question {
		return nil
	}
	want := verdict3(base)
	top := boxTop(p.screen)
	var spots []int
	if top >= 0 {
		// Glued to the block directly above the box.
		at := top
		for at > 0 && isBlank(p.screen.Lines[at-1].Text) {
			at--
		}
		spots = append(spots, at)
	}
	// Further up, above everything a rule reads.
	if up := liveStart(p.screen) - 1; up > 0 {
		spots = append(spots, up)
	}
	failed := make(map[string]bool)
	for _, at := range spots {
		for _, q := range quotings {
			for _, m := range all {
				if q.tool && tool[m] {
					continue // the agent draws this very line itself
				}
				checked.Add(1)
				if got := verdict3(Classify(insert(p.screen, at, q.lines(m)), p.opt)); got != want {
					failed[q.name+": "+m] = true
				}
			}
		}
	}
	return failed
}

// TestPropertyScrollbackMovesNothing replaces everything above each pane's
// live region with the scrollback of other panes: the verdict, the hold and
// the agent must not change.
func TestPropertyScrollbackMovesNothing(t *testing.T) {
	panes := corpus(t)
	failures := make(map[string][]string)
	for i, p := range panes {
		want := verdict3(Classify(p.screen, p.opt))
		if !hasRegion(p.screen) {
			// A pane with no live region (blank, or nothing read) has no
			// scrollback above one to swap: all of it is the screen.
			continue
		}
		live := p.screen.Lines[liveStart(p.screen):]
		for _, step := range []int{1, 7, 31, 101} {
			other := panes[(i+step)%len(panes)]
			if other.screen.Attrs != p.screen.Attrs {
				// A capture with escape sequences reads faint text
				// apart; its halves do not mix with a plain one.
				other = panes[(i+step+1)%len(panes)]
				if other.screen.Attrs != p.screen.Attrs {
					continue
				}
			}
			scroll := other.screen.Lines[:liveStart(other.screen)]
			lines := append(append([]Line{}, scroll...), live...)
			for k := range lines {
				lines[k].N = k + 1
			}
			s := &Screen{Lines: lines, Total: len(lines), Attrs: p.screen.Attrs || other.screen.Attrs}
			if got := verdict3(Classify(s, p.opt)); got != want {
				key := "scrollback of " + other.name
				failures[key] = append(failures[key], p.name)
			}
		}
	}
	report(t, failures)
}

func report(t *testing.T, failures map[string][]string) {
	t.Helper()
	keys := make([]string, 0, len(failures))
	for k := range failures {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		panes := failures[k]
		shown := panes[:min(len(panes), 5)]
		t.Errorf("%s moved the verdict of %d panes: %s", k, len(panes), strings.Join(shown, ", "))
	}
}
