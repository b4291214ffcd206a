package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/poll"

	"github.com/omega-monitor/omega-monitor/internal/relay"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// questionMarkup is the keyboard of the test's question, as the funnel
// sent it.
var questionMarkup = fmt.Sprintf(`{"inline_keyboard":[[{"text":"1. Yes","callback_data":%q}],[{"text":"3. No","callback_data":%q}]]}`, nYes, nNo)

const questionText = "QUESTION · agent\nRun the tests?"

// retireRecord leaves a record in monitor-agent's answers/, as its poll
// does, for message msg of chat.
func (w *world) retireRecord(t *testing.T, nonce string, chat int64, msg int, reason string) string {
	t.Helper()
	d := statedir.Dir(filepath.Join(w.state, "monitor-agent"))
	if err := d.WriteRetire(statedir.RetireRecord{Nonce: nonce, ChatID: chat, MessageID: msg, Reason: reason, At: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	return d.Path(filepath.Join(statedir.Answers, nonce+statedir.RetireSuffix))
}

// gone waits until the file path is removed: the receiver is done with it.
func (w *world) gone(t *testing.T, path string) {
	t.Helper()
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if _, err := os.Lstat(path); os.IsNotExist(err) {
			return poll.Success()
		}
		return poll.Continue("%s is still there: %s", filepath.Base(path), w.log())
	}, poll.WithTimeout(20*time.Second))
}

// TestRetireEditsTheMessage: a retire record, left while the receiver runs
// or before it starts, has the message's buttons removed and a line of the
// receiver's own appended to its text, then is removed.
func TestRetireEditsTheMessage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, reason, line string
		before             bool
	}{
		{"left the screen", statedir.RetireGone, "without an answer from this chat: these buttons are withdrawn.", false},
		{"answered at the terminal, left before the receiver starts", statedir.RetireAnswered, "(the agent went on): these buttons are withdrawn.", true},
		{"replaced", statedir.RetireReplaced, "⏹ Another question took its place on the screen at ", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, "chat_id=42\nanswers=on\n")
			msg := w.tg.Post(private, questionText, questionMarkup)
			var rec string
			if c.before {
				rec = w.retireRecord(t, nYes, private, msg, c.reason)
			}
			w.start(t)
			if !c.before {
				rec = w.retireRecord(t, nYes, private, msg, c.reason)
			}
			w.gone(t, rec)
			m, _ := w.tg.Message(private, msg)
			if m.Markup != "" {
				t.Errorf("the message kept its buttons: %s", m.Markup)
			}
			if !strings.HasPrefix(m.Text, questionText+"\n\n⏹ ") || !strings.Contains(m.Text, c.line) || strings.Count(m.Text, "⏹") != 1 {
				t.Errorf("the message now reads %q, want its text and a line saying %q", m.Text, c.line)
			}
			for _, call := range w.tg.Calls("") {
				if strings.HasPrefix(call.Method, "edit") && (call.Form.Get("chat_id") != "42" || call.Form.Get("message_id") != fmt.Sprint(msg)) {
					t.Errorf("%s of another message: %v", call.Method, call.Form)
				}
			}
			if n := len(w.tg.Calls("editMessageReplyMarkup")) + len(w.tg.Calls("editMessageText")); n != 2 {
				t.Errorf("%d edits, want 2: %v", n, w.tg.Calls(""))
			}
			if c := w.tg.Calls("sendMessage"); len(c) != 0 {
				t.Errorf("sendMessage called: %v", c)
			}
		})
	}
}

// TestRetireRefusesPlantedRecords: records that are not the watcher's own,
// whole, or name a message of another chat, are removed and edit nothing;
// the receiver goes on, and a good record after them is applied.
func TestRetireRefusesPlantedRecords(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "chat_id=42\nanswers=on\n")
	mine := w.tg.Post(private, questionText, questionMarkup)
	theirs := w.tg.Post(43, "someone else's message", questionMarkup)
	answers := filepath.Join(w.state, "monitor-agent", statedir.Answers)
	good := func(nonce string, chat int64, msg int) string {
		return fmt.Sprintf(`{"nonce":%q,"chat_id":%d,"message_id":%d,"reason":"gone","at":%q}`, nonce, chat, msg, time.Now().UTC().Format(time.RFC3339Nano))
	}
	plant := func(nonce, data string, mode os.FileMode) string {
		path := filepath.Join(answers, nonce+statedir.RetireSuffix)
		if err := os.WriteFile(path, []byte(data), mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(path, mode)
		return path
	}
	var planted []string
	planted = append(planted,
		plant(nExtra[0], good(nExtra[0], private, mine), 0o644),                                         // open to others
		plant(nExtra[1], "{\"nonce\":", 0o600),                                                          // junk
		plant(nExtra[2], strings.TrimSuffix(good(nExtra[2], private, mine), "}")+`,"text":"x"}`, 0o600), // a field to send
		plant(unknown, good(unknown, 43, theirs), 0o600),                                                // another chat
		plant("x", good(nNo, private, mine), 0o600),                                                     // no nonce's name
	)
	elsewhere := filepath.Join(t.TempDir(), "r")
	os.WriteFile(elsewhere, []byte(good(nSpent, private, mine)), 0o600)
	link := filepath.Join(answers, nSpent+statedir.RetireSuffix)
	if err := os.Symlink(elsewhere, link); err != nil {
		t.Fatal(err)
	}
	planted = append(planted, link)
	if os.Geteuid() == 0 {
		path := plant(nOld, good(nOld, private, mine), 0o600)
		if err := os.Lchown(path, 4242, 4242); err != nil {
			t.Fatal(err)
		}
		planted = append(planted, path)
	}
	w.start(t)
	for _, p := range planted {
		w.gone(t, p)
	}
	if _, err := os.Stat(elsewhere); err != nil {
		t.Errorf("the link's target was touched: %v", err)
	}
	for _, call := range w.tg.Calls("") {
		if call.Method != "answerCallbackQuery" {
			t.Errorf("a planted record made a call: %s %v", call.Method, call.Form)
		}
	}
	for _, m := range []struct {
		chat int64
		id   int
	}{{private, mine}, {43, theirs}} {
		if got, _ := w.tg.Message(m.chat, m.id); got.Markup == "" || strings.Contains(got.Text, "⏹") {
			t.Errorf("message %d of chat %d changed: %+v", m.id, m.chat, got)
		}
	}
	for _, want := range []string{"open to others", "not a retire record's JSON", "chat 43 is not the configured chat", "not a nonce's", "symbolic link"} {
		if !strings.Contains(w.log(), want) {
			t.Errorf("the log does not say %q:\n%s", want, w.log())
		}
	}
	// It still works.
	w.gone(t, w.retireRecord(t, nYes, private, mine, statedir.RetireGone))
	if got, _ := w.tg.Message(private, mine); got.Markup != "" || !strings.Contains(got.Text, "⏹ Left the screen at ") {
		t.Errorf("the good record after them: %+v", got)
	}
}

// TestRetireAfterAnAnswerIsANoop: a message edited with an answer's
// outcome, or whose answer is still being carried, is not edited again by
// a retire record; across a restart too.
func TestRetireAfterAnAnswerIsANoop(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "chat_id=42\nanswers=on\n")
	msg := w.tg.Post(private, questionText, questionMarkup)
	w.start(t)
	u := tap(private, private, nYes)
	u["callback_query"].(map[string]any)["message"].(map[string]any)["message_id"] = msg
	w.handled(t, w.tg.Push(u))

	// Carried, not yet reported: the report edits it.
	w.gone(t, w.retireRecord(t, nYes, private, msg, statedir.RetireGone))
	if n := len(w.tg.Calls("editMessageReplyMarkup")) + len(w.tg.Calls("editMessageText")); n != 0 {
		t.Fatalf("edited while its answer is carried: %v", w.tg.Calls(""))
	}
	agent := statedir.Dir(filepath.Join(w.state, "monitor-agent"))
	if err := agent.WriteResult(statedir.AnswerResult{Nonce: nYes, Outcome: statedir.AnswerTyped, Label: "Yes", At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if m, _ := w.tg.Message(private, msg); strings.Contains(m.Text, "✅ Ada answered “Yes”") {
			return poll.Success()
		}
		return poll.Continue("not reported: %s", w.log())
	})
	// Reported: a record after it, and one after a restart, do nothing.
	w.gone(t, w.retireRecord(t, nYes, private, msg, statedir.RetireAnswered))
	w.stop(t)
	rec := w.retireRecord(t, nYes, private, msg, statedir.RetireGone)
	w.start(t)
	w.gone(t, rec)
	if got := len(w.tg.Calls("editMessageText")); got != 1 {
		t.Errorf("%d editMessageText, want the answer's one: %v", got, w.tg.Calls(""))
	}
	if got := w.tg.Calls("editMessageReplyMarkup"); len(got) != 0 {
		t.Errorf("editMessageReplyMarkup: %v", got)
	}
	if m, _ := w.tg.Message(private, msg); strings.Contains(m.Text, "⏹") {
		t.Errorf("the message now reads %q", m.Text)
	}
	if !strings.Contains(w.log(), "edited already, with an answer: nothing to do") {
		t.Errorf("the log:\n%s", w.log())
	}
}

// TestRatePersists: the per-watcher rate survives a restart: answers up
// to the limit, the receiver stopped and started, the next one is refused
// with the reason.
func TestRatePersists(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "chat_id=42\nanswers=on\n")
	w.start(t)
	var id int64
	for _, n := range []string{nYes, nNo, nExtra[0], nExtra[1]} {
		id = w.tg.Push(tap(private, private, n))
	}
	w.handled(t, id)
	if reqs := w.requests(t); len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	w.stop(t)
	fi, err := os.Stat(filepath.Join(w.state, relay.Dir, relay.Rate))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("rate.json: %v, %v", fi, err)
	}
	w.start(t)
	w.handled(t, w.tg.Push(tap(private, private, nExtra[2])))
	if reqs := w.requests(t); len(reqs) != 4 {
		t.Errorf("%d requests after the restart, want still 4", len(reqs))
	}
	got := w.answers()
	if len(got) != 5 || !strings.Contains(got[4], "too many answers to monitor-agent this minute (at most 4)") {
		t.Errorf("callback answers = %q, want the fifth refused", got)
	}
}

// TestRateFileIsUntrusted: a rate file that is junk, or holds times to
// come, does not stop the receiver nor hold a watcher's answers.
func TestRateFileIsUntrusted(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "chat_id=42\nanswers=on\n")
	dir, err := relay.Home(w.state)
	if err != nil {
		t.Fatal(err)
	}
	later := make([]time.Time, 10)
	for i := range later {
		later[i] = time.Now().Add(time.Hour)
	}
	data, _ := json.Marshal(map[string][]time.Time{"monitor-agent": later})
	if err := os.WriteFile(filepath.Join(dir, relay.Rate), data, 0o600); err != nil {
		t.Fatal(err)
	}
	w.start(t)
	w.handled(t, w.tg.Push(tap(private, private, nYes)))
	if got := w.answers(); len(got) != 1 || !strings.Contains(got[0], "sent to monitor-agent") {
		t.Errorf("callback answers = %q, want the tap sent", got)
	}
}
