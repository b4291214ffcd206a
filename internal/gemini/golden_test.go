package gemini_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
	"github.com/omega-monitor/omega-monitor/internal/gemini"
	"github.com/omega-monitor/omega-monitor/internal/termagent"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// realDir holds the captures of the real Gemini CLI.
var realDir = filepath.Join("..", "..", "golden", "real-gemini")

// TestRealGolden classifies every capture of the real Gemini CLI against
// what the harness made it do.
func TestRealGolden(t *testing.T) {
	termagent.CheckGolden(t, realDir, "Gemini CLI")
}

// Trigger words of the Gemini tour, beside fakeapi's defaults.
const (
	triggerThink  = "think first"
	triggerStream = "stream for a while"
	triggerLoop   = "repeat yourself"
)

func rules() []fakeapi.Rule {
	loop := strings.Repeat("I will say the same sentence again and again, word for word. ", 30)
	return append([]fakeapi.Rule{
		{Match: triggerThink, Reply: fakeapi.Reply{Text: "Thought it through.", Chunks: 1, Delay: 40 * time.Second}},
		{Match: triggerStream, Reply: fakeapi.Slow(60 * time.Second)},
		{Match: triggerLoop, Reply: fakeapi.Reply{Text: loop, Chunks: 60, Delay: 30 * time.Millisecond}},
	}, fakeapi.DefaultRules()...)
}

func notRan(t *testing.T, s *termagent.Session) {
	if _, err := os.Stat(filepath.Join(s.Launch.Dir, fakeapi.BashMarker)); err == nil {
		t.Fatalf("the marker command ran: %s exists", fakeapi.BashMarker)
	}
}

func tour() []termagent.Step {
	const stalled, working, question = classify.Stalled, classify.Working, classify.Question
	return []termagent.Step{
		{Name: "trust", Check: termagent.Contains("Do you trust the files in this folder?"), State: question,
			Label: "started in an untrusted folder", Why: "the folder trust dialog at start"},
		{Act: termagent.Press("Enter")},
		{Name: "fresh", Check: gemini.Idle, State: stalled,
			Label: "trusted the folder; Gemini CLI restarted; nothing asked yet", Why: "just started: the empty composer with its placeholder"},
		{Name: "working", Act: termagent.TypeText("please " + triggerThink), Check: termagent.Contains("esc to cancel"), Moving: true, State: working,
			Label: "sent a prompt the fake model holds 40 s before its first token", Why: "the spinner line with its timer above the composer"},
		{Name: "working-interrupted", Act: termagent.Press("Escape"), Check: termagent.Contains("Request cancelled"), State: stalled, Hold: classify.HoldInterrupt, EHold: classify.HoldInterrupt,
			Label: "pressed Esc while the spinner showed", Why: "the cancelled request: the human owns this stop"},
		{Name: "streaming", Act: termagent.TypeText("please " + triggerStream), Check: termagent.Contains("step4", "esc to cancel"), Moving: true, State: working,
			Label: "sent a prompt the fake model answers slowly, a word a second", Why: "the answer streams under the spinner line"},
		{Name: "stream-interrupted", Act: termagent.Press("Escape"), Check: termagent.Contains("Request cancelled"), State: stalled, Hold: classify.HoldInterrupt, EHold: classify.HoldInterrupt,
			Label: "pressed Esc while the answer streamed", Why: "the cancelled request: the human owns this stop"},
		{Name: "approval", Act: termagent.TypeText("now " + fakeapi.TriggerBash), Check: termagent.Contains("Allow execution"), State: question,
			Label: "the fake model called run_shell_command", Why: "the shell command approval dialog"},
		{Name: "approval-refused", Act: termagent.Press("Escape"), Check: gemini.Idle, State: stalled, Hold: classify.HoldInterrupt, EHold: classify.HoldInterrupt,
			Label: "pressed Esc on the approval dialog", Why: "the command was refused and the turn stopped: the human owns this stop"},
		{Act: notRan},
		{Name: "ran-command", Act: func(t *testing.T, s *termagent.Session) {
			s.Type(t, "again "+fakeapi.TriggerBash)
			s.WaitFor(t, time.Minute, "the approval dialog", termagent.Contains("Allow execution"))
			s.Keys(t, "Enter")
		}, Check: func(screen string) bool {
			return termagent.Contains("The command finished.")(screen) && gemini.Idle(screen)
		}, State: stalled,
			Label: "approved the command with Enter", Why: "the command ran and the turn ended"},
		{Name: "retrying", Act: func(t *testing.T, s *termagent.Session) {
			s.Type(t, "now "+fakeapi.TriggerError500)
			// Past the first failures, into the retry loop.
			s.WaitFor(t, time.Minute, "a failed request", func(string) bool { return true })
			time.Sleep(12 * time.Second)
		}, Check: termagent.Contains("esc to cancel"), Moving: true, State: working,
			Label: "the fake API answers 500; Gemini CLI retries", Why: "the retry loop shows the same spinner line as work"},
		{Name: "retry-cancelled", Act: termagent.Press("Escape"),
			Check: termagent.Contains("Request cancelled"), State: stalled, Hold: classify.HoldInterrupt, EHold: classify.HoldInterrupt,
			Label: "pressed Esc during the retries", Why: "the cancelled request: the human owns this stop"},
		{Name: "loop", Act: termagent.TypeText("please " + triggerLoop), Check: termagent.Contains("potential loop"), State: question,
			Label: "the fake model repeated one sentence thirty times", Why: "the loop-detection dialog"},
		{Act: termagent.Press("Enter")},
		{Name: "draft", Act: func(t *testing.T, s *termagent.Session) {
			s.WaitFor(t, time.Minute, "the composer", gemini.Idle)
			s.Draft(t, "a human draft, not sent")
		}, Check: termagent.Contains("a human draft, not sent"), State: stalled, Hold: classify.HoldDraft, EHold: classify.HoldDraft,
			Label: "typed a draft and did not send it", Why: "a human's draft in the composer"},
		{Act: termagent.Press("C-u")},
	}
}

// keyTour is the start without an API key.
func keyTour() []termagent.Step {
	return []termagent.Step{
		{Name: "api-key", Check: termagent.Contains("Enter Gemini API Key"), State: classify.Question,
			Label: "started without an API key", Why: "the API key entry box"},
	}
}

// TestCaptureGolden drives the real Gemini CLI through its tour at two
// widths and writes every moment into golden/real-gemini. It runs only with
// -capture.
func TestCaptureGolden(t *testing.T) {
	if !*termagent.CaptureFlag {
		t.Skip("captures only with -capture")
	}
	bin := gemini.Pin.Binary(t)
	for _, width := range []int{60, 120} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			t.Parallel()
			prefix := fmt.Sprintf("gemini-%d-", width)
			old, _ := filepath.Glob(filepath.Join(realDir, prefix+"*"))
			for _, f := range old {
				os.Remove(f)
			}
			api := fakeapi.NewGemini(t, rules()...)
			tmux := testenv.Tmux(t)
			k := gemini.Start(t, tmux, gemini.Config{Binary: bin, API: api.URL, Width: width, NoKey: true, Name: fmt.Sprint("key", width)})
			termagent.Tour(t, k, realDir, prefix, "Gemini CLI", gemini.Version, keyTour())
			s := gemini.Start(t, tmux, gemini.Config{Binary: bin, API: api.URL, Width: width, Untrusted: true, Name: fmt.Sprint("gemini", width)})
			termagent.Tour(t, s, realDir, prefix, "Gemini CLI", gemini.Version, tour())
			t.Logf("the fake API saw %q", api.Prompts())
			if u := api.Unknown(); len(u) > 0 {
				t.Logf("the fake API had no answer for %s", strings.Join(u, ", "))
			}
		})
	}
}
