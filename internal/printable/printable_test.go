package printable

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"MONITOR · agent · WORKING · work=7", "MONITOR · agent · WORKING · work=7"},
		{"tab\tand\nnewline stay", "tab\tand\nnewline stay"},
		{"title \x1b]0;pwned\x07 set", "title  set"},
		{"title \x1b]2;pwned\x1b\\ set", "title  set"},
		{"clear \x1b[2J\x1b[H screen", "clear  screen"},
		{"hidden \x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\", "hidden link"},
		{"clipboard \x1b]52;c;cm0gLXJmIH4=\x07", "clipboard "},
		{"colour \x1b[31mred\x1b[0m", "colour red"},
		{"C1 \u009b31mcsi", "C1 csi"},
		{"bidi \u202eevil\u202c text", "bidi evil text"},
		{"zero\u200bwidth\ufeff", "zerowidth"},
		{"joiner\u200d and word\u2060joiner", "joiner and wordjoiner"},
		{"tags \U000E0049\U000E0047\U000E004E\U000E004F\U000E0052\U000E0045 hide", "tags  hide"},
		{"invisible\u2062times", "invisibletimes"},
		{"bell\a backspace\b cr\r del\x7f", "bell backspace cr del"},
		{"bad \xff utf8", "bad \ufffd utf8"},
		{"unterminated \x1b]0;title", "unterminated "},
		{"ends with ESC\x1b", "ends with ESC"},
	}
	for _, tt := range tests {
		if got := String(tt.in); got != tt.want {
			t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestWriter(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	for _, chunk := range []string{"one \x1b[2", "Jtwo\n", "three\x1b]0;x\x07\nfour"} {
		if n, err := w.Write([]byte(chunk)); err != nil || n != len(chunk) {
			t.Fatalf("Write(%q) = %d, %v", chunk, n, err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff("one two\nthree\nfour", b.String()); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func FuzzString(f *testing.F) {
	for _, s := range []string{"a\x1b[31mb", "\x1b]0;t\x07", "\u202e", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := String(s)
		for _, r := range out {
			if hidden(r) {
				t.Fatalf("String(%q) = %q keeps %U", s, out, r)
			}
		}
		if String(out) != out {
			t.Fatalf("String is not stable on %q", s)
		}
	})
}

// TestCut: at most n bytes, never half a character, marked when cut.
func TestCut(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "abc…"},
		{"aé", 2, "a…"},
		{"日本", 4, "日…"},
		{"abc", 0, "…"},
		{"abc", -1, "…"},
	} {
		if got := Cut(tc.s, tc.n); got != tc.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}
