package tick

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/probe"
)

// TestUnsettledStopsNeedLiveEvidence: a Codex screen whose last answer has
// no end line under it is no evidence of work (releases end turns without
// one): a first sighting is looked at again soon, nothing typed; the same
// screen on the next look is the stop it reads as, and is nudged; the
// screen changing between the looks is an answer streaming (WORKING); the
// agent's own log saying its turn is open is WORKING. Screens with a marker
// of their own are read as before.
func TestUnsettledStopsNeedLiveEvidence(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "golden", "panes", name+".pane"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	idle := read("codex-recent-idle-no-end-line")
	grown := strings.Replace(idle, "passes 500 runs in a row.", "passes 500 runs in a row.\n  It also", 1)
	c := Config{Target: "agent", NudgeBudget: 5, Interval: time.Minute}
	for _, tc := range []struct {
		name  string
		looks []look
		want  []paced
	}{
		{"the same screen twice: a stop, nudged on the second look",
			[]look{{at: 0, pane: idle}, {at: 3 * time.Second, pane: idle}},
			[]paced{{Wait: UnsettledLook}, {Nudge: true}}},
		{"the screen grows between the looks: streaming, then stopped",
			[]look{{at: 0, pane: idle}, {at: 3 * time.Second, pane: grown}, {at: time.Minute, pane: grown}, {at: time.Minute + 3*time.Second, pane: grown}},
			[]paced{{Wait: UnsettledLook}, {}, {Wait: UnsettledLook}, {Nudge: true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, pace(t, c, tc.looks)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	// What each look says, and the state it reads as.
	var lines []string
	for s, l := (State{}), 0; l < 2; l++ {
		var o Outcome
		s, o = Step(s, c, lookInput(time.Duration(l)*3*time.Second, []string{idle, grown}[l], "7", false))
		lines = append(lines, o.Line)
	}
	if !strings.Contains(lines[0], "STALLED · work=7 · progress=? · not nudged yet: the last answer has no end line under it (it may be streaming); the next look, at 09:00:03, decides") ||
		!strings.Contains(lines[1], " · WORKING · ") {
		t.Errorf("lines:\n%s", strings.Join(lines, "\n"))
	}
	// The agent's own log says its turn is open, or its title's working
	// mark: WORKING on the first look.
	in := lookInput(0, idle, "7", false)
	in.Witness = &Witness{Status: "busy", Updated: t0}
	_, o := Step(State{}, c, in)
	if !strings.Contains(o.Line, " · WORKING · ") || len(o.Actions) != 0 {
		t.Errorf("with the agent's log saying its turn is open: %s %+v", o.Line, o.Actions)
	}
	in = lookInput(0, idle, "7", false)
	in.Title = "⠙ find the flaky test | app"
	if _, o := Step(State{}, c, in); !strings.Contains(o.Line, " · WORKING · ") || len(o.Actions) != 0 {
		t.Errorf("with the agent's title saying it works: %s %+v", o.Line, o.Actions)
	}
}

// TestStillWorkingIsSaidOnce: a screen that reads WORKING and does not
// move at all (its spinner's seconds frozen) for StillAfter, with nothing
// of the agent's own saying it works, is said in the line and paged once;
// the agent's own status saying busy, or the screen moving, says nothing;
// a stop ends the spell.
func TestStillWorkingIsSaidOnce(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "golden", "panes", "GOLDEN-self-echo-false-question.pane"))
	if err != nil {
		t.Fatal(err)
	}
	frozen := string(b)
	c := Config{Target: "agent", NudgeBudget: 5, Interval: time.Minute}
	run := func(witness string) (pages int, lines []string) {
		var s State
		for m := 0; m <= 15; m++ {
			in := lookInput(time.Duration(m)*time.Minute, frozen, "7", false)
			if witness != "" {
				in.Witness = &Witness{Status: witness, Updated: in.Now}
			}
			var o Outcome
			s, o = Step(s, c, in)
			lines = append(lines, o.Line)
			pages += alerts(o)
		}
		return pages, lines
	}
	if pages, lines := run(""); pages != 1 || !strings.Contains(lines[10], "looks busy, nothing has moved for 10m (no word of the agent's own), escalated") ||
		!strings.Contains(lines[12], "looks busy, nothing has moved for 12m") || strings.Contains(lines[9], "looks busy") {
		t.Errorf("no witness: %d pages, lines:\n%s", pages, strings.Join(lines, "\n"))
	}
	if pages, lines := run("idle"); pages != 1 || !strings.Contains(lines[10], "(the agent's own status says idle), escalated") {
		t.Errorf("an idle witness: %d pages, lines:\n%s", pages, strings.Join(lines, "\n"))
	}
	if pages, lines := run("busy"); pages != 0 {
		t.Errorf("a busy witness: %d pages, lines:\n%s", pages, strings.Join(lines, "\n"))
	}
}

// TestTheAgentsTitleIsAWitness: the agent's own terminal title, as the
// real programs set it, is read for each agent: agreement counted; a
// disagreement said, and a busy or waiting title stops a nudge; a waiting
// title is never outvoted by a screen that reads WORKING: that is a
// question the screen does not show, paged once. A title that says
// nothing (Claude Code's) changes nothing.
func TestTheAgentsTitleIsAWitness(t *testing.T) {
	for _, c := range []struct {
		agent, title, want string
	}{
		{"Codex CLI", "[ ! ] Action Required | please escalate | work", "waiting"},
		{"Codex CLI", "[ . ] Action Required | please escalate | work", "waiting"},
		{"Codex CLI", "⠴ please escalate | work", "busy"},
		{"Codex CLI", "vm", ""},
		{"Codex CLI", "please escalate | work", ""},
		{"Gemini CLI", "✋  Action Required (work)", "waiting"},
		{"Gemini CLI", "✦  Working… (work)", "busy"},
		{"Gemini CLI", "◇  Ready (work)", "idle"},
		{"Claude Code", "✳ Claude Code", ""},
		{"Claude Code", "[ ! ] Action Required", ""}, // another agent's word
		{"", "✋  Action Required (work)", ""},
	} {
		if got := TitleSays(nil, c.agent, c.title); got != c.want {
			t.Errorf("TitleSays(%q, %q) = %q, want %q", c.agent, c.title, got, c.want)
		}
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "golden", name+".pane"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	c := Config{Target: "agent", NudgeBudget: 5, Interval: time.Minute}
	working := read("real-codex/codex-120-working")
	idle := read("real-codex/codex-120-queue-done")
	var s State
	var pages int
	var lines []string
	for i, title := range []string{"⠴ think | work", "[ ! ] Action Required | think | work", "[ . ] Action Required | think | work", "[ ! ] Action Required | think | work"} {
		in := lookInput(time.Duration(i)*3*time.Second, working, "7", false)
		in.Title = title
		var o Outcome
		s, o = Step(s, c, in)
		lines = append(lines, o.Line)
		pages += alerts(o)
	}
	if pages != 1 || s.TitleAgreed != 4 || !strings.Contains(lines[1], " · QUESTION · ") || strings.Contains(strings.Join(lines, "\n"), " · WORKING · nudged") {
		t.Errorf("%d pages, %d agreed; lines:\n%s", pages, s.TitleAgreed, strings.Join(lines, "\n"))
	}
	// A stopped screen whose title says the agent works: not nudged.
	in := lookInput(time.Minute, idle, "7", false)
	in.Title = "⠴ think | work"
	_, o := Step(State{Polls: 1, Last: "STALLED"}, c, in)
	if !strings.Contains(o.Line, "not nudged: the agent's own title says busy") {
		t.Errorf("a busy title over a stop: %s", o.Line)
	}
}

// alerts counts the pages a poll asked for.
func alerts(o Outcome) int {
	n := 0
	for _, a := range o.Actions {
		if a.Kind == Alert {
			n++
		}
	}
	return n
}

// TestDescribedAgentsTitle: the title marks of an agent an operator
// describes are read where a built-in agent's are, as a witness: a
// waiting title makes a WORKING screen a question (never typed
// into), a busy one stops a nudge; but a busy title of theirs makes no
// WORKING from a screen without live evidence, as a built-in agent's
// title may.
func TestDescribedAgentsTitle(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "classify", "testdata", "tern.rules.json"))
	if err != nil {
		t.Fatal(err)
	}
	local, err := classify.ParseLocal(data, "tern.rules.json")
	if err != nil {
		t.Fatal(err)
	}
	const box = "┌──────────────────────────────┐\n│ »                            │\n└──────────────────────────────┘\n  tern · model m-1 · /help\n"
	working := "Tern v0.3 · ~/proj\n\n» fix the flaky test in ingest\n  ◆ Reading ingest/loader.go\n  ⠋ thinking · 12s · ctrl+c to stop\n\n" + box
	idle := "Tern v0.3 · ~/proj\n\n» fix the flaky test in ingest\n  The test raced on the clock.\n  ✓ done in 40s\n\n" + box
	c := Config{Target: "agent", NudgeBudget: 5, Interval: time.Minute}
	in := func(pane, title string) Input {
		opt := classify.Options{Work: classify.WorkReading(probe.Read("7", true)), WorkPresent: true, Local: local}
		return Input{Now: t0, Screen: classify.ClassifyText(pane, opt), Work: probe.Read("7", true), WorkPresent: true, Title: title, Local: local}
	}
	if got := in(working, "").Screen.Agent; got != "Tern" {
		t.Fatalf("the screen reads as %q's, want Tern's", got)
	}
	_, o := Step(State{Polls: 1, Last: "WORKING"}, c, in(working, "tern ? rm -rf build"))
	if !strings.Contains(o.Line, " · QUESTION · ") || nudges(o) != 0 {
		t.Errorf("a waiting title over a WORKING screen: %s %+v", o.Line, o.Actions)
	}
	_, o = Step(State{Polls: 1, Last: "STALLED"}, c, in(idle, "tern ⠙ fixing"))
	if !strings.Contains(o.Line, "not nudged: the agent's own title says busy") || nudges(o) != 0 {
		t.Errorf("a busy title over a stop: %s %+v", o.Line, o.Actions)
	}
	// The unsettled Codex screen a built-in title makes WORKING, read as a
	// described agent's: its busy title does not.
	b, err := os.ReadFile(filepath.Join("..", "golden", "panes", "codex-recent-idle-no-end-line.pane"))
	if err != nil {
		t.Fatal(err)
	}
	u := lookInput(0, string(b), "7", false)
	if u.Screen.Unsettled == "" {
		t.Fatal("the Codex screen is not unsettled")
	}
	u.Screen.Agent, u.Title, u.Local = "Tern", "tern ⠙ fixing", local
	if _, o := Step(State{}, c, u); strings.Contains(o.Line, " · WORKING · ") {
		t.Errorf("a described agent's busy title made WORKING from no live evidence: %s", o.Line)
	}
}

// nudges counts the nudges a poll asked for.
func nudges(o Outcome) int {
	n := 0
	for _, a := range o.Actions {
		if a.Kind == Nudge {
			n++
		}
	}
	return n
}
