package poll

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/tick"
)

// notesWords are the words of the real Codex 0.171's notes captures
// (golden/panes/codex-171-*, internal/codex TestCaptureNotes).
const notesWords = `use CSV; keep "quoted" $HOME as is, ünïcödé ✓ and wrap this note past sixty columns`

// TestNotesOffered: Codex's request_user_input, relayed with free text on,
// offers its notes line for a reply, as the words of "None of the above";
// the action handed to the loop opens it with Tab and carries the notes
// line's placeholder for the checks.
func TestNotesOffered(t *testing.T) {
	t.Parallel()
	w := relayedWords(t, corpusPane(t, "panes/codex-171-100-notes-none"), true)
	o := w.field()
	if o.Pos != 3 || o.Label != "None of the above" {
		t.Fatalf("the offer: %+v", o)
	}
	text, buttons := w.outbox()
	if !strings.Contains(text, "typed as your own words for") || !strings.Contains(strings.Join(buttons, "|"), "✍ reply: 3. None of the above") {
		t.Errorf("the message %q, its buttons %q", text, buttons)
	}
	w.words(o, notesWords)
	line := tickWords(t, string(w.d), w.pane, t0.Add(time.Minute), true)
	if !strings.Contains(line, "to be typed") {
		t.Fatalf("the words were not taken: %s", line)
	}
	steps, a, _ := w.answerAction()
	// The cursor is on the option already: Tab, a look, the words, a look.
	want := "capture fresh\nconfirm answer fresh 0\nconfirm selected fresh 0\n" +
		"keys Tab\ncapture opened\nconfirm opened opened 200000\n" +
		"paste 000.words\ncapture filled\nconfirm filled filled 200000\n" +
		"keys Enter\ncapture after\nconfirm answered after 200000\nwake\nack answer_typed\n"
	if diff := cmp.Diff(want, steps); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	if p, _ := w.d.ReadPaste(answerWords); string(p) != notesWords {
		t.Errorf("the words to paste: %q", p)
	}
	if a.Field == nil || a.Field.Notes != "Add notes" || !a.Field.Tab || a.Field.Key != w.offer.Key {
		t.Errorf("the action's checks: %+v (the offers' key %s)", a.Field, w.offer.Key)
	}
}

// TestNotesRefused: words that are the notes line's placeholder are
// refused; so is a tap, or words, while a human's notes are open on the
// question (Enter would send their words, Tab clear them).
func TestNotesRefused(t *testing.T) {
	t.Parallel()
	w := relayedWords(t, corpusPane(t, "panes/codex-171-100-notes-none"), true)
	r := w.words(w.field(), "Add notes")
	tickWords(t, string(w.d), w.pane, t0.Add(time.Minute), true)
	if got := w.result(r.Nonce); got.Outcome != statedir.AnswerRefused || !strings.Contains(got.Why, "placeholder") {
		t.Errorf("the placeholder as words: %+v", got)
	}

	for _, pane := range []string{"panes/codex-171-100-notes-open", "panes/codex-171-60-notes-typed"} {
		w := relayedWords(t, corpusPane(t, "panes/codex-171-100-notes-none"), true)
		r := w.words(w.field(), notesWords)
		tickWords(t, string(w.d), corpusPane(t, pane), t0.Add(time.Minute), true)
		if got := w.result(r.Nonce); got.Outcome != statedir.AnswerRefused || got.Why != "the question is no longer on the screen" {
			t.Errorf("%s: %+v", pane, got)
		}
	}
}

// TestConfirmNotesStages: the checks around the words, on the real Codex
// 0.171's screens: after Tab, the notes line open and empty under the
// same dialog with the cursor on None of the above; before Enter, holding
// exactly the words; after Enter, the dialog gone.
func TestConfirmNotesStages(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, stage string
		pane        string
		why         string // "" for ok
	}{
		{"before", AnswerBefore, "panes/codex-171-100-notes-none", ""},
		{"before, a human's notes open", AnswerBefore, "panes/codex-171-100-notes-typed",
			"the question on the screen changed before the answer was typed"},
		{"selected", AnswerSelected, "panes/codex-171-100-notes-none", ""},
		{"selected, the notes opened by a human", AnswerSelected, "panes/codex-171-100-notes-open",
			"the question on the screen changed while the cursor moved; Enter withheld"},
		{"opened", AnswerOpened, "panes/codex-171-100-notes-open", ""},
		{"opened at 60 columns", AnswerOpened, "panes/codex-171-60-notes-open", ""},
		{"opened, Tab did nothing", AnswerOpened, "panes/codex-171-100-notes-none",
			"the field of option 3 is not open and empty after Tab; nothing typed"},
		{"opened, words there already", AnswerOpened, "panes/codex-171-100-notes-typed",
			"the field of option 3 is not open and empty after Tab; nothing typed"},
		{"filled", AnswerFilled, "panes/codex-171-100-notes-typed", ""},
		{"filled, wrapped at 60 columns", AnswerFilled, "panes/codex-171-60-notes-typed", ""},
		{"filled, nothing typed", AnswerFilled, "panes/codex-171-100-notes-open",
			"the field of option 3 does not hold exactly the words typed; Enter withheld (they are in the field)"},
		{"filled, the cursor moved to SQLite", AnswerFilled, "panes/codex-171-100-notes-typed-away",
			"the cursor is not on option 3; Enter withheld"},
		{"filled, another question", AnswerFilled, "real-codex/codex-60-plan-questions",
			"the question on the screen changed before the words were typed; Enter withheld"},
		{"answered", AnswerDone, "panes/codex-171-100-notes-answered", ""},
		// Enter reached the dialog: typed; still there, asked again.
		{"answered, the notes still there", AnswerDone, "panes/codex-171-100-notes-typed", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := relayedWords(t, corpusPane(t, "panes/codex-171-100-notes-none"), true)
			r := w.words(w.field(), notesWords)
			tickWords(t, string(w.d), w.pane, t0.Add(time.Minute), true)
			action := w.d.Path(filepath.Join(statedir.Actions, "000"+AnswerSuffix))
			line, ok := ConfirmAnswer(ConfirmRequest{Dir: string(w.d), Target: "agent", Action: action,
				Stage: tick.Stage(c.stage), Now: t0.Add(time.Minute), Capture: asAgent(t, w.pane, t0.Add(time.Minute))}, strings.NewReader(corpusPane(t, c.pane)))
			if ok != (c.why == "") {
				t.Fatalf("ok = %v, line %q; want refusal %q", ok, line, c.why)
			}
			if ok {
				return
			}
			if got := w.result(r.Nonce); got.Outcome != statedir.AnswerRefused || got.Why != c.why {
				t.Errorf("result %+v, want %q", got, c.why)
			}
			if fileExists(action) {
				t.Error("a refused answer's action stayed")
			}
		})
	}
}
