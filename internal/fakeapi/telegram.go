package fakeapi

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// A Telegram is a fake Telegram Bot API on 127.0.0.1 for one bot token:
// getMe; getUpdates as Telegram serves it (a long poll over the updates a
// test pushes, which forgets every update below the offset asked for);
// and any other method, recorded and answered ok (sendMessage,
// answerCallbackQuery, editMessageText, editMessageReplyMarkup). Requests
// are read as the clients send them: a form, urlencoded or multipart.
//
// The messages sent (sendMessage, or Post) are kept, and edited as
// Telegram edits them: an edit returns the message, its text and entities
// as they are, and an edit that changes nothing is refused as Telegram
// refuses it ("message is not modified"). An edit of a message it does not
// keep is answered as though it were.
type Telegram struct {
	URL   string
	Token string
	BotID int64

	srv     *httptest.Server
	mu      sync.Mutex
	updates []json.RawMessage // waiting, in id order
	ids     []int64
	nextID  int64
	nextMsg int
	calls   []BotCall
	offsets []int64  // the offset of each getUpdates, in order
	allowed []string // the allowed_updates of each getUpdates, in order
	pushed  chan struct{}
	fail    map[string]int           // method: the status it answers with
	hold    map[string]chan struct{} // method: closed when it may answer
	replays []json.RawMessage        // served once whatever the offset
	kept    map[[2]int64]*BotMessage // chat, message id: the messages sent
}

// A BotMessage is a message of the bot's, as the fake keeps it: its text
// and entities (JSON) as last set, and its reply markup ("" for none).
type BotMessage struct {
	Text, Entities, Markup string
}

// A BotCall is one request to a method other than getUpdates and getMe.
type BotCall struct {
	Method string
	Form   url.Values
}

// NewTelegram starts a fake Bot API for token, closed when the test ends.
func NewTelegram(t testing.TB, token string) *Telegram {
	id, _ := strconv.ParseInt(strings.Split(token, ":")[0], 10, 64)
	tg := &Telegram{Token: token, BotID: id, nextID: 100, nextMsg: 1000, pushed: make(chan struct{}), fail: map[string]int{}, hold: map[string]chan struct{}{},
		kept: map[[2]int64]*BotMessage{}}
	tg.srv = httptest.NewServer(http.HandlerFunc(tg.serve))
	tg.URL = tg.srv.URL
	t.Cleanup(tg.srv.Close)
	return tg
}

// Push queues update (an Update object without its update_id) and returns
// the id it was given.
func (tg *Telegram) Push(update map[string]any) int64 {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	tg.nextID++
	update["update_id"] = tg.nextID
	data, _ := json.Marshal(update)
	tg.updates = append(tg.updates, data)
	tg.ids = append(tg.ids, tg.nextID)
	close(tg.pushed)
	tg.pushed = make(chan struct{})
	return tg.nextID
}

// Replay queues update with the id given, to be served once whatever the
// offset asked for: a server that delivers again an update it was told was
// handled, as a receiver must withstand.
func (tg *Telegram) Replay(id int64, update map[string]any) {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	update["update_id"] = id
	data, _ := json.Marshal(update)
	tg.replays = append(tg.replays, data)
	close(tg.pushed)
	tg.pushed = make(chan struct{})
}

// Hold makes method's requests wait, recorded, until release is called.
func (tg *Telegram) Hold(method string) (release func()) {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	ch := make(chan struct{})
	tg.hold[method] = ch
	var once sync.Once
	return func() { once.Do(func() { close(ch) }) }
}

// Waiting is the ids of the updates not yet confirmed by an offset.
func (tg *Telegram) Waiting() []int64 {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return slices.Clone(tg.ids)
}

// AllowedUpdates is the allowed_updates parameter of every getUpdates so
// far, as sent.
func (tg *Telegram) AllowedUpdates() []string {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return slices.Clone(tg.allowed)
}

// Offsets is the offset of every getUpdates so far.
func (tg *Telegram) Offsets() []int64 {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return slices.Clone(tg.offsets)
}

// Calls is the calls to method so far ("" for every method).
func (tg *Telegram) Calls(method string) []BotCall {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	var out []BotCall
	for _, c := range tg.calls {
		if method == "" || c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// Post keeps a message as though the bot had sent it to chat, and returns
// its id.
func (tg *Telegram) Post(chat int64, text, markup string) int {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	tg.nextMsg++
	tg.kept[[2]int64{chat, int64(tg.nextMsg)}] = &BotMessage{Text: text, Markup: markupOf(markup)}
	return tg.nextMsg
}

// Message is the message id of chat as it is now, if the fake keeps it.
func (tg *Telegram) Message(chat int64, id int) (BotMessage, bool) {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	m, ok := tg.kept[[2]int64{chat, int64(id)}]
	if !ok {
		return BotMessage{}, false
	}
	return *m, true
}

// markupOf is a reply markup as kept: "" for none.
func markupOf(markup string) string {
	if strings.ReplaceAll(markup, " ", "") == `{"inline_keyboard":[]}` {
		return ""
	}
	return markup
}

// keep records what method did to the message chat/id, as Telegram would,
// and puts its text and entities in result; or it returns the description
// of Telegram's refusal.
func (tg *Telegram) keep(method string, chat int64, id int, form url.Values, result map[string]any) (refused string) {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	key := [2]int64{chat, int64(id)}
	m, ok := tg.kept[key]
	switch {
	case method == "sendMessage":
		tg.kept[key] = &BotMessage{Text: form.Get("text"), Entities: form.Get("entities"), Markup: markupOf(form.Get("reply_markup"))}
		return ""
	case !ok || !strings.HasPrefix(method, "edit"):
		return ""
	}
	const notModified = "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message"
	markup := markupOf(form.Get("reply_markup"))
	switch method {
	case "editMessageReplyMarkup":
		if markup == m.Markup {
			return notModified
		}
		m.Markup = markup
	case "editMessageText":
		if form.Get("text") == m.Text && form.Get("entities") == m.Entities && markup == m.Markup {
			return notModified
		}
		m.Text, m.Entities, m.Markup = form.Get("text"), form.Get("entities"), markup
	}
	result["text"] = m.Text
	if m.Entities != "" {
		result["entities"] = json.RawMessage(m.Entities)
	}
	return ""
}

// Fail makes method answer with status from now on (0: ok again).
func (tg *Telegram) Fail(method string, status int) {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	tg.fail[method] = status
}

func (tg *Telegram) serve(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot"+tg.Token+"/")
	if !ok || strings.Contains(rest, "/") {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"ok": false, "error_code": 401, "description": "Unauthorized"})
		return
	}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/") {
		r.ParseMultipartForm(1 << 20)
	} else {
		r.ParseForm()
	}
	// Read to the end: only then does the server watch the connection,
	// and end a long poll whose client has gone.
	io.Copy(io.Discard, r.Body)
	form := r.Form
	if r.MultipartForm != nil {
		form = url.Values(r.MultipartForm.Value)
	}
	method := rest
	tg.mu.Lock()
	status := tg.fail[method]
	tg.mu.Unlock()
	if status != 0 {
		writeJSON(w, status, map[string]any{"ok": false, "error_code": status, "description": "fake failure"})
		return
	}
	switch method {
	case "getMe":
		writeJSON(w, 200, map[string]any{"ok": true, "result": map[string]any{"id": tg.BotID, "is_bot": true, "first_name": "omega", "username": "omega_bot"}})
	case "getUpdates":
		tg.getUpdates(w, r, form)
	default:
		tg.mu.Lock()
		tg.calls = append(tg.calls, BotCall{Method: method, Form: form})
		tg.nextMsg++
		msg := tg.nextMsg
		hold := tg.hold[method]
		tg.mu.Unlock()
		if hold != nil {
			select {
			case <-hold:
			case <-r.Context().Done():
				return
			}
		}
		var result any = true
		if strings.HasPrefix(method, "send") || strings.HasPrefix(method, "edit") {
			chat, _ := strconv.ParseInt(form.Get("chat_id"), 10, 64)
			if id, err := strconv.Atoi(form.Get("message_id")); err == nil {
				msg = id
			}
			m := map[string]any{"message_id": msg, "date": time.Now().Unix(), "chat": map[string]any{"id": chat, "type": "private"}, "text": form.Get("text")}
			if refused := tg.keep(method, chat, msg, form, m); refused != "" {
				writeJSON(w, 400, map[string]any{"ok": false, "error_code": 400, "description": refused})
				return
			}
			result = m
		}
		writeJSON(w, 200, map[string]any{"ok": true, "result": result})
	}
}

// getUpdates forgets the updates below the offset, then answers those
// left, or waits for one up to the request's timeout.
func (tg *Telegram) getUpdates(w http.ResponseWriter, r *http.Request, form url.Values) {
	offset, _ := strconv.ParseInt(form.Get("offset"), 10, 64)
	timeout, _ := strconv.Atoi(form.Get("timeout"))
	deadline := time.After(time.Duration(timeout) * time.Second)
	tg.mu.Lock()
	tg.offsets = append(tg.offsets, offset)
	tg.allowed = append(tg.allowed, form.Get("allowed_updates"))
	tg.mu.Unlock()
	for {
		tg.mu.Lock()
		if offset > 0 {
			for len(tg.ids) > 0 && tg.ids[0] < offset {
				tg.ids, tg.updates = tg.ids[1:], tg.updates[1:]
			}
		}
		batch := append(tg.replays, tg.updates...)
		tg.replays = nil
		pushed := tg.pushed
		tg.mu.Unlock()
		if len(batch) > 0 {
			writeJSON(w, 200, map[string]any{"ok": true, "result": batch})
			return
		}
		select {
		case <-pushed:
		case <-deadline:
			writeJSON(w, 200, map[string]any{"ok": true, "result": []any{}})
			return
		case <-r.Context().Done():
			return
		}
	}
}
