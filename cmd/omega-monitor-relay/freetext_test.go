package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/poll"

	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// nFree is the nonce of the free-text offer ("Type something.") that
// withField adds to the agent's question.
var nFree = strings.Repeat("a9", 16)

const freeConf = "chat_id=42\nanswers=on\nfree_text=on\n"

// withField adds a free-text offer to monitor-agent's question; spent
// says it was answered before.
func (w *world) withField(t *testing.T, spent bool) {
	t.Helper()
	agent := statedir.Dir(filepath.Join(w.state, "monitor-agent"))
	rec, err := agent.ReadOffers()
	if err != nil {
		t.Fatal(err)
	}
	rec.Offers = append(rec.Offers, statedir.Offer{Nonce: nFree, Pos: 8, Label: "Type something.", FreeText: true, Spent: spent, Expires: time.Now().Add(10 * time.Minute)})
	if err := agent.WriteOffers(rec); err != nil {
		t.Fatal(err)
	}
}

// replyTo is an update: user from, in chat, replies text to message 500,
// the bot's question whose buttons carry the nonces keyboard.
func replyTo(chat, from int64, text string, keyboard ...string) map[string]any {
	chatType := "private"
	if chat < 0 {
		chatType = "supergroup"
	}
	var rows [][]map[string]string
	for _, n := range keyboard {
		rows = append(rows, []map[string]string{{"text": "button", "callback_data": n}})
	}
	question := map[string]any{
		"message_id": 500, "date": 1700000000,
		"chat":     map[string]any{"id": chat, "type": chatType},
		"from":     map[string]any{"id": 123456789, "is_bot": true, "first_name": "omega"},
		"text":     "QUESTION · agent\nWhich format?",
		"entities": []map[string]any{{"type": "bold", "offset": 0, "length": 8}},
	}
	if len(rows) > 0 {
		question["reply_markup"] = map[string]any{"inline_keyboard": rows}
	}
	return map[string]any{"message": map[string]any{
		"message_id": 900, "date": 1700000100, "text": text,
		"chat":             map[string]any{"id": chat, "type": chatType},
		"from":             map[string]any{"id": from, "is_bot": false, "first_name": "Ada"},
		"reply_to_message": question,
	}}
}

// edit changes the message of update u.
func edit(u map[string]any, f func(msg map[string]any)) map[string]any {
	f(u["message"].(map[string]any))
	return u
}

// replies is the texts the bot sent, each with the message it replied to.
func (w *world) replies() []string {
	var out []string
	for _, c := range w.tg.Calls("sendMessage") {
		out = append(out, c.Form.Get("text"))
	}
	return out
}

// TestReplyAnswered: with free text on, a reply by the allowed user to a
// question that offers a free-text option writes exactly one request with
// the words (spacing made single), for that offer, naming the question's
// message; the watcher is woken, the operator told, and once the watcher
// typed them the question's message says who answered with what words.
func TestReplyAnswered(t *testing.T) {
	t.Parallel()
	w := newWorld(t, freeConf)
	w.withField(t, false)
	w.start(t)
	if got := w.tg.AllowedUpdates(); len(got) == 0 || !strings.Contains(got[0], `"message"`) || !strings.Contains(got[0], `"callback_query"`) {
		t.Errorf("allowed_updates = %q, want taps and messages", got)
	}
	id := w.tg.Push(replyTo(private, private, "  use CSV;  \"quoted\" $HOME ünïcödé ", nYes, nNo, nFree))
	w.handled(t, id)
	reqs := w.requests(t)
	if diff := cmp.Diff(map[string]statedir.AnswerRequest{nFree: {Nonce: nFree, FromID: private, From: "Ada", ChatID: private, MessageID: 500,
		Text: `use CSV; "quoted" $HOME ünïcödé`}}, reqs, cmpIgnoreAt); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if got := w.replies(); len(got) != 1 || !strings.HasPrefix(got[0], "sent to monitor-agent: your words for “Type something.”") {
		t.Errorf("replies = %q", got)
	}
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if b, _ := os.ReadFile(w.wakes); strings.Count(string(b), "woke") == 1 {
			return poll.Success()
		}
		return poll.Continue("the watcher's loop was not woken")
	})
	agent := statedir.Dir(filepath.Join(w.state, "monitor-agent"))
	if err := agent.WriteResult(statedir.AnswerResult{Nonce: nFree, Outcome: statedir.AnswerTyped, Label: "Type something.", At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if len(w.tg.Calls("editMessageText")) > 0 {
			return poll.Success()
		}
		return poll.Continue("no edit yet: %s", w.log())
	})
	e := w.tg.Calls("editMessageText")[0].Form
	if want := "QUESTION · agent\nWhich format?\n\n✅ Ada answered “Type something.” with “use CSV; \"quoted\" $HOME ünïcödé” at "; e.Get("message_id") != "500" || !strings.HasPrefix(e.Get("text"), want) {
		t.Errorf("edited message %s: %q, want it to start %q", e.Get("message_id"), e.Get("text"), want)
	}
}

// TestReplyRefused: each reply below is refused with its reason (or, when
// it is no answer at all, ignored without a word), and nothing is written
// nor woken.
func TestReplyRefused(t *testing.T) {
	t.Parallel()
	groupConf := "chat_id=-100500\nanswers=on\nallow_users=7\nfree_text=on\n"
	ok := func(text string) map[string]any { return replyTo(private, private, text, nYes, nFree) }
	for _, tt := range []struct {
		name  string
		conf  string
		spent bool
		u     map[string]any
		want  string // the reply's start; "" when the update is ignored
	}{
		{"control characters", freeConf, false, ok("use CSV\x03"), "not typed: the text must hold no control characters"},
		{"an escape sequence", freeConf, false, ok("\x1b[201~rm -rf /"), "not typed: the text must hold no control characters"},
		{"a newline", freeConf, false, ok("use CSV\nthen rm -rf /"), "not typed: the text must be one line"},
		{"invisible characters", freeConf, false, ok("use\u202eCSV"), "not typed: the text must hold no invisible characters"},
		{"over the cap", freeConf, false, ok(strings.Repeat("x", 501)), "not typed: the text is 501 characters long, more than 500"},
		{"text answers off", "chat_id=42\nanswers=on\n", false, ok("use CSV"), "free-text answers are off: nothing was typed"},
		{"a user not allowed", freeConf, false, replyTo(private, 43, "use CSV", nYes, nFree), "you are not allowed to answer"},
		{"a group member not allowed", groupConf, false, replyTo(group, 8, "use CSV", nYes, nFree), "you are not allowed to answer"},
		{"a bot", freeConf, false, edit(ok("use CSV"), func(m map[string]any) { m["from"].(map[string]any)["is_bot"] = true }), "you are not allowed to answer"},
		{"a chat speaking for a user", groupConf, false, edit(replyTo(group, member, "use CSV", nYes, nFree), func(m map[string]any) {
			m["sender_chat"] = map[string]any{"id": group, "type": "supergroup"}
		}), "you are not allowed to answer"},
		{"a forwarded message", freeConf, false, edit(ok("use CSV"), func(m map[string]any) {
			m["forward_origin"] = map[string]any{"type": "hidden_user", "date": 1, "sender_user_name": "x"}
		}), "a forwarded message is not an answer"},
		{"through a bot", freeConf, false, edit(ok("use CSV"), func(m map[string]any) {
			m["via_bot"] = map[string]any{"id": 555, "is_bot": true, "first_name": "inline"}
		}), "a message sent through a bot is not an answer"},
		{"an edit, as a message", freeConf, false, edit(ok("use CSV"), func(m map[string]any) { m["edit_date"] = 1700000200 }), "an edited message is not an answer"},
		{"no text", freeConf, false, edit(ok(""), func(m map[string]any) {
			m["photo"] = []map[string]any{{"file_id": "x", "file_unique_id": "y", "width": 1, "height": 1}}
		}), "only text is typed"},
		{"a question that is gone", freeConf, false, replyTo(private, private, "use CSV", unknown), "this question is gone or was replaced: nothing was typed"},
		{"a question without buttons", freeConf, false, replyTo(private, private, "use CSV"), "this question has no buttons left"},
		{"a question that takes no words", freeConf, false, replyTo(private, private, "use CSV", nYes, nNo), "this question takes no words"},
		{"a question answered before", freeConf, true, ok("use CSV"), "this question was already answered"},
		{"a planted nonce", freeConf, false, replyTo(private, private, "use CSV", "../monitor-agent/answers/"+nFree), "this question has no buttons left"},
		// No answer at all: no word from the bot.
		{"a reply to a message that is not the bot's", freeConf, false, edit(ok("use CSV"), func(m map[string]any) {
			m["reply_to_message"].(map[string]any)["from"] = map[string]any{"id": 555, "is_bot": false, "first_name": "Eve"}
		}), ""},
		{"a reply in another chat", freeConf, false, replyTo(43, private, "use CSV", nYes, nFree), ""},
		{"an edited message", freeConf, false, map[string]any{"edited_message": ok("use CSV")["message"]}, ""},
		{"a message that replies to nothing", freeConf, false, edit(ok("use CSV"), func(m map[string]any) { delete(m, "reply_to_message") }), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, tt.conf)
			w.withField(t, tt.spent)
			w.start(t)
			w.handled(t, w.tg.Push(tt.u))
			if reqs := w.requests(t); len(reqs) != 0 {
				t.Errorf("requests written: %v", reqs)
			}
			got := w.replies()
			switch {
			case tt.want == "" && len(got) != 0:
				t.Errorf("replied %q to an update that is no answer", got)
			case tt.want != "" && (len(got) != 1 || !strings.HasPrefix(got[0], tt.want)):
				t.Errorf("replies = %q, want one starting %q", got, tt.want)
			}
			if tt.want != "" && w.tg.Calls("sendMessage")[0].Form.Get("reply_parameters") == "" {
				t.Error("the refusal does not reply to the message it refuses")
			}
			if b, _ := os.ReadFile(w.wakes); len(b) > 0 {
				t.Errorf("the watcher was woken: %q", b)
			}
			if c := w.tg.Calls("editMessageText"); len(c) > 0 {
				t.Errorf("a message was edited: %v", c)
			}
		})
	}
}

// TestReplyOnce: two replies to one question write one request; the
// second is told it was answered. A tap on the reply button writes
// nothing and says to reply. Without free text, no messages are asked
// of Telegram.
func TestReplyOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t, freeConf)
	w.withField(t, false)
	w.tg.Push(replyTo(private, private, "use CSV", nYes, nFree))
	id := w.tg.Push(replyTo(private, private, "use JSON", nYes, nFree))
	w.start(t)
	w.handled(t, id)
	reqs := w.requests(t)
	if len(reqs) != 1 || reqs[nFree].Text != "use CSV" {
		t.Errorf("requests = %v, want the first reply's", reqs)
	}
	if got := w.replies(); len(got) != 2 || !strings.HasPrefix(got[1], "already answered: words for this question were sent before") {
		t.Errorf("replies = %q", got)
	}
	w.handled(t, w.tg.Push(tap(private, private, nFree)))
	if got := w.answers(); len(got) != 1 || !strings.Contains(got[0], "reply to this message with your words for “Type something.” (one line, at most 500 characters)") {
		t.Errorf("the reply button's tap was answered %q", got)
	}
	if reqs := w.requests(t); len(reqs) != 1 {
		t.Errorf("the reply button's tap wrote a request: %v", reqs)
	}

	off := newWorld(t, "chat_id=42\nanswers=on\n")
	off.start(t)
	// Messages all the same: /status is one.
	if got := off.tg.AllowedUpdates(); len(got) == 0 || !strings.Contains(got[0], `"message"`) || !strings.Contains(got[0], `"callback_query"`) {
		t.Errorf("free text off: allowed_updates = %q, want taps and messages", got)
	}
}
