package main

import (
	"strings"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/claudecode"
	"github.com/omega-monitor/omega-monitor/internal/codex"
	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// TestRealCodexUsageLimitResumedOnceAfterReset: the real Codex CLI stopped
// by its usage limit (the ChatGPT backend's 429, its reset a little over a
// minute away) gets no key before the reset, the operator is paged once
// with the reset as Codex shows it, and once the minute shown is over the
// agent is nudged once, which reaches the model, and the operator hears
// that it resumed (issue 42).
func TestRealCodexUsageLimitResumedOnceAfterReset(t *testing.T) {
	testenv.EndToEnd(t)
	setup := "start on the first step"
	api := fakeapi.NewResponses(t)
	omegaMonitor(t)
	bin := codex.Pin.Binary(t)
	t.Parallel()
	realProgram(t)
	s := codex.Start(t, testenv.Tmux(t), codex.Config{Binary: bin, API: api.URL})
	s.WaitFor(t, realTimeout, "the composer", codex.Idle)
	// The reset is worded when the limit is drawn, as a service does.
	reset := time.Now().Add(75 * time.Second)
	api.SetRules(fakeapi.Rule{Match: setup, Reply: fakeapi.CodexUsageLimit("plus", reset)},
		fakeapi.Rule{Reply: fakeapi.Text("Resumed: on with the second step.")})
	s.Type(t, setup)
	s.Settle(t, realTimeout, "the limit's line", true, func(screen string) bool {
		return strings.Contains(screen, "usage limit") && codex.Idle(screen)
	})
	r := watchAgent(t, s, "--nudge-budget", "3", "--nudge-text", agentNudge)
	// The nudge that resumes it; after that, the agent's next stop is any
	// other, and nudged within the budget as any other.
	lines := r.waitNudged("1/3", 3*time.Minute)
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(strings.Join(api.Prompts(), "\n"), agentNudge) && time.Now().Before(deadline) {
		time.Sleep(250 * time.Millisecond)
	}
	alerts := r.alerts()
	r.stop()

	held := 0
	for _, l := range lines {
		if strings.Contains(l, "not nudged: usage limit, resets ") {
			held++
		}
	}
	if held == 0 {
		t.Errorf("no line said the limit held:\n%s", strings.Join(lines, "\n"))
	}
	if got := nudgedLines(lines); len(got) != 1 {
		t.Errorf("nudged %d times by the reset's end, want once:\n%s", len(got), strings.Join(lines, "\n"))
	}
	var nudges []fakeapi.Request
	for _, q := range api.Requests() {
		if q.Text == agentNudge {
			nudges = append(nudges, q)
		}
	}
	switch {
	case len(nudges) == 0:
		t.Errorf("the model never heard the nudge: %q", api.Prompts())
	case nudges[0].Time.Before(reset):
		t.Errorf("the nudge reached the model at %s, before the reset at %s", nudges[0].Time.Format(time.RFC3339), reset.Format(time.RFC3339))
	case nudges[0].Time.After(reset.Truncate(time.Minute).Add(time.Minute + 10*time.Second)):
		t.Errorf("the nudge reached the model at %s, more than an interval after the minute of the reset (%s) was over", nudges[0].Time.Format(time.RFC3339), reset.Format(time.RFC3339))
	}
	var paged, resumed []string
	for _, a := range alerts {
		switch {
		case strings.Contains(a, "USAGE LIMIT"):
			paged = append(paged, a)
		case strings.Contains(a, "usage limit has reset"):
			resumed = append(resumed, a)
		}
	}
	shown := reset.Local().Format("3:04 PM")
	if len(paged) != 1 || !strings.Contains(paged[0], "try again at") || !strings.Contains(paged[0], "Codex CLI") {
		t.Errorf("pages %q: want one, naming the agent and its reset (Codex shows %s)", paged, shown)
	}
	if len(resumed) != 1 {
		t.Errorf("resume notices %q, want one", resumed)
	}
}

// TestRealClaudeUsageLimitHeldToTheReset: the real Claude Code on a
// subscription stopped by its 5-hour limit (the service's 429 with the
// unified rate-limit headers, the reset a little over a minute away) gets
// no key before the reset, and the operator is paged once with the reset
// as Claude Code shows it. At the reset Claude Code sends its turn again by
// itself ("Continuing automatically at"), which the model hears; nothing of
// ours is typed into a limited agent (issue 42).
func TestRealClaudeUsageLimitHeldToTheReset(t *testing.T) {
	testenv.EndToEnd(t)
	setup := "start on the first step"
	api := fakeapi.New(t)
	hello := fakeapi.NewHello(t)
	omegaMonitor(t)
	bin := claudecode.Binary(t)
	t.Parallel()
	realProgram(t)
	s := claudecode.Start(t, testenv.Tmux(t), claudecode.Config{Binary: bin, API: api.URL, Mode: claudecode.Bypass, NoKey: true,
		Env: append(hello.Env(), "CLAUDE_CODE_OAUTH_TOKEN=sk-ant-oat01-fake", "NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost")})
	// The reset is worded when the limit is drawn, as a service does.
	reset := time.Now().Add(75 * time.Second)
	api.SetRules(fakeapi.Rule{Match: setup, Reply: fakeapi.UsageLimit("five_hour", reset)})
	s.Type(t, setup)
	s.Settle(t, realTimeout, "the limit's line", func(screen string) bool {
		return strings.Contains(screen, "You've hit your 5-hour limit") && strings.Contains(screen, "❯")
	})
	r := watchClaude(t, s, false, "--nudge-budget", "3", "--nudge-text", agentNudge)
	lines := r.waitLine("not nudged: usage limit, resets", realTimeout)
	// Past the reset and the minute shown, and an interval more.
	for time.Now().Before(reset.Truncate(time.Minute).Add(time.Minute + 5*time.Second)) {
		time.Sleep(time.Second)
	}
	alerts := r.alerts()
	lines = r.linesSince(0)
	r.stop()
	for _, l := range lines {
		// Each line begins with its clock time, today's.
		at, err := time.ParseInLocation("15:04:05", strings.Fields(l + " x")[0], time.Local)
		if err != nil || !strings.Contains(l, "nudged") || strings.Contains(l, "not nudged") {
			continue
		}
		now := time.Now()
		at = time.Date(now.Year(), now.Month(), now.Day(), at.Hour(), at.Minute(), at.Second(), 0, time.Local)
		if at.Before(reset) {
			t.Errorf("nudged before the reset at %s: %s", reset.Format("15:04:05"), l)
		}
	}
	for _, q := range api.Requests() {
		if q.Text == agentNudge && q.Time.Before(reset) {
			t.Errorf("the nudge reached a limited agent at %s, before the reset at %s", q.Time.Format(time.RFC3339), reset.Format(time.RFC3339))
		}
	}
	var paged []string
	for _, a := range alerts {
		if strings.Contains(a, "USAGE LIMIT") {
			paged = append(paged, a)
		}
	}
	if len(paged) != 1 || !strings.Contains(paged[0], "5-hour limit") || !strings.Contains(paged[0], "resets") {
		t.Errorf("pages %q: want one, naming the limit and its reset", paged)
	}
	t.Logf("the model heard %q", api.Prompts())
}
