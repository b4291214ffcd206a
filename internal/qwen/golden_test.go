package qwen_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
	"github.com/omega-monitor/omega-monitor/internal/qwen"
	"github.com/omega-monitor/omega-monitor/internal/termagent"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// realDir holds the captures of the real Qwen Code.
var realDir = filepath.Join("..", "..", "golden", "real-qwen")

// TestRealGolden classifies every capture of the real Qwen Code against
// what the harness made it do.
func TestRealGolden(t *testing.T) {
	termagent.CheckGolden(t, realDir, "Qwen Code")
}

// refused says the approval is gone and Qwen Code waits at its input.
func refused(screen string) bool {
	return !strings.Contains(screen, "Allow execution of:") && qwen.Idle(screen)
}

func tour() []termagent.Step {
	const stalled, working, question = classify.Stalled, classify.Working, classify.Question
	return []termagent.Step{
		{Name: "fresh", Check: qwen.Idle, State: stalled,
			Label: "just started; nothing asked yet", Why: "the input between its rules with its placeholder, the mode line under it"},
		{Name: "working", Act: termagent.TypeText("please " + fakeapi.TriggerHold), Check: termagent.Contains("esc to cancel"), Moving: true, State: working,
			Label: "sent a prompt the fake model holds 40 s before its first token", Why: "the spinner line with its timer, Enter to steer under the input"},
		{Name: "thought", Check: func(screen string) bool {
			return strings.Contains(screen, "Thought it through.") && qwen.Idle(screen)
		}, State: stalled,
			Label: "the held answer came, and the turn ended", Why: "the answer above the empty input, the mode line back"},
		{Name: "streaming", Act: termagent.TypeText("please " + fakeapi.TriggerStream), Check: termagent.Contains("step4", "esc to cancel"), Moving: true, State: working,
			Label: "sent a prompt the fake model answers slowly, a word a second", Why: "the answer streams above the spinner line"},
		{Name: "stream-interrupted", Act: termagent.Press("Escape"), Check: termagent.Contains("Request cancelled."), State: stalled, Hold: classify.HoldDraft, EHold: classify.HoldDraft,
			Label: "pressed Esc while the answer streamed", Why: "Request cancelled, and the prompt put back in the input: a draft, never typed over"},
		{Act: termagent.Press("C-u")},
		{Name: "approval", Act: termagent.TypeText("now " + fakeapi.TriggerBash), Check: termagent.Contains("Allow execution of:"), State: question,
			Label: "the fake model called run_shell_command with a command that writes", Why: "the command approval dialog"},
		{Name: "approval-refused", Act: termagent.Press("Escape"), Check: refused, State: stalled, Hold: classify.HoldInterrupt, EHold: classify.HoldInterrupt,
			Label: "pressed Esc on the approval dialog", Why: "the command was refused and the turn stopped: the human owns this stop"},
		{Act: func(t *testing.T, s *termagent.Session) { fakeapi.NotRan(t, s.Launch.Dir) }},
		{Name: "ran-command", Act: func(t *testing.T, s *termagent.Session) {
			s.Type(t, "again "+fakeapi.TriggerBash)
			s.WaitFor(t, time.Minute, "the approval dialog", termagent.Contains("Allow execution of:"))
			s.Keys(t, "Enter")
		}, Check: func(screen string) bool {
			return !strings.Contains(screen, "Allow execution of:") && qwen.Idle(screen)
		}, State: stalled,
			Label: "approved the command with Enter", Why: "the command ran and the turn ended"},
		{Name: "draft", Act: func(t *testing.T, s *termagent.Session) {
			s.WaitFor(t, time.Minute, "the input", qwen.Idle)
			s.Draft(t, "a human draft, not sent")
		}, Check: termagent.Contains("a human draft, not sent"), State: stalled, Hold: classify.HoldDraft, EHold: classify.HoldDraft,
			Label: "typed a draft and did not send it", Why: "a human's draft in the input"},
		{Act: termagent.Press("C-u")},
		{Name: "again-interrupted", Act: func(t *testing.T, s *termagent.Session) {
			s.Type(t, "please "+fakeapi.TriggerHold)
			s.WaitFor(t, time.Minute, "the spinner", termagent.Contains("esc to cancel"))
			s.Keys(t, "Escape")
		}, Check: termagent.Contains("Request cancelled."), State: stalled, Hold: classify.HoldDraft, EHold: classify.HoldDraft,
			Label: "pressed Esc while it waited for its first token", Why: "Request cancelled, and the prompt put back in the input: a draft, never typed over"},
		{Act: termagent.Press("C-u")},
	}
}

// TestCaptureGolden drives the real Qwen Code through its tour at two
// widths and writes every moment into golden/real-qwen. It runs only
// with -capture.
func TestCaptureGolden(t *testing.T) {
	prefix := func(width int) string { return fmt.Sprintf("qwen-%d-", width) }
	termagent.CaptureAt(t, realDir, []int{40, 80}, prefix, func(t *testing.T, width int) {
		bin, prefix := qwen.Pin.Binary(t), prefix(width)
		api := fakeapi.NewChat(t, fakeapi.TourRules()...)
		s := qwen.Start(t, testenv.Tmux(t), qwen.Config{Binary: bin, API: api.URL, Width: width, Name: fmt.Sprint("qwen", width)})
		termagent.Tour(t, s, realDir, prefix, "Qwen Code", qwen.Version, tour())
		t.Logf("the fake API saw %q", api.Prompts())
		if u := api.Unknown(); len(u) > 0 {
			t.Logf("the fake API had no answer for %s", strings.Join(u, ", "))
		}
	})
}
