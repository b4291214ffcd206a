package notify

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

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
		{"ok with 5xx", 502, "application/json", `{"ok":true}`, "the Bot API refused the message (HTTP 502): no description"},
		{"a load balancer's page", 503, "text/html; charset=utf-8", "<html>503 Service Temporarily Unavailable</html>",
			"HTTP 503 Service Unavailable, and not the Bot API's answer (text/html)"},
		{"a portal's page", 200, "text/html", "<html>Sign in</html>", "HTTP 200 OK, and not the Bot API's answer (text/html)"},
		{"JSON that is not the API's", 200, "application/json", `{"result":{}}`, "HTTP 200 OK, and not the Bot API's answer (application/json)"},
		{"nothing", 200, "", "", "HTTP 200 OK, and not the Bot API's answer (no JSON)"},
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
	var got []telegramMessage
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/bot"+testToken+"/sendMessage" || r.Header.Get("Content-Type") != "application/json" {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"ok":false,"error_code":404,"description":"Not Found"}`)
			return
		}
		var m telegramMessage
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
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

	for _, tc := range []struct {
		line    string
		want    []telegramMessage
		wantErr string
	}{
		{
			line: "telegram://" + testToken + "@telegram?chats=@omega,-100222,-100333:42&notification=no&preview=no",
			want: []telegramMessage{
				{ChatID: "@omega", Text: "a <b> alert", LinkPreview: &telegramLinkPreview{IsDisabled: true}, DisableNotification: true},
				{ChatID: "-100222", Text: "a <b> alert", LinkPreview: &telegramLinkPreview{IsDisabled: true}, DisableNotification: true},
				{ChatID: "-100333", ThreadID: 42, Text: "a <b> alert", LinkPreview: &telegramLinkPreview{IsDisabled: true}, DisableNotification: true},
			},
			wantErr: "chat 2 of 3: the Bot API refused the message (HTTP 403): Forbidden: bot is not a member of the channel chat",
		},
		{
			line: "telegram://" + testToken + "@telegram?chats=@omega&title=Omega+<1>",
			want: []telegramMessage{{ChatID: "@omega", Text: "<b>Omega &lt;1&gt;</b>\na &lt;b&gt; alert", ParseMode: "HTML"}},
		},
		{
			line: "telegram://" + testToken + "@telegram?chats=@omega&parsemode=markdown",
			want: []telegramMessage{{ChatID: "@omega", Text: "a <b> alert", ParseMode: "Markdown"}},
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
