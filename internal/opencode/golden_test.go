package opencode_test

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
	"github.com/omega-monitor/omega-monitor/internal/opencode"
	"github.com/omega-monitor/omega-monitor/internal/termagent"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// realDir holds the captures of the real OpenCode.
var realDir = filepath.Join("..", "..", "golden", "real-opencode")

// TestRealGolden classifies every capture of the real OpenCode against
// what the harness made it do.
func TestRealGolden(t *testing.T) {
	termagent.CheckGolden(t, realDir, "OpenCode")
}

// triggerError400 brings an error OpenCode does not retry.
const triggerError400 = "fail with 400"

// spinning says OpenCode's spinner shows under its box.
func spinning(screen string) bool { return strings.ContainsAny(screen, "⬝■") }

// interrupt presses Esc twice, as OpenCode asks, once the first press is
// read (the footer under its box says esc again), or after a second and a
// half without it (a retry's long error hides the hint).
func interrupt(t *testing.T, s *termagent.Session) {
	s.Keys(t, "Escape")
	for deadline := time.Now().Add(1500 * time.Millisecond); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		screen := s.Capture(t)
		if i := strings.LastIndex(screen, "╹▀"); i >= 0 && strings.Contains(screen[i:], "again") {
			break
		}
	}
	s.Keys(t, "Escape")
}

// stop interrupts until OpenCode is idle: a retry's wait can swallow the
// first presses.
func stop(t *testing.T, s *termagent.Session) {
	for range 3 {
		interrupt(t, s)
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
			if opencode.Idle(s.Capture(t)) {
				return
			}
		}
	}
}

// idleWith says OpenCode waits at its input with all of sub on the screen.
func idleWith(sub ...string) func(string) bool {
	return func(screen string) bool { return opencode.Idle(screen) && termagent.Contains(sub...)(screen) }
}

func tour() []termagent.Step {
	const stalled, working, question = classify.Stalled, classify.Working, classify.Question
	return []termagent.Step{
		{Name: "fresh", Check: termagent.Contains("Ask anything…", "╹▀▀"), State: stalled, Hold: classify.HoldNoInputBox, EHold: classify.HoldNoInputBox,
			Label: "just started in a folder with no session; nothing asked yet", Why: "its home screen: the box mid-screen, its footer far under it; no input box at the bottom, so nothing is typed"},
		{Name: "working", Act: termagent.TypeText("please " + fakeapi.TriggerHold), Check: spinning, Moving: true, State: working,
			Label: "sent a prompt the fake model holds 40 s before its first token", Why: "the spinner under the box, esc interrupt"},
		{Name: "thought", Check: idleWith("Thought it through."), State: stalled,
			Label: "the held answer came, and the turn ended", Why: "the answer and the turn's end line with its time above the empty box"},
		{Name: "streaming", Act: termagent.TypeText("please " + fakeapi.TriggerStream), Check: func(screen string) bool {
			return strings.Contains(screen, "step4") && spinning(screen)
		}, Moving: true, State: working,
			Label: "sent a prompt the fake model answers slowly, a word a second", Why: "the answer streams above the box, the spinner under it"},
		{Name: "stream-interrupted", Act: interrupt, Check: idleWith("step4"), State: stalled, Hold: classify.HoldInterrupt, EHold: classify.HoldInterrupt,
			Label: "pressed Esc twice while the answer streamed", Why: "the turn's end line says interrupted: the human owns this stop"},
		{Name: "approval", Act: termagent.TypeText("now " + fakeapi.TriggerBash), Check: termagent.Contains("Permission required", "Allow once"), State: question,
			Label: "the fake model called bash with a command that writes", Why: "the permission dialog in place of the box"},
		{Name: "approval-refused", Act: termagent.Press("Escape"), Check: func(screen string) bool {
			return !strings.Contains(screen, "Permission required") && opencode.Idle(screen)
		}, State: stalled, Hold: classify.HoldInterrupt, EHold: classify.HoldInterrupt,
			Label: "pressed Esc on the permission dialog", Why: "the command was refused and the turn stopped, its $ line drawn bare (never run): the human owns this stop"},
		{Act: func(t *testing.T, s *termagent.Session) { fakeapi.NotRan(t, s.Launch.Dir) }},
		{Name: "ran-command", Act: func(t *testing.T, s *termagent.Session) {
			s.Type(t, "again "+fakeapi.TriggerBash)
			s.WaitFor(t, time.Minute, "the permission dialog", termagent.Contains("Allow once"))
			s.Keys(t, "Enter")
		}, Check: idleWith("The command finished."), State: stalled,
			Label: "allowed the command once with Enter", Why: "the command ran and the turn ended"},
		{Name: "draft", Act: func(t *testing.T, s *termagent.Session) {
			s.Draft(t, "a human draft, not sent")
		}, Check: termagent.Contains("a human draft, not sent"), State: stalled, Hold: classify.HoldDraft, EHold: classify.HoldDraft,
			Label: "typed a draft and did not send it", Why: "a human's draft in the box"},
		{Act: termagent.Press("C-u")},
		{Name: "palette", Act: func(t *testing.T, s *termagent.Session) {
			s.WaitFor(t, time.Minute, "the empty box", func(screen string) bool {
				return opencode.Idle(screen) && !strings.Contains(screen, "a human draft")
			})
			s.Keys(t, "C-p")
		}, Check: termagent.Contains("Commands", "Switch session"), State: stalled, Hold: classify.HoldNoInputBox, EHold: classify.HoldNoInputBox,
			Label: "opened the command palette (ctrl+p)", Why: "a picker over the box takes the keys: nothing is typed"},
		{Name: "model-picker", Act: func(t *testing.T, s *termagent.Session) {
			s.Keys(t, "Escape")
			s.WaitFor(t, time.Minute, "the palette closed", func(screen string) bool { return !strings.Contains(screen, "Switch session") })
			s.Keys(t, "C-x", "m")
		}, Check: termagent.Contains("Select model"), State: stalled, Hold: classify.HoldNoInputBox, EHold: classify.HoldNoInputBox,
			Label: "opened the model list (ctrl+x m)", Why: "a picker over the box takes the keys: nothing is typed"},
		{Act: termagent.Press("Escape")},
		{Name: "again-interrupted", Act: func(t *testing.T, s *termagent.Session) {
			s.WaitFor(t, time.Minute, "the empty box", func(screen string) bool {
				return opencode.Idle(screen) && !strings.Contains(screen, "Select model")
			})
			s.Type(t, "please "+fakeapi.TriggerHold)
			s.WaitFor(t, time.Minute, "the spinner", spinning)
			interrupt(t, s)
		}, Check: idleWith("interrupted"), State: stalled, Hold: classify.HoldInterrupt, EHold: classify.HoldInterrupt,
			Label: "pressed Esc twice while it waited for its first token", Why: "the turn's end line says interrupted: the human owns this stop"},
		{Name: "retrying", Act: termagent.TypeText("please " + fakeapi.TriggerError500), Check: termagent.Contains("[retrying"), Moving: true, State: working,
			Label: "the fake API answered 500", Why: "OpenCode retries by itself: the error and its attempt in the spinner's line"},
		{Name: "retry-interrupted", Act: stop, Check: opencode.Idle, State: stalled,
			Label: "pressed Esc twice while it retried", Why: "the error and the end line without a time, as an error it does not retry draws: the two are not told apart, so the screen is stopped and nothing held"},
		{Name: "rate-limited", Act: termagent.TypeText("please " + fakeapi.TriggerError429), Check: termagent.Contains("[retrying"), Moving: true, State: working,
			Label: "the fake API answered 429 with retry-after", Why: "OpenCode waits and retries by itself: the rate limit and its attempt in the spinner's line"},
		{Act: stop},
		{Name: "failed", Act: func(t *testing.T, s *termagent.Session) {
			s.WaitFor(t, time.Minute, "the empty box", opencode.Idle)
			s.Type(t, "please "+triggerError400)
		}, Check: idleWith("rejected the request"), State: stalled,
			Label: "the fake API answered 400, an error OpenCode does not retry", Why: "the error above the empty box: stopped, and a nudge may go on"},
		{Name: "home-with-tip", Act: termagent.Press("C-x", "n"), Check: termagent.Contains("Ask anything…", "● Tip"), State: stalled, Hold: classify.HoldNoInputBox, EHold: classify.HoldNoInputBox,
			Label: "opened a new session (ctrl+x n) in a folder that has one", Why: "its home screen with a tip between its box and its footer: no input box at the bottom, so nothing is typed"},
	}
}

// TestCaptureGolden drives the real OpenCode through its tour at two widths
// and writes every moment into golden/real-opencode. It runs only with
// -capture.
func TestCaptureGolden(t *testing.T) {
	prefix := func(width int) string { return fmt.Sprintf("opencode-%d-", width) }
	termagent.CaptureAt(t, realDir, []int{40, 80}, prefix, func(t *testing.T, width int) {
		bin, prefix := opencode.Pin.Binary(t), prefix(width)
		api := fakeapi.NewChat(t, append([]fakeapi.Rule{{Match: triggerError400,
			Reply: fakeapi.Error(http.StatusBadRequest, "invalid_request_error", "The model rejected the request")}}, fakeapi.TourRules()...)...)
		s := opencode.Start(t, testenv.Tmux(t), opencode.Config{Binary: bin, API: api.URL, Width: width, Name: fmt.Sprint("opencode", width)})
		termagent.Tour(t, s, realDir, prefix, "OpenCode", opencode.Version, tour())
		t.Logf("the fake API saw %q", api.Prompts())
		if u := api.Unknown(); len(u) > 0 {
			t.Logf("the fake API had no answer for %s", strings.Join(u, ", "))
		}
	})
}
