package claudecode_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/claudecode"
	"github.com/omega-monitor/omega-monitor/internal/expect"
	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
	"github.com/omega-monitor/omega-monitor/internal/termagent"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
	"github.com/omega-monitor/omega-monitor/probe"
)

// TestCaptureUsageLimit (-capture) drives the real Claude Code into each
// usage limit its service can send (a 429 whose unified rate-limit headers
// name the limit that bound, and its reset), and keeps each screen as a
// golden case: the limit's line as this release draws it, held, never
// nudged before its reset.
func TestCaptureUsageLimit(t *testing.T) {
	if !*termagent.CaptureFlag {
		t.Skip("captures only with -capture")
	}
	bin := claudecode.Binary(t)
	version, err := claudecode.BinaryVersion(t.Context(), bin)
	if err != nil {
		t.Fatal(err)
	}
	short := version[strings.LastIndex(version, ".")+1:]
	// 2.1.332 draws the 5-hour limit under the turn and continues by
	// itself at the reset ("Continuing automatically at 10:26pm"): held,
	// never nudged before it. A weekly limit, its own or a model's, asks
	// what to do (stop and wait, wait and continue, upgrade): a QUESTION,
	// relayed to the operator, never answered by the watcher.
	for _, c := range []struct {
		name, claim string
		in          time.Duration
		want        expect.Want
	}{
		{"5hour", "five_hour", 3 * time.Hour, expect.Want{State: "STALLED", Work: "7", HasWork: true, Hold: "usage-limit"}},
		{"weekly", "seven_day", 4 * 24 * time.Hour, expect.Want{State: "QUESTION"}},
		{"weekly-opus", "seven_day_opus", 30 * time.Hour, expect.Want{State: "QUESTION"}},
	} {
		for _, width := range []int{100, 60} {
			t.Run(fmt.Sprintf("%s-%d", c.name, width), func(t *testing.T) {
				t.Parallel()
				reset := time.Now().Add(c.in).Truncate(time.Minute).Add(37 * time.Second)
				api := fakeapi.New(t, fakeapi.Rule{Reply: fakeapi.UsageLimit(c.claim, reset)})
				hello := fakeapi.NewHello(t)
				s := claudecode.Start(t, testenv.Tmux(t), claudecode.Config{Binary: bin, API: api.URL, Mode: claudecode.Bypass, Width: width, Height: 40,
					NoKey: true, Env: append(hello.Env(), "CLAUDE_CODE_OAUTH_TOKEN=sk-ant-oat01-fake", "NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost")})
				defer func() { t.Logf("the proxy served %q", hello.Served()) }()
				s.Type(t, "go on with the plan")
				snap := s.Settle(t, 60*time.Second, "the limit's line", func(screen string) bool {
					return strings.Contains(screen, "limit") && strings.Contains(screen, "❯")
				})
				w := c.want
				w.Agent, w.Version = "Claude Code", version
				w.Why = fmt.Sprintf("real Claude Code %s, %d columns, %%s: a 429 naming the %s limit, reset %s; never typed into before it (issue 42)",
					version, width, c.claim, reset.UTC().Format(time.RFC3339))
				opt := classify.Options{}
				if w.HasWork {
					opt = classify.Options{Work: classify.WorkReading(probe.Read("7", true)), WorkPresent: true}
				}
				termagent.WriteCase(t, panesDir, fmt.Sprintf("claude-%s-%d-limit-%s", short, width, c.name), snap, w, opt)
			})
		}
	}
}
