package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/google/go-cmp/cmp"
	"github.com/nicholas-fedor/shoutrrr/pkg/services/chat/telegram"
)

const testToken = "123456789:AAHsecretTOKEN_part-2"

// telegramConf reads a telegram:// line as a send does.
func telegramConf(t *testing.T, line string) *telegram.Config {
	t.Helper()
	c := Channel{Line: 1, URL: line}
	svc, err := service(&c)
	if err != nil {
		t.Fatalf("%s: %v", line, c.Scrub(err.Error()))
	}
	return svc.(*telegram.Service).GetConfig()
}

// TestTelegramSendIsDeliveredOnlyWhenTheAPISaysOK: a telegram:// line is
// delivered when the Bot API answers ok, and not when it answers anything
// else: its own refusal (ok false, whatever the status), a page that is not
// its answer, JSON without ok. What is said names no token.
func TestTelegramSendIsDeliveredOnlyWhenTheAPISaysOK(t *testing.T) {
	for _, tc := range []struct {
		name        string
		status      int
		ctype, body string
		want        string // the error; "" delivered
	}{
		{"ok", 200, "application/json", `{"ok":true,"result":{"message_id":1}}`, ""},
		{"refused", 400, "application/json", `{"ok":false,"error_code":400,"description":"Bad Request: chat not found"}`,
			"the Bot API refused the message (HTTP 400): Bad Request: chat not found"},
		{"refused with 200", 200, "application/json", `{"ok":false,"description":"Forbidden: bot was blocked by the user"}`,
			"the Bot API refused the message (HTTP 200): Forbidden: bot was blocked by the user"},
		{"refused without a word", 401, "application/json", `{"ok":false}`, "the Bot API refused the message (HTTP 401): no description"},
		// Delivered: the library reads the answer's JSON and not its
		// status, and the Bot API does not answer ok with a 5xx. Nor does
		// it leave out the message it sent, which the library then cannot
		// read; the ok is enough, as the message sent again would be
		// there twice.
		{"ok with 5xx", 502, "application/json", `{"ok":true}`, ""},
		{"a load balancer's page", 503, "text/html; charset=utf-8", "<html>503 Service Temporarily Unavailable</html>",
			"HTTP 503 Service Unavailable, and not the Bot API's answer (text/html)"},
		{"a portal's page", 200, "text/html", "<html>Sign in</html>", "HTTP 200 OK, and not the Bot API's answer (text/html)"},
		{"JSON that is not the API's", 200, "application/json", `{"result":{}}`, "HTTP 200 OK, and not the Bot API's answer (application/json)"},
		{"nothing", 200, "", "", "HTTP 200 OK, and not the Bot API's answer (no JSON)"},
		// Read only as far as the bound: cut there, it is no answer.
		{"an answer without end", 400, "application/json", `{"ok":false,"description":"` + strings.Repeat("x", 2<<20) + `"}`,
			"HTTP 400 Bad Request, and not the Bot API's answer (application/json)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.ctype != "" {
					w.Header().Set("Content-Type", tc.ctype)
				}
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			conf := telegramConf(t, "telegram://"+testToken+"@telegram?chats=@omega")
			err := sendTelegram(context.Background(), srv.Client(), srv.URL, conf, "an alert")
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("sendTelegram (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTelegramSendWithNoServer: a Bot API that cannot be reached is no
// delivery, and what is said holds no part of the token, which is in the
// request's address.
func TestTelegramSendWithNoServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	conf := telegramConf(t, "telegram://"+testToken+"@telegram?chats=@omega")
	err = sendTelegram(context.Background(), http.DefaultClient, "http://"+addr, conf, "an alert")
	if err == nil || !strings.HasPrefix(err.Error(), "no answer from the Bot API: ") || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("sendTelegram = %v, want no answer from the Bot API: ... connection refused", err)
	}
	for _, part := range []string{"123456789", "AAHsecretTOKEN_part-2"} {
		if strings.Contains(err.Error(), part) {
			t.Errorf("the token's %q in %q", part, err)
		}
	}
}

// TestTelegramSendsWhatTheLineSays: each chat of the line gets the message,
// to its topic when it names one, with the line's options; a chat that
// fails keeps it from none of the others and is named by its place.
func TestTelegramSendsWhatTheLineSays(t *testing.T) {
	var mu sync.Mutex
	var got []bot.SendMessageParams
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/bot"+testToken+"/sendMessage" {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"ok":false,"error_code":404,"description":"Not Found"}`)
			return
		}
		m, err := sentMessage(r)
		if err != nil {
			t.Errorf("the request: %v", err)
		}
		mu.Lock()
		got = append(got, m)
		mu.Unlock()
		if m.ChatID == "-100222" {
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, `{"ok":false,"error_code":403,"description":"Forbidden: bot is not a member of the channel chat"}`)
			return
		}
		io.WriteString(w, `{"ok":true,"result":{"message_id":1}}`)
	}))
	defer srv.Close()

	noPreview := &models.LinkPreviewOptions{IsDisabled: bot.True()}
	for _, tc := range []struct {
		line    string
		want    []bot.SendMessageParams
		wantErr string
	}{
		{
			line: "telegram://" + testToken + "@telegram?chats=@omega,-100222,-100333:42&notification=no&preview=no",
			want: []bot.SendMessageParams{
				{ChatID: "@omega", Text: "a <b> alert", LinkPreviewOptions: noPreview, DisableNotification: true},
				{ChatID: "-100222", Text: "a <b> alert", LinkPreviewOptions: noPreview, DisableNotification: true},
				{ChatID: "-100333", MessageThreadID: 42, Text: "a <b> alert", LinkPreviewOptions: noPreview, DisableNotification: true},
			},
			wantErr: "chat 2 of 3: the Bot API refused the message (HTTP 403): Forbidden: bot is not a member of the channel chat",
		},
		{
			line: "telegram://" + testToken + "@telegram?chats=@omega&title=Omega+<1>",
			want: []bot.SendMessageParams{{ChatID: "@omega", Text: "<b>Omega &lt;1&gt;</b>\na &lt;b&gt; alert", ParseMode: models.ParseModeHTML}},
		},
		{
			line: "telegram://" + testToken + "@telegram?chats=@omega&parsemode=markdown",
			want: []bot.SendMessageParams{{ChatID: "@omega", Text: "a <b> alert", ParseMode: models.ParseModeMarkdownV1}},
		},
	} {
		got = nil
		err := sendTelegram(context.Background(), srv.Client(), srv.URL, telegramConf(t, tc.line), "a <b> alert")
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
			t.Errorf("%s: the error (-want +got):\n%s", tc.line, diff)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: the requests (-want +got):\n%s", tc.line, diff)
		}
	}
}

// sentMessage reads a sendMessage request as the Bot API does: its fields
// are a form's, each object among them JSON.
func sentMessage(r *http.Request) (bot.SendMessageParams, error) {
	var m bot.SendMessageParams
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "multipart/form-data" {
		return m, fmt.Errorf("sent as %q", ct)
	}
	if err := r.ParseMultipartForm(1 << 20); err != nil {
		return m, err
	}
	m.ChatID = r.FormValue("chat_id")
	m.Text = r.FormValue("text")
	m.ParseMode = models.ParseMode(r.FormValue("parse_mode"))
	m.DisableNotification = r.FormValue("disable_notification") == "true"
	if v := r.FormValue("message_thread_id"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return m, fmt.Errorf("message_thread_id: %v", err)
		}
		m.MessageThreadID = n
	}
	if v := r.FormValue("link_preview_options"); v != "" {
		m.LinkPreviewOptions = new(models.LinkPreviewOptions)
		if err := json.Unmarshal([]byte(v), m.LinkPreviewOptions); err != nil {
			return m, fmt.Errorf("link_preview_options: %v", err)
		}
	}
	return m, nil
}
