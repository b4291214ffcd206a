package auditrun

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
		if got := privateChat(conf); got != tc.want {
			t.Errorf("privateChat(%q) = %v, want %v", tc.conf, got, tc.want)
		}
	}
	if privateChat(filepath.Join(dir, "missing.conf")) {
		t.Error("a missing config reads as a private chat")
	}
}
