package copilot_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/copilot"
	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
	"github.com/omega-monitor/omega-monitor/internal/termagent"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// realDir holds the captures of the real Copilot CLI.
var realDir = filepath.Join("..", "..", "golden", "real-copilot")

// TestRealGolden classifies every capture of the real Copilot CLI against
// what the harness made it do.
func TestRealGolden(t *testing.T) {
	termagent.CheckGolden(t, realDir, "Copilot CLI")
}

// cancelled says Copilot ended a turn the operator stopped.
func cancelled(screen string) bool {
	return strings.Contains(screen, "Operation cancelled by user") && copilot.Idle(screen)
}

func tour() []termagent.Step {
	const stalled, working, question = classify.Stalled, classify.Working, classify.Question
	return []termagent.Step{
		{Name: "trust", Check: termagent.Contains("Do you trust the files in this"), State: question,
			Label: "started in an untrusted folder", Why: "the folder trust dialog at start: answered at the terminal"},
		{Act: termagent.Press("Enter")},
		{Name: "fresh", Check: copilot.Idle, State: stalled,
			Label: "trusted the folder; nothing asked yet", Why: "the empty input between its rules, the mode line under it"},
		{Name: "working", Act: termagent.TypeText("please " + fakeapi.TriggerHold), Check: termagent.Contains("Working"), Moving: true, State: working,
			Label: "sent a prompt the fake model holds 40 s before its first token", Why: "the footer's spinner and esc esc to interrupt"},
		{Name: "thought", Check: func(screen string) bool {
			return strings.Contains(screen, "Thought it through.") && copilot.Idle(screen)
		}, State: stalled,
			Label: "the held answer came, and the turn ended", Why: "the answer above the empty input, the mode line back"},
		{Name: "streaming", Act: termagent.TypeText("please " + fakeapi.TriggerStream), Check: termagent.Contains("step4", "Working"), Moving: true, State: working,
			Label: "sent a prompt the fake model answers slowly, a word a second", Why: "the answer streams; the footer says it works"},
		{Name: "streamed", Check: func(screen string) bool {
			return strings.Contains(screen, "step60") && copilot.Idle(screen)
		}, State: stalled,
			Label: "the slow answer ended", Why: "a long answer above the empty input, the mode line back"},
		{Name: "approval", Act: termagent.TypeText("now " + fakeapi.TriggerBash), Check: termagent.Contains("Do you want to run this command?"), State: question,
			Label: "the fake model called bash with a command that writes", Why: "the command approval dialog"},
		{Name: "approval-refused", Act: termagent.Press("Escape"), Check: cancelled, State: stalled, Hold: classify.HoldInterrupt, EHold: classify.HoldInterrupt,
			Label: "pressed Esc on the approval dialog", Why: "the command was refused and the turn stopped: the human owns this stop"},
		{Act: func(t *testing.T, s *termagent.Session) { fakeapi.NotRan(t, s.Launch.Dir) }},
		{Name: "ran-command", Act: func(t *testing.T, s *termagent.Session) {
			s.Type(t, "again "+fakeapi.TriggerBash)
			s.WaitFor(t, time.Minute, "the approval dialog", termagent.Contains("Do you want to run this command?"))
			s.Keys(t, "Enter")
		}, Check: func(screen string) bool {
			return !strings.Contains(screen, "Do you want to run this command?") && copilot.Idle(screen)
		}, State: stalled,
			Label: "approved the command with Enter", Why: "the command ran and the turn ended"},
		{Name: "draft", Act: func(t *testing.T, s *termagent.Session) {
			s.WaitFor(t, time.Minute, "the input", copilot.Idle)
			s.Draft(t, "a human draft, not sent")
		}, Check: termagent.Contains("a human draft, not sent"), State: stalled, Hold: classify.HoldDraft, EHold: classify.HoldDraft,
			Label: "typed a draft and did not send it", Why: "a human's draft in the input"},
		{Act: termagent.Press("C-u")},
	}
}

// TestCaptureGolden drives the real Copilot CLI through its tour at two
// widths and writes every moment into golden/real-copilot. It runs only
// with -capture.
func TestCaptureGolden(t *testing.T) {
	prefix := func(width int) string { return fmt.Sprintf("copilot-%d-", width) }
	termagent.CaptureAt(t, realDir, []int{40, 80}, prefix, func(t *testing.T, width int) {
		bin, prefix := copilot.Pin.Binary(t), prefix(width)
		api := fakeapi.NewChat(t, fakeapi.TourRules()...)
		s := copilot.Start(t, testenv.Tmux(t), copilot.Config{Binary: bin, API: api.URL, Width: width, Untrusted: true, Name: fmt.Sprint("copilot", width)})
		termagent.Tour(t, s, realDir, prefix, "Copilot CLI", copilot.Version, tour())
		t.Logf("the fake API saw %q", api.Prompts())
		if u := api.Unknown(); len(u) > 0 {
			t.Logf("the fake API had no answer for %s", strings.Join(u, ", "))
		}
	})
}
