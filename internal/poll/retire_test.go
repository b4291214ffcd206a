package poll

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/alert"
	"github.com/omega-monitor/omega-monitor/answer"
	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/pollset"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/tick"
)

// sentAs records, as deliver does once the funnel said so, that the
// question w relayed went out as message msg of chat 42.
func (w *answerWorld) sentAs(msg int) {
	w.t.Helper()
	var nonces []string
	for _, o := range w.offer.Offers {
		nonces = append(nonces, o.Nonce)
	}
	if err := noteMessage(w.d, nonces, alert.Sent{ChatID: 42, MessageID: msg}, t0); err != nil {
		w.t.Fatal(err)
	}
	offers, _ := w.d.ReadOffers()
	if offers.ChatID != 42 || offers.MessageID != msg {
		w.t.Fatalf("the message is not recorded with the offers: %+v", offers)
	}
}

// waitAction is the wait the poll handed the loop, or "".
func (w *answerWorld) waitAction() string {
	w.t.Helper()
	waits, _ := filepath.Glob(w.d.Path(filepath.Join(statedir.Actions, "*.wait")))
	if len(waits) != 1 {
		return strings.Join(waits, ",")
	}
	b, _ := os.ReadFile(waits[0])
	return strings.TrimSuffix(strings.TrimPrefix(string(b), "pace "), "\n")
}

func (w *answerWorld) retires() []statedir.RetireRecord {
	w.t.Helper()
	rs, refused := w.d.Retires(t0.Add(time.Hour))
	if len(refused) != 0 {
		w.t.Errorf("the poll left records the receiver refuses: %v", refused)
	}
	return rs
}

func (w *answerWorld) history() string {
	b, _ := os.ReadFile(w.d.Path(statedir.History))
	return string(b)
}

// TestRetiredWhenTheQuestionLeaves: a relayed question no longer on the
// screen at a look, and still not at the next one QuestionSettle later,
// loses its offers (its nonces are refused from then on), and the receiver
// is left a record to remove its message's buttons, saying how it left.
func TestRetiredWhenTheQuestionLeaves(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, pane, reason, note string
	}{
		{"to an idle screen", "GOLDEN-stalled-real", statedir.RetireGone, "the question relayed left the screen: its buttons withdrawn"},
		{"to the agent at work", "claude-328-working-effort", statedir.RetireAnswered, "the question relayed was answered at the terminal: its buttons withdrawn"},
		{"to another question", "claude-328-ask-question", statedir.RetireReplaced, "another question took the place of the one relayed: its buttons withdrawn"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := relayed(t)
			w.sentAs(1001)
			after := goldenPane(t, c.pane)
			first := tickAt(t, string(w.d), after, t0.Add(5*time.Second))
			if strings.Contains(first, "withdrawn") || len(w.retires()) != 0 {
				t.Fatalf("retired at the first look: %s", first)
			}
			if offers, _ := w.d.ReadOffers(); len(offers.Offers) != 5 || !offers.Gone.Equal(t0.Add(5*time.Second)) {
				t.Errorf("offers after the first look: %+v", offers)
			}
			if got := w.waitAction(); got != "2" {
				t.Errorf("the first look asks to look again in %q, want 2 seconds", got)
			}
			// A tap now is refused: the question is not on the screen.
			w.request(4, false, t0.Add(6*time.Second))
			line := tickAt(t, string(w.d), after, t0.Add(7500*time.Millisecond))
			if !strings.Contains(line, c.note) {
				t.Errorf("the second look: %s, want it to say %q", line, c.note)
			}
			// None left of the question relayed (another question's
			// may be there: it is paged on this poll).
			left, _ := w.d.ReadOffers()
			for _, o := range left.Offers {
				if offerIndex(w.offer, o.Nonce) >= 0 {
					t.Errorf("an offer left: %+v", o)
				}
			}
			// The tap taken on this poll spent its offer: an answer
			// was reported in the message, which the receiver edits
			// itself; no record.
			if got := w.retires(); len(got) != 0 {
				t.Errorf("records after an answer from the chat: %+v", got)
			}
			if res := w.result(w.offer.Offers[3].Nonce); res.Outcome != statedir.AnswerRefused {
				t.Errorf("the tap: %+v", res)
			}
			if h := w.history(); !strings.Contains(h, `"event":"offers_retired"`) || !strings.Contains(h, `"answered_from_chat":true`) {
				t.Errorf("history:\n%s", h)
			}
		})
	}
}

// TestRetireRecordForTheMessage: with no tap taken, the record names the
// message the funnel said it sent, and how the question left; the same
// question asked again is relayed again, with new nonces, and a tap on an
// old one is refused.
func TestRetireRecordForTheMessage(t *testing.T) {
	t.Parallel()
	w := relayed(t)
	w.sentAs(1001)
	idle := goldenPane(t, "GOLDEN-stalled-real")
	tickAt(t, string(w.d), idle, t0.Add(5*time.Second))
	line := tickAt(t, string(w.d), idle, t0.Add(8*time.Second))
	if !strings.Contains(line, "left the screen: its buttons withdrawn") {
		t.Errorf("line: %s", line)
	}
	want := []statedir.RetireRecord{{Nonce: w.offer.Offers[0].Nonce, ChatID: 42, MessageID: 1001, Reason: statedir.RetireGone, At: t0.Add(8 * time.Second)}}
	if diff := cmp.Diff(want, w.retires()); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	if h := w.history(); !strings.Contains(h, `"event":"offers_retired"`) || !strings.Contains(h, `"record":true`) || !strings.Contains(h, `"message_id":1001`) {
		t.Errorf("history:\n%s", h)
	}

	// Asked again: seen, then paged once seen again QuestionSettle later.
	names, _ := w.d.PendingAlerts()
	tickAt(t, string(w.d), w.pane, t0.Add(20*time.Second))
	line = tickAt(t, string(w.d), w.pane, t0.Add(22*time.Second))
	if !strings.Contains(line, "escalated to the operator") {
		t.Fatalf("the same question asked again is not relayed again: %s", line)
	}
	again, _ := w.d.ReadOffers()
	if len(again.Offers) != 5 || again.MessageID != 0 {
		t.Fatalf("offers of the question asked again: %+v", again)
	}
	for i, o := range again.Offers {
		if o.Nonce == w.offer.Offers[i].Nonce {
			t.Errorf("option %d has the nonce it had before", i+1)
		}
	}
	if now, _ := w.d.PendingAlerts(); len(now) != len(names)+1 {
		t.Errorf("outbox %q, want one question more than %q", now, names)
	}
	// A tap on a button of the first message finds nothing to answer.
	old := w.request(4, false, t0.Add(23*time.Second))
	tickAt(t, string(w.d), w.pane, t0.Add(24*time.Second))
	if res := w.result(old.Nonce); res.Outcome != statedir.AnswerRefused || !strings.Contains(res.Why, "not a button of the question waiting") {
		t.Errorf("a tap on a retired button: %+v", res)
	}
	if _, _, ok := w.answerAction(); ok {
		t.Error("a tap on a retired button was handed to the loop")
	}
}

// TestNotRetiredOnOneLook: a dialog missed by one capture and back at the
// next keeps its offers; no record, nothing said.
func TestNotRetiredOnOneLook(t *testing.T) {
	t.Parallel()
	w := relayed(t)
	w.sentAs(1001)
	idle := goldenPane(t, "GOLDEN-stalled-real")
	for i, p := range []string{idle, w.pane, idle, idle} {
		// 1.5 s apart: never two looks QuestionSettle apart without it.
		line := tickAt(t, string(w.d), p, t0.Add(5*time.Second+time.Duration(i)*1500*time.Millisecond))
		if strings.Contains(line, "withdrawn") {
			t.Fatalf("look %d: %s", i+1, line)
		}
	}
	if offers, _ := w.d.ReadOffers(); len(offers.Offers) != 5 || offers.Gone.IsZero() {
		t.Errorf("offers: %+v", offers)
	}
	if got := w.retires(); len(got) != 0 {
		t.Errorf("records: %+v", got)
	}
}

// TestNotRetiredWithoutAScreen: a failed capture, or a dialog there that
// cannot be read as a menu (it may be the question, drawn in part), claims
// nothing.
func TestNotRetiredWithoutAScreen(t *testing.T) {
	t.Parallel()
	w := relayed(t)
	w.sentAs(1001)
	// The dialog relayed, its cursor not drawn (a redraw caught half
	// way): the same question, which cannot be answered now.
	unread := strings.Replace(w.pane, " ❯ 1. Yes", "   1. Yes", 1)
	if r := classify.ClassifyText(unread, classify.Options{}); r.State != classify.Question {
		t.Fatalf("the test needs a question: %v", r.State)
	} else if _, ok := answer.Read(r); ok {
		t.Fatal("the test needs a dialog that cannot be read as a menu")
	}
	for i := range 3 {
		line := tickAt(t, string(w.d), unread, t0.Add(time.Duration(5+5*i)*time.Second))
		if strings.Contains(line, "withdrawn") {
			t.Fatalf("look %d: %s", i+1, line)
		}
	}
	for i := range 3 {
		line, err := Tick(Request{Dir: string(w.d), Settings: answering(false), Readings: workOf7, Now: t0.Add(time.Duration(30+5*i) * time.Second),
			CaptureError: "the capture failed"}, strings.NewReader(""))
		if err != nil || strings.Contains(line, "withdrawn") {
			t.Fatalf("failed capture %d: %s %v", i+1, line, err)
		}
	}
	if offers, _ := w.d.ReadOffers(); len(offers.Offers) != 5 || !offers.Gone.IsZero() {
		t.Errorf("offers: %+v", offers)
	}
}

// workOf7 is a poll's readings: a work probe that counts 7.
var workOf7 = Readings{Work: ProbeReading{Given: true, Output: "7"}}

// answering is the settings of a watcher of "agent" whose chat answers,
// free text as said.
func answering(freeText bool) Settings {
	s := pollset.Default("agent")
	s.Answers, s.FreeText = true, freeText
	return s
}

// TestRetiredWithoutAMessage: a funnel that did not say which message it
// sent leaves no record; the offers go all the same.
func TestRetiredWithoutAMessage(t *testing.T) {
	t.Parallel()
	w := relayed(t)
	idle := goldenPane(t, "GOLDEN-stalled-real")
	tickAt(t, string(w.d), idle, t0.Add(5*time.Second))
	if line := tickAt(t, string(w.d), idle, t0.Add(8*time.Second)); !strings.Contains(line, "withdrawn") {
		t.Errorf("line: %s", line)
	}
	if _, err := os.Stat(w.d.Path(filepath.Join(statedir.Answers, statedir.Offers))); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("offers: %v", err)
	}
	if got := w.retires(); len(got) != 0 {
		t.Errorf("records: %+v", got)
	}
}

// TestUnreadableOffersAreRemoved: offers that cannot be read are said
// once, and removed.
func TestUnreadableOffersAreRemoved(t *testing.T) {
	t.Parallel()
	w := relayed(t)
	if err := os.WriteFile(w.d.Path(filepath.Join(statedir.Answers, statedir.Offers)), []byte("{junk"), 0o600); err != nil {
		t.Fatal(err)
	}
	idle := goldenPane(t, "GOLDEN-stalled-real")
	if line := tickAt(t, string(w.d), idle, t0.Add(5*time.Second)); !strings.Contains(line, "corrupt") || !strings.Contains(line, "removed") {
		t.Errorf("line: %s", line)
	}
	if line := tickAt(t, string(w.d), idle, t0.Add(10*time.Second)); strings.Contains(line, "answers:") {
		t.Errorf("said again: %s", line)
	}
}

// TestLookAgain: the one wait of a poll is shortened, or added, unless the
// interval comes first.
func TestLookAgain(t *testing.T) {
	t.Parallel()
	nudge := tick.Action{Kind: tick.Nudge, Text: "go on"}
	wait := func(d time.Duration) tick.Action { return tick.Action{Kind: tick.Wait, Wait: d} }
	for _, c := range []struct {
		name     string
		actions  []tick.Action
		in, ival time.Duration
		want     []tick.Action
	}{
		{"added", []tick.Action{nudge}, 2 * time.Second, time.Minute, []tick.Action{nudge, wait(2 * time.Second)}},
		{"a longer one shortened", []tick.Action{wait(4 * time.Second)}, 2 * time.Second, time.Minute, []tick.Action{wait(2 * time.Second)}},
		{"a shorter one kept", []tick.Action{wait(500 * time.Millisecond)}, 2 * time.Second, time.Minute, []tick.Action{wait(500 * time.Millisecond)}},
		{"the interval first", nil, 2 * time.Second, time.Second, nil},
		{"at least 100 ms", nil, 0, time.Minute, []tick.Action{wait(100 * time.Millisecond)}},
		{"a slower pace shortened", []tick.Action{nudge, wait(5 * time.Minute)}, 2 * time.Second, time.Minute, []tick.Action{nudge, wait(2 * time.Second)}},
		{"a slower pace gives way to the interval", []tick.Action{nudge, wait(5 * time.Minute)}, 2 * time.Minute, time.Minute, []tick.Action{nudge}},
	} {
		got := lookAgain(slices.Clone(c.actions), c.in, c.ival)
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
}

// TestDeliverRecordsTheMessage: deliver records the message the funnel said
// it sent a question's buttons under with their offers; buttons retired
// while their alert waited are not sent; offers retired while the funnel
// sent them leave the receiver a record at once.
func TestDeliverRecordsTheMessage(t *testing.T) {
	t.Parallel()
	funnel := func(t *testing.T, script string) (path, args string) {
		dir := t.TempDir()
		args = filepath.Join(dir, "args")
		path = filepath.Join(dir, "funnel")
		body := "#!/bin/sh\necho \"$*\" >" + args + "\ncat >/dev/null\n" + script + "\n"
		if err := os.WriteFile(path, []byte(body), 0o700); err != nil {
			t.Fatal(err)
		}
		return path, args
	}
	deliverAll := func(t *testing.T, w *answerWorld, path string) {
		t.Helper()
		if lines, ok := Deliver(context.Background(), string(w.d), "agent", path, t.TempDir(), nil, DeliverOptions{}); !ok {
			t.Fatalf("not delivered: %q", lines)
		}
	}
	t.Run("the funnel says", func(t *testing.T) {
		w := relayed(t)
		path, args := funnel(t, "echo message_id=1234 chat_id=-100500")
		deliverAll(t, w, path)
		if b, _ := os.ReadFile(args); !strings.HasPrefix(string(b), "--reply-markup ") {
			t.Errorf("the funnel's arguments: %q", b)
		}
		offers, _ := w.d.ReadOffers()
		if offers.ChatID != -100500 || offers.MessageID != 1234 || len(offers.Offers) != 5 {
			t.Errorf("offers: %+v", offers)
		}
	})
	t.Run("the funnel says nothing, or nonsense", func(t *testing.T) {
		for _, said := range []string{"", "echo sent", "echo message_id=1234", "echo 'message_id=1234 chat_id=42 ; rm -rf /'"} {
			w := relayed(t)
			path, _ := funnel(t, said)
			deliverAll(t, w, path)
			if offers, _ := w.d.ReadOffers(); offers.MessageID != 0 || offers.ChatID != 0 || len(offers.Offers) != 5 {
				t.Errorf("%q: offers %+v", said, offers)
			}
		}
	})
	t.Run("retired while waiting", func(t *testing.T) {
		w := relayed(t)
		if err := w.d.DropOffers(); err != nil {
			t.Fatal(err)
		}
		path, args := funnel(t, "echo message_id=1234 chat_id=42")
		deliverAll(t, w, path)
		if b, _ := os.ReadFile(args); string(b) != "--stdin\n" {
			t.Errorf("the funnel's arguments: %q, want no buttons", b)
		}
		if got := w.retires(); len(got) != 0 {
			t.Errorf("records for a message sent without buttons: %+v", got)
		}
	})
	t.Run("retired while sent", func(t *testing.T) {
		w := relayed(t)
		offers := w.d.Path(filepath.Join(statedir.Answers, statedir.Offers))
		path, _ := funnel(t, "rm "+offers+"\necho message_id=1234 chat_id=42")
		deliverAll(t, w, path)
		got, refused := w.d.Retires(time.Now())
		if len(got) != 1 || len(refused) != 0 || got[0].MessageID != 1234 || got[0].ChatID != 42 || got[0].Reason != statedir.RetireGone || got[0].Nonce != w.offer.Offers[0].Nonce {
			t.Errorf("records: %+v, refused %+v", got, refused)
		}
	})
}

// TestHooksHeardForgottenByARestart: a state that says the agent's hooks
// are heard keeps saying it while the loop that wrote it runs, and a loop
// started after its last poll learns it anew: a running turn is looked at
// the interval's pace until a hook announces a turn's end again.
func TestHooksHeardForgottenByARestart(t *testing.T) {
	t.Parallel()
	const busy = "⏺ Working on it.\n\n✻ Crunching… (3s · ↑ 1.2k tokens)\n\n" +
		"────────────────────────────────────────\n❯ \n────────────────────────────────────────\n" +
		"  ⏵⏵ accept edits on (shift+tab to cycle) · esc to interrupt\n"
	dir := t.TempDir()
	d := statedir.Dir(dir)
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	heard := func() bool {
		t.Helper()
		var st tick.State
		if err := d.ReadRecord(statedir.State, &st); err != nil {
			t.Fatal(err)
		}
		return st.HooksHeard
	}
	setHeard := func() {
		t.Helper()
		var st map[string]any
		if err := d.ReadRecord(statedir.State, &st); err != nil {
			t.Fatal(err)
		}
		st["hooks_heard"] = true
		b, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, statedir.State), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeLoop := func(started time.Time) {
		t.Helper()
		b, err := json.Marshal(statedir.LoopRecord{Pid: 1, StartedAt: started})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, statedir.Loop), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeLoop(t0.Add(-time.Hour))
	tickAt(t, dir, busy, t0)
	setHeard()
	tickAt(t, dir, busy, t0.Add(time.Minute))
	if !heard() {
		t.Fatal("the loop that heard the hooks forgot them")
	}
	writeLoop(t0.Add(90 * time.Second))
	tickAt(t, dir, busy, t0.Add(2*time.Minute))
	if heard() {
		t.Error("a loop started after the last poll kept the hooks heard")
	}
}
