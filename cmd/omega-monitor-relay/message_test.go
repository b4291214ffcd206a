package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// onMessage is the tap u made on the message msg instead.
func onMessage(u map[string]any, msg int) map[string]any {
	u["callback_query"].(map[string]any)["message"].(map[string]any)["message_id"] = msg
	return u
}

// lastAnswer is the text of the last callback query answered.
func (w *world) lastAnswer(t *testing.T) string {
	t.Helper()
	got := w.answers()
	if len(got) == 0 {
		t.Fatalf("no callback query answered: %s", w.log())
	}
	_, text, _ := strings.Cut(got[len(got)-1], ": ")
	return text
}

// nothingDone checks that no request was written and the watcher was not
// woken.
func (w *world) nothingDone(t *testing.T) {
	t.Helper()
	if reqs := w.requests(t); len(reqs) != 0 {
		t.Errorf("requests written: %v", reqs)
	}
	if b, _ := os.ReadFile(w.wakes); len(b) > 0 {
		t.Errorf("the watcher was woken: %q", b)
	}
}

// boundTo records monitor-agent's offers as sent under the message msg of
// chat, as deliver does once the funnel says which message it sent.
func (w *world) boundTo(t *testing.T, chat int64, msg int) {
	t.Helper()
	agent := statedir.Dir(filepath.Join(w.state, "monitor-agent"))
	rec, err := agent.ReadOffers()
	if err != nil {
		t.Fatal(err)
	}
	rec.ChatID, rec.MessageID = chat, msg
	if err := agent.WriteOffers(rec); err != nil {
		t.Fatal(err)
	}
}

// TestButtonOfAnotherMessage: offers recorded under one message are taken
// only from that message: a tap on the same nonce under another message
// (an older message of the question, or data a client sent from elsewhere)
// is refused with the reason, nothing written; so is a reply to another
// message. A record that names no message takes the button wherever it
// is, as before.
func TestButtonOfAnotherMessage(t *testing.T) {
	t.Parallel()
	const older = "this button belongs to an older message: the question was asked again, see the newer message; nothing was typed"
	for _, tt := range []struct {
		name      string
		chat      int64
		msg       int
		tapMsg    int
		want      string
		requested bool
	}{
		{"another message", private, 777, 500, older, false},
		{"another chat recorded", 43, 500, 500, older, false},
		{"the message recorded", private, 777, 777, "sent to monitor-agent", true},
		{"no message recorded", 0, 0, 500, "sent to monitor-agent", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, "chat_id=42\nanswers=on\n")
			w.boundTo(t, tt.chat, tt.msg)
			w.start(t)
			w.handled(t, w.tg.Push(onMessage(tap(private, private, nYes), tt.tapMsg)))
			if got := w.lastAnswer(t); !strings.HasPrefix(got, tt.want) {
				t.Errorf("the tap was told %q, want %q", got, tt.want)
			}
			if _, got := w.requests(t)[nYes]; got != tt.requested {
				t.Errorf("a request written: %v, want %v", got, tt.requested)
			}
		})
	}
	t.Run("a reply to another message", func(t *testing.T) {
		w := newWorld(t, freeConf)
		w.withField(t, false)
		w.boundTo(t, private, 777)
		w.start(t)
		w.handled(t, w.tg.Push(replyTo(private, private, "json", nYes, nFree)))
		want := []string{"this is an older message of the question: the question was asked again, see the newer message; nothing was typed"}
		if diff := cmp.Diff(want, w.replies()); diff != "" {
			t.Errorf("replies (-want +got):\n%s", diff)
		}
		w.nothingDone(t)
		// The same reply to the message recorded is taken.
		u := replyTo(private, private, "json", nYes, nFree)
		u["message"].(map[string]any)["reply_to_message"].(map[string]any)["message_id"] = 777
		w.handled(t, w.tg.Push(u))
		if r, ok := w.requests(t)[nFree]; !ok || r.Text != "json" || r.MessageID != 777 {
			t.Errorf("requests = %v, want the words for %s", w.requests(t), nFree)
		}
	})
}
