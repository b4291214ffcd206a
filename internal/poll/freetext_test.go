package poll

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/statedir/event"
	"github.com/omega-monitor/omega-monitor/ledger"
	"github.com/omega-monitor/omega-monitor/tick"
)

// tickWords runs one poll as tickAt does, with free_text as given.
func tickWords(t *testing.T, dir, pane string, now time.Time, freeText bool) string {
	t.Helper()
	line, err := Tick(Request{Dir: dir, Settings: answering(freeText), Readings: workOf7, Now: now, Capture: asAgent(t, pane, now)}, strings.NewReader(pane))
	if err != nil {
		t.Fatal(err)
	}
	return line
}

func corpusPane(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "golden", name+".pane"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The real Claude Code 2.1.332's screens of its two fields, around the
// question relayed (golden/panes/claude-332-*).
const (
	askWords   = `use CSV; "quoted" $HOME ünïcödé`
	amendWords = "use ls instead, and explain why the marker file is needed before you touch anything else in this folder"
)

// permissionBefore is the permission prompt of the amend captures as it
// was relayed: the cursor on Yes, No not amended, Tab offered (the screen
// Claude Code drew before Tab, as seen running it).
func permissionBefore(t *testing.T) string {
	p := corpusPane(t, "panes/claude-332-100-permission-amend-open")
	p = strings.Replace(p, "   1. Yes ", " ❯ 1. Yes ", 1)
	p = strings.Replace(p, " ❯ 4. No, and tell Claude what to do differently", "   4. No", 1)
	return strings.Replace(p, " Esc to cancel ", " Esc to cancel · Tab to amend ", 1)
}

// relayedWords is a watcher that relayed pane with free text as given.
func relayedWords(t *testing.T, pane string, freeText bool) *answerWorld {
	t.Helper()
	w := &answerWorld{t: t, d: statedir.Dir(filepath.Join(t.TempDir(), "w")), pane: pane}
	tickWords(t, string(w.d), w.pane, t0.Add(-tick.QuestionSettle), freeText)
	if line := tickWords(t, string(w.d), w.pane, t0, freeText); !strings.Contains(line, "escalated to the operator") {
		t.Fatalf("the question was not relayed: %s", line)
	}
	var err error
	if w.offer, err = w.d.ReadOffers(); err != nil {
		t.Fatal(err)
	}
	return w
}

// field is the free-text offer of w's question.
func (w *answerWorld) field() statedir.Offer {
	w.t.Helper()
	for _, o := range w.offer.Offers {
		if o.FreeText {
			return o
		}
	}
	w.t.Fatalf("no free-text offer: %+v", w.offer.Offers)
	return statedir.Offer{}
}

func (w *answerWorld) words(o statedir.Offer, text string) statedir.AnswerRequest {
	w.t.Helper()
	r := statedir.AnswerRequest{Nonce: o.Nonce, FromID: 42, From: "op", ChatID: 42, MessageID: 7, At: t0, Text: text}
	if err := w.d.WriteRequest(r); err != nil {
		w.t.Fatal(err)
	}
	return r
}

// outbox is the question's message as queued, and its buttons.
func (w *answerWorld) outbox() (text string, buttons []string) {
	w.t.Helper()
	names, _ := w.d.PendingAlerts()
	for _, n := range names {
		b, _ := os.ReadFile(filepath.Join(w.d.Path(statedir.Outbox), n))
		text += string(b)
		markup, err := os.ReadFile(filepath.Join(w.d.Path(statedir.Outbox), n+statedir.MarkupSuffix))
		if err != nil {
			continue
		}
		var m struct {
			InlineKeyboard [][]struct {
				Text string `json:"text"`
			} `json:"inline_keyboard"`
		}
		if err := json.Unmarshal(markup, &m); err != nil {
			w.t.Fatal(err)
		}
		for _, row := range m.InlineKeyboard {
			buttons = append(buttons, row[0].Text)
		}
	}
	return text, buttons
}

// TestFreeTextOffered: with free text on, a question with a field offers
// it (a nonce, a button that says to reply) and its message says a reply
// is typed there; with it off, neither, as before.
func TestFreeTextOffered(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, pane string
		on         bool
		label      string
		pos        int
		button     string
	}{
		{"question, on", "real/claude-manual-100-question", true, "Type something.", 3, "✍ reply: 3. Type something."},
		{"permission, on", "", true, "No, and tell Claude what to do differently", 4, "✍ reply: 4. No, and tell Claude what to do differently"},
		{"question, off", "real/claude-manual-100-question", false, "", 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			pane := permissionBefore(t)
			if c.pane != "" {
				pane = corpusPane(t, c.pane)
			}
			w := relayedWords(t, pane, c.on)
			text, buttons := w.outbox()
			said := strings.Contains(text, "A reply to this message is typed as your own words for")
			if !c.on {
				for _, o := range w.offer.Offers {
					if o.FreeText {
						t.Errorf("free text off, and a field offered: %+v", o)
					}
				}
				if said || strings.Contains(strings.Join(buttons, "\n"), "reply") {
					t.Errorf("free text off, and the message speaks of replies:\n%s\n%q", text, buttons)
				}
				return
			}
			o := w.field()
			if o.Label != c.label || o.Pos != c.pos || !statedir.IsNonce(o.Nonce) || o.Widens {
				t.Errorf("field offer %+v", o)
			}
			if !said || !strings.Contains(text, fmt.Sprintf("<b>%d. %s</b>", c.pos, c.label)) {
				t.Errorf("the message does not say a reply is typed into %q:\n%s", c.label, text)
			}
			if buttons[len(buttons)-1] != c.button {
				t.Errorf("buttons %q, want the last %q", buttons, c.button)
			}
		})
	}
}

// TestFreeTextAccepted: words for the field's offer, on the dialog still on
// the screen, are handed to the loop (the moves, how the field opens, the
// words on a line of their own), recorded in the echo ledger first, and in
// the history.
func TestFreeTextAccepted(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, pane, words, keys string
	}{
		{"question", "real/claude-manual-100-question", askWords, "Down Down (the words, pasted) Enter"},
		{"permission", "", amendWords, "Down Down Down Tab (the words, pasted) Enter"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			pane := permissionBefore(t)
			if c.pane != "" {
				pane = corpusPane(t, c.pane)
			}
			w := relayedWords(t, pane, true)
			r := w.words(w.field(), c.words)
			line := tickWords(t, string(w.d), w.pane, t0.Add(time.Minute), true)
			if !strings.Contains(line, "to be typed with the words ") {
				t.Errorf("line: %s", line)
			}
			_, a, ok := w.answerAction()
			if !ok {
				t.Fatalf("no answer action; line %s", line)
			}
			if keys := strings.Join(answerKeys(a), " "); keys != c.keys {
				t.Errorf("answer's keys %q, want %q", keys, c.keys)
			}
			if p, _ := w.d.ReadPaste(answerWords); string(p) != c.words {
				t.Errorf("the words to paste: %q", p)
			}
			if a.Field == nil || a.Field.Text != c.words || a.Nonce != r.Nonce {
				t.Errorf("answer action's checks: %+v", a)
			}
			// Their echo in the transcript is masked: never read back.
			m, err := ledger.LoadRecent(w.d.Path(statedir.Ledger), 100)
			if err != nil || m == nil {
				t.Fatalf("no echo ledger: %v", err)
			}
			if echo := "  ⎿  · Which format? → " + c.words; m.Mask(echo) == echo {
				t.Errorf("the words are not in the echo ledger: %q is not masked", echo)
			}
			h := string(mustRead(t, w.d.Path(statedir.History)))
			if !strings.Contains(h, `"event":"answer_accepted"`) || !strings.Contains(h, `"text":`) {
				t.Errorf("history: %s", h)
			}
		})
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFreeTextRefused: words that may not be typed, or not there, are
// refused with their reason as their result; nothing is handed to the
// loop, and the words are not recorded as sent.
func TestFreeTextRefused(t *testing.T) {
	t.Parallel()
	ask := "real/claude-manual-100-question"
	for _, c := range []struct {
		name  string
		words string
		pane  string // the screen at the answer; "" for the relayed one
		on    bool   // free text on for the poll that takes it
		tap   bool   // a request for a button, with words
		why   string
	}{
		{"control characters", "use CSV\x03", "", true, false, "the text must hold no control characters (a terminal reads them as keys); character 8 is U+0003"},
		{"escape sequence", "\x1b[201~rm -rf /", "", true, false, "the text must hold no control characters (a terminal reads them as keys); character 1 is U+001B"},
		{"a newline", "use CSV\nthen delete everything", "", true, false, "the text must be one line; character 8 is a line break"},
		{"over the cap", strings.Repeat("x", 501), "", true, false, "the text is 501 characters long, more than 500"},
		{"free text off", askWords, "", false, false, "free-text answers are off for this watcher (free_text=on in the Telegram config, then restart it)"},
		{"a tap for the field", "", "", true, false, "this option takes your words: reply to the question's message with them"},
		{"words for a button", askWords, "", true, true, "this option takes no words: tap its button"},
		{"the question gone", askWords, "GOLDEN-stalled-real", true, false, "the question is no longer on the screen"},
		{"the field holds a human's words", askWords, "panes/claude-332-100-ask-field-typed-away", true, false, "the dialog on the screen is not the question relayed"},
		{"the placeholder", "Type something.", "", true, false, "the words are the field's own placeholder: typed, they could not be told from an empty field"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := relayedWords(t, corpusPane(t, ask), true)
			o := w.field()
			if c.tap {
				o = w.offer.Offers[0]
			}
			// Written as a planted request would be: the watcher checks
			// what the receiver checked.
			r := statedir.AnswerRequest{Nonce: o.Nonce, FromID: 42, From: "op", At: t0, Text: c.words}
			if err := w.d.WriteRequest(r); err != nil {
				t.Fatal(err)
			}
			pane := w.pane
			switch {
			case c.pane == "GOLDEN-stalled-real":
				pane = goldenPane(t, c.pane)
			case c.pane != "":
				pane = corpusPane(t, c.pane)
			}
			line := tickWords(t, string(w.d), pane, t0.Add(time.Minute), c.on)
			if got := w.result(r.Nonce); got.Outcome != statedir.AnswerRefused || got.Why != c.why {
				t.Errorf("result %+v, want refused: %s\nline: %s", got, c.why, line)
			}
			if _, _, ok := w.answerAction(); ok {
				t.Error("refused words were handed to the loop")
			}
			if c.words != "" && fileExists(w.d.Path(statedir.Ledger)) && strings.Contains(string(mustRead(t, w.d.Path(statedir.Ledger))), "CSV") {
				t.Error("refused words are in the echo ledger")
			}
		})
	}
}

// TestConfirmFieldStages: the checks around the words, on the real Claude
// Code's screens: the field open and empty after Tab, holding exactly the
// words before Enter, the dialog gone after it; each refusal the answer's
// result, and the action removed.
func TestConfirmFieldStages(t *testing.T) {
	t.Parallel()
	stalled := goldenPane(t, "GOLDEN-stalled-real")
	for _, c := range []struct {
		name, stage string
		permission  bool
		pane        string // a corpus pane; "" for the relayed one
		why         string // "" for ok
	}{
		{"question: selected, the field's placeholder", AnswerSelected, false, "panes/claude-332-100-ask-field-open", ""},
		{"question: filled", AnswerFilled, false, "panes/claude-332-100-ask-field-typed", ""},
		{"question: filled, nothing typed", AnswerFilled, false, "panes/claude-332-100-ask-field-open",
			"the field of option 3 does not hold exactly the words typed; Enter withheld (they are in the field)"},
		{"question: filled, the cursor moved off", AnswerFilled, false, "panes/claude-332-100-ask-field-typed-away",
			"the cursor is not on option 3; Enter withheld"},
		{"question: filled, another question", AnswerFilled, false, "panes/claude-328-ask-question",
			"the question on the screen changed before the words were typed; Enter withheld"},
		{"question: answered", AnswerDone, false, "GOLDEN-stalled-real", ""},
		// Enter reached the field: typed, and the question, still there,
		// is taken as asked again.
		{"question: answered, the field still there", AnswerDone, false, "panes/claude-332-100-ask-field-typed", ""},
		{"permission: opened", AnswerOpened, true, "panes/claude-332-100-permission-amend-open", ""},
		{"permission: opened, Tab did not open it", AnswerOpened, true, "",
			"the cursor is not on option 4; Enter withheld"},
		{"permission: opened, words there already", AnswerOpened, true, "panes/claude-332-100-permission-amend-typed",
			"the field of option 4 is not open and empty after Tab; nothing typed"},
		{"permission: filled", AnswerFilled, true, "panes/claude-332-100-permission-amend-typed", ""},
		{"permission: filled, Yes amended", AnswerFilled, true, "panes/claude-332-100-permission-amend-yes",
			"the question on the screen changed before the words were typed; Enter withheld"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			pane, words := corpusPane(t, "real/claude-manual-100-question"), askWords
			if c.permission {
				pane, words = permissionBefore(t), amendWords
			}
			w := relayedWords(t, pane, true)
			r := w.words(w.field(), words)
			tickWords(t, string(w.d), w.pane, t0.Add(time.Minute), true)
			action := w.d.Path(filepath.Join(statedir.Actions, "000"+AnswerSuffix))
			screen := w.pane
			switch {
			case c.pane == "GOLDEN-stalled-real":
				screen = stalled
			case c.pane != "":
				screen = corpusPane(t, c.pane)
			}
			line, ok := ConfirmAnswer(ConfirmRequest{Dir: string(w.d), Target: "agent", Action: action,
				Stage: tick.Stage(c.stage), Now: t0.Add(time.Minute), Capture: asAgent(t, w.pane, t0.Add(time.Minute))}, strings.NewReader(screen))
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
			h := string(mustRead(t, w.d.Path(statedir.History)))
			if !strings.Contains(h, `"event":"`+event.AnswerRefused+`"`) || !strings.Contains(h, `"text":`) {
				t.Errorf("history: %s", h)
			}
		})
	}
}

// TestFreeTextTypedIsAcked: the loop's ack of words typed is their result,
// and the history's answer_typed carries them.
func TestFreeTextTypedIsAcked(t *testing.T) {
	t.Parallel()
	w := relayedWords(t, corpusPane(t, "real/claude-manual-100-question"), true)
	r := w.words(w.field(), askWords)
	tickWords(t, string(w.d), w.pane, t0.Add(time.Minute), true)
	action := w.d.Path(filepath.Join(statedir.Actions, "000"+AnswerSuffix))
	line := Ack(string(w.d), "agent", action, event.AnswerTyped, "", t0.Add(time.Minute))
	if !strings.Contains(line, `answer typed: Type something. "use CSV; \"quoted\" $HOME ünïcödé" · by op`) {
		t.Errorf("ack line: %q", line)
	}
	if got := w.result(r.Nonce); got.Outcome != statedir.AnswerTyped {
		t.Errorf("result: %+v", got)
	}
	h := string(mustRead(t, w.d.Path(statedir.History)))
	if !strings.Contains(h, `"event":"answer_typed"`) || !strings.Contains(h, `ünïcödé`) {
		t.Errorf("history: %s", h)
	}
}

// TestPlantedWordsRefused: an answer whose words, as its record keeps them
// or as the paste the loop types, are not the words checked (changed, a
// control character planted, a line more) is refused before any key.
func TestPlantedWordsRefused(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		file func(d statedir.Dir) string
		edit func(string) string
	}{
		"the paste changed": {func(d statedir.Dir) string { return d.Path(filepath.Join(statedir.Pastes, answerWords)) },
			func(s string) string { return "rm -rf /" }},
		"a line more in the paste": {func(d statedir.Dir) string { return d.Path(filepath.Join(statedir.Pastes, answerWords)) },
			func(s string) string { return s + "\nmore" }},
		"a control character in the record": {func(d statedir.Dir) string { return d.Path(statedir.Answering) },
			func(s string) string { return strings.Replace(s, "ünïcödé", `ünïcödé\u0003`, 1) }},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := relayedWords(t, corpusPane(t, "real/claude-manual-100-question"), true)
			w.words(w.field(), askWords)
			tickWords(t, string(w.d), w.pane, t0.Add(time.Minute), true)
			action := w.d.Path(filepath.Join(statedir.Actions, "000"+AnswerSuffix))
			file := c.file(w.d)
			if err := os.WriteFile(file, []byte(c.edit(string(mustRead(t, file)))), 0o600); err != nil {
				t.Fatal(err)
			}
			if line, ok := ConfirmAnswer(ConfirmRequest{Dir: string(w.d), Target: "agent", Action: action,
				Stage: AnswerBefore, Now: t0.Add(time.Minute), Capture: asAgent(t, w.pane, t0.Add(time.Minute))}, strings.NewReader(w.pane)); ok {
				t.Errorf("a planted answer was let through: %s", line)
			}
		})
	}
}
