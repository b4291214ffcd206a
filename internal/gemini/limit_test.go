package gemini_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/expect"
	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
	"github.com/omega-monitor/omega-monitor/internal/gemini"
	"github.com/omega-monitor/omega-monitor/internal/termagent"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
	"github.com/omega-monitor/omega-monitor/probe"
)

// TestCaptureUsageLimit (-capture) drives the real Gemini CLI into its
// quota: the Gemini API's 429 RESOURCE_EXHAUSTED for a daily quota, and a
// per-minute quota whose retry delay is long, and keeps each screen.
func TestCaptureUsageLimit(t *testing.T) {
	if !*termagent.CaptureFlag {
		t.Skip("captures only with -capture")
	}
	bin := gemini.Pin.Binary(t)
	for _, c := range []struct {
		name  string
		reply fakeapi.Reply
	}{
		{"daily", fakeapi.GeminiDailyQuota("gemini-2.5-pro", 5*time.Hour)},
		{"minute", fakeapi.GeminiRateLimit("gemini-2.5-pro", 2*time.Hour)},
	} {
		for _, width := range []int{100, 60} {
			t.Run(fmt.Sprintf("%s-%d", c.name, width), func(t *testing.T) {
				t.Parallel()
				api := fakeapi.NewGemini(t, fakeapi.Rule{Reply: c.reply})
				s := gemini.Start(t, testenv.Tmux(t), gemini.Config{Binary: bin, API: api.URL, Width: width, Name: fmt.Sprintf("gemini%s%d", c.name, width)})
				s.Settle(t, 60*time.Second, "the composer", true, gemini.Idle)
				s.Type(t, "go on with the plan")
				dialog := s.Settle(t, 90*time.Second, "the quota's dialog", true, termagent.Contains("Usage limit reached", "Keep trying"))
				opt := classify.Options{Work: classify.WorkReading(probe.Read("7", true)), WorkPresent: true}
				dir := filepath.Join("..", "..", "golden", "panes")
				name := fmt.Sprintf("gemini-061-%d-quota-%s", width, c.name)
				why := fmt.Sprintf("real Gemini CLI %s, %d columns, %%s: a 429 RESOURCE_EXHAUSTED (%s quota)", gemini.Version, width, c.name)
				termagent.WriteCase(t, dir, name+"-dialog", dialog, expect.Want{State: "QUESTION", Work: "7", HasWork: true, Agent: "Gemini CLI", Version: gemini.Version,
					Why: why + ": its dialog asks whether to keep trying: relayed, never answered (issue 42)"}, opt)
				// The human stops: the limit's words stay in the history.
				s.Keys(t, "2")
				stopped := s.Settle(t, 60*time.Second, "the composer after Stop", true, gemini.Idle)
				t.Logf("after Stop:\n%s", stopped)
				termagent.WriteCase(t, dir, name+"-stopped", stopped, expect.Want{State: "STALLED", Work: "7", HasWork: true, Hold: "usage-limit", Agent: "Gemini CLI", Version: gemini.Version,
					Why: why + ": the human chose Stop; held, never nudged before the reset (issue 42)"}, opt)
			})
		}
	}
}
