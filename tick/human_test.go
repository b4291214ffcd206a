package tick

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/probe"
)

// A humanPoll is one poll of a run with the multiplexer's word on who is at
// the agent: when (from t0), the screen, the work probe ("" none) and the
// humans.
type humanPoll struct {
	at     time.Duration
	pane   string
	work   string
	humans Humans
}

// humanRun steps through the polls and returns each line, then its actions
// as replay prints them.
func humanRun(t *testing.T, c Config, polls []humanPoll) ([]string, State) {
	t.Helper()
	var s State
	var out []string
	for _, p := range polls {
		opt := classify.Options{Work: classify.WorkReading(probe.Read(p.work, p.work != "")), WorkPresent: p.work != ""}
		in := Input{Now: t0.Add(p.at), Screen: classify.ClassifyText(p.pane, opt),
			Work: probe.Read(p.work, p.work != ""), WorkPresent: p.work != "", Humans: p.humans}
		var o Outcome
		s, o = Step(s, c, in)
		out = append(out, o.Line)
		for _, a := range o.Actions {
			switch a.Kind {
			case Nudge:
				out = append(out, "→ nudge: "+a.Text)
			case Enter:
				out = append(out, "→ enter")
			case Alert:
				out = append(out, "→ alert: "+a.Alert.Kind.String())
			case Wait:
				out = append(out, "→ wait: "+a.Wait.String())
			}
		}
	}
	return out, s
}

// at is a human at a client that shows the pane's window, their last input
// idle ago.
func at(idle time.Duration) Humans { return Humans{Known: true, Clients: 1, Idle: idle} }

// TestHumanAtTheAgent: with a client showing the agent and input within
// the configured idle, nothing is nudged or paged and the line says why; a
// question still waiting 10 minutes is paged anyway; with no client, or
// input older than the idle, the watcher does what it always did; a
// multiplexer that cannot say is said once and guards nothing.
func TestHumanAtTheAgent(t *testing.T) {
	s := time.Second
	minute := time.Minute
	c := Config{Target: "agent", NudgeBudget: 2, NudgeText: "go on", HasProgress: true, Interval: minute, HumanIdle: minute}
	off := c
	off.HumanIdle = 0
	failing := "⏺ Ran the tests.\n  MISSING ROW: orders 17\n\n" + idle
	for _, tc := range []struct {
		name  string
		cfg   Config
		polls []humanPoll
		want  []string
	}{
		{"a typing human holds the nudge; a minute without input lets it go", c, []humanPoll{
			{0, idle, "7", at(12 * s)},
			{minute, idle, "7", at(59 * s)},
			{2 * minute, idle, "7", at(minute)},
		}, []string{
			"MONITOR · agent · STALLED · work=7 · progress=? · not nudged: a human is at the agent (input 12s ago)",
			"MONITOR · agent · STALLED · work=7 · progress=? · not nudged: a human is at the agent (input 59s ago)",
			"MONITOR · agent · STALLED · work=7 · progress=? · nudged (1/2)",
			"→ nudge: go on",
		}},
		{"input, but no client shows the agent's window", c, []humanPoll{
			{0, idle, "7", Humans{Known: true}},
		}, []string{
			"MONITOR · agent · STALLED · work=7 · progress=? · nudged (1/2)",
			"→ nudge: go on",
		}},
		{"the rule off: paged and nudged, but no key within 5s of a human's", off, []humanPoll{
			{0, idle, "7", at(2 * s)},
			{minute, idle, "7", at(5 * s)},
			{2 * minute, permission, "7", at(0)},
			{2*minute + 2*s, permission, "7", at(0)},
		}, []string{
			"MONITOR · agent · STALLED · work=7 · progress=? · not nudged: a human typed at the agent 2s ago",
			"MONITOR · agent · STALLED · work=7 · progress=? · nudged (1/2)",
			"→ nudge: go on",
			"MONITOR · agent · QUESTION · NOT answered, escalated if still up at 09:02:02",
			"→ wait: 2s",
			"MONITOR · agent · QUESTION · escalated to the operator, NOT answered",
			"→ alert: question",
		}},
		{"our text in the box gets no Enter while a human is there", c, []humanPoll{
			{0, "⏺ Done.\n\n────────────────────────────────────────\n❯ go on\n────────────────────────────────────────\n  ? for shortcuts\n", "7", at(3 * s)},
		}, []string{
			"MONITOR · agent · STALLED · work=7 · progress=? · not nudged: a human is at the agent (input 3s ago)",
		}},
		{"a question is not paged while a human is there, and is paged once they leave", c, []humanPoll{
			{0, permission, "7", at(0)},
			{2 * s, permission, "7", at(2 * s)},
			{61 * s, permission, "7", at(61 * s)},
			{2 * minute, permission, "7", at(2 * minute)},
		}, []string{
			"MONITOR · agent · QUESTION · NOT answered, escalated if still up at 09:00:02",
			"→ wait: 2s",
			// The next look: when they would no longer count as there.
			"MONITOR · agent · QUESTION · NOT answered, not paged: a human is at the agent (input 2s ago); paged at 09:10:00 if it still waits",
			"→ wait: 59s",
			"MONITOR · agent · QUESTION · escalated to the operator, NOT answered",
			"→ alert: question",
			"MONITOR · agent · QUESTION · waiting for the operator, NOT answered (escalated 09:01:01)",
		}},
		{"a question still waiting after 10 minutes with a human there is paged anyway, once", c, []humanPoll{
			{0, permission, "7", at(0)},
			{2 * s, permission, "7", at(0)},
			{9*minute + 59*s, permission, "7", at(0)},
			{10 * minute, permission, "7", at(0)},
			{11 * minute, permission, "7", at(0)},
		}, []string{
			"MONITOR · agent · QUESTION · NOT answered, escalated if still up at 09:00:02",
			"→ wait: 2s",
			// A minute and a second away: the interval comes first.
			"MONITOR · agent · QUESTION · NOT answered, not paged: a human is at the agent (input 0s ago); paged at 09:10:00 if it still waits",
			"MONITOR · agent · QUESTION · NOT answered, not paged: a human is at the agent (input 0s ago); paged at 09:10:00 if it still waits",
			"→ wait: 1s",
			"MONITOR · agent · QUESTION · escalated to the operator, NOT answered: it has waited 10m with a human at the agent",
			"→ alert: question",
			"MONITOR · agent · QUESTION · waiting for the operator, NOT answered (escalated 09:10:00)",
		}},
		{"a block is not paged while a human is there, and is paged once they leave", c, []humanPoll{
			{0, idle, "0", at(30 * s)},
			{minute, idle, "0", at(90 * s)},
			{2 * minute, idle, "0", at(3 * s)},
		}, []string{
			"MONITOR · agent · BLOCKED  · work=0 · not nudged, not paged: a human is at the agent (input 30s ago)",
			"MONITOR · agent · BLOCKED  · work=0 · not nudged, escalated",
			"→ alert: blocked",
			"MONITOR · agent · BLOCKED  · work=0 · not nudged (escalated 09:01:00)",
		}},
		{"a spent budget is not paged while a human is there", Config{Target: "agent", NudgeBudget: 0, HasProgress: true, Interval: minute, HumanIdle: minute}, []humanPoll{
			{0, idle, "7", at(30 * s)},
			{minute, idle, "7", at(2 * minute)},
		}, []string{
			"MONITOR · agent · STALLED · work=7 · progress=? · not nudged: a human is at the agent (input 30s ago)",
			"MONITOR · agent · STALLED · work=7 · progress=? · not nudged: nudging is off (--nudge-budget 0), escalated: needs a human",
			"→ alert: budget-exhausted",
		}},
		{"a failure shown to a human at the agent is not paged, then or later", c, []humanPoll{
			{0, idle, "7", at(2 * minute)},
			{minute, failing, "7", at(10 * s)},
			{2 * minute, failing, "7", at(5 * minute)},
		}, []string{
			"MONITOR · agent · STALLED · work=7 · progress=? · nudged (1/2)",
			"→ nudge: go on",
			"MONITOR · agent · STALLED · work=7 · progress=? · not nudged: a human is at the agent (input 10s ago) · failure not paged (a human is at the agent): MISSING ROW: orders 17",
			"MONITOR · agent · STALLED · work=7 · progress=? · nudged (2/2)",
			"→ nudge: go on",
		}},
		{"a multiplexer that cannot say is said once, and guards nothing", c, []humanPoll{
			{0, idle, "7", Humans{Unknown: "no formats"}},
			{minute, idle, "7", Humans{Unknown: "no formats"}},
			{2 * minute, idle, "7", at(3 * s)},
			{3 * minute, idle, "7", Humans{Unknown: "no formats"}},
		}, []string{
			"MONITOR · agent · STALLED · work=7 · progress=? · nudged (1/2) · who is at the agent is unknown (no formats): pages and nudges are not held for a human",
			"→ nudge: go on",
			"MONITOR · agent · STALLED · work=7 · progress=? · nudged (2/2)",
			"→ nudge: go on",
			"MONITOR · agent · STALLED · work=7 · progress=? · not nudged: a human is at the agent (input 3s ago)",
			"MONITOR · agent · STALLED · work=7 · progress=? · not nudged: nudge budget spent (2/2) without progress, escalated: needs a human · who is at the agent is unknown (no formats): pages and nudges are not held for a human",
			"→ alert: budget-exhausted",
		}},
		{"not asked (a bare pane, a replay): nothing said, nothing held", c, []humanPoll{
			{0, idle, "7", Humans{}},
		}, []string{
			"MONITOR · agent · STALLED · work=7 · progress=? · nudged (1/2)",
			"→ nudge: go on",
		}},
		{"a working agent is unchanged", c, []humanPoll{
			{0, busy, "7", at(0)},
		}, []string{
			"MONITOR · agent · WORKING · work=7 · progress=? · nudges 0/2 · 09:00:00",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := humanRun(t, tc.cfg, tc.polls)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestHumansAt is the rule itself, at its edges.
func TestHumansAt(t *testing.T) {
	s := time.Second
	for _, c := range []struct {
		h              Humans
		idle           time.Duration
		at, typing     bool
		typingReason   string
		nameOfThisCase string
	}{
		{at(0), time.Minute, true, true, "a human typed at the agent 0s ago", "input now"},
		{at(4 * s), time.Minute, true, true, "a human typed at the agent 4s ago", "within the keyboard's quiet"},
		{at(5 * s), time.Minute, true, false, "", "at the keyboard's quiet"},
		{at(59 * s), time.Minute, true, false, "", "within the idle"},
		{at(time.Minute), time.Minute, false, false, "", "at the idle"},
		{at(2 * s), 0, false, true, "a human typed at the agent 2s ago", "the rule off"},
		{Humans{Known: true, Idle: 0}, time.Minute, false, false, "", "no client"},
		{Humans{Unknown: "x", Clients: 1}, time.Minute, false, false, "", "unknown"},
		{Humans{Clients: 1}, time.Minute, false, false, "", "not asked"},
		{at(75 * s), 2 * time.Minute, true, false, "", "a minute and more"},
	} {
		if got := c.h.At(c.idle); got != c.at {
			t.Errorf("%s: At = %v, want %v", c.nameOfThisCase, got, c.at)
		}
		if got := c.h.Typing(); got != c.typing {
			t.Errorf("%s: Typing = %v, want %v", c.nameOfThisCase, got, c.typing)
		}
		if got := c.h.TypingReason(); got != c.typingReason {
			t.Errorf("%s: TypingReason = %q, want %q", c.nameOfThisCase, got, c.typingReason)
		}
	}
	if got := at(75 * s).Ago(); got != "1m15s ago" {
		t.Errorf("ago = %q", got)
	}
}
