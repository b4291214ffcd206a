package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/nicholas-fedor/shoutrrr/pkg/services/chat/telegram"
)

// A telegram:// line is not sent by the library's (shoutrrr's) client: that
// client takes any answer that is not the Bot API's JSON error for a
// success, so a refused connection, a failed TLS handshake, a proxy's 502
// or an HTML page was said delivered, and the alert lost. The line is still
// read by the library (its token, chats and options, checked as Parse
// checks every line); the send goes through go-telegram/bot, the project's
// Telegram client, over a transport of ours that bounds the answer's body
// and keeps its status, so that what is said of an answer that is not the
// API's names its status and not its page. It is a delivery only when the
// API answers {"ok":true}.

// telegramAPI is the Bot API's address.
const telegramAPI = "https://api.telegram.org"

// maxTelegramAnswer bounds the Bot API's answer: the library reads it
// whole, and a proxy or a server that is not the API could send without
// end. sendMessage's answer is a message, far smaller.
const maxTelegramAnswer = 1 << 20

// sendTelegram sends text to each chat of conf through the Bot API at api.
// A chat that fails does not keep the message from the others; the error
// is theirs, joined.
func sendTelegram(ctx context.Context, client *http.Client, api string, conf *telegram.Config, text string) error {
	if len(conf.Chats) == 0 {
		return errors.New("the line names no chat (chats=...)")
	}
	var errs []error
	for i, chat := range conf.Chats {
		err := telegramSend(ctx, client, api, conf.Token, telegramMessageFor(conf, chat, text))
		if err == nil {
			continue
		}
		if len(conf.Chats) > 1 {
			// Which chat by its place: its id may be private.
			err = fmt.Errorf("chat %d of %d: %w", i+1, len(conf.Chats), err)
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// telegramMessageFor is the request that sends text to chat as the line's
// options say: chat is an id or @name, with :THREAD for a topic of a forum;
// a title is a bold first line, which only HTML can say.
func telegramMessageFor(conf *telegram.Config, chat, text string) *bot.SendMessageParams {
	m := &bot.SendMessageParams{
		ChatID:              chat,
		Text:                text,
		DisableNotification: !conf.Notification,
	}
	if !conf.Preview {
		m.LinkPreviewOptions = &models.LinkPreviewOptions{IsDisabled: bot.True()}
	}
	if id, thread, ok := strings.Cut(chat, ":"); ok {
		m.ChatID = id
		m.MessageThreadID, _ = strconv.Atoi(thread)
	}
	mode := conf.ParseMode
	if mode != telegram.ParseModes.None {
		m.ParseMode = models.ParseMode(mode.String())
	}
	if conf.Title == "" {
		return m
	}
	switch mode {
	case telegram.ParseModes.None:
		m.ParseMode = models.ParseModeHTML
		m.Text = "<b>" + html.EscapeString(conf.Title) + "</b>\n" + html.EscapeString(text)
	case telegram.ParseModes.HTML:
		m.Text = "<b>" + html.EscapeString(conf.Title) + "</b>\n" + text
	}
	return m
}

// telegramAnswer is the part of the Bot API's answer that says whether it
// took the request. The library keeps neither whether ok was there nor,
// in its error, the description as a value of its own.
type telegramAnswer struct {
	OK          *bool  `json:"ok"`
	Description string `json:"description"`
}

// telegramSend makes one sendMessage request. Its error never holds the
// request's address, which holds the token, nor the answer's body when it
// is not the API's, and does not name the service: the channel's name,
// said before it, does.
func telegramSend(ctx context.Context, client *http.Client, api, token string, m *bot.SendMessageParams) error {
	tr := &telegramTransport{base: client.Transport}
	if tr.base == nil {
		tr.base = http.DefaultTransport
	}
	c := *client
	c.Transport = tr
	b, err := bot.New(token,
		bot.WithServerURL(api),
		bot.WithSkipGetMe(),
		bot.WithHTTPClient(0, &c),
		// All it would say of a send is that closing the answer's body
		// failed, after the answer was read: nothing a delivery turns on.
		bot.WithErrorsHandler(func(error) {}),
	)
	if err != nil {
		return fmt.Errorf("the line's token: %w", err)
	}
	_, err = b.SendMessage(ctx, m)
	if err == nil {
		return nil
	}
	r := tr.answer
	if r == nil {
		if !tr.asked {
			// The library could not make the request, which is made
			// only of the address and the message.
			return errors.New("the Bot API's address is not one: is the token one?")
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("no answer from the Bot API: %w", err)
	}
	if r.err != nil {
		return fmt.Errorf("the Bot API's answer (HTTP %s) was cut short: %w", r.status, r.err)
	}
	var a telegramAnswer
	if json.Unmarshal(r.body.Bytes(), &a) != nil || a.OK == nil {
		// Not the API's answer: a proxy's or a load balancer's page.
		what := "no JSON"
		if ct, _, err := mime.ParseMediaType(r.contentType); err == nil {
			what = ct
		}
		return fmt.Errorf("HTTP %s, and not the Bot API's answer (%s)", r.status, what)
	}
	if !*a.OK {
		desc := a.Description
		if desc == "" {
			desc = "no description"
		}
		return fmt.Errorf("the Bot API refused the message (HTTP %d): %s", r.code, desc)
	}
	// The API said it took the message, and only the message it sent back
	// could not be read: sent again, it would be there twice.
	return nil
}

// A telegramTransport makes one Bot API request for the library and keeps
// what the library does not of its answer: the status, the content type
// and the body, which it bounds.
type telegramTransport struct {
	base   http.RoundTripper
	asked  bool
	answer *telegramReply
}

// A telegramReply is what a telegramTransport kept of an answer.
type telegramReply struct {
	status      string // as in "503 Service Unavailable"
	code        int
	contentType string
	body        bytes.Buffer // as far as it was read, at most maxTelegramAnswer
	err         error        // reading it, if not io.EOF
}

func (t *telegramTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.asked = true
	t.answer = nil // a redirect's, when there is one: not the answer read
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	r := &telegramReply{
		status:      resp.Status,
		code:        resp.StatusCode,
		contentType: resp.Header.Get("Content-Type"),
	}
	t.answer = r
	resp.Body = &telegramBody{
		Reader: io.TeeReader(io.LimitReader(resp.Body, maxTelegramAnswer), &r.body),
		Closer: resp.Body,
		reply:  r,
	}
	return resp, nil
}

// A telegramBody is an answer's body as a telegramTransport gives it to the
// library.
type telegramBody struct {
	io.Reader
	io.Closer
	reply *telegramReply
}

func (b *telegramBody) Read(p []byte) (int, error) {
	n, err := b.Reader.Read(p)
	if err != nil && err != io.EOF {
		b.reply.err = err
	}
	return n, err
}
