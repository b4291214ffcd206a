package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/poll"

	"github.com/omega-monitor/omega-monitor/internal/board"
	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
	"github.com/omega-monitor/omega-monitor/internal/relay"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.RemoveBuilds()
	os.Exit(code)
}

// relayBinary is omega-monitor-relay, built once for the tests that run it
// as a process.
func relayBinary(t *testing.T) string {
	t.Helper()
	return filepath.Join(testenv.Build(t, "."), "omega-monitor-relay")
}

const (
	token   = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0"
	private = 42 // the operator's private chat, and so their user id
	group   = -100500
	member  = 7 // allowed in the group
)

// nonces of the test's offers.
var (
	nYes    = strings.Repeat("1a", 16)
	nWiden  = strings.Repeat("2b", 16)
	nNo     = strings.Repeat("3c", 16)
	nSpent  = strings.Repeat("4d", 16)
	nOld    = strings.Repeat("5e", 16)
	nExtra  = []string{strings.Repeat("6f", 16), strings.Repeat("70", 16), strings.Repeat("81", 16)}
	unknown = strings.Repeat("9f", 16)
)

// world is a receiver's world: a home with its Telegram config, a state
// home with two watchers that offer buttons (monitor-agent, whose loop is
// a process that counts its wakes, and monitor-old, whose offer expired),
// and a fake Bot API.
type world struct {
	home, state string
	tg          *fakeapi.Telegram
	wakes       string // the file the agent's loop appends a line to per wake
	cmd         *exec.Cmd
	stderr      *bytes.Buffer
	done        chan error
}

func newWorld(t *testing.T, conf string) *world {
	t.Helper()
	w := &world{home: t.TempDir(), tg: fakeapi.NewTelegram(t, token)}
	w.state = filepath.Join(w.home, "state")
	os.MkdirAll(filepath.Join(w.home, ".omega"), 0o700)
	if err := os.WriteFile(filepath.Join(w.home, ".omega", "telegram.conf"), []byte("bot_token="+token+"\n"+conf), 0o600); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	agent := statedir.Dir(filepath.Join(w.state, "monitor-agent"))
	if err := agent.Prepare(); err != nil {
		t.Fatal(err)
	}
	offers := []statedir.Offer{
		{Nonce: nYes, Pos: 1, Label: "Yes", Expires: now.Add(10 * time.Minute)},
		{Nonce: nWiden, Pos: 2, Label: "Yes, and don't ask again", Widens: true, Expires: now.Add(10 * time.Minute)},
		{Nonce: nNo, Pos: 3, Label: "No", Expires: now.Add(10 * time.Minute)},
		{Nonce: nSpent, Pos: 4, Label: "Maybe", Spent: true, Expires: now.Add(10 * time.Minute)},
	}
	for i, n := range nExtra {
		offers = append(offers, statedir.Offer{Nonce: n, Pos: 5 + i, Label: "Extra " + strconv.Itoa(i), Expires: now.Add(10 * time.Minute)})
	}
	if err := agent.WriteOffers(statedir.OffersRecord{Key: "k1", At: now, Offers: offers}); err != nil {
		t.Fatal(err)
	}
	old := statedir.Dir(filepath.Join(w.state, "monitor-old"))
	if err := old.Prepare(); err != nil {
		t.Fatal(err)
	}
	if err := old.WriteOffers(statedir.OffersRecord{Key: "k0", At: now.Add(-time.Hour), Offers: []statedir.Offer{
		{Nonce: nOld, Pos: 1, Label: "Yes", Expires: now.Add(-50 * time.Minute)},
	}}); err != nil {
		t.Fatal(err)
	}
	// The agent's loop: a process that takes SIGUSR1 as a wake, with its
	// start token in loop.json, as watcher.Wake checks it.
	w.wakes = filepath.Join(w.home, "wakes")
	loop := exec.Command("bash", "-c", `trap 'echo woke >>"$1"' USR1; while :; do sleep 0.05; done`, "loop", w.wakes)
	if err := loop.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { loop.Process.Kill(); loop.Wait() })
	var tok string
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		var ok bool
		if tok, ok = (board.SystemProcs{}).StartToken(loop.Process.Pid); ok && tok != "" {
			return poll.Success()
		}
		return poll.Continue("no start token yet")
	})
	if err := agent.WriteRecord(statedir.Loop, statedir.LoopRecord{Pid: loop.Process.Pid, StartToken: tok, Watcher: "monitor-agent"}); err != nil {
		t.Fatal(err)
	}
	// Let bash set its trap before any wake.
	time.Sleep(100 * time.Millisecond)
	return w
}

func (w *world) env() []string {
	return []string{
		"HOME=" + w.home, "PATH=" + os.Getenv("PATH"),
		"OMEGA_MONITOR_HOME=" + w.state, "OMEGA_TELEGRAM_API=" + w.tg.URL,
	}
}

// start runs the receiver and waits until it holds its lock.
func (w *world) start(t *testing.T) {
	t.Helper()
	w.cmd = exec.Command(relayBinary(t), "serve")
	w.cmd.Env = w.env()
	w.stderr = new(bytes.Buffer)
	w.cmd.Stderr = &lockedWriter{b: w.stderr}
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.done = make(chan error, 1)
	cmd := w.cmd
	go func() { w.done <- cmd.Wait() }()
	t.Cleanup(func() { w.stop(t) })
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		select {
		case err := <-w.done:
			w.done <- err
			return poll.Error(fmt.Errorf("the receiver exited: %v: %s", err, w.log()))
		default:
		}
		if running, _, _ := relay.Running(w.state); running && len(w.tg.Offsets()) > 0 {
			return poll.Success()
		}
		return poll.Continue("the receiver does not poll yet")
	})
}

// stop ends the receiver with SIGTERM and checks it exits 0.
func (w *world) stop(t *testing.T) {
	t.Helper()
	if w.cmd == nil {
		return
	}
	w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-w.done:
		if err != nil {
			t.Errorf("the receiver exited with %v on SIGTERM: %s", err, w.log())
		}
	case <-time.After(10 * time.Second):
		w.cmd.Process.Kill()
		t.Errorf("the receiver did not exit on SIGTERM: %s", w.log())
	}
	w.cmd = nil
	t.Logf("receiver log:\n%s", w.log())
}

var logMu sync.Mutex

type lockedWriter struct{ b *bytes.Buffer }

func (l *lockedWriter) Write(p []byte) (int, error) {
	logMu.Lock()
	defer logMu.Unlock()
	return l.b.Write(p)
}

func (w *world) log() string {
	logMu.Lock()
	defer logMu.Unlock()
	return w.stderr.String()
}

// handled waits until the receiver has recorded update id as handled.
func (w *world) handled(t *testing.T, id int64) {
	t.Helper()
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if n, _ := relay.ReadOffset(filepath.Join(w.state, relay.Dir)); n >= id {
			return poll.Success()
		}
		return poll.Continue("update %d not handled yet: %s", id, w.log())
	}, poll.WithTimeout(10*time.Second))
}

// requests is every request file in the watchers' answers directories, by
// nonce.
func (w *world) requests(t *testing.T) map[string]statedir.AnswerRequest {
	t.Helper()
	out := map[string]statedir.AnswerRequest{}
	for _, name := range []string{"monitor-agent", "monitor-old"} {
		rs, err := statedir.Dir(filepath.Join(w.state, name)).Requests()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			if _, dup := out[r.Nonce]; dup {
				t.Errorf("two requests for %s", r.Nonce)
			}
			out[r.Nonce] = r
		}
	}
	return out
}

// answers is the texts of the callback queries answered, in order.
func (w *world) answers() []string {
	var out []string
	for _, c := range w.tg.Calls("answerCallbackQuery") {
		out = append(out, c.Form.Get("callback_query_id")+": "+c.Form.Get("text"))
	}
	return out
}

var callbackSeq struct {
	sync.Mutex
	n int
}

// tap is an update: user from taps the button with data under message
// msg of chat, a message of the bot's own.
func tap(chat, from int64, data string) map[string]any {
	callbackSeq.Lock()
	callbackSeq.n++
	id := "cq" + strconv.Itoa(callbackSeq.n)
	callbackSeq.Unlock()
	chatType := "private"
	if chat < 0 {
		chatType = "supergroup"
	}
	return map[string]any{"callback_query": map[string]any{
		"id":            id,
		"from":          map[string]any{"id": from, "is_bot": false, "first_name": "Ada"},
		"chat_instance": "1",
		"data":          data,
		"message": map[string]any{
			"message_id": 500, "date": 1700000000,
			"chat":     map[string]any{"id": chat, "type": chatType},
			"from":     map[string]any{"id": 123456789, "is_bot": true, "first_name": "omega"},
			"text":     "QUESTION · agent\nRun the tests?",
			"entities": []map[string]any{{"type": "bold", "offset": 0, "length": 8}},
			"reply_markup": map[string]any{"inline_keyboard": [][]map[string]string{
				{{"text": "Yes", "callback_data": nYes}},
				{{"text": "Yes, and don't ask again", "callback_data": nWiden}},
				{{"text": "No", "callback_data": nNo}},
			}},
		},
	}}
}

func TestHelp(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(relayBinary(t), "serve", "--help").Output()
	if err != nil || !strings.Contains(string(out), "usage: omega-monitor-relay serve") || !strings.Contains(string(out), "answers=on") {
		t.Errorf("serve --help: %v: %s", err, out)
	}
}

// TestAnswered: a tap by the allowed user writes exactly one request, wakes
// the watcher and answers the tap at once; once the watcher's result is
// there, the message is edited (its buttons gone, who answered what) and
// the request and result are settled.
func TestAnswered(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		conf string
		chat int64
		from int64
	}{
		{"private chat", "chat_id=42\nanswers=on\n", private, private},
		{"group, an allowed member", "chat_id=-100500\nanswers=on\nallow_users=9,7\n", group, member},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, tt.conf)
			w.start(t)
			id := w.tg.Push(tap(tt.chat, tt.from, nYes))
			w.handled(t, id)
			reqs := w.requests(t)
			req, ok := reqs[nYes]
			if len(reqs) != 1 || !ok {
				t.Fatalf("requests = %v, want one for %s", reqs, nYes)
			}
			if diff := cmp.Diff(statedir.AnswerRequest{Nonce: nYes, FromID: tt.from, From: "Ada", ChatID: tt.chat, MessageID: 500}, req,
				cmpIgnoreAt); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
			if got := w.answers(); len(got) != 1 || !strings.Contains(got[0], "sent to monitor-agent") {
				t.Errorf("callback answers = %q, want one saying sent to monitor-agent", got)
			}
			poll.WaitOn(t, func(poll.LogT) poll.Result {
				if b, _ := os.ReadFile(w.wakes); strings.Count(string(b), "woke") == 1 {
					return poll.Success()
				}
				return poll.Continue("the watcher's loop was not woken")
			})
			if got := w.tg.Calls("editMessageText"); len(got) != 0 {
				t.Fatalf("the message was edited before a result: %v", got)
			}
			// The watcher's part: it typed the answer.
			agent := statedir.Dir(filepath.Join(w.state, "monitor-agent"))
			if err := agent.WriteResult(statedir.AnswerResult{Nonce: nYes, Outcome: statedir.AnswerTyped, Label: "Yes", At: time.Now()}); err != nil {
				t.Fatal(err)
			}
			poll.WaitOn(t, func(poll.LogT) poll.Result {
				if len(w.tg.Calls("editMessageText")) > 0 {
					return poll.Success()
				}
				return poll.Continue("no edit yet: %s", w.log())
			})
			edit := w.tg.Calls("editMessageText")[0].Form
			if got, want := edit.Get("text"), "QUESTION · agent\nRun the tests?\n\n✅ Ada answered “Yes” at "; !strings.HasPrefix(got, want) {
				t.Errorf("edited text = %q, want it to start %q", got, want)
			}
			if got := edit.Get("reply_markup"); got != `{"inline_keyboard":[]}` {
				t.Errorf("edited reply_markup = %s, want no buttons", got)
			}
			if got := edit.Get("entities"); !strings.Contains(got, `"bold"`) {
				t.Errorf("edited entities = %s, want the message's own", got)
			}
			poll.WaitOn(t, func(poll.LogT) poll.Result {
				_, errReq := os.Stat(agent.Path("answers/" + nYes + statedir.RequestSuffix))
				_, errRes := os.Stat(agent.Path("answers/" + nYes + statedir.ResultSuffix))
				if os.IsNotExist(errReq) && os.IsNotExist(errRes) {
					return poll.Success()
				}
				return poll.Continue("not settled")
			})
		})
	}
}

var cmpIgnoreAt = cmp.Transformer("noAt", func(r statedir.AnswerRequest) statedir.AnswerRequest {
	r.At = time.Time{}
	return r
})

// TestRefused: each update below is refused, or ignored, with nothing
// written, and the tap (if it is one) answered with the reason.
func TestRefused(t *testing.T) {
	t.Parallel()
	privateConf := "chat_id=42\nanswers=on\n"
	groupConf := "chat_id=-100500\nanswers=on\nallow_users=7\n"
	tests := []struct {
		name    string
		conf    string
		updates []map[string]any
		want    []string // the callback answers, without their ids
	}{
		{"another chat", privateConf, []map[string]any{tap(43, private, nYes)}, []string{"this chat may not answer"}},
		// A basic group made a supergroup: its new id is said, and how to
		// follow it (issue 41).
		{"the configured group made a supergroup", "chat_id=-4500123\nanswers=on\nallow_users=7\n", []map[string]any{tap(-1004500123987, 7, nYes)},
			[]string{"this chat is not the configured one: if the group became a supergroup, set chat_id=-1004500123987 in telegram.conf, then relay stop and start"}},
		{"another user in a private chat", privateConf, []map[string]any{tap(private, 43, nYes)}, []string{"you are not allowed to answer"}},
		{"another user in a group", groupConf, []map[string]any{tap(group, 8, nYes)}, []string{"you are not allowed to answer"}},
		{"the group itself as the user", groupConf, []map[string]any{tap(group, group, nYes)}, []string{"you are not allowed to answer"}},
		{"a forged nonce", privateConf, []map[string]any{tap(private, private, "../../monitor-agent/answers/x")}, []string{"not a button of this watcher"}},
		{"a nonce in capitals", privateConf, []map[string]any{tap(private, private, strings.ToUpper(nYes))}, []string{"not a button of this watcher"}},
		{"a confirmation of an option that takes none", privateConf, []map[string]any{tap(private, private, "ok:"+nYes)}, []string{"not a button of this watcher"}},
		{"an unknown nonce", privateConf, []map[string]any{tap(private, private, unknown)}, []string{"this question is gone or was replaced: nothing was typed"}},
		{"an expired offer", privateConf, []map[string]any{tap(private, private, nOld)}, []string{"this question expired at "}},
		{"a spent offer", privateConf, []map[string]any{tap(private, private, nSpent)}, []string{"this question was already answered"}},
		{"a message instead of a tap", privateConf, []map[string]any{{"message": map[string]any{
			"message_id": 9, "date": 1700000000, "text": "1", "chat": map[string]any{"id": private, "type": "private"},
			"from": map[string]any{"id": private, "is_bot": false, "first_name": "Ada"},
		}}}, nil},
		{"a reply to the question", privateConf, []map[string]any{{"message": map[string]any{
			"message_id": 9, "date": 1700000000, "text": "yes", "chat": map[string]any{"id": private, "type": "private"},
			"from":             map[string]any{"id": private, "is_bot": false, "first_name": "Ada"},
			"reply_to_message": map[string]any{"message_id": 500, "date": 1700000000, "chat": map[string]any{"id": private, "type": "private"}},
		}}}, nil},
		{"an edited message", privateConf, []map[string]any{{"edited_message": map[string]any{
			"message_id": 9, "date": 1700000000, "edit_date": 1700000001, "text": nYes, "chat": map[string]any{"id": private, "type": "private"},
		}}}, nil},
		{"an inline query", privateConf, []map[string]any{{"inline_query": map[string]any{
			"id": "iq", "from": map[string]any{"id": private, "is_bot": false, "first_name": "Ada"}, "query": nYes, "offset": "",
		}}}, nil},
		{"a tap on a message that is not the bot's", privateConf, []map[string]any{func() map[string]any {
			u := tap(private, private, nYes)
			u["callback_query"].(map[string]any)["message"].(map[string]any)["from"] = map[string]any{"id": 555, "is_bot": true, "first_name": "other"}
			return u
		}()}, []string{"not a button of this watcher"}},
		{"a tap on a forwarded message", privateConf, []map[string]any{func() map[string]any {
			u := tap(private, private, nYes)
			u["callback_query"].(map[string]any)["message"].(map[string]any)["forward_origin"] = map[string]any{"type": "hidden_user", "date": 1, "sender_user_name": "x"}
			return u
		}()}, []string{"not a button of this watcher"}},
		{"a widening option without its confirming tap", privateConf, []map[string]any{tap(private, private, nWiden)},
			[]string{"this option lets the agent go on without asking: tap “Confirm: Yes, and don't ask again” to send it"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, tt.conf)
			w.start(t)
			var last int64
			for _, u := range tt.updates {
				last = w.tg.Push(u)
			}
			w.handled(t, last)
			if reqs := w.requests(t); len(reqs) != 0 {
				t.Errorf("requests written: %v", reqs)
			}
			var got []string
			for _, a := range w.answers() {
				_, text, _ := strings.Cut(a, ": ")
				got = append(got, text)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("callback answers = %q, want %q", got, tt.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tt.want[i]) {
					t.Errorf("callback answer %d = %q, want it to start %q", i, got[i], tt.want[i])
				}
			}
			if b, _ := os.ReadFile(w.wakes); len(b) > 0 {
				t.Errorf("the watcher was woken: %q", b)
			}
			for _, m := range []string{"editMessageText", "sendMessage"} {
				if c := w.tg.Calls(m); len(c) > 0 {
					t.Errorf("%s called: %v", m, c)
				}
			}
		})
	}
}

// TestWidening: an option that widens takes two taps: the first puts a
// confirm button in and writes nothing, the second (its data ok:NONCE)
// writes the request, confirmed.
func TestWidening(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "chat_id=42\nanswers=on\n")
	w.start(t)
	w.handled(t, w.tg.Push(tap(private, private, nWiden)))
	if reqs := w.requests(t); len(reqs) != 0 {
		t.Fatalf("the first tap wrote %v", reqs)
	}
	edits := w.tg.Calls("editMessageReplyMarkup")
	if len(edits) != 1 {
		t.Fatalf("editMessageReplyMarkup calls = %v, want 1", edits)
	}
	var markup struct {
		InlineKeyboard [][]map[string]string `json:"inline_keyboard"`
	}
	json.Unmarshal([]byte(edits[0].Form.Get("reply_markup")), &markup)
	rows := markup.InlineKeyboard
	if len(rows) != 4 || rows[3][0]["text"] != "Confirm: Yes, and don't ask again" || rows[3][0]["callback_data"] != "ok:"+nWiden {
		t.Fatalf("the keyboard after the first tap = %v, want the three options and the confirm button", rows)
	}
	id := w.tg.Push(tap(private, private, "ok:"+nWiden))
	w.handled(t, id)
	reqs := w.requests(t)
	if r, ok := reqs[nWiden]; len(reqs) != 1 || !ok || !r.Confirmed {
		t.Fatalf("requests after the confirming tap = %v, want one confirmed for %s", reqs, nWiden)
	}
}

// TestOnce: the same update delivered twice, and two taps on one button at
// once, write exactly one request; the second tap is told why.
func TestOnce(t *testing.T) {
	t.Parallel()
	t.Run("the same update twice", func(t *testing.T) {
		w := newWorld(t, "chat_id=42\nanswers=on\n")
		w.start(t)
		u := tap(private, private, nYes)
		id := w.tg.Push(u)
		w.handled(t, id)
		dup := tap(private, private, nNo)
		dup["callback_query"] = u["callback_query"]
		w.tg.Replay(id, dup)
		next := w.tg.Push(tap(private, private, unknown))
		w.handled(t, next)
		if reqs := w.requests(t); len(reqs) != 1 {
			t.Errorf("requests = %v, want one", reqs)
		}
		if got := w.answers(); len(got) != 2 {
			t.Errorf("callback answers = %q, want the first tap's and the unknown's", got)
		}
	})
	t.Run("two taps at once", func(t *testing.T) {
		w := newWorld(t, "chat_id=42\nanswers=on\n")
		// Both wait at Telegram before the receiver starts: one batch.
		w.tg.Push(tap(private, private, nYes))
		id := w.tg.Push(tap(private, private, nYes))
		w.start(t)
		w.handled(t, id)
		if reqs := w.requests(t); len(reqs) != 1 {
			t.Errorf("requests = %v, want one", reqs)
		}
		got := w.answers()
		if len(got) != 2 || !strings.Contains(got[0], "sent to monitor-agent") || !strings.Contains(got[1], "already answered") {
			t.Errorf("callback answers = %q, want sent, then already answered", got)
		}
	})
}

// TestRate: at most RatePerMinute answers a minute go to one watcher.
func TestRate(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "chat_id=42\nanswers=on\n")
	w.start(t)
	var id int64
	for _, n := range append([]string{nYes, nNo}, nExtra...) {
		id = w.tg.Push(tap(private, private, n))
	}
	w.handled(t, id)
	if reqs := w.requests(t); len(reqs) != 4 {
		t.Errorf("%d requests, want 4", len(reqs))
	}
	got := w.answers()
	if len(got) != 5 || !strings.Contains(got[4], "too many answers to monitor-agent this minute (at most 4)") {
		t.Errorf("callback answers = %q, want the fifth refused", got)
	}
}

// TestRestart: the receiver stopped with updates handled, then started
// again with more waiting (and Telegram delivering a handled one again):
// each is applied once.
func TestRestart(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "chat_id=42\nanswers=on\n")
	w.start(t)
	first := tap(private, private, nYes)
	a := w.tg.Push(first)
	w.handled(t, a)
	w.stop(t)

	b := w.tg.Push(tap(private, private, nNo))
	c := w.tg.Push(tap(private, private, nExtra[0]))
	w.tg.Replay(a, first)
	w.start(t)
	w.handled(t, c)
	reqs := w.requests(t)
	if len(reqs) != 3 {
		t.Errorf("requests = %v, want one each for the three taps", reqs)
	}
	if got := w.answers(); len(got) != 3 {
		t.Errorf("callback answers = %q, want one per tap", got)
	}
	if !strings.Contains(w.log(), fmt.Sprintf("update %d: already handled", a)) {
		t.Errorf("the replayed update was not said to be handled: %s", w.log())
	}
	if got := w.tg.Offsets()[len(w.tg.Offsets())-1]; got != c+1 {
		t.Errorf("the last getUpdates offset = %d, want %d", got, c+1)
	}
	_ = b
	// The first answer, in flight across the restart, is still reported.
	agent := statedir.Dir(filepath.Join(w.state, "monitor-agent"))
	agent.WriteResult(statedir.AnswerResult{Nonce: nYes, Outcome: statedir.AnswerRefused, Why: "the question changed", At: time.Now()})
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		for _, e := range w.tg.Calls("editMessageText") {
			if strings.Contains(e.Form.Get("text"), "not typed: the question changed") {
				return poll.Success()
			}
		}
		return poll.Continue("the first answer is not reported: %s", w.log())
	})
}

// TestOffsetAfterHandling: the offset of an update is written once it is
// handled, never before: while its tap's answer is under way, the request
// is written and the offset is not.
func TestOffsetAfterHandling(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "chat_id=42\nanswers=on\n")
	w.start(t)
	release := w.tg.Hold("answerCallbackQuery")
	defer release()
	id := w.tg.Push(tap(private, private, nYes))
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if len(w.tg.Calls("answerCallbackQuery")) == 1 {
			return poll.Success()
		}
		return poll.Continue("the tap is not being answered")
	})
	if reqs := w.requests(t); len(reqs) != 1 {
		t.Errorf("requests = %v, want the tap's", reqs)
	}
	if n, _ := relay.ReadOffset(filepath.Join(w.state, relay.Dir)); n >= id {
		t.Errorf("the offset %d was written before the update was handled", n)
	}
	release()
	w.handled(t, id)
}

// TestRefusesToStart: the receiver does not start, and says why on one
// line, when answers are off, when a group has no one allowed, when the
// config is open to others, and when another receiver runs.
func TestRefusesToStart(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, conf string
		mode       os.FileMode
		want       string
	}{
		{"answers off", "chat_id=42\n", 0o600, "answers are off: add the line answers=on to "},
		{"a group without allow_users", "chat_id=-100500\nanswers=on\n", 0o600, "add allow_users=ID[,ID...]"},
		{"a config open to others", "chat_id=42\nanswers=on\n", 0o644, "chmod 600"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, tt.conf)
			os.Chmod(filepath.Join(w.home, ".omega", "telegram.conf"), tt.mode)
			cmd := exec.Command(relayBinary(t), "serve")
			cmd.Env = w.env()
			out, err := cmd.CombinedOutput()
			if code := cmd.ProcessState.ExitCode(); err == nil || code != 1 {
				t.Errorf("exit %d (%v), want 1", code, err)
			}
			if !strings.Contains(string(out), tt.want) || strings.Count(strings.TrimSpace(string(out)), "\n") != 0 || strings.Contains(string(out), token) {
				t.Errorf("said %q, want one line saying %q", out, tt.want)
			}
		})
	}
	t.Run("another receiver runs", func(t *testing.T) {
		w := newWorld(t, "chat_id=42\nanswers=on\n")
		w.start(t)
		cmd := exec.Command(relayBinary(t), "serve")
		cmd.Env = w.env()
		out, _ := cmd.CombinedOutput()
		if want := fmt.Sprintf("another receiver runs: the receiver pid %d, since ", w.cmd.Process.Pid); !strings.Contains(string(out), want) {
			t.Errorf("said %q, want %q", out, want)
		}
	})
}

// TestReportSaysWhatTheWatcherSaw: the chat's report of an answer says
// what the watcher saw, truthfully: typed, and the same question on the
// screen again (its next message carries it); refused, and which keys of
// it had reached the terminal before it stopped.
func TestReportSaysWhatTheWatcherSaw(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		result statedir.AnswerResult
		want   string
	}{
		{"typed, asked again", statedir.AnswerResult{Outcome: statedir.AnswerTyped, Label: "Yes",
			Note: "typed; the same question is on the screen again: if the agent asked it again, the next message carries it"},
			"✅ Ada answered “Yes” at "},
		{"refused half typed", statedir.AnswerResult{Outcome: statedir.AnswerRefused, Label: "Yes",
			Why: "Down cancelled: the pane changed between the look and the key", Keys: []string{"Down", "Down"}},
			"not typed: Down cancelled: the pane changed between the look and the key; Down and Down had reached the terminal"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, "chat_id=42\nanswers=on\n")
			w.start(t)
			w.handled(t, w.tg.Push(tap(private, private, nYes)))
			c.result.Nonce, c.result.At = nYes, time.Now()
			agent := statedir.Dir(filepath.Join(w.state, "monitor-agent"))
			if err := agent.WriteResult(c.result); err != nil {
				t.Fatal(err)
			}
			poll.WaitOn(t, func(poll.LogT) poll.Result {
				for _, e := range w.tg.Calls("editMessageText") {
					text := e.Form.Get("text")
					if strings.Contains(text, c.want) && strings.Contains(text, c.result.Note) {
						return poll.Success()
					}
				}
				return poll.Continue("no report with %q and the note: %v", c.want, w.tg.Calls("editMessageText"))
			})
		})
	}
}
