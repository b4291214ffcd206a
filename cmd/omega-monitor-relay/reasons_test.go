package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/poll"

	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// TestTheRealReason: a tap by an allowed user on a button no watcher
// offers any more is told what became of its question, as the receiver
// knows it: the retirement it applied to the message (remembered across a
// restart), one still waiting to be applied, or the answer it reported on
// the message. A user not allowed, or another chat, is told only what it
// was told before.
func TestTheRealReason(t *testing.T) {
	t.Parallel()
	const conf = "chat_id=42\nanswers=on\n"
	for _, c := range []struct {
		reason, want string
	}{
		{statedir.RetireAgain, "this button belongs to an older message: the question was asked again at %s, see the newer message; nothing was typed"},
		{statedir.RetireReplaced, "another question took this one's place on the screen at %s: nothing was typed"},
		{statedir.RetireAnswered, "this question was answered at the terminal at %s: nothing was typed"},
		{statedir.RetireGone, "this question left the screen at %s without an answer: nothing was typed"},
	} {
		t.Run("retired, "+c.reason, func(t *testing.T) {
			w := newWorld(t, conf)
			w.start(t)
			msg := w.tg.Post(private, questionText, questionMarkup)
			// The question left the screen three minutes ago; the record
			// is applied now.
			left := time.Now().Add(-3 * time.Minute)
			agent := statedir.Dir(filepath.Join(w.state, "monitor-agent"))
			if err := agent.WriteRetire(statedir.RetireRecord{Nonce: unknown, ChatID: private, MessageID: msg, Reason: c.reason, At: left.UTC()}); err != nil {
				t.Fatal(err)
			}
			w.gone(t, agent.Path(filepath.Join(statedir.Answers, unknown+statedir.RetireSuffix)))
			want := fmt.Sprintf(c.want, left.Local().Format("15:04"))
			w.handled(t, w.tg.Push(onMessage(tap(private, private, unknown), msg)))
			if got := w.lastAnswer(t); got != want {
				t.Errorf("the tap was told %q, want %q", got, want)
			}
			// Across a restart: relay/edited.json remembers why.
			w.stop(t)
			w.start(t)
			w.handled(t, w.tg.Push(onMessage(tap(private, private, unknown), msg)))
			if got := w.lastAnswer(t); got != want {
				t.Errorf("after a restart the tap was told %q, want %q", got, want)
			}
			// Told only to those who may answer.
			w.handled(t, w.tg.Push(onMessage(tap(private, 43, unknown), msg)))
			if got := w.lastAnswer(t); got != "you are not allowed to answer" {
				t.Errorf("a user not allowed was told %q", got)
			}
			w.handled(t, w.tg.Push(onMessage(tap(43, private, unknown), msg)))
			if got := w.lastAnswer(t); got != "this chat may not answer" {
				t.Errorf("another chat was told %q", got)
			}
			w.nothingDone(t)
		})
	}
	t.Run("retired, the record not applied yet", func(t *testing.T) {
		w := newWorld(t, conf)
		w.tg.Fail("editMessageReplyMarkup", 500) // the sweep keeps the record
		w.start(t)
		msg := w.tg.Post(private, questionText, questionMarkup)
		w.retireRecord(t, unknown, private, msg, statedir.RetireAgain)
		w.handled(t, w.tg.Push(onMessage(tap(private, private, unknown), msg)))
		if got, want := w.lastAnswer(t), "this button belongs to an older message: the question was asked again at "; !strings.HasPrefix(got, want) {
			t.Errorf("the tap was told %q, want it to start %q", got, want)
		}
		w.nothingDone(t)
	})
	t.Run("answered from the chat, the question replaced since", func(t *testing.T) {
		w := newWorld(t, conf)
		w.start(t)
		w.handled(t, w.tg.Push(tap(private, private, nYes)))
		agent := statedir.Dir(filepath.Join(w.state, "monitor-agent"))
		agent.WriteResult(statedir.AnswerResult{Nonce: nYes, Outcome: statedir.AnswerTyped, Label: "Yes", At: time.Now()})
		poll.WaitOn(t, func(poll.LogT) poll.Result {
			if len(w.tg.Calls("editMessageText")) > 0 {
				return poll.Success()
			}
			return poll.Continue("no edit yet: %s", w.log())
		})
		// The next question's offers take the place of these.
		agent.WriteOffers(statedir.OffersRecord{Key: "k2", At: time.Now(), Offers: []statedir.Offer{{Nonce: unknown, Pos: 1, Label: "Yes", Expires: time.Now().Add(time.Minute)}}})
		w.handled(t, w.tg.Push(tap(private, private, nNo)))
		if got, want := w.lastAnswer(t), "this question was already answered from this chat (see its message): nothing was typed"; got != want {
			t.Errorf("the tap was told %q, want %q", got, want)
		}
	})
	t.Run("a message the receiver knows nothing of", func(t *testing.T) {
		w := newWorld(t, conf)
		w.start(t)
		w.handled(t, w.tg.Push(onMessage(tap(private, private, unknown), 9999)))
		if got, want := w.lastAnswer(t), "this question is gone or was replaced: nothing was typed"; got != want {
			t.Errorf("the tap was told %q, want %q", got, want)
		}
		w.nothingDone(t)
	})
}
