package classify_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/expect"
	"github.com/omega-monitor/omega-monitor/ledger"
)

// A goldenCase is one captured pane and what it must classify as.
type goldenCase struct {
	name string
	pane []byte
	expect.Want
}

// expectation is what a golden case checks.
type expectation struct {
	State string
	Hold  string
}

func goldenCases(t *testing.T) []goldenCase {
	t.Helper()
	panes, err := filepath.Glob("../golden/panes/*.pane")
	if err != nil {
		t.Fatal(err)
	}
	var cases []goldenCase
	for _, p := range panes {
		name := strings.TrimSuffix(filepath.Base(p), ".pane")
		w, err := expect.Read(strings.TrimSuffix(p, ".pane") + ".want")
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := classify.ParseState(w.State); !ok {
			t.Fatalf("%s: state %q is not one of WORKING QUESTION STALLED BLOCKED", p, w.State)
		}
		c := goldenCase{name: name, Want: w}
		if c.pane, err = os.ReadFile(p); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, c)
	}
	return cases
}

// TestGolden classifies every pane of the corpus and names each failure with
// the classifier's own explanation.
func TestGolden(t *testing.T) {
	cases := goldenCases(t)
	if len(cases) < 80 {
		t.Errorf("the golden corpus holds %d panes; it must hold at least 80", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opt := classify.Options{Work: c.Work, WorkPresent: c.HasWork}
			if len(c.Ledger) > 0 {
				opt.Ledger = ledger.NewMatcher(c.Ledger...)
			}
			// A case added with an operator's rules (golden add
			// --rules) carries them beside it.
			rules := "../golden/panes/" + c.name + ".rules.json"
			if data, err := os.ReadFile(rules); err == nil {
				if opt.Local, err = classify.ParseLocal(data, rules); err != nil {
					t.Fatal(err)
				}
			}
			r := classify.Classify(classify.ParseScreen(c.pane), opt)
			got := expectation{State: r.State.String(), Hold: string(r.Hold)}
			if diff := cmp.Diff(expectation{c.State, c.Hold}, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s\nwhy this case exists: %s\nthe classifier's explanation:\n%s", c.name, diff, c.Why, r.Explain())
			}
		})
	}
}

// TestGoldenUnrelatedLedgerMasksNothing checks that the echo ledger never
// over-excludes: with a ledger of ordinary nudges, no line of any golden
// pane loses a character, and every pane classifies as it does without one.
func TestGoldenUnrelatedLedgerMasksNothing(t *testing.T) {
	m := ledger.NewMatcher(
		"continue with the next step",
		"continue with the next step; if you are waiting on something, say what",
		"keep going until the queue is empty, then say so",
		"please carry on with the plan and report when the tests pass",
		"resume the build from where it stopped",
		"what is blocking you? answer in one line, then continue",
	)
	for _, c := range goldenCases(t) {
		for i, line := range strings.Split(string(c.pane), "\n") {
			if got := m.Mask(line); got != line {
				t.Errorf("%s line %d lost text to an unrelated ledger:\n  was: %q\n  now: %q", c.name, i+1, line, got)
			}
		}
		if len(c.Ledger) > 0 {
			continue // the case brings its own ledger
		}
		opt := classify.Options{Work: c.Work, WorkPresent: c.HasWork}
		without := classify.Classify(classify.ParseScreen(c.pane), opt)
		opt.Ledger = m
		with := classify.Classify(classify.ParseScreen(c.pane), opt)
		if with.State != without.State || with.Hold != without.Hold {
			t.Errorf("%s: an unrelated ledger changed the verdict from %v (hold %q) to %v (hold %q)", c.name, without.State, without.Hold, with.State, with.Hold)
		}
	}
}

// TestGoldenAgentAttribution checks that a pane named for an agent is read
// with that agent's table wherever an agent is recognised: the explanation
// names it, and the wrong table would read the wrong markers.
func TestGoldenAgentAttribution(t *testing.T) {
	prefixes := map[string]string{"claude-": "Claude Code", "codex-": "Codex CLI", "gemini-": "Gemini CLI"}
	for _, c := range goldenCases(t) {
		for prefix, agent := range prefixes {
			if !strings.HasPrefix(c.name, prefix) {
				continue
			}
			r := classify.Classify(classify.ParseScreen(c.pane), classify.Options{Work: c.Work, WorkPresent: c.HasWork})
			if r.Agent != "" && r.Agent != agent {
				t.Errorf("%s: read as %s, want %s\n%s", c.name, r.Agent, agent, r.Explain())
			}
		}
	}
}
