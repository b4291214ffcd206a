package codex_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/codex"
	"github.com/omega-monitor/omega-monitor/internal/expect"
	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
	"github.com/omega-monitor/omega-monitor/internal/termagent"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
	"github.com/omega-monitor/omega-monitor/probe"
)

// TestCaptureUsageLimit (-capture) drives the real Codex CLI into its usage
// limit (a 429 of type usage_limit_reached with the reset, as the ChatGPT
// backend sends it), a reset later today and one days away, and keeps each
// screen as a golden case: held, never nudged before the reset.
func TestCaptureUsageLimit(t *testing.T) {
	if !*termagent.CaptureFlag {
		t.Skip("captures only with -capture")
	}
	bin := codex.Pin.Binary(t)
	for _, c := range []struct {
		name string
		in   time.Duration
	}{
		{"today", 2 * time.Hour},
		{"days", 3 * 24 * time.Hour},
	} {
		for _, width := range []int{100, 60} {
			t.Run(fmt.Sprintf("%s-%d", c.name, width), func(t *testing.T) {
				t.Parallel()
				reset := time.Now().Add(c.in).Truncate(time.Minute).Add(37 * time.Second)
				api := fakeapi.NewResponses(t, fakeapi.Rule{Reply: fakeapi.CodexUsageLimit("plus", reset)})
				s := codex.Start(t, testenv.Tmux(t), codex.Config{Binary: bin, API: api.URL, Width: width, Height: 40, Name: fmt.Sprintf("codex%s%d", c.name, width)})
				s.Settle(t, 60*time.Second, "the composer", true, codex.Idle)
				s.Type(t, "go on with the plan")
				snap := s.Settle(t, 60*time.Second, "the limit's line", true, func(screen string) bool {
					return strings.Contains(screen, "usage limit") && codex.Idle(screen)
				})
				w := expect.Want{State: "STALLED", Work: "7", HasWork: true, Hold: "usage-limit", Agent: "Codex CLI", Version: codex.Version,
					Why: fmt.Sprintf("real Codex CLI %s, %d columns, %%s: a 429 usage_limit_reached, reset %s; held until the reset, never nudged before it (issue 42)",
						codex.Version, width, reset.UTC().Format(time.RFC3339))}
				opt := classify.Options{Work: classify.WorkReading(probe.Read("7", true)), WorkPresent: true}
				termagent.WriteCase(t, filepath.Join("..", "..", "golden", "panes"), fmt.Sprintf("codex-171-%d-limit-%s", width, c.name), snap, w, opt)
			})
		}
	}
}
