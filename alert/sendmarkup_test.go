package alert

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSendReplyMarkup: the funnel, with real curl, sends the keyboard that
// ReplyMarkup built, from a 0600 file, as sendMessage's reply_markup.
func TestSendReplyMarkup(t *testing.T) {
	api := newFakeAPI(t, ok200)
	e := newSendEnv(t, api.srv.URL)
	nonce := strings.Repeat("1a", 16)
	kb, err := ReplyMarkup([]Button{{"1. Yes", nonce}, {"2. Yes, and don't ask again", "ok:" + nonce}})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(e.home, "kb.json")
	if err := os.WriteFile(file, kb, 0o600); err != nil {
		t.Fatal(err)
	}
	r := e.runIn(t, "<b>QUESTION</b>", "--reply-markup", file, StdinFlag)
	if r.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	want := []url.Values{{
		"chat_id":                  {testChat},
		"text":                     {"<b>QUESTION</b>"},
		"parse_mode":               {"HTML"},
		"disable_web_page_preview": {"true"},
		"reply_markup":             {string(kb)},
	}}
	if diff := cmp.Diff(want, api.requests()); diff != "" {
		t.Errorf("requests mismatch (-want +got):\n%s", diff)
	}
}
