package relay

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const token = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0"

func TestLoadConfig(t *testing.T) {
	tests := []struct {
		name    string
		conf    string
		mode    os.FileMode
		api     string
		want    Config // Path and token aside
		wantErr string
	}{
		{
			name: "a private chat, answers on",
			conf: "bot_token=" + token + "\nchat_id=42\nanswers=on\n",
			want: Config{ChatID: 42, Answers: true, API: DefaultAPI},
		},
		{
			name: "a group with its users, quoted, CRLF, comments",
			conf: "# x\r\nbot_token='" + token + "'\r\nchat_id = -100123\r\nanswers = \"on\"\r\nallow_users=7, 8,7\r\n",
			api:  "http://127.0.0.1:9/",
			want: Config{ChatID: -100123, Answers: true, AllowUsers: []int64{7, 8}, API: "http://127.0.0.1:9"},
		},
		{
			name: "answers off by default",
			conf: "bot_token=" + token + "\nchat_id=42\n",
			want: Config{ChatID: 42, API: DefaultAPI},
		},
		{
			name: "free text on",
			conf: "bot_token=" + token + "\nchat_id=42\nanswers=on\nfree_text=on\n",
			want: Config{ChatID: 42, Answers: true, FreeText: true, API: DefaultAPI},
		},
		{
			name: "free text off",
			conf: "bot_token=" + token + "\nchat_id=42\nanswers=on\nfree_text=off\n",
			want: Config{ChatID: 42, Answers: true, API: DefaultAPI},
		},
		{name: "free text neither on nor off", conf: "bot_token=" + token + "\nchat_id=42\nanswers=on\nfree_text=1\n", wantErr: `free_text="1": want on or off`},
		{name: "open to others", conf: "bot_token=" + token + "\nchat_id=42\n", mode: 0o640, wantErr: "chmod 600"},
		{name: "no token", conf: "chat_id=42\n", wantErr: "bot_token is missing"},
		{name: "a channel name", conf: "bot_token=" + token + "\nchat_id=@ops\n", wantErr: "not a chat's number"},
		{name: "answers neither on nor off", conf: "bot_token=" + token + "\nchat_id=42\nanswers=yes\n", wantErr: "want on or off"},
		{name: "a user id that is not one", conf: "bot_token=" + token + "\nchat_id=-5\nallow_users=7,$(id)\n", wantErr: `"$(id)" is not a Telegram user id`},
		{name: "plain http to another machine", conf: "bot_token=" + token + "\nchat_id=42\n", api: "http://api.telegram.org", wantErr: "in clear"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			path := filepath.Join(home, ".omega", "telegram.conf")
			os.MkdirAll(filepath.Dir(path), 0o700)
			mode := tt.mode
			if mode == 0 {
				mode = 0o600
			}
			if err := os.WriteFile(path, []byte(tt.conf), mode); err != nil {
				t.Fatal(err)
			}
			os.Chmod(path, mode)
			env := map[string]string{"OMEGA_TELEGRAM_API": tt.api}
			got, err := LoadConfig(func(k string) string { return env[k] }, home)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), token) {
					t.Errorf("the error shows the token: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Token() != token {
				t.Errorf("token not read")
			}
			tt.want.Path, tt.want.token = path, token
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(Config{})); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
			for _, s := range []string{got.String(), fmt.Sprintf("%v %+v %#v", got, got, got)} {
				if strings.Contains(s, token) || strings.Contains(s, "AAHdq") {
					t.Errorf("the config prints its token: %s", s)
				}
			}
		})
	}
}

// TestConfigSaysFreeText: the settings said (by relay status and the
// receiver's start) name free_text, off unless it is on.
func TestConfigSaysFreeText(t *testing.T) {
	for _, c := range []struct {
		c    Config
		want string
	}{
		{Config{ChatID: 42, Answers: true}, "answers=on, free_text=off, private chat 42"},
		{Config{ChatID: 42, Answers: true, FreeText: true}, "answers=on, free_text=on, private chat 42"},
	} {
		if got := c.c.String(); !strings.HasPrefix(got, c.want) {
			t.Errorf("String() = %q, want it to start %q", got, c.want)
		}
	}
}

func TestConfigCheck(t *testing.T) {
	tests := []struct {
		name    string
		c       Config
		wantErr string
	}{
		{"answers off", Config{ChatID: 42}, "add the line answers=on"},
		{"a group without users", Config{ChatID: -5, Answers: true}, "add allow_users="},
		{"a group with users", Config{ChatID: -5, Answers: true, AllowUsers: []int64{7}}, ""},
		{"a private chat", Config{ChatID: 42, Answers: true}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.c.Check()
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("Check() = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestAllowed(t *testing.T) {
	private := Config{ChatID: 42}
	group := Config{ChatID: -5, AllowUsers: []int64{7}}
	for _, tt := range []struct {
		c    Config
		user int64
		want bool
	}{
		{private, 42, true}, {private, 43, false},
		{group, 7, true}, {group, 8, false}, {group, -5, false},
	} {
		if got := tt.c.Allowed(tt.user); got != tt.want {
			t.Errorf("%v.Allowed(%d) = %v, want %v", tt.c.ChatID, tt.user, got, tt.want)
		}
	}
}

func TestOffsetFile(t *testing.T) {
	dir := t.TempDir()
	if n, err := ReadOffset(dir); n != 0 || err != nil {
		t.Fatalf("no file: %d, %v", n, err)
	}
	if err := WriteOffset(dir, 41); err != nil {
		t.Fatal(err)
	}
	if n, err := ReadOffset(dir); n != 41 || err != nil {
		t.Fatalf("ReadOffset = %d, %v; want 41", n, err)
	}
	os.WriteFile(filepath.Join(dir, Offset), []byte("x\n"), 0o600)
	if _, err := ReadOffset(dir); err == nil {
		t.Error("a planted offset that is no number was read")
	}
}
