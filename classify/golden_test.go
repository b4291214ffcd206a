package classify_test

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/ledger"
)

// A goldenCase is one captured pane and what it must classify as.
type goldenCase struct {
	name    string
	pane    []byte
	want    expectation
	ledger  []string
	why     string
	hasWork bool
	work    string
}

// expectation is what a golden case checks.
type expectation struct {
	State string
	Hold  string
}

// readWant reads a NAME.want file: key: value lines.
func readWant(t *testing.T, path string) goldenCase {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var c goldenCase
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			t.Fatalf("%s: line %q is not key: value", path, line)
		}
		value = strings.TrimPrefix(value, " ")
		switch key {
		case "state":
			c.want.State = value
		case "hold":
			c.want.Hold = value
		case "work":
			c.hasWork, c.work = true, value
		case "ledger":
			c.ledger = append(c.ledger, value)
		case "why":
			c.why = value
		default:
			t.Fatalf("%s: unknown key %q", path, key)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if _, ok := classify.ParseState(c.want.State); !ok {
		t.Fatalf("%s: state %q is not one of WORKING QUESTION STALLED BLOCKED", path, c.want.State)
	}
	return c
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
		c := readWant(t, strings.TrimSuffix(p, ".pane")+".want")
		c.name = name
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
			opt := classify.Options{Work: c.work, WorkPresent: c.hasWork}
			if len(c.ledger) > 0 {
				opt.Ledger = ledger.NewMatcher(c.ledger...)
			}
			r := classify.Classify(classify.ParseScreen(c.pane), opt)
			got := expectation{State: r.State.String(), Hold: string(r.Hold)}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s\nwhy this case exists: %s\nthe classifier's explanation:\n%s", c.name, diff, c.why, r.Explain())
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
		if len(c.ledger) > 0 {
			continue // the case brings its own ledger
		}
		opt := classify.Options{Work: c.work, WorkPresent: c.hasWork}
		without := classify.Classify(classify.ParseScreen(c.pane), opt)
		opt.Ledger = m
		with := classify.Classify(classify.ParseScreen(c.pane), opt)
		if with.State != without.State || with.Hold != without.Hold {
			t.Errorf("%s: an unrelated ledger changed the verdict from %v (hold %q) to %v (hold %q)", c.name, without.State, without.Hold, with.State, with.Hold)
		}
	}
}
