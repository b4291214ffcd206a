package alert

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseSent(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, out string
		want      Sent
	}{
		{"the funnel's line", "message_id=77 chat_id=-1001234567890\n", Sent{ChatID: -1001234567890, MessageID: 77}},
		{"among other output, the last", "sent.\nmessage_id=1 chat_id=5\nmessage_id=2 chat_id=5\n", Sent{ChatID: 5, MessageID: 2}},
		{"spaces around", "  message_id=9\tchat_id=42  ", Sent{ChatID: 42, MessageID: 9}},
		{"nothing", "", Sent{}},
		{"no chat", "message_id=77\n", Sent{}},
		{"the fields swapped", "chat_id=42 message_id=77\n", Sent{}},
		{"a third field", "message_id=77 chat_id=42 x\n", Sent{}},
		{"message id 0", "message_id=0 chat_id=42\n", Sent{}},
		{"a negative message id", "message_id=-7 chat_id=42\n", Sent{}},
		{"a signed message id", "message_id=+7 chat_id=42\n", Sent{}},
		{"chat 0", "message_id=7 chat_id=0\n", Sent{}},
		{"a message id past 32 bits", "message_id=4294967296 chat_id=42\n", Sent{}},
		{"a chat id past 64 bits", "message_id=7 chat_id=99999999999999999999\n", Sent{}},
		{"a channel name", "message_id=7 chat_id=@ops\n", Sent{}},
		{"hex", "message_id=0x10 chat_id=42\n", Sent{}},
		{"a forged line after a good one is only skipped", "message_id=7 chat_id=42\nmessage_id=8; chat_id=43\n", Sent{ChatID: 42, MessageID: 7}},
	} {
		if got := ParseSent(tt.out); got != tt.want {
			t.Errorf("%s: ParseSent(%q) = %+v, want %+v", tt.name, tt.out, got, tt.want)
		}
	}
}

// TestSendMessageSaysWhichMessage: the funnel, with real curl, names the
// message it sent with buttons, and SendMessage reads it; without buttons
// the funnel stays quiet, and the message is not named.
func TestSendMessageSaysWhichMessage(t *testing.T) {
	api := newFakeAPI(t, ok200)
	e := newSendEnv(t, api.srv.URL)
	funnel := filepath.Join(e.home, "omega-alert-send.sh")
	script, err := os.ReadFile(sendScript)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(funnel, script, 0o700); err != nil {
		t.Fatal(err)
	}
	kb, err := ReplyMarkup([]Button{{"1. Yes", strings.Repeat("1a", 16)}})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(e.home, "kb.json")
	if err := os.WriteFile(file, kb, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	sent, err := SendMessage(ctx, funnel, e.env, "<b>QUESTION</b>", "--reply-markup", file)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Sent{ChatID: -1001234567890, MessageID: 7}, sent); diff != "" {
		t.Errorf("with buttons (-want +got):\n%s", diff)
	}
	sent, err = SendMessage(ctx, funnel, e.env, "<b>BLOCKED</b>")
	if err != nil || sent != (Sent{}) {
		t.Errorf("without buttons: %+v, %v; want no message named", sent, err)
	}
	if got := len(api.requests()); got != 2 {
		t.Errorf("%d requests, want 2", got)
	}
}
