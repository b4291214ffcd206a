package alert

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReplyMarkup(t *testing.T) {
	nonce := strings.Repeat("ab", 16)
	long := strings.Repeat("é", 70)
	tests := []struct {
		name    string
		buttons []Button
		want    [][]map[string]string
		wantErr string
	}{
		{
			name:    "one button a row, labels as given, in order",
			buttons: []Button{{"2. Yes, and don't ask again", nonce}, {"1. <b>Yes</b> & go", "ok:" + nonce}},
			want: [][]map[string]string{
				{{"text": "2. Yes, and don't ask again", "callback_data": nonce}},
				{{"text": "1. <b>Yes</b> & go", "callback_data": "ok:" + nonce}},
			},
		},
		{
			name:    "pane text made one printable line",
			buttons: []Button{{"\x1b[31mNo\x1b[0m,\n  tell\u202e Claude\x07", nonce}},
			want:    [][]map[string]string{{{"text": "No, tell Claude", "callback_data": nonce}}},
		},
		{
			name:    "a long label is cut, in characters",
			buttons: []Button{{long, nonce}},
			want:    [][]map[string]string{{{"text": strings.Repeat("é", MaxButtonLabel-1) + "…", "callback_data": nonce}}},
		},
		{name: "no buttons", wantErr: "no buttons"},
		{name: "an empty label", buttons: []Button{{" \x1b[0m ", nonce}}, wantErr: "button 1 has no label"},
		{name: "no data", buttons: []Button{{"Yes", ""}}, wantErr: "callback data must be 1 to 64 bytes"},
		{name: "data too long", buttons: []Button{{"Yes", strings.Repeat("x", 65)}}, wantErr: "got 65"},
		{name: "too many", buttons: make([]Button, MaxButtons+1), wantErr: "more than Telegram's 100"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := ReplyMarkup(tt.buttons)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ReplyMarkup: err = %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				InlineKeyboard [][]map[string]string `json:"inline_keyboard"`
			}
			if err := json.Unmarshal(data, &got); err != nil {
				t.Fatalf("not JSON: %v: %s", err, data)
			}
			if diff := cmp.Diff(tt.want, got.InlineKeyboard); diff != "" {
				t.Errorf("keyboard (-want +got):\n%s", diff)
			}
		})
	}
}
