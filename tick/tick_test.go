package tick

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/alert"
	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/probe"
)

var t0 = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

const (
	idle = "⏺ Done with this step.\n\n✻ Brewed for 12s\n\n" +
		"────────────────────────────────────────\n❯ \n────────────────────────────────────────\n" +
		"  ⏵⏵ accept edits on (shift+tab to cycle)\n"
	busy = "⏺ Working on it.\n\n✻ Crunching… (3s · ↑ 1.2k tokens)\n\n" +
		"────────────────────────────────────────\n❯ \n────────────────────────────────────────\n" +
		"  ⏵⏵ accept edits on (shift+tab to cycle) · esc to interrupt\n"
	draft = "⏺ Done.\n\n────────────────────────────────────────\n❯ wait, I am typing this\n" +
		"────────────────────────────────────────\n  ? for shortcuts\n"
	permission = "⏺ Bash(rm -rf tmp/)\n\n────────────────────────────────────────\n Bash command\n\n   rm -rf tmp/\n\n" +
		" Do you want to proceed?\n ❯ 1. Yes\n   2. No\n\n Esc to cancel · Tab to amend\n"
	otherQuestion = "────────────────────────────────────────\n Do you want to make this edit to main.go?\n ❯ 1. Yes\n   2. No\n\n Esc to cancel\n"
)

// scripted is one poll of a scripted run.
type scripted struct {
	pane     string
	work     string // "" means no probe
	progress string // "" means no probe
	extra    string // appended to the body above the box
	// workErr and progressErr are why a probe failed ("" when it ran).
	workErr, progressErr string
	hostWake             HostWake
}

// run steps through polls a minute apart, or as far apart as a wait the
// tick asks for, as the loop would, and returns each line and the actions,
// as replay prints them.
func run(t *testing.T, cfg Config, polls []scripted) ([]string, State) {
	t.Helper()
	var s State
	var out []string
	now := t0
	for _, p := range polls {
		pane := p.pane
		if p.extra != "" {
			pane = p.extra + "\n" + pane
		}
		opt := classify.Options{Work: classify.WorkReading(probe.Read(p.work, p.work != "")), WorkPresent: p.work != ""}
		in := Input{
			Now:             now,
			Screen:          classify.ClassifyText(pane, opt),
			Work:            probe.Read(p.work, p.work != ""),
			WorkPresent:     p.work != "",
			Progress:        probe.Read(p.progress, p.progress != ""),
			ProgressPresent: p.progress != "",
			WorkError:       p.workErr,
			ProgressError:   p.progressErr,
			HostWake:        p.hostWake,
		}
		var o Outcome
		s, o = Step(s, cfg, in)
		out = append(out, o.Line)
		next := time.Minute
		for _, a := range o.Actions {
			switch a.Kind {
			case Nudge:
				out = append(out, "→ nudge: "+a.Text)
			case Alert:
				out = append(out, "→ alert: "+a.Alert.Kind.String())
			case Wait:
				out = append(out, "→ wait: "+a.Wait.String())
				next = a.Wait
			}
		}
		now = now.Add(next)
	}
	return out, s
}

var cfg = Config{Target: "agent", NudgeBudget: 2, NudgeText: "go on", HasProgress: true}

func TestBudgetBoundToProgress(t *testing.T) {
	got, _ := run(t, cfg, []scripted{
		{pane: idle, work: "7", progress: "41"},
		{pane: idle, work: "7", progress: "41"},
		{pane: idle, work: "7", progress: "41"},
		{pane: idle, work: "7", progress: "41"},
		{pane: busy, work: "6", progress: "42"},
		{pane: idle, work: "6", progress: "42"},
	})
	want := []string{
		"MONITOR · agent · STALLED · work=7 · progress=41 · nudged (1/2)",
		"→ nudge: go on",
		"MONITOR · agent · STALLED · work=7 · progress=41 · nudged (2/2)",
		"→ nudge: go on",
		"MONITOR · agent · STALLED · work=7 · progress=41 · not nudged: nudge budget spent (2/2) without progress, escalated: needs a human",
		"→ alert: budget-exhausted",
		"MONITOR · agent · STALLED · work=7 · progress=41 · not nudged: nudge budget spent (2/2) without progress (escalated)",
		"MONITOR · agent · WORKING · work=6 · progress=42 · nudge budget reset (progress 41 → 42)",
		"MONITOR · agent · STALLED · work=6 · progress=42 · nudged (1/2)",
		"→ nudge: go on",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestWorkingLineCarriesTheClock(t *testing.T) {
	got, _ := run(t, cfg, []scripted{{pane: busy, work: "7", progress: "41"}})
	want := []string{"MONITOR · agent · WORKING · work=7 · progress=41 · nudges 0/2 · 09:00:00"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestNoProgressProbeIsSaidOnce(t *testing.T) {
	c := cfg
	c.HasProgress = false
	got, _ := run(t, c, []scripted{{pane: busy, work: "7"}, {pane: busy, work: "7"}})
	want := []string{
		"MONITOR · agent · WORKING · work=7 · progress=? · nudges 0/2 · 09:00:00 · no progress probe: the nudge budget cannot reset",
		"MONITOR · agent · WORKING · work=7 · progress=? · nudges 0/2 · 09:01:00",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestHostWakeSaidOnceEachChange: whether the hooks on a remote target's
// host can wake the watcher is said once, and again only when it changes;
// while the relay has not said (or its listener is down) nothing is said,
// and nothing else of the poll changes.
func TestHostWakeSaidOnceEachChange(t *testing.T) {
	c := cfg
	c.Target, c.Interval = "box:agent", time.Minute
	got, s := run(t, c, []scripted{
		{pane: busy, work: "7", progress: "41"},
		{pane: busy, work: "7", progress: "41", hostWake: HostWakeAbsent},
		{pane: busy, work: "7", progress: "41", hostWake: HostWakeAbsent},
		{pane: busy, work: "7", progress: "41"},
		{pane: busy, work: "7", progress: "41", hostWake: HostWakeListening},
		{pane: busy, work: "7", progress: "41", hostWake: HostWakeListening},
		{pane: busy, work: "7", progress: "41", hostWake: HostWakeOld},
	})
	want := []string{
		"MONITOR · box:agent · WORKING · work=7 · progress=41 · nudges 0/2 · 09:00:00",
		"MONITOR · box:agent · WORKING · work=7 · progress=41 · nudges 0/2 · 09:01:00 · no omega-monitor on box: its hooks cannot wake this watcher, which polls every 60s",
		"MONITOR · box:agent · WORKING · work=7 · progress=41 · nudges 0/2 · 09:02:00",
		"MONITOR · box:agent · WORKING · work=7 · progress=41 · nudges 0/2 · 09:03:00",
		"MONITOR · box:agent · WORKING · work=7 · progress=41 · nudges 0/2 · 09:04:00 · listening on box for its agents' hooks",
		"MONITOR · box:agent · WORKING · work=7 · progress=41 · nudges 0/2 · 09:05:00",
		"MONITOR · box:agent · WORKING · work=7 · progress=41 · nudges 0/2 · 09:06:00 · the omega-monitor on box does not listen for hooks (an older one): this watcher polls every 60s",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if s.HostWakeSaid != HostWakeOld {
		t.Errorf("HostWakeSaid = %q, want %q", s.HostWakeSaid, HostWakeOld)
	}
	// Said on a poll whose capture failed too, once.
	_, o := Step(State{HostWakeSaid: HostWakeListening}, c, Input{Now: t0, CaptureError: "timed out", HostWake: HostWakeAbsent})
	if !strings.HasSuffix(o.Line, "· no omega-monitor on box: its hooks cannot wake this watcher, which polls every 60s") {
		t.Errorf("line = %q", o.Line)
	}
}

func TestQuestionEscalatedOncePerQuestion(t *testing.T) {
	got, _ := run(t, cfg, []scripted{
		{pane: permission, work: "7"}, // seen: looked at again in 2s
		{pane: permission, work: "7"}, // still up: paged
		{pane: permission, work: "7"},
		{pane: busy, work: "7"}, // a flap: gone for a poll
		{pane: permission, work: "7"},
		{pane: otherQuestion, work: "7"},
		{pane: otherQuestion, work: "7"},
	})
	want := []string{
		"MONITOR · agent · QUESTION · NOT answered, escalated if still up at 09:00:02",
		"→ wait: 2s",
		"MONITOR · agent · QUESTION · escalated to the operator, NOT answered",
		"→ alert: question",
		"MONITOR · agent · QUESTION · waiting for the operator, NOT answered (escalated 09:00:02)",
		"MONITOR · agent · WORKING · work=7 · progress=? · nudges 0/2 · 09:02:02",
		"MONITOR · agent · QUESTION · waiting for the operator, NOT answered (escalated 09:00:02)",
		"MONITOR · agent · QUESTION · NOT answered, escalated if still up at 09:04:04",
		"→ wait: 2s",
		"MONITOR · agent · QUESTION · escalated to the operator, NOT answered",
		"→ alert: question",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestBlockedEscalatedOncePerSpell(t *testing.T) {
	got, _ := run(t, cfg, []scripted{
		{pane: idle, work: "0"},
		{pane: idle, work: "0"},
		{pane: idle, work: "3"},
		{pane: idle, work: "0"},
	})
	want := []string{
		"MONITOR · agent · BLOCKED  · work=0 · not nudged, escalated",
		"→ alert: blocked",
		"MONITOR · agent · BLOCKED  · work=0 · not nudged (escalated 09:00:00)",
		"MONITOR · agent · STALLED · work=3 · progress=? · nudged (1/2)",
		"→ nudge: go on",
		"MONITOR · agent · BLOCKED  · work=0 · not nudged, escalated",
		"→ alert: blocked",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestHoldsNeverSpendTheBudget(t *testing.T) {
	got, s := run(t, cfg, []scripted{{pane: draft, work: "7"}, {pane: draft, work: "7"}})
	for _, l := range got {
		if strings.Contains(l, "nudge:") || !strings.Contains(l, "not nudged: a human's draft") {
			t.Errorf("a draft must hold the nudge: %s", l)
		}
	}
	if s.Budget.Used != 0 {
		t.Errorf("holds spent %d nudges", s.Budget.Used)
	}
}

func TestFailureLatch(t *testing.T) {
	fail := "⏺ Bash(make)\n  ⎿  make: *** [all] Error 2 (exit code 2)"
	got, s := run(t, cfg, []scripted{
		{pane: busy, work: "7"},
		{pane: busy, work: "7", extra: fail},
		{pane: idle, work: "7", extra: fail},
		{pane: busy, work: "7"},              // scrolled away
		{pane: idle, work: "7", extra: fail}, // drawn again: latched, silent
		{pane: idle, work: "7", extra: "  ⎿  Test suite is RED."},
	})
	var alerts []string
	for _, l := range got {
		if l == "→ alert: failure" {
			alerts = append(alerts, l)
		}
	}
	if diff := cmp.Diff([]string{"→ alert: failure", "→ alert: failure"}, alerts); diff != "" {
		t.Errorf("failure alerts (-want +got):\n%s\nlines:\n%s", diff, strings.Join(got, "\n"))
	}
	if len(s.FailureLatch) != 2 {
		t.Errorf("failure latch holds %q", s.FailureLatch)
	}
}

func TestFailuresOnScreenAtStartAreTheBaseline(t *testing.T) {
	got, _ := run(t, cfg, []scripted{{pane: idle, work: "7", extra: "  ⎿  exit code 1"}})
	for _, l := range got {
		if strings.Contains(l, "alert") {
			t.Errorf("a failure already on screen at start alerted: %s", l)
		}
	}
}

func TestUsageLimitHoldsUntilReset(t *testing.T) {
	limit := "⏺ Working.\n  ⎿  You've hit your limit · resets 9:02am (UTC)\n     /login to switch to an API usage-billed account.\n\n" +
		"────────────────────────────────────────\n❯ \n────────────────────────────────────────\n  ? for shortcuts\n"
	// The agent shows the minute, rounded down: the reset comes within
	// 09:02, and the nudge only once that minute is over.
	got, _ := run(t, cfg, []scripted{{pane: limit, work: "7"}, {pane: limit, work: "7"}, {pane: limit, work: "7"}, {pane: limit, work: "7"}})
	want := []string{
		"MONITOR · agent · STALLED · work=7 · progress=? · not nudged: usage limit, resets 09:02 UTC (in 3m) · operator told",
		"→ alert: usage-limit",
		"MONITOR · agent · STALLED · work=7 · progress=? · not nudged: usage limit, resets 09:02 UTC (in 2m)",
		"MONITOR · agent · STALLED · work=7 · progress=? · not nudged: usage limit, resets 09:02 UTC (in 1m)",
		"MONITOR · agent · STALLED · work=7 · progress=? · nudged (1/2)",
		"→ nudge: go on",
		"→ alert: notice",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestUsageHoldKeepsNoPaneText: the state keeps the usage-limit line's key,
// not the line a pane wrote; a state an older version wrote, holding the
// line itself, still holds until the same reset.
func TestUsageHoldKeepsNoPaneText(t *testing.T) {
	limit := "⏺ Working.\n  ⎿  You've hit your limit · resets 9:02am (UTC)\n     /login to switch to an API usage-billed account.\n\n" +
		"────────────────────────────────────────\n❯ \n────────────────────────────────────────\n  ? for shortcuts\n"
	_, s := run(t, cfg, []scripted{{pane: limit, work: "7"}})
	if strings.Contains(s.UsageHold, "limit") || !strings.HasPrefix(s.UsageHold, "#") {
		t.Errorf("usage hold = %q, want a line key", s.UsageHold)
	}
	// An old state's reset time, unlike the one the line gives, shows
	// that the line was recognised.
	old := State{UsageHold: "  ⎿  You've hit your limit · resets 9:02am (UTC)", UsageUntil: t0.Add(5 * time.Minute)}
	opt := classify.Options{Work: classify.WorkReading(probe.Read("7", true)), WorkPresent: true}
	next, o := Step(old, cfg, Input{Now: t0.Add(time.Minute), Screen: classify.ClassifyText(limit, opt), Work: probe.Read("7", true), WorkPresent: true})
	if want := "MONITOR · agent · STALLED · work=7 · progress=? · not nudged: usage limit, resets 09:05 UTC (in 5m) · operator told"; o.Line != want {
		t.Errorf("after an old state: %q, want %q", o.Line, want)
	}
	if !next.UsageUntil.Equal(old.UsageUntil) || next.UsageHold != s.UsageHold {
		t.Errorf("old state became %q until %v", next.UsageHold, next.UsageUntil)
	}
}

// TestUsageLimitWaitsForTheAccount: a limit about to be paged on a pane
// whose account is being read on its host pages nothing yet and looks
// again half a second later; that look, with the account, pages it once,
// keyed by the account and naming no host (its panes may be on several).
func TestUsageLimitWaitsForTheAccount(t *testing.T) {
	limit := "⏺ Working.\n  ⎿  You've hit your limit · resets 9:02am (UTC)\n     /login to switch to an API usage-billed account.\n\n" +
		"────────────────────────────────────────\n❯ \n────────────────────────────────────────\n  ? for shortcuts\n"
	c := cfg
	c.Target = "box:agent"
	opt := classify.Options{Work: classify.WorkReading(probe.Read("7", true)), WorkPresent: true}
	in := Input{Now: t0, Screen: classify.ClassifyText(limit, opt), Work: probe.Read("7", true), WorkPresent: true, AccountPending: true}
	s, o := Step(State{}, c, in)
	if !strings.HasSuffix(o.Line, "reading the account on the host first") || len(o.Actions) != 1 || o.Actions[0].Kind != Wait || o.Actions[0].Wait != SettlePace[0] {
		t.Fatalf("pending: %q, %+v; want a look again in %v and no page", o.Line, o.Actions, SettlePace[0])
	}
	in.Now, in.AccountPending, in.Account = t0.Add(time.Second), false, "0123456789abcdef"
	s, o = Step(s, c, in)
	var groups []*Grouping
	for _, a := range o.Actions {
		if a.Kind == Alert && a.Alert.Kind == alert.UsageLimit {
			groups = append(groups, a.Group)
		}
	}
	if len(groups) != 1 || !strings.Contains(groups[0].Key, "\x00account 0123456789abcdef\x00") || groups[0].Cause.Host != "" || !groups[0].Cause.Account {
		t.Fatalf("with the account: %q, %+v; want one page of the account", o.Line, groups)
	}
	in.Now = t0.Add(2 * time.Second)
	if _, o = Step(s, c, in); len(o.Actions) != 0 {
		t.Errorf("paged again: %+v", o.Actions)
	}
}

func TestCaptureError(t *testing.T) {
	s, o := Step(State{}, cfg, Input{Now: t0, CaptureError: "timed out after 20s"})
	if want := "MONITOR · agent · ? · capture failed: timed out after 20s; still watching"; o.Line != want {
		t.Errorf("line = %q, want %q", o.Line, want)
	}
	if len(o.Actions) != 0 || s.Budget.Used != 0 {
		t.Errorf("a failed capture acted: %+v", o.Actions)
	}
}

func TestResetTime(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	now := time.Date(2026, 3, 14, 15, 0, 0, 0, time.UTC) // 16:00 in Berlin
	tests := []struct {
		line string
		want time.Time
		ok   bool
	}{
		{"You've hit your session limit · resets 5:40pm (Europe/Berlin)", time.Date(2026, 3, 14, 17, 40, 0, 0, berlin), true},
		// A clock time already past when first read passed while the line
		// stood; one far in the past is tomorrow's.
		{"You've hit your limit · resets 3pm (Europe/Berlin)", time.Date(2026, 3, 14, 15, 0, 0, 0, berlin), true},
		{"You've hit your limit · resets 2am (UTC)", time.Date(2026, 3, 15, 2, 0, 0, 0, time.UTC), true},
		{"Claude usage limit reached. Your limit will reset at 9am (America/Chicago).", time.Date(2026, 3, 14, 14, 0, 0, 0, time.UTC), true},
		{"5-hour limit reached ∙ resets 9pm", time.Date(2026, 3, 14, 21, 0, 0, 0, time.UTC), true},
		{"■ You've hit your usage limit. Try again in 4 hours.", now.Add(4 * time.Hour), true},
		{"try again in 2 hours 5 minutes", now.Add(2*time.Hour + 5*time.Minute), true},
		// The agent shows the minute, rounded down: within it the reset is
		// still to come, not tomorrow's.
		{"You've hit your 5-hour limit · resets 3pm (UTC)", time.Date(2026, 3, 14, 15, 0, 0, 0, time.UTC), true},
		{"You've hit your 5-hour limit · resets 2:59pm (UTC)", time.Date(2026, 3, 14, 14, 59, 0, 0, time.UTC), true},
		// Past a day away, Claude Code names the date; Codex CLI too.
		{"You've hit your weekly limit · resets Mar 17, 9am (UTC)", time.Date(2026, 3, 17, 9, 0, 0, 0, time.UTC), true},
		{"You've hit your weekly limit · resets Jan 2, 2027, 9:30am (Europe/Berlin)", time.Date(2027, 1, 2, 9, 30, 0, 0, berlin), true},
		{"You've hit your weekly limit · resets Jan 2, 9am (UTC)", time.Date(2027, 1, 2, 9, 0, 0, 0, time.UTC), true},
		{"■ You’ve hit your usage limit. Upgrade to Pro, or try again at 6:06 PM.", time.Date(2026, 3, 14, 18, 6, 0, 0, time.UTC), true},
		{"■ You’ve hit your usage limit. Visit https://chatgpt.com/settings/usage or try again at Mar 29th, 2026 10:15 PM.", time.Date(2026, 3, 29, 22, 15, 0, 0, time.UTC), true},
		// Gemini CLI words the API's retry delay, in seconds, inside its
		// error (gemini-061-100-quota-minute-stopped).
		{"✕ [API Error: You exceeded your current quota, please check your plan and billing details. Suggested retry after 7200s.]", now.Add(2 * time.Hour), true},
		{"✕ [API Error: You exceeded your current quota. Suggested retry after 99999999s.]", time.Time{}, false},
		{"resets Foo 5, 9am", time.Time{}, false},
		{"resets 13pm (UTC)", time.Time{}, false},
		{"resets 5pm (Mars/Olympus)", time.Time{}, false},
		{"usage limit reached", time.Time{}, false},
	}
	for _, tt := range tests {
		got, ok := ResetTime(tt.line, now)
		if ok != tt.ok || !got.Equal(tt.want) {
			t.Errorf("ResetTime(%q) = %v, %v; want %v, %v", tt.line, got, ok, tt.want, tt.ok)
		}
	}
}

// TestUsageLimitWithoutAReset: a limit that shows no reset holds, and the
// line says so, with no time made up for it.
func TestUsageLimitWithoutAReset(t *testing.T) {
	limit := "⏺ Working.\n  ⎿  You've hit your org's monthly spend limit\n\n" +
		"────────────────────────────────────────\n❯ \n────────────────────────────────────────\n  ? for shortcuts\n"
	got, s := run(t, cfg, []scripted{{pane: limit, work: "7"}, {pane: limit, work: "7"}})
	want := "MONITOR · agent · STALLED · work=7 · progress=? · not nudged: usage limit, no reset time shown; looked at again each interval"
	if diff := cmp.Diff([]string{want + " · operator told", "→ alert: usage-limit", want}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if !s.UsageUntil.IsZero() {
		t.Errorf("a reset time was made up: %v", s.UsageUntil)
	}
}

// TestConfirmPastTheReset: the check before typing reads a usage limit's
// line as the decision did. The same line, its reset passed when the nudge
// was decided, lets the nudge go; another limit's line holds it.
func TestConfirmPastTheReset(t *testing.T) {
	pane := func(line string) classify.Result {
		return classify.ClassifyText("⏺ Working.\n  ⎿  "+line+"\n\n────────────────────────────────────────\n❯ \n"+
			"────────────────────────────────────────\n  ? for shortcuts\n", classify.Options{Work: classify.WorkReading(probe.Count(7)), WorkPresent: true})
	}
	judged := pane("You've hit your 5-hour limit · resets 6:12am (UTC)")
	p := NewPending("001.nudge", Action{Kind: Nudge, Text: "go on"}, judged, t0)
	if p.PastReset == "" {
		t.Fatal("a nudge decided over a usage limit does not say it is past its reset")
	}
	if why, _ := Confirm(BeforeTyping, p, judged, judged, nil, Humans{}); why != "" {
		t.Errorf("the same screen was refused: %s", why)
	}
	other := pane("You've hit your weekly limit · resets Dec 5, 9am (UTC)")
	if why, _ := Confirm(BeforeTyping, p, other, other, nil, Humans{}); why != classify.HoldUsageLimit.Reason() {
		t.Errorf("another limit's line: %q, want it held for the limit", why)
	}
	plain := NewPending("001.nudge", Action{Kind: Nudge, Text: "go on"}, pane("Done."), t0)
	if why, _ := Confirm(BeforeTyping, plain, judged, judged, nil, Humans{}); why != classify.HoldUsageLimit.Reason() {
		t.Errorf("a limit that came after the decision: %q, want it held for the limit", why)
	}
}

func TestWitness(t *testing.T) {
	fresh := func(status string) *Witness {
		return &Witness{Status: status, WaitingFor: "permission prompt", Updated: t0.Add(-time.Minute)}
	}
	tests := []struct {
		name    string
		pane    string
		witness *Witness
		want    string
		nudges  bool
	}{
		{"agrees", idle, fresh("idle"), "MONITOR · agent · STALLED · work=7 · progress=? · nudged (1/2)", true},
		{"busy vetoes a nudge", idle, fresh("busy"),
			"MONITOR · agent · STALLED · work=7 · progress=? · not nudged: the agent's own status says busy, though the screen reads STALLED", false},
		{"waiting vetoes a nudge", idle, fresh("waiting"),
			"MONITOR · agent · STALLED · work=7 · progress=? · not nudged: the agent's own status says waiting (permission prompt), though the screen reads STALLED", false},
		{"idle under a spinner is said, not acted on", busy, fresh("idle"),
			"MONITOR · agent · WORKING · work=7 · progress=? · nudges 0/2 · 09:00:00 · the agent's own status says idle, the screen reads WORKING", false},
		{"no witness", idle, nil, "MONITOR · agent · STALLED · work=7 · progress=? · nudged (1/2)", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := Input{Now: t0, Screen: classify.ClassifyText(tt.pane, classify.Options{Work: classify.WorkReading(probe.Count(7)), WorkPresent: true}),
				Work: probe.Read("7", true), WorkPresent: true, Witness: tt.witness}
			s, o := Step(State{Polls: 1}, cfg, in)
			if o.Line != tt.want {
				t.Errorf("line\n got %s\nwant %s", o.Line, tt.want)
			}
			if nudged := len(o.Actions) == 1 && o.Actions[0].Kind == Nudge; nudged != tt.nudges {
				t.Errorf("nudged = %v, want %v", nudged, tt.nudges)
			}
			if tt.witness != nil && s.WitnessAgreed+s.WitnessDisagreed != 1 {
				t.Errorf("the witness was not counted: %+v", s)
			}
		})
	}
}

func TestParseWitness(t *testing.T) {
	now := time.UnixMilli(1795981115203).Add(30 * time.Second)
	file := `{"pid":1337,"version":"2.1.332","tmux":"claude:@0.%0","status":"waiting","waitingFor":"permission prompt","updatedAt":1795981115203}`
	w, err := probe.ParseWitness([]byte(file), "claude:@0.%0", now)
	if err != nil || w.Status != "waiting" || w.WaitingFor != "permission prompt" || w.Version != "2.1.332" {
		t.Fatalf("ParseWitness = %+v, %v", w, err)
	}
	for name, c := range map[string]struct {
		data string
		pane string
		now  time.Time
	}{
		"another pane": {file, "claude:@1.%3", now},
		"stale":        {file, "claude:@0.%0", now.Add(WitnessMaxAge)},
		"not json":     {"{", "", now},
		"odd status":   {`{"status":"thinking","updatedAt":1795981115203}`, "", now},
		"no time":      {`{"status":"idle"}`, "", now},
	} {
		if _, err := probe.ParseWitness([]byte(c.data), c.pane, c.now); err == nil {
			t.Errorf("%s: a file that must not count was accepted", name)
		}
	}
}

// TestAProbesComplaintIsSaidWhenItChanges: a failing probe's reason is on
// the line when it starts and when it changes, not on every line while it
// lasts; a probe that reads again and fails again is said again.
func TestAProbesComplaintIsSaidWhenItChanges(t *testing.T) {
	const gone = "exit 2: grep: TODO.md: No such file or directory"
	got, _ := run(t, cfg, []scripted{
		{pane: busy, progress: "41", work: "?", workErr: gone},
		{pane: busy, progress: "41", work: "?", workErr: gone},
		{pane: busy, progress: "41", work: "?", workErr: "exit 1: permission denied"},
		{pane: busy, progress: "41", work: "?", workErr: "exit 1: permission denied", progressErr: "timed out"},
		{pane: busy, progress: "41", work: "7"},
		{pane: busy, progress: "41", work: "?", workErr: gone},
	})
	var notes []string
	for i, l := range got {
		_, note, _ := strings.Cut(l, ":00 · ")
		notes = append(notes, fmt.Sprintf("%d %s", i, note))
	}
	want := []string{
		"0 work probe: " + gone,
		"1 ",
		"2 work probe: exit 1: permission denied",
		"3 progress probe: timed out · work probe: exit 1: permission denied",
		"4 ",
		"5 work probe: " + gone,
	}
	if diff := cmp.Diff(want, notes); diff != "" {
		t.Errorf("(-want +got):\n%s\nlines:\n%s", diff, strings.Join(got, "\n"))
	}
}

func TestAFailedProbeDoesNotEndABlockedSpell(t *testing.T) {
	got, _ := run(t, cfg, []scripted{
		{pane: idle, work: "0"},
		{pane: idle, work: "oops"}, // unreadable: fails open, STALLED
		{pane: idle, work: "0"},
	})
	var alerts []string
	for _, l := range got {
		if strings.HasPrefix(l, "→ alert") {
			alerts = append(alerts, l)
		}
	}
	if diff := cmp.Diff([]string{"→ alert: blocked"}, alerts); diff != "" {
		t.Errorf("alerts (-want +got):\n%s\nlines:\n%s", diff, strings.Join(got, "\n"))
	}
}

// TestTargetGoneEscalatedOnce: captures that fail for ten minutes mean the
// watched session is gone: said and escalated once, target_gone set, and
// cleared by the first capture that works.
func TestTargetGoneEscalatedOnce(t *testing.T) {
	var s State
	var lines []string
	alerts := 0
	for i := range 14 {
		var o Outcome
		s, o = Step(s, cfg, Input{Now: t0.Add(time.Duration(i) * time.Minute), CaptureError: "can't find session: =agent"})
		lines = append(lines, o.Line)
		waits := 0
		for _, a := range o.Actions {
			switch {
			case a.Kind == Wait && a.Wait == GoneInterval:
				waits++
			case a.Kind == Alert && strings.Contains(a.Alert.Text, "the watched session is gone"):
				alerts++
			default:
				t.Errorf("poll %d: action %+v, want the target-gone alert or the slower pace", i, a)
			}
		}
		if want := map[bool]int{true: 1, false: 0}[i >= 10]; waits != want {
			t.Errorf("poll %d: %d waits, want %d (a slower pace once the session is gone)", i, waits, want)
		}
		if want := i >= 10; s.TargetGone != want {
			t.Errorf("poll %d (%d min of failures): TargetGone = %v, want %v", i, i, s.TargetGone, want)
		}
	}
	if alerts != 1 {
		t.Errorf("%d alerts, want one:\n%s", alerts, strings.Join(lines, "\n"))
	}
	if want := "MONITOR · agent · ? · capture failed: can't find session: =agent; the watched session is gone, escalated; polling slower"; lines[10] != want {
		t.Errorf("line at ten minutes = %q, want %q", lines[10], want)
	}
	if !strings.Contains(lines[13], "the watched session is gone (since 09:00:00), polling slower") {
		t.Errorf("line after = %q", lines[13])
	}
	s, o := Step(s, cfg, Input{Now: t0.Add(15 * time.Minute), Screen: classify.ClassifyText(busy, classify.Options{})})
	if s.TargetGone || s.CaptureFailures != 0 || !strings.Contains(o.Line, "the watched session is back") {
		t.Errorf("after a capture: TargetGone %v, failures %d, line %q", s.TargetGone, s.CaptureFailures, o.Line)
	}
}

func TestStateCheck(t *testing.T) {
	for _, s := range []State{
		{Polls: -1}, {Polls: 1 << 62}, {Budget: probe.Budget{Used: -1}},
		{Budget: probe.Budget{Limit: 1 << 50}}, {WitnessAgreed: -3}, {CaptureFailures: -1},
	} {
		if s.Check() == nil {
			t.Errorf("Check(%+v) = nil, want an error", s)
		}
	}
	if err := (State{Version: 1, Polls: 3, Budget: probe.NewBudget(5)}).Check(); err != nil {
		t.Errorf("a sound state: %v", err)
	}
}

// TestQuestionKeyedByItsFrame: two questions whose relayed dialogs read
// the same (the same question line and options) but whose frames differ
// (another command, another diff above it) are two pages; the same frame,
// with our own echo masked, is one. Each is paged on its second capture.
func TestQuestionKeyedByItsFrame(t *testing.T) {
	dialog := []classify.Line{{N: 5, Text: " Do you want to proceed?"}, {N: 6, Text: " ❯ 1. Yes"}, {N: 7, Text: "   2. No"}}
	screen := func(command string) classify.Result {
		body := []classify.Line{{N: 1, Text: "⏺ Cleaning up."}, {N: 2, Text: ""}, {N: 3, Text: " Bash command"}, {N: 4, Text: "   " + command}}
		return classify.Result{State: classify.Question, Live: dialog, Body: append(body, dialog...)}
	}
	var s State
	pages := 0
	for i, cmd := range []string{"rm -rf tmp/a", "rm -rf tmp/a", "rm -rf tmp/b", "rm -rf tmp/b"} {
		var o Outcome
		s, o = Step(s, cfg, Input{Now: t0.Add(time.Duration(i) * time.Minute), Screen: screen(cmd)})
		for _, a := range o.Actions {
			if a.Kind == Alert {
				pages++
			}
		}
		if want := []int{0, 1, 1, 2}[i]; pages != want {
			t.Errorf("poll %d (%s): %d pages so far, want %d: %s", i, cmd, pages, want, o.Line)
		}
	}
	// Our own echo in the frame does not make a question new.
	a, b := screen("continue with the next step, please"), screen("")
	m := maskAll("continue with the next step, please")
	if questionKey(alert.Alert{}, a, m) != questionKey(alert.Alert{}, b, m) {
		t.Error("a frame that differs only by our own echo keys differently")
	}
}

// maskAll masks one text wherever it appears.
type maskAll string

func (m maskAll) Mask(line string) string { return strings.ReplaceAll(line, string(m), "") }

// TestWithhold: a nudge the watcher cannot record or save is taken out of
// the outcome, its budget given back, and the line and history say so,
// whatever else the line says beside it (no wording is read back).
func TestWithhold(t *testing.T) {
	opt := classify.Options{Work: classify.WorkReading(probe.Read("3", true)), WorkPresent: true}
	in := Input{Now: t0, Screen: classify.ClassifyText(idle, opt), Work: probe.Read("3", true), WorkPresent: true,
		Progress: probe.Read("7", true), ProgressPresent: true}
	next, out := Step(State{}, cfg, in)
	if !strings.Contains(out.Line, "nudged (1/2)") || len(out.Actions) != 1 {
		t.Fatalf("the poll did not nudge: %s", out.Line)
	}
	got, withheld := Withhold(next, out, "the state could not be saved")
	want := strings.Replace(out.Line, "nudged (1/2)", "not nudged (the state could not be saved)", 1)
	if d := cmp.Diff(want, withheld.Line); d != "" {
		t.Errorf("line (-want +got):\n%s", d)
	}
	if len(withheld.Actions) != 0 || got.Budget.Used != 0 {
		t.Errorf("actions %v, budget %v: the nudge was not taken back", withheld.Actions, got.Budget)
	}
	var names []string
	for _, e := range withheld.Events {
		names = append(names, e.Name)
	}
	if !slices.Contains(names, "nudge_not_typed") || slices.Contains(names, "nudge") {
		t.Errorf("events %q", names)
	}
	// A poll that nudged nothing keeps its line.
	_, quiet := Step(State{}, cfg, Input{Now: t0, Screen: classify.ClassifyText(busy, opt)})
	_, same := Withhold(State{}, quiet, "x")
	if same.Line != quiet.Line {
		t.Errorf("a line without a nudge changed: %q → %q", quiet.Line, same.Line)
	}
}

// TestNoAgentIsItsOwnReading: a stopped screen no agent drew (a shell, an
// editor, the wrong window) reads NO AGENT, whatever the work probe says:
// never nudged, never paged as a stall or a block.
func TestNoAgentIsItsOwnReading(t *testing.T) {
	for _, pane := range []string{
		"user@box:~/src/shop$ ls\nmain.go  go.mod\nuser@box:~/src/shop$ \n",
		"package main\n\nfunc main() {\n}\n~\n~\n~\n\"main.go\" 4L, 32B\n",
	} {
		for _, work := range []string{"0", "5"} {
			opt := classify.Options{Work: classify.WorkReading(probe.Read(work, true)), WorkPresent: true}
			var s State
			for i := range 3 {
				in := Input{Now: t0.Add(time.Duration(i) * time.Minute), Screen: classify.ClassifyText(pane, opt),
					Work: probe.Read(work, true), WorkPresent: true}
				var out Outcome
				s, out = Step(s, cfg, in)
				if !strings.Contains(out.Line, " · NO AGENT · ") || !strings.Contains(out.Line, "no agent recognised: is the agent in this pane?") {
					t.Errorf("work=%s: %q", work, out.Line)
				}
				if len(out.Actions) != 0 {
					t.Errorf("work=%s: actions %+v on a screen no agent drew", work, out.Actions)
				}
			}
		}
	}
}

// TestFailureFloodIsOneAlert: a pane that prints three hundred failure
// lines in one poll gives one alert quoting the first ones and counting the
// rest, and one event; the next poll of the same screen gives none.
func TestFailureFloodIsOneAlert(t *testing.T) {
	var b strings.Builder
	for i := range 300 {
		fmt.Fprintf(&b, "--- FAIL: TestCase%03d exit code 1\n", i)
	}
	flood := b.String()
	got, s := run(t, cfg, []scripted{
		{pane: busy, work: "7"},
		{pane: busy, work: "7", extra: flood},
		{pane: busy, work: "7", extra: flood},
	})
	var alerts []string
	for _, l := range got {
		if strings.HasPrefix(l, "→ alert") {
			alerts = append(alerts, l)
		}
	}
	if diff := cmp.Diff([]string{"→ alert: failure"}, alerts); diff != "" {
		t.Errorf("alerts (-want +got):\n%s\nlines:\n%s", diff, strings.Join(got, "\n"))
	}
	if !strings.Contains(strings.Join(got, "\n"), "(and ") {
		t.Errorf("the line does not count the rest:\n%s", strings.Join(got, "\n"))
	}
	_ = s
	in := Input{Now: t0, Screen: classify.ClassifyText(busy, classify.Options{})}
	_, first := Step(State{}, cfg, in)
	in.Now, in.Screen = t0.Add(time.Minute), classify.ClassifyText(flood+busy, classify.Options{})
	_, out := Step(State{Polls: 1, Seen: []string{}}, cfg, in)
	_ = first
	var n, events int
	for _, a := range out.Actions {
		if a.Kind == Alert {
			n++
			if !strings.Contains(a.Alert.FailLine, "… and ") {
				t.Errorf("the alert does not count the lines it leaves out: %q", a.Alert.FailLine)
			}
		}
	}
	for _, e := range out.Events {
		if e.Name == "failure" {
			events++
		}
	}
	if n > 1 || events > 1 {
		t.Errorf("%d alerts and %d failure events for one poll's flood", n, events)
	}
}

// TestStateKeepsNoPaneText: what the state keeps of the screen to diff the
// next poll, to latch failures, and to check a pending nudge against, is a
// digest of each line, so a key the agent printed never lands in
// state.json or pending.json; the diff and the latch work as before, and a
// state an older version wrote (the lines themselves) still latches.
func TestStateKeepsNoPaneText(t *testing.T) {
	const key = "sk-proj-Zx9fQ2mXk7LpZ0aB3cD4eF5gH6iJ7kL8mN9oP0qR1sT2"
	fail := "⏺ Bash(deploy)\n  ⎿  Error: auth failed for OPENAI_API_KEY=" + key + " (exit code 1)"
	got, s := run(t, cfg, []scripted{
		{pane: busy, work: "7"},
		{pane: idle, work: "7", extra: fail},
		{pane: idle, work: "7", extra: fail},
	})
	alerts := 0
	for _, l := range got {
		if l == "→ alert: failure" {
			alerts++
		}
	}
	if alerts != 1 {
		t.Errorf("%d failure alerts, want 1:\n%s", alerts, strings.Join(got, "\n"))
	}
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{key, "Zx9fQ2mXk7Lp"} {
		if strings.Contains(string(data), secret) {
			t.Errorf("state.json keeps %q:\n%s", secret, data)
		}
	}
	screen := classify.ClassifyText(fail+"\n"+idle, classify.Options{})
	pending, _ := json.Marshal(NewPending("001.nudge", Action{Kind: Nudge, Text: "go on"}, screen, t0))
	if strings.Contains(string(pending), "Zx9fQ2mXk7Lp") || strings.Contains(string(pending), "Brewed") {
		t.Errorf("pending.json keeps pane text:\n%s", pending)
	}

	// A state an older version wrote latched the line itself; with no
	// lines seen, every line is new to the diff, and only the latch can
	// keep the failure quiet.
	old := State{Polls: 2}
	for _, l := range meaningful(screen) {
		if classify.IsFailure(l) {
			old.FailureLatch = append(old.FailureLatch, l)
		}
	}
	if len(old.FailureLatch) == 0 {
		t.Fatal("the screen shows no failure line: the test proves nothing")
	}
	_, o := Step(old, cfg, Input{Now: t0, Screen: screen, Work: probe.Read("7", true), WorkPresent: true})
	for _, a := range o.Actions {
		if a.Kind == Alert && a.Alert.Kind == alert.Failure {
			t.Errorf("a failure latched by an older state alerted again: %s", o.Line)
		}
	}
}

// TestUsageLimitResetOnTheNextLine: Codex CLI wraps its own lines, and the
// reset of its limit sits on the line under the one that says it (the real
// 0.171, at 100 columns, its reset 21:32 UTC).
func TestUsageLimitResetOnTheNextLine(t *testing.T) {
	data, err := os.ReadFile("../golden/panes/codex-171-100-limit-today.pane")
	if err != nil {
		t.Fatal(err)
	}
	opt := classify.Options{Work: classify.WorkReading(probe.Count(7)), WorkPresent: true}
	_, o := Step(State{}, cfg, Input{Now: t0, Screen: classify.ClassifyText(string(data), opt), Work: probe.Count(7), WorkPresent: true})
	if want := "not nudged: usage limit, resets 21:32 UTC (in 12h33m) · operator told"; !strings.HasSuffix(o.Line, want) {
		t.Errorf("line %q, want it to end %q", o.Line, want)
	}
}

// TestUsageLimitReadAfterItsReset: a limit's line first read after the time
// it shows (a watcher started late) is one whose reset passed: the agent
// is nudged to resume, not left a day.
func TestUsageLimitReadAfterItsReset(t *testing.T) {
	limit := "⏺ Working.\n  ⎿  You've hit your 5-hour limit · resets 8:40am (UTC)\n\n" +
		"────────────────────────────────────────\n❯ \n────────────────────────────────────────\n  ? for shortcuts\n"
	got, _ := run(t, cfg, []scripted{{pane: limit, work: "7"}})
	if want := "MONITOR · agent · STALLED · work=7 · progress=? · nudged (1/2)"; len(got) == 0 || got[0] != want {
		t.Errorf("lines %q, want %q first", got, want)
	}
}

// TestUsageLimitSaidAgainAfterTheResume: a reset read as passed that was
// still to come (a daily reset first read an hour after its clock time)
// gets one nudge; the same limit said again after it holds to tomorrow's
// reset, instead of a nudge every interval into a limited agent.
func TestUsageLimitSaidAgainAfterTheResume(t *testing.T) {
	limit := "⏺ Working.\n  ⎿  You've hit your weekly limit · resets 8:00am (UTC)\n\n" +
		"────────────────────────────────────────\n❯ \n────────────────────────────────────────\n  ? for shortcuts\n"
	again := "⏺ Working.\n  ⎿  You've hit your weekly limit · resets 8:00am (UTC)\n\n❯ " + cfg.NudgeText + "\n  ⎿  You've hit your weekly limit · resets 8:00am (UTC)\n\n" +
		"────────────────────────────────────────\n❯ \n────────────────────────────────────────\n  ? for shortcuts\n"
	got, s := run(t, cfg, []scripted{{pane: limit, work: "7"}, {pane: again, work: "7"}, {pane: again, work: "7"}})
	nudges := 0
	for _, l := range got {
		if strings.HasPrefix(l, "→ nudge: ") {
			nudges++
		}
	}
	if nudges != 1 {
		t.Errorf("nudged %d times, want once:\n%s", nudges, strings.Join(got, "\n"))
	}
	if want := time.Date(2026, 1, 6, 8, 0, 0, 0, time.UTC); !s.UsageUntil.Equal(want) {
		t.Errorf("held until %v, want tomorrow's reset %v", s.UsageUntil, want)
	}
}

// TestUsageResumeNotTypedIsTriedAgain: the resume past a reset that the
// loop did not type (the check before typing refused: a dialog came up) is
// given back whole: the next poll resumes again, rather than taking the
// same limit's line for one said anew after a resume and holding it to
// tomorrow; the resume notice goes only with the nudge that is typed, and
// once.
func TestUsageResumeNotTypedIsTriedAgain(t *testing.T) {
	limit := "⏺ Working.\n  ⎿  You've hit your 5-hour limit · resets 8:40am (UTC)\n\n" +
		"────────────────────────────────────────\n❯ \n────────────────────────────────────────\n  ? for shortcuts\n"
	opt := classify.Options{Work: classify.WorkReading(probe.Count(7)), WorkPresent: true}
	in := Input{Now: t0, Screen: classify.ClassifyText(limit, opt), Work: probe.Count(7), WorkPresent: true}
	s := State{UsagePaged: LineKey("  ⎿  You've hit your 5-hour limit · resets 8:40am (UTC)")}
	s.Polls = 3
	var o Outcome
	notices := func(o Outcome) (n int) {
		for _, a := range o.Actions {
			if a.Kind == Alert && a.Alert.Kind == alert.Notice {
				if !a.OnTyped {
					t.Errorf("a resume notice not held for its nudge: %+v", a)
				}
				n++
			}
		}
		return n
	}
	s, o = Step(s, cfg, in)
	nudge := o.Actions[0]
	if nudge.Kind != Nudge || nudge.Resumes == "" || notices(o) != 1 {
		t.Fatalf("the first poll past the reset: %q %+v", o.Line, o.Actions)
	}
	s = s.Refund(nudge.Resumes)
	in.Now = t0.Add(2 * cfg.Interval).Add(time.Minute)
	s, o = Step(s, cfg, in)
	if len(o.Actions) == 0 || o.Actions[0].Kind != Nudge || notices(o) != 1 {
		t.Fatalf("the poll after a resume not typed: %q %+v (held until %v)", o.Line, o.Actions, s.UsageUntil)
	}
	s = s.Typed(Pending{Resumes: o.Actions[0].Resumes})
	if s.UsageResumed == "" {
		t.Errorf("a resume typed is not marked told")
	}
	in.Now = in.Now.Add(time.Minute)
	if _, o = Step(s, cfg, in); notices(o) != 0 {
		t.Errorf("told of the resume twice: %q", o.Line)
	}
}

// TestHeldSplitsTheLineAtItsNudge: the held line says, once typed, what the
// poll's line said; otherwise what became of the nudge in its place.
func TestHeldSplitsTheLineAtItsNudge(t *testing.T) {
	opt := classify.Options{Work: classify.WorkReading(probe.Count(7)), WorkPresent: true}
	_, o := Step(State{}, cfg, Input{Now: t0, Screen: classify.ClassifyText(idle, opt), Work: probe.Count(7), WorkPresent: true})
	h, ok := o.Held()
	if !ok {
		t.Fatalf("no nudge held in %q", o.Line)
	}
	if h.Say(h.Nudge) != o.Line {
		t.Errorf("held %+v says %q, want the line %q", h, h.Say(h.Nudge), o.Line)
	}
	if got := h.Say("nudge not typed: why"); strings.Contains(got, "nudged") || !strings.Contains(got, " · nudge not typed: why") {
		t.Errorf("refused: %q", got)
	}
	_, w := Withhold(State{}, o, "why")
	if _, ok := w.Held(); ok {
		t.Errorf("a withheld nudge's line is held: %q", w.Line)
	}
}

// TestGeminiQuotaHolds: the real Gemini CLI 0.61 left at its API error
// after a 429 (the human chose Stop on its dialog) holds: to the retry
// delay the API gave, its words wrapped over several lines in a narrow
// pane, or with no time shown for a daily quota.
func TestGeminiQuotaHolds(t *testing.T) {
	for _, c := range []struct{ pane, want string }{
		{"gemini-061-100-quota-minute-stopped", "not nudged: usage limit, resets 11:00 UTC (in 2h01m)"},
		{"gemini-061-60-quota-minute-stopped", "not nudged: usage limit, resets 11:00 UTC (in 2h01m)"},
		{"gemini-061-100-quota-daily-stopped", "not nudged: usage limit, no reset time shown; looked at again each interval"},
		{"gemini-061-60-quota-daily-stopped", "not nudged: usage limit, no reset time shown; looked at again each interval"},
	} {
		data, err := os.ReadFile("../golden/panes/" + c.pane + ".pane")
		if err != nil {
			t.Fatal(err)
		}
		opt := classify.Options{Work: classify.WorkReading(probe.Count(7)), WorkPresent: true}
		_, o := Step(State{}, cfg, Input{Now: t0, Screen: classify.ClassifyText(string(data), opt), Work: probe.Count(7), WorkPresent: true})
		if !strings.Contains(o.Line, c.want) || len(o.Actions) != 1 || o.Actions[0].Kind != Alert {
			t.Errorf("%s: line %q, actions %+v; want it to say %q and page once", c.pane, o.Line, o.Actions, c.want)
		}
	}
}

// TestNudgingOff: with --nudge-budget 0 nothing is typed, and a stall is
// told once: progress advancing while it lasts (a human's commits) neither
// resets a budget there is none of nor pages again; the next stall, after
// the agent worked, is told once more.
func TestNudgingOff(t *testing.T) {
	off := Config{Target: "agent", NudgeBudget: 0, NudgeText: "go on", HasProgress: true}
	got, _ := run(t, off, []scripted{
		{pane: idle, work: "7", progress: "41"},
		{pane: idle, work: "7", progress: "42"},
		{pane: idle, work: "7", progress: "43"},
		{pane: busy, work: "7", progress: "44"},
		{pane: idle, work: "7", progress: "44"},
	})
	want := []string{
		"MONITOR · agent · STALLED · work=7 · progress=41 · not nudged: nudging is off (--nudge-budget 0), escalated: needs a human",
		"→ alert: budget-exhausted",
		"MONITOR · agent · STALLED · work=7 · progress=42 · not nudged: nudging is off (--nudge-budget 0), operator told",
		"MONITOR · agent · STALLED · work=7 · progress=43 · not nudged: nudging is off (--nudge-budget 0), operator told",
		"MONITOR · agent · WORKING · work=7 · progress=44 · nudges 0/0 · 09:03:00",
		"MONITOR · agent · STALLED · work=7 · progress=44 · not nudged: nudging is off (--nudge-budget 0), escalated: needs a human",
		"→ alert: budget-exhausted",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestAWitnessSpeaksForItsOwnAgent: a witness is weighed only for the
// agent whose description names its kind of file. A Qwen Code record that
// says its turn is open stops a nudge into a Qwen Code screen that reads
// STALLED; a Codex log found in the same directory does not, nor does a
// Qwen Code record for an agent an operator described without one; one
// that names qwen-chat has it weighed.
func TestAWitnessSpeaksForItsOwnAgent(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "golden", "real-qwen", "qwen-80-thought.pane"))
	if err != nil {
		t.Fatal(err)
	}
	qwen := string(b)
	tern := func(witness string) *classify.Local {
		w := ""
		if witness != "" {
			w = `, "witness": "` + witness + `"`
		}
		l, err := classify.ParseLocal([]byte(`{"agents": [{"name": "Tern", "box": {"top": "^─{3,}$", "prompt": "^tern> ?(.*)$", "bottom": "^─{3,}$"}`+w+`}],
			"rules": [{"agent": "tern", "name": "tern works", "region": "above", "pattern": "^tern is working$", "verdict": "working"}]}`), "tern.json")
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	ternPane := "  The answer.\n\n" + strings.Repeat("─", 40) + "\ntern> \n" + strings.Repeat("─", 40) + "\n"
	busy := func(kind string) *Witness { return &Witness{Kind: kind, Status: "busy", Updated: t0} }
	for _, tt := range []struct {
		name    string
		pane    string
		local   *classify.Local
		witness *Witness
		nudged  bool
	}{
		{"Qwen Code's record, for Qwen Code", qwen, nil, busy(probe.QwenChat), false},
		{"a Codex log, for Qwen Code", qwen, nil, busy(probe.CodexLog), true},
		{"a Claude Code status, for Qwen Code", qwen, nil, busy(probe.ClaudeStatus), true},
		{"a witness of no kind", qwen, nil, busy(""), false},
		{"Qwen Code's record, for an agent described without one", ternPane, tern(""), busy(probe.QwenChat), true},
		{"Qwen Code's record, for an agent described with it", ternPane, tern(probe.QwenChat), busy(probe.QwenChat), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			screen := classify.ClassifyText(tt.pane, classify.Options{Local: tt.local, Work: classify.WorkReading(probe.Count(7)), WorkPresent: true})
			if screen.State != classify.Stalled {
				t.Fatalf("the screen reads %s (%s), want STALLED", screen.State, screen.Rule)
			}
			in := Input{Now: t0, Screen: screen, Local: tt.local, Work: probe.Read("7", true), WorkPresent: true, Witness: tt.witness}
			_, o := Step(State{Polls: 1}, cfg, in)
			if nudged := len(o.Actions) == 1 && o.Actions[0].Kind == Nudge; nudged != tt.nudged {
				t.Errorf("nudged = %v, want %v (%s)", nudged, tt.nudged, o.Line)
			}
		})
	}
}
