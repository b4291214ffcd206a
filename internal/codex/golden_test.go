package codex_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/codex"
	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
	"github.com/omega-monitor/omega-monitor/internal/termagent"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// realDir holds the captures of the real Codex CLI.
var realDir = filepath.Join("..", "..", "golden", "real-codex")

// TestRealGolden classifies every capture of the real Codex CLI against
// what the harness made it do.
func TestRealGolden(t *testing.T) {
	termagent.CheckGolden(t, realDir, "Codex CLI")
}

// Trigger words of the Codex tour, beside fakeapi's defaults.
const (
	triggerThink    = "think first"
	triggerStream   = "stream for a while"
	triggerEscalate = "escalate the command"
	triggerRetry    = "rate limit me"
)

// rules are the fake model's script for the tour: a long wait before the
// first token (Codex shows its status line), a long stream (it shows none),
// and a command that asks to leave the sandbox (it asks for approval).
func rules() []fakeapi.Rule {
	esc := fakeapi.Bash(fakeapi.BashCommand, "")
	esc.Tool.Input = map[string]any{"command": fakeapi.BashCommand,
		"sandbox_permissions": "require_escalated", "justification": "Leave a marker file"}
	return append([]fakeapi.Rule{
		{Match: triggerThink, Reply: fakeapi.Reply{Text: "Thought it through.", Chunks: 1, Delay: 40 * time.Second}},
		{Match: triggerStream, Reply: fakeapi.Slow(60 * time.Second)},
		{Match: triggerEscalate, Reply: esc},
		{Match: triggerRetry, Reply: fakeapi.Reply{Status: 429, ErrorType: "rate_limit_exceeded",
			ErrorMessage: "Rate limit reached for gpt-fake. Please try again in 30s.", RetryAfter: 30 * time.Second}},
	}, fakeapi.DefaultRules()...)
}

// notRan checks that the marker command has not run in the session.
func notRan(t *testing.T, s *termagent.Session) {
	if _, err := os.Stat(filepath.Join(s.Launch.Dir, fakeapi.BashMarker)); err == nil {
		t.Fatalf("the marker command ran: %s exists", fakeapi.BashMarker)
	}
}

func tour() []termagent.Step {
	const stalled, working, question = classify.Stalled, classify.Working, classify.Question
	return []termagent.Step{
		{Name: "trust", Check: termagent.Contains("Trust this folder"), State: question, Hold: "", EHold: "",
			Label: "started in an untrusted folder", Why: "the folder trust dialog at start"},
		{Act: termagent.Press("Enter")},
		{Name: "fresh", Check: codex.Idle, State: stalled,
			Label: "trusted the folder; nothing asked yet", Why: "just started: the empty composer with its placeholder"},
		{Name: "working", Act: termagent.TypeText("please " + triggerThink), Check: termagent.Contains("esc to interrupt"), Moving: true, State: working,
			Label: "sent a prompt the fake model holds 40 s before its first token", Why: "the Working status line above the composer"},
		{Name: "queued", Act: func(t *testing.T, s *termagent.Session) { s.Draft(t, "also a follow-up for later"); s.Keys(t, "Tab") },
			Check: termagent.Contains("Queued", "esc to interrupt"), Moving: true, State: working,
			Label: "queued a follow-up with Tab while the turn works", Why: "the queued-input block between the status line and the composer"},
		{Name: "queue-done", Check: termagent.Contains("Thought it through.", "also a follow-up for later", "Done: nothing"), State: stalled,
			Label: "let the turn and the queued follow-up finish", Why: "both turns ended with their Worked for lines"},
		{Name: "working-interrupted", Act: func(t *testing.T, s *termagent.Session) {
			s.Type(t, "again "+triggerThink)
			s.WaitFor(t, time.Minute, "the status line", termagent.Contains("esc to interrupt"))
			s.Keys(t, "Escape")
		}, Check: termagent.Contains("Conversation interrupted"), State: stalled, Hold: classify.HoldInterrupt, EHold: classify.HoldInterrupt,
			Label: "pressed Esc while the status line showed", Why: "the interrupted turn: the human owns this stop"},
		{Name: "streaming", Act: termagent.TypeText("please " + triggerStream), Check: termagent.Contains("step4"), Moving: true,
			State: stalled,
			Label: "sent a prompt the fake model answers slowly, a word a second",
			Why:   "Codex streams with no status line; the answer has no Worked for line after it yet. One screen of it reads as a stop that says to look again (issue 35: no verdict rests on a missing end line); the looks decide, the screen growing between them is WORKING (tick TestUnsettledStopsNeedLiveEvidence)"},
		{Name: "stream-interrupted", Act: termagent.Press("Escape"), Check: termagent.Contains("Conversation interrupted"), State: stalled, Hold: classify.HoldInterrupt, EHold: classify.HoldInterrupt,
			Label: "pressed Esc while the answer streamed", Why: "the interrupted stream: the human owns this stop"},
		{Name: "approval", Act: termagent.TypeText("please " + triggerEscalate), Check: termagent.Contains("Would you like to run the following command?"), State: question,
			Label: "the fake model asked to run a command outside the sandbox", Why: "the command approval dialog replaces the composer"},
		{Name: "approval-refused", Act: termagent.Press("Escape"), Check: codex.Idle, State: stalled, Hold: classify.HoldInterrupt, EHold: classify.HoldInterrupt,
			Label: "pressed Esc on the approval dialog", Why: "the command was refused and the turn stopped: the human owns this stop"},
		{Act: notRan},
		{Name: "ran-command", Act: func(t *testing.T, s *termagent.Session) {
			s.Type(t, "again "+triggerEscalate)
			s.WaitFor(t, time.Minute, "the approval dialog", termagent.Contains("Would you like to run the following command?"))
			s.Keys(t, "y")
		}, Check: termagent.Contains("The command finished."), State: stalled,
			Label: "approved the command with y", Why: "the command ran and the turn ended"},
		{Name: "api-error", Act: termagent.TypeText("now " + fakeapi.TriggerError500), Check: termagent.Contains("■ We"), State: stalled,
			Label: "the fake API answered 500 until the retries ran out", Why: "the final error ends the turn"},
		{Name: "draft", Act: func(t *testing.T, s *termagent.Session) { s.Draft(t, "a human draft, not sent") },
			Check: termagent.Contains("a human draft, not sent"), State: stalled, Hold: classify.HoldDraft, EHold: classify.HoldDraft,
			Label: "typed a draft and did not send it", Why: "a human's draft in the composer"},
		{Act: termagent.Press("C-u")},
		{Name: "plan-question", Act: func(t *testing.T, s *termagent.Session) {
			s.Keys(t, "BTab")
			s.WaitFor(t, time.Minute, "Plan mode", termagent.Contains("Plan mode"))
			s.Type(t, "please "+fakeapi.TriggerAsk)
		}, Check: termagent.Contains("enter to submit answer"), State: question,
			Label: "in Plan mode, the fake model called request_user_input with one question", Why: "Codex's question UI: Question 1/1, options under the › cursor, the submit footer"},
		{Name: "plan-question-answered", Act: termagent.Press("Enter"), Check: termagent.Contains("The command finished."), State: stalled,
			Label: "answered the question with its first option", Why: "the answer went back and the turn ended"},
		{Name: "plan-questions", Act: termagent.TypeText("please ask " + fakeapi.TriggerAskMany), Check: termagent.Contains("Question 1/2"), State: question,
			Label: "in Plan mode, the fake model asked two questions", Why: "Codex's question UI for the first of two questions"},
		{Name: "plan-questions-interrupted", Act: termagent.Press("Escape"), Check: codex.Idle, State: stalled, Hold: classify.HoldInterrupt, EHold: classify.HoldInterrupt,
			Label: "pressed Esc on the questions", Why: "the questions were dismissed and the turn stopped: the human owns this stop"},
		// Codex refuses a question with no options (the free-text form
		// is read in golden/panes instead).
		{Name: "retrying", Act: func(t *testing.T, s *termagent.Session) {
			s.WaitFor(t, time.Minute, "the composer", codex.Idle)
			s.Keys(t, "BTab") // back out of Plan mode
			time.Sleep(time.Second)
			s.Type(t, "please "+triggerRetry)
		}, Check: termagent.Contains("esc to interrupt"), Moving: true, State: working,
			Label: "the fake API answered 429 with try again in 30s", Why: "Codex waits to retry under its status line"},
		{Name: "retry-cancelled", Act: termagent.Press("Escape"), Check: termagent.Contains("Conversation interrupted"), State: stalled, Hold: classify.HoldInterrupt, EHold: classify.HoldInterrupt,
			Label: "pressed Esc while Codex waited to retry", Why: "the interrupted retry: the human owns this stop"},
	}
}

// TestCaptureGolden drives the real Codex CLI through its tour at two widths
// and writes every moment into golden/real-codex. It runs only with -capture.
func TestCaptureGolden(t *testing.T) {
	if !*termagent.CaptureFlag {
		t.Skip("captures only with -capture")
	}
	bin := codex.Pin.Binary(t)
	for _, width := range []int{60, 120} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			t.Parallel()
			prefix := fmt.Sprintf("codex-%d-", width)
			old, _ := filepath.Glob(filepath.Join(realDir, prefix+"*"))
			for _, f := range old {
				os.Remove(f)
			}
			api := fakeapi.NewResponses(t, rules()...)
			s := codex.Start(t, testenv.Tmux(t), codex.Config{Binary: bin, API: api.URL, Width: width, Height: 40, Untrusted: true, Retries: 2, Name: "codex" + fmt.Sprint(width)})
			termagent.Tour(t, s, realDir, prefix, "Codex CLI", codex.Version, tour())
			t.Logf("the fake API saw %q", api.Prompts())
			if u := api.Unknown(); len(u) > 0 {
				t.Logf("the fake API had no answer for %s", strings.Join(u, ", "))
			}
		})
	}
}
