package poll

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/capture"
	"github.com/omega-monitor/omega-monitor/statedir"
	"github.com/omega-monitor/omega-monitor/statedir/event"
	"github.com/omega-monitor/omega-monitor/tick"
)

var t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

func goldenPane(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "golden", "panes", name+".pane"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// tickAt runs one poll over pane at now, with answers on, and returns its
// line.
func tickAt(t *testing.T, dir, pane string, now time.Time) string {
	t.Helper()
	fs := flag.NewFlagSet("tick", flag.ContinueOnError)
	f := AddFlags(fs)
	if err := fs.Parse([]string{"--target", "agent", "--work", "7"}); err != nil {
		t.Fatal(err)
	}
	line, err := Tick(Request{Dir: dir, Flags: f, Now: now, Answers: true, Capture: capture.Options{Now: now}}, strings.NewReader(pane))
	if err != nil {
		t.Fatal(err)
	}
	return line
}

// cursorOn moves a Claude Code dialog's cursor to option pos, as a key
// press would.
func cursorOn(pane string, pos int) string {
	lines := strings.Split(pane, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, " ❯ ") {
			lines[i] = "   " + strings.TrimPrefix(l, " ❯ ")
		}
	}
	for i, l := range lines {
		if strings.HasPrefix(l, "   "+string(rune('0'+pos))+". ") {
			lines[i] = " ❯ " + strings.TrimPrefix(l, "   ")
		}
	}
	return strings.Join(lines, "\n")
}

type answerWorld struct {
	t     *testing.T
	d     statedir.Dir
	pane  string
	offer statedir.OffersRecord
}

// relayed is a watcher that relayed a Claude Code permission prompt with
// answers on.
func relayed(t *testing.T) *answerWorld {
	t.Helper()
	w := &answerWorld{t: t, d: statedir.Dir(filepath.Join(t.TempDir(), "w")), pane: goldenPane(t, "claude-328-permission")}
	// A question is paged on its second look, QuestionSettle after the
	// first.
	tickAt(t, string(w.d), w.pane, t0.Add(-tick.QuestionSettle))
	line := tickAt(t, string(w.d), w.pane, t0)
	if !strings.Contains(line, "escalated to the operator") {
		t.Fatalf("the question was not relayed: %s", line)
	}
	var err error
	if w.offer, err = w.d.ReadOffers(); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *answerWorld) request(pos int, confirmed bool, at time.Time) statedir.AnswerRequest {
	w.t.Helper()
	r := statedir.AnswerRequest{Nonce: w.offer.Offers[pos-1].Nonce, FromID: 42, From: "op", ChatID: 42, MessageID: 7, At: at, Confirmed: confirmed}
	if err := w.d.WriteRequest(r); err != nil {
		w.t.Fatal(err)
	}
	return r
}

func (w *answerWorld) result(nonce string) statedir.AnswerResult {
	w.t.Helper()
	r, err := w.d.ReadResult(nonce)
	if err != nil {
		w.t.Fatalf("no result for %s: %v", nonce, err)
	}
	return r
}

func (w *answerWorld) answerAction() (keys string, a answerAction, ok bool) {
	w.t.Helper()
	path := w.d.Path(filepath.Join(statedir.Actions, "000"+AnswerSuffix))
	data, err := os.ReadFile(path)
	if err != nil {
		return "", a, false
	}
	keys, _, _ = strings.Cut(string(data), "\n")
	a, err = readAnswer(path)
	if err != nil {
		w.t.Fatal(err)
	}
	return keys, a, true
}

// TestRelayedQuestionOffersItsOptions: a question whose dialog can be
// answered is queued with a button an option, each a nonce of its own
// that the offers bind to the dialog's key.
func TestRelayedQuestionOffersItsOptions(t *testing.T) {
	t.Parallel()
	w := relayed(t)
	var labels []string
	for _, o := range w.offer.Offers {
		labels = append(labels, o.Label)
		if !statedir.IsNonce(o.Nonce) || o.Spent || !o.Expires.Equal(t0.Add(statedir.OfferLife)) {
			t.Errorf("offer %+v", o)
		}
	}
	if w.offer.Key == "" {
		t.Error("the offers are bound to no dialog")
	}
	want := []string{"Yes", "Yes, and don't ask again for go test commands in /root/work", "Yes, and switch to auto mode · shift+tab", "No", "Esc: cancel"}
	if diff := cmp.Diff(want, labels); diff != "" {
		t.Errorf("offers (-want +got):\n%s", diff)
	}
	names, _ := w.d.PendingAlerts()
	if len(names) != 1 {
		t.Fatalf("outbox: %q", names)
	}
	markup, err := os.ReadFile(filepath.Join(w.d.Path(statedir.Outbox), names[0]+statedir.MarkupSuffix))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		InlineKeyboard [][]struct {
			Text         string `json:"text"`
			CallbackData string `json:"callback_data"`
		} `json:"inline_keyboard"`
	}
	if err := json.Unmarshal(markup, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.InlineKeyboard) != 5 || m.InlineKeyboard[3][0].Text != "4. No" || m.InlineKeyboard[3][0].CallbackData != w.offer.Offers[3].Nonce {
		t.Errorf("markup: %s", markup)
	}
	// The dialog offers Esc: its own button, last, saying what it does.
	if esc := m.InlineKeyboard[4][0]; esc.Text != "Esc: cancel" || esc.CallbackData != w.offer.Offers[4].Nonce || !w.offer.Offers[4].Esc {
		t.Errorf("the Esc button: %s", markup)
	}
}

// TestAnswerByEsc: the dialog's Esc, tapped, becomes the action "esc 1",
// no Enter after it; after it the dialog must be gone, and one still there
// is said as an Esc that did not take.
func TestAnswerByEsc(t *testing.T) {
	t.Parallel()
	w := relayed(t)
	if err := w.d.WriteRequest(statedir.AnswerRequest{Nonce: w.offer.Offers[4].Nonce, From: "op", FromID: 42, ChatID: 42, At: t0.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	line := tickAt(t, string(w.d), w.pane, t0.Add(time.Minute))
	if !strings.Contains(line, `answer from op taken: "Esc: cancel", to be typed`) {
		t.Errorf("line: %s", line)
	}
	keys, a, ok := w.answerAction()
	if !ok || keys != "esc 1" || !a.Esc || a.Pos != 0 {
		t.Fatalf("answer action %q %+v %v", keys, a, ok)
	}
}

// TestAnswerAcceptedForTheSameDialog: a request for an option of the
// dialog still on the screen becomes an answer action (the keys that move
// the cursor there), is taken once, and spends its offer.
func TestAnswerAcceptedForTheSameDialog(t *testing.T) {
	t.Parallel()
	w := relayed(t)
	r := w.request(4, false, t0.Add(time.Minute))
	line := tickAt(t, string(w.d), w.pane, t0.Add(time.Minute))
	if !strings.Contains(line, `answer from op taken: "No", to be typed`) {
		t.Errorf("line: %s", line)
	}
	keys, a, ok := w.answerAction()
	if !ok || keys != "down 3" || a.Pos != 4 || a.Nonce != r.Nonce || a.Key != w.offer.Key {
		t.Fatalf("answer action %q %+v %v", keys, a, ok)
	}
	if rs, _ := w.d.Requests(); len(rs) != 0 {
		t.Errorf("the request was not taken: %+v", rs)
	}
	offers, _ := w.d.ReadOffers()
	if !offers.Offers[3].Spent || offers.Offers[0].Spent {
		t.Errorf("offers after: %+v", offers.Offers)
	}
}

// TestAnswersRefused: each request that cannot be typed into the dialog
// on the screen is refused with its reason as its result, and hands the
// loop nothing.
func TestAnswersRefused(t *testing.T) {
	t.Parallel()
	stalled := goldenPane(t, "GOLDEN-stalled-real")
	for _, c := range []struct {
		name string
		make func(w *answerWorld) statedir.AnswerRequest
		pane func(w *answerWorld) string
		at   time.Duration
		why  string
	}{
		{"gone", func(w *answerWorld) statedir.AnswerRequest { return w.request(1, false, t0) },
			func(*answerWorld) string { return stalled }, time.Minute, "the question is no longer on the screen"},
		{"expired", func(w *answerWorld) statedir.AnswerRequest { return w.request(1, false, t0) },
			func(w *answerWorld) string { return w.pane }, statedir.OfferLife, "the question was relayed more than 10m0s ago"},
		{"widens unconfirmed", func(w *answerWorld) statedir.AnswerRequest { return w.request(2, false, t0) },
			func(w *answerWorld) string { return w.pane }, time.Minute, "this option widens what the agent may do: it takes a second tap to confirm"},
		{"another dialog", func(w *answerWorld) statedir.AnswerRequest { return w.request(1, false, t0) },
			func(w *answerWorld) string { return strings.Replace(w.pane, "go test ./...", "rm -rf ./...", 1) }, time.Minute,
			"the dialog on the screen is not the question relayed"},
		{"forged", func(w *answerWorld) statedir.AnswerRequest {
			r := statedir.AnswerRequest{Nonce: "0123456789abcdef0123456789abcdef", From: "op", At: t0}
			if err := w.d.WriteRequest(r); err != nil {
				t.Fatal(err)
			}
			return r
		}, func(w *answerWorld) string { return w.pane }, time.Minute, "not a button of the question waiting (it was replaced, or never offered)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := relayed(t)
			r := c.make(w)
			line := tickAt(t, string(w.d), c.pane(w), t0.Add(c.at))
			if !strings.Contains(line, "answer from op refused: "+c.why) {
				t.Errorf("line: %s", line)
			}
			if got := w.result(r.Nonce); got.Outcome != statedir.AnswerRefused || got.Why != c.why {
				t.Errorf("result %+v, want refused: %s", got, c.why)
			}
			if _, _, ok := w.answerAction(); ok {
				t.Error("a refused answer was handed to the loop")
			}
			if rs, _ := w.d.Requests(); len(rs) != 0 {
				t.Errorf("a refused request stayed: %+v", rs)
			}
		})
	}
}

// TestAnswerTakenOnce: a button answered once is refused when its nonce
// comes again; of two answers at once, the first is taken and the other
// refused.
func TestAnswerTakenOnce(t *testing.T) {
	t.Parallel()
	w := relayed(t)
	first := w.request(1, false, t0.Add(time.Second))
	second := w.request(4, false, t0.Add(2*time.Second))
	tickAt(t, string(w.d), w.pane, t0.Add(time.Minute))
	if _, a, ok := w.answerAction(); !ok || a.Nonce != first.Nonce {
		t.Fatalf("answer action %+v %v, want the first", a, ok)
	}
	if got := w.result(second.Nonce); got.Why != "another answer to this question was taken first" {
		t.Errorf("the second answer: %+v", got)
	}
	// The same button again, later: spent.
	os.Remove(w.d.Path(filepath.Join(statedir.Actions, "000"+AnswerSuffix)))
	w.d.Settle(first.Nonce)
	again := first
	again.At = t0.Add(2 * time.Minute)
	if err := w.d.WriteRequest(again); err != nil {
		t.Fatal(err)
	}
	tickAt(t, string(w.d), w.pane, t0.Add(2*time.Minute))
	if got := w.result(first.Nonce); got.Why != "this button was already answered" {
		t.Errorf("the same button again: %+v", got)
	}
}

// TestConfirmAnswerStages: the checks around an answer's keys: the same
// dialog before the first key, the cursor on the option before Enter, the
// dialog gone after it; each refusal is the answer's result.
func TestConfirmAnswerStages(t *testing.T) {
	t.Parallel()
	stalled := goldenPane(t, "GOLDEN-stalled-real")
	for _, c := range []struct {
		name, stage string
		pane        func(w *answerWorld) string
		why         string // "" for ok
		// idle, when not 0, frames the pane with the multiplexer's line:
		// a client on the pane's window, its last input idle seconds ago.
		idle int
	}{
		{"same dialog", AnswerBefore, func(w *answerWorld) string { return w.pane }, "", 0},
		{"changed", AnswerBefore, func(w *answerWorld) string { return strings.Replace(w.pane, "go test", "rm -rf", 1) },
			"the question on the screen changed before the answer was typed", 0},
		{"cursor there", AnswerSelected, func(w *answerWorld) string { return cursorOn(w.pane, 4) }, "", 0},
		{"cursor elsewhere", AnswerSelected, func(w *answerWorld) string { return cursorOn(w.pane, 3) },
			"the cursor is on option 3, not on 4; Enter withheld", 0},
		{"moved on", AnswerDone, func(*answerWorld) string { return stalled }, "", 0},
		{"still there", AnswerDone, func(w *answerWorld) string { return cursorOn(w.pane, 4) },
			"Enter was pressed, but the dialog is still on the screen", 0},
		// The operator's own answer is not held for a human at the agent;
		// it waits out a human's keys, which would meet its own.
		{"a human at the agent, quiet", AnswerBefore, func(w *answerWorld) string { return w.pane }, "", 30},
		{"a human typing, before the first key", AnswerBefore, func(w *answerWorld) string { return w.pane },
			"a human typed at the agent 2s ago: the dialog may be being answered there", 2},
		{"a human typing, before Enter", AnswerSelected, func(w *answerWorld) string { return cursorOn(w.pane, 4) },
			"a human typed at the agent 1s ago, as the cursor moved; Enter withheld", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := relayed(t)
			r := w.request(4, false, t0)
			tickAt(t, string(w.d), w.pane, t0.Add(time.Minute))
			action := w.d.Path(filepath.Join(statedir.Actions, "000"+AnswerSuffix))
			pane, opt := c.pane(w), capture.Options{}
			if c.idle > 0 {
				pane = fmt.Sprintf("[omega-monitor:mux] 1000 @0 1:%d@0\nagent:@0.%%0\t/w\n%s\n%s", 1000-c.idle, capture.PaneMark, pane)
				opt.Framed = true
			}
			line, ok := ConfirmAnswer(ConfirmRequest{Dir: string(w.d), Target: "agent", Action: action,
				Stage: tick.Stage(c.stage), Now: t0.Add(time.Minute), Capture: opt}, strings.NewReader(pane))
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
			h, _ := os.ReadFile(w.d.Path(statedir.History))
			if !strings.Contains(string(h), `"event":"`+event.AnswerRefused+`"`) {
				t.Errorf("history: %s", h)
			}
		})
	}
}

// TestAnswerTypedIsAcked: the loop's ack of a typed answer is its result,
// and a stale answer the loop never finished is refused at the next poll.
func TestAnswerTypedIsAcked(t *testing.T) {
	t.Parallel()
	w := relayed(t)
	r := w.request(1, false, t0)
	tickAt(t, string(w.d), w.pane, t0.Add(time.Minute))
	action := w.d.Path(filepath.Join(statedir.Actions, "000"+AnswerSuffix))
	if line := Ack(string(w.d), "agent", action, event.AnswerTyped, "", t0.Add(time.Minute)); !strings.Contains(line, "answer typed: Yes · by op") {
		t.Errorf("ack line: %q", line)
	}
	if got := w.result(r.Nonce); got.Outcome != statedir.AnswerTyped || got.Label != "Yes" {
		t.Errorf("result: %+v", got)
	}

	w2 := relayed(t)
	r2 := w2.request(1, false, t0)
	tickAt(t, string(w2.d), w2.pane, t0.Add(time.Minute))
	tickAt(t, string(w2.d), w2.pane, t0.Add(2*time.Minute)) // the loop never acked
	if got := w2.result(r2.Nonce); got.Outcome != statedir.AnswerRefused || got.Why != "the watcher did not finish typing it" {
		t.Errorf("stale answer: %+v", got)
	}
}

func TestWitnessWaits(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		status, agent string
		want          bool
	}{
		{"", "Claude Code", true}, // no witness: the screen decides
		{"waiting", "Claude Code", true},
		{"busy", "Claude Code", false},
		{"idle", "Claude Code", false},
		{"busy", "Codex", true}, // its turn is open while it asks
		{"idle", "Codex", false},
	} {
		var w *tick.Witness
		if c.status != "" {
			w = &tick.Witness{Status: c.status}
		}
		if got := witnessWaits(w, c.agent); got != c.want {
			t.Errorf("witnessWaits(%q, %q) = %v, want %v", c.status, c.agent, got, c.want)
		}
	}
}
