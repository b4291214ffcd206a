package pi_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
	"github.com/omega-monitor/omega-monitor/internal/pi"
	"github.com/omega-monitor/omega-monitor/internal/termagent"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// realDir holds the captures of the real Pi.
var realDir = filepath.Join("..", "..", "golden", "real-pi")

// TestRealGolden classifies every capture of the real Pi against what the
// harness made it do.
func TestRealGolden(t *testing.T) {
	termagent.CheckGolden(t, realDir, "Pi")
}

// aborted says Pi ended a turn the operator stopped.
func aborted(screen string) bool {
	return strings.Contains(screen, "Operation aborted") && pi.Idle(screen)
}

func tour() []termagent.Step {
	const stalled, working, question = classify.Stalled, classify.Working, classify.Question
	return []termagent.Step{
		{Name: "fresh", Check: pi.Idle, State: stalled,
			Label: "just started; nothing asked yet", Why: "the empty editor between its rules, the footer under it"},
		{Name: "working", Act: termagent.TypeText("please " + fakeapi.TriggerHold), Check: termagent.Contains("Working..."), Moving: true, State: working,
			Label: "sent a prompt the fake model holds 40 s before its first token", Why: "the spinner line above the editor"},
		{Name: "working-interrupted", Act: termagent.Press("Escape"), Check: aborted, State: stalled, Hold: classify.HoldInterrupt, EHold: classify.HoldInterrupt,
			Label: "pressed Esc while the spinner showed", Why: "Operation aborted: the human owns this stop"},
		{Name: "streaming", Act: termagent.TypeText("please " + fakeapi.TriggerStream), Check: termagent.Contains("step4", "Working..."), Moving: true, State: working,
			Label: "sent a prompt the fake model answers slowly, a word a second", Why: "the answer streams above the spinner line"},
		{Name: "stream-interrupted", Act: termagent.Press("Escape"), Check: aborted, State: stalled, Hold: classify.HoldInterrupt, EHold: classify.HoldInterrupt,
			Label: "pressed Esc while the answer streamed", Why: "Operation aborted: the human owns this stop"},
		{Name: "ran-command", Act: termagent.TypeText("now " + fakeapi.TriggerBash), Check: func(screen string) bool {
			return strings.Contains(screen, "Took ") && pi.Idle(screen)
		}, State: stalled,
			Label: "the fake model called bash; Pi ran it without asking", Why: "the command ran and the turn ended: Pi has no approval dialog"},
		{Name: "retrying", Act: termagent.TypeText("now " + fakeapi.TriggerError500), Check: termagent.Contains("Retrying ("), Moving: true, State: working,
			Label: "the fake API answers 500; Pi retries by itself", Why: "the retry line with its spinner: Pi goes on without a human"},
		{Name: "retry-cancelled", Act: termagent.Press("Escape"), Check: func(screen string) bool {
			return strings.Contains(screen, "Retry cancelled") && pi.Idle(screen)
		}, State: stalled, Hold: classify.HoldInterrupt, EHold: classify.HoldInterrupt,
			Label: "pressed Esc during the retries", Why: "the retries cancelled: the human owns this stop"},
		{Name: "draft", Act: func(t *testing.T, s *termagent.Session) {
			s.WaitFor(t, time.Minute, "the editor", pi.Idle)
			s.Draft(t, "a human draft, not sent")
		}, Check: termagent.Contains("a human draft, not sent"), State: stalled, Hold: classify.HoldDraft, EHold: classify.HoldDraft,
			Label: "typed a draft and did not send it", Why: "a human's draft in the editor"},
		{Act: termagent.Press("C-u")},
		{Name: "model-selector", Act: termagent.TypeText("/model"), Check: termagent.Contains("→ " + fakeapi.ChatModel), State: question,
			Label: "opened /model", Why: "Pi's selector in place of its editor: a human's choice, never typed into"},
		{Act: termagent.Press("Escape")},
	}
}

// TestCaptureGolden drives the real Pi through its tour at two widths and
// writes every moment into golden/real-pi. It runs only with -capture.
func TestCaptureGolden(t *testing.T) {
	prefix := func(width int) string { return fmt.Sprintf("pi-%d-", width) }
	termagent.CaptureAt(t, realDir, []int{40, 80}, prefix, func(t *testing.T, width int) {
		bin, prefix := pi.Pin.Binary(t), prefix(width)
		api := fakeapi.NewChat(t, fakeapi.TourRules()...)
		s := pi.Start(t, testenv.Tmux(t), pi.Config{Binary: bin, API: api.URL, Width: width, Name: fmt.Sprint("pi", width)})
		s.WaitFor(t, time.Minute, "the editor", pi.Idle)
		termagent.Tour(t, s, realDir, prefix, "Pi", pi.Version, tour())
		t.Logf("the fake API saw %q", api.Prompts())
		if u := api.Unknown(); len(u) > 0 {
			t.Logf("the fake API had no answer for %s", strings.Join(u, ", "))
		}
	})
}
