package alert

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPrivateChat: only a positive chat id is a private chat; anything
// else, or no config, gets the summary alone.
func TestPrivateChat(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		conf string
		want bool
	}{
		{"token=x\nchat_id=12345\n", true},
		{"  chat_id = \"12345\"  \n", false}, // the key is chat_id=, as the funnel reads it
		{"chat_id=\"12345\"\n", true},
		{"chat_id='42'\n", true},
		{"chat_id=-100123\n", false},
		{"chat_id=@channel\n", false},
		{"chat_id=\n", false},
		{"token=x\n", false},
	} {
		conf := filepath.Join(dir, "telegram.conf")
		if err := os.WriteFile(conf, []byte(tc.conf), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := PrivateChat(conf); got != tc.want {
			t.Errorf("PrivateChat(%q) = %v, want %v", tc.conf, got, tc.want)
		}
	}
	if PrivateChat(filepath.Join(dir, "missing.conf")) {
		t.Error("a missing config reads as a private chat")
	}
}

// TestAudience: a group or a channel is named at start, a private chat and
// a missing config are not (the missing one is Undeliverable's).
func TestAudience(t *testing.T) {
	home := t.TempDir()
	conf := filepath.Join(home, "telegram.conf")
	getenv := func(name string) string {
		if name == "OMEGA_TELEGRAM_CONF" {
			return conf
		}
		return ""
	}
	if got := Audience(getenv, home); got != "" {
		t.Errorf("no config: %q", got)
	}
	for conf1, group := range map[string]bool{"chat_id=42\n": false, "chat_id=-1001234567890\n": true, "chat_id=@ops\n": true} {
		if err := os.WriteFile(conf, []byte("bot_token=1:x\n"+conf1), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := Audience(getenv, home); (got != "") != group {
			t.Errorf("%q: %q", conf1, got)
		}
	}
}
