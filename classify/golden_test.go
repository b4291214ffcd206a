package classify_test

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/expect"
	"github.com/omega-monitor/omega-monitor/ledger"
	"github.com/omega-monitor/omega-monitor/probe"
)

var update = flag.Bool("update", false, "rewrite the agent, rule, hold-rule, question and option lines of every golden .want from the classifier (then READ the diff)")

// A goldenCase is one captured pane and what it must classify as.
type goldenCase struct {
	name string
	path string // of the .want
	pane []byte
	expect.Want
}

// expectation is what a golden case checks: the answer and the reason.
type expectation struct {
	State     string
	Hold      string
	Agent     string
	Rule      string
	HoldRule  string
	Unsettled string
}

// corpus holds the hand-built and adversarial panes; real holds captures of
// the real Claude Code (named real/NAME here).
var corpusDirs = map[string]string{"": "../golden/panes", "real/": "../golden/real"}

func goldenCases(t testing.TB) []goldenCase {
	t.Helper()
	var cases []goldenCase
	for prefix, dir := range corpusDirs {
		panes, err := filepath.Glob(filepath.Join(dir, "*.pane"))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range panes {
			name := prefix + strings.TrimSuffix(filepath.Base(p), ".pane")
			wantPath := strings.TrimSuffix(p, ".pane") + ".want"
			w, err := expect.Read(wantPath)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := classify.ParseState(w.State); !ok {
				t.Fatalf("%s: state %q is not one of WORKING QUESTION STALLED BLOCKED", p, w.State)
			}
			c := goldenCase{name: name, path: wantPath, Want: w}
			if c.pane, err = os.ReadFile(p); err != nil {
				t.Fatal(err)
			}
			cases = append(cases, c)
		}
	}
	return cases
}

func (c goldenCase) options() classify.Options {
	opt := classify.Options{Work: classify.WorkReading(probe.Read(c.Work, c.HasWork)), WorkPresent: c.HasWork}
	if len(c.Ledger) > 0 {
		opt.Ledger = ledger.NewMatcher(c.Ledger...)
	}
	// A case added with an operator's rules (golden add --rules) carries
	// them beside it, as NAME.rules.json.
	rules := strings.TrimSuffix(c.path, ".want") + ".rules.json"
	if data, err := os.ReadFile(rules); err == nil {
		local, err := classify.ParseLocal(data, rules)
		if err != nil {
			panic(err) // a case's own rules file is checked when it is added
		}
		opt.Local = local
	}
	return opt
}

func agentName(r classify.Result) string {
	if r.Agent == "" {
		return "unknown"
	}
	return r.Agent
}

// TestGolden classifies every pane of the corpus and checks the verdict, the
// hold, the agent and the rules that decided, naming each failure with the
// classifier's own explanation. A right state for a wrong reason fails.
func TestGolden(t *testing.T) {
	cases := goldenCases(t)
	if len(cases) < 80 {
		t.Errorf("the golden corpus holds %d panes; it must hold at least 80", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := classify.Classify(classify.ParseScreen(c.pane), c.options())
			got := expectation{State: r.State.String(), Hold: string(r.Hold), Agent: agentName(r), Rule: r.Rule, HoldRule: r.HoldRule, Unsettled: r.Unsettled}
			if *update {
				w := c.Want
				w.Agent, w.Rule, w.HoldRule, w.Unsettled = got.Agent, got.Rule, got.HoldRule, got.Unsettled
				// A person corrects the question and options a first
				// fill wrote; later runs keep them.
				if r.State != classify.Question {
					w.Question, w.Options = "", nil
				} else if w.Question == "" && len(w.Options) == 0 {
					w.Question, w.Options = dialogOnPane(c.pane)
				}
				if err := os.WriteFile(c.path, []byte(w.Format()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want := expectation{c.State, c.Hold, c.Agent, c.Rule, c.HoldRule, c.Unsettled}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s\nwhy this case exists: %s\nthe classifier's explanation:\n%s(go test ./classify -run TestGolden -update rewrites the reasons; read the diff)", c.name, diff, c.Why, r.Explain())
			}
		})
	}
}

// dialogOnPane reads the question sentence and the option labels off the
// bottom of a pane, independently of the classifier, to fill a new case's
// .want: the last line ending in "?" above the first numbered option, and
// every numbered option's label. A person reads and corrects what it writes.
func dialogOnPane(pane []byte) (string, []string) {
	var lines []string
	for _, l := range strings.Split(classifyText(pane), "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	lines = lines[max(0, len(lines)-30):]
	var question string
	var options []string
	for _, l := range lines {
		l = strings.TrimSpace(strings.Trim(strings.TrimSpace(l), "│"))
		if m := numbered.FindStringSubmatch(l); m != nil {
			options = append(options, strings.TrimSpace(m[1]))
			continue
		}
		if len(options) == 0 && strings.HasSuffix(l, "?") {
			question = l
		}
	}
	return question, options
}

var numbered = regexp.MustCompile(`^(?:[❯›●>] *)?\d+\. +(?:\[[ x✔]\] +)?(.+?)$`)

// classifyText is the pane's text as the classifier reads it, escape
// sequences and all stripped.
func classifyText(pane []byte) string {
	var b strings.Builder
	for _, l := range classify.ParseScreen(pane).Lines {
		b.WriteString(l.Text)
		b.WriteByte('\n')
	}
	return b.String()
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
		opt := c.options()
		opt.Ledger = nil
		without := classify.Classify(classify.ParseScreen(c.pane), opt)
		opt.Ledger = m
		with := classify.Classify(classify.ParseScreen(c.pane), opt)
		if with.State != without.State || with.Hold != without.Hold {
			t.Errorf("%s: an unrelated ledger changed the verdict from %v (hold %q) to %v (hold %q)", c.name, without.State, without.Hold, with.State, with.Hold)
		}
	}
}

// noAgentShown are the panes named for an agent whose screen no longer shows
// it, with why.
var noAgentShown = map[string]string{
	"claude-d-blank-pane":      "the pane is blank",
	"claude-d-exited-to-shell": "Claude Code exited; a shell prompt is under its last frame",
	"claude-d-garbage-screen":  "the screen is line noise",
}

// TestGoldenAgentAttribution checks that a pane named for an agent is read
// with that agent's table: a pane that shows an agent and is read as no
// agent, or as another, fails.
func TestGoldenAgentAttribution(t *testing.T) {
	prefixes := map[string]string{"claude-": "Claude Code", "codex-": "Codex CLI", "gemini-": "Gemini CLI"}
	for _, c := range goldenCases(t) {
		name := strings.TrimPrefix(c.name, "real/")
		for prefix, agent := range prefixes {
			if !strings.HasPrefix(name, prefix) {
				continue
			}
			r := classify.Classify(classify.ParseScreen(c.pane), c.options())
			if _, ok := noAgentShown[name]; ok {
				if r.Agent != "" {
					t.Errorf("%s shows no agent (%s), but is read as %s", c.name, noAgentShown[name], r.Agent)
				}
				continue
			}
			if r.Agent != agent {
				t.Errorf("%s: read as %s, want %s\n%s", c.name, agentName(r), agent, r.Explain())
			}
		}
	}
}
