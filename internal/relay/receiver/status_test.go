package receiver

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStatusArgs(t *testing.T) {
	for _, tt := range []struct {
		text string
		args []string
		ok   bool
	}{
		{"/status", []string{}, true},
		{"  /status  ", []string{}, true},
		{"/status api", []string{"api"}, true},
		{"/status@omega_bot", []string{}, true},
		{"/status@Omega_Bot build-box:web", []string{"build-box:web"}, true},
		{"/status a b", []string{"a", "b"}, true},
		{"/status@other_bot", nil, false},
		{"/status@", nil, false},
		{"/statusx", nil, false},
		{"/Status", nil, false},
		{"status", nil, false},
		{"please /status", nil, false},
		{"", nil, false},
	} {
		args, ok := statusArgs(tt.text, "omega_bot")
		if ok != tt.ok {
			t.Errorf("statusArgs(%q) ok = %v, want %v", tt.text, ok, tt.ok)
			continue
		}
		if diff := cmp.Diff(tt.args, args); ok && diff != "" {
			t.Errorf("statusArgs(%q) (-want +got):\n%s", tt.text, diff)
		}
	}
	// A bot whose name is not known takes the bare command only.
	if _, ok := statusArgs("/status@omega_bot", ""); ok {
		t.Errorf("an addressed command taken with no name known")
	}
}

func TestClipText(t *testing.T) {
	for _, tt := range []struct {
		name string
		text string
	}{
		{"ASCII", strings.Repeat("x", 9000)},
		{"characters counted twice", strings.Repeat("😀", 3000)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := clipText(tt.text)
			if n := utf16Len(got); n > maxText || n < maxText-2 {
				t.Errorf("clipped to %d code units, want at most %d and no fewer than %d", n, maxText, maxText-2)
			}
			if !strings.HasSuffix(got, "(clipped: too long for one message)") {
				t.Errorf("no note at the end: %q", got[len(got)-60:])
			}
		})
	}
	if got := clipText("short"); got != "short" {
		t.Errorf("a short text changed: %q", got)
	}
}

// FuzzStatusArgs: whatever a message holds, statusArgs takes only the
// command, and its words hold no white space.
func FuzzStatusArgs(f *testing.F) {
	for _, s := range []string{"/status", "/status@omega_bot api", "/status@x", "/status \u00a0a\tb\n", "\x00/status"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		args, ok := statusArgs(text, "omega_bot")
		if ok && !strings.HasPrefix(strings.TrimSpace(text), "/status") {
			t.Errorf("%q taken as /status", text)
		}
		for _, a := range args {
			if a == "" || strings.ContainsAny(a, " \t\n\r") {
				t.Errorf("%q: a word %q", text, a)
			}
		}
	})
}
