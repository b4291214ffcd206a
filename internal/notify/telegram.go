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

	"github.com/nicholas-fedor/shoutrrr/pkg/services/chat/telegram"
)

// A telegram:// line is sent by this file's own sendMessage request, not by
// the library's client: that client takes any answer that is not the Bot
// API's JSON error for a success, so a refused connection, a failed TLS
// handshake, a proxy's 502 or an HTML page was said delivered, and the
// alert lost. The line is still read by the library (its token, chats and
// options, checked as Parse checks every line); only the send is ours, and
// it is a delivery only when the API answers {"ok":true}.

// telegramAPI is the Bot API's address.
const telegramAPI = "https://api.telegram.org"

// telegramMessage is sendMessage's request.
type telegramMessage struct {
	ChatID              string               `json:"chat_id"`
	ThreadID            int                  `json:"message_thread_id,omitempty"`
	Text                string               `json:"text"`
	ParseMode           string               `json:"parse_mode,omitempty"`
	LinkPreview         *telegramLinkPreview `json:"link_preview_options,omitempty"`
	DisableNotification bool                 `json:"disable_notification,omitempty"`
}

// telegramLinkPreview is sendMessage's link_preview_options.
type telegramLinkPreview struct {
	IsDisabled bool `json:"is_disabled"`
}

// telegramAnswer is the part of the Bot API's answer that says whether it
// took the request.
type telegramAnswer struct {
	OK          *bool  `json:"ok"`
	Description string `json:"description"`
}

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
func telegramMessageFor(conf *telegram.Config, chat, text string) telegramMessage {
	m := telegramMessage{
		ChatID:              chat,
		Text:                text,
		DisableNotification: !conf.Notification,
	}
	if !conf.Preview {
		m.LinkPreview = &telegramLinkPreview{IsDisabled: true}
	}
	if id, thread, ok := strings.Cut(chat, ":"); ok {
		m.ChatID = id
		m.ThreadID, _ = strconv.Atoi(thread)
	}
	mode := conf.ParseMode
	if mode != telegram.ParseModes.None {
		m.ParseMode = mode.String()
	}
	if conf.Title == "" {
		return m
	}
	switch mode {
	case telegram.ParseModes.None:
		m.ParseMode = telegram.ParseModes.HTML.String()
		m.Text = "<b>" + html.EscapeString(conf.Title) + "</b>\n" + html.EscapeString(text)
	case telegram.ParseModes.HTML:
		m.Text = "<b>" + html.EscapeString(conf.Title) + "</b>\n" + text
	}
	return m
}

// telegramSend makes one sendMessage request. Its error never holds the
// request's address, which holds the token, and does not name the
// service: the channel's name, said before it, does.
func telegramSend(ctx context.Context, client *http.Client, api, token string, m telegramMessage) error {
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, api+"/bot"+token+"/sendMessage", bytes.NewReader(body))
	if err != nil {
		return errors.New("the Bot API's address is not one: is the token one?")
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("no answer from the Bot API: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("the Bot API's answer (HTTP %s) was cut short: %w", resp.Status, err)
	}
	var a telegramAnswer
	if json.Unmarshal(b, &a) != nil || a.OK == nil {
		// Not the API's answer: a proxy's or a load balancer's page.
		what := "no JSON"
		if ct, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err == nil {
			what = ct
		}
		return fmt.Errorf("HTTP %s, and not the Bot API's answer (%s)", resp.Status, what)
	}
	if !*a.OK || resp.StatusCode/100 != 2 {
		desc := a.Description
		if desc == "" {
			desc = "no description"
		}
		return fmt.Errorf("the Bot API refused the message (HTTP %d): %s", resp.StatusCode, desc)
	}
	return nil
}
