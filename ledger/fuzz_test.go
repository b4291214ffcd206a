package ledger

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzMask checks Mask against its definition (naiveMask) and its
// promises: it never panics, its result is a subsequence of the line, the
// same input gives the same result, and a line that is a recorded text of
// at least SliceLen runes is masked whole.
func FuzzMask(f *testing.F) {
	f.Add("continue with the next step", "❯ continue with the next step")
	f.Add("keep going until the queue is empty", "│   until the queue is em   │")
	f.Add(`q=$(grep -cE 'Enter to select.*to navigate' "panes/$s.txt")`, "Enter to select · ↑/↓ to navigate · Esc to cancel")
	f.Add("日本語のテキストを表示します", "出力: 日本語のテキストを表示します。")
	f.Add("a\x00b\xffc  d\te\u00a0f\ufffeg h i j k", "a b\ufffdc d e f g h i j k")
	f.Add("first line of it\nsecond line of it", "first line of it\nsecond line of it")
	f.Add("aaaaaaaaaaaaaaaaaaaaaaaa", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa b aaaaaaaaaaaaa")
	f.Fuzz(func(t *testing.T, text, line string) {
		m := NewMatcher(text)
		got := m.Mask(line)
		if !isSubsequence(got, line) {
			t.Fatalf("Mask(%q) = %q, not a subsequence", line, got)
		}
		if again := NewMatcher(text).Mask(line); again != got {
			t.Fatalf("Mask(%q) = %q, then %q", line, got, again)
		}
		if !strings.ContainsAny(text, "\n\r") && utf8.RuneCountInString(normalize(text)) >= SliceLen {
			if rest := m.Mask(text); normalize(rest) != "" {
				t.Fatalf("Mask of the recorded text %q left %q", text, rest)
			}
		}
		// The definition is slow (cubic); hold it to inputs of a pane's size.
		if len(text) > 4<<10 || len(line) > 4<<10 {
			return
		}
		if want := naiveMask(records(text), line); got != want {
			t.Fatalf("Mask(%q) = %q, naive %q", line, got, want)
		}
	})
}

// isSubsequence reports whether s is a subsequence of t, byte by byte.
func isSubsequence(s, t string) bool {
	for i := 0; i < len(s); i++ {
		j := strings.IndexByte(t, s[i])
		if j < 0 {
			return false
		}
		t = t[j+1:]
	}
	return true
}

// FuzzRecordLoad records a text into a file that held anything at all, and
// checks that the text is listed back normalised at the end, that the file
// starts with the sentinel and reads back clean, and that whatever the old
// contents were, reading them never fails the caller or yields a record that
// could blank a grep.
func FuzzRecordLoad(f *testing.F) {
	f.Add([]byte(nil), "continue with the next step")
	f.Add([]byte(Sentinel+"\none\ntwo\n"), "two\n  three  ")
	f.Add([]byte("\x00\x01\x89PNG\r\n\x1a\n"), "keep going\tuntil the queue is empty")
	f.Add([]byte(Sentinel+"\n\n\xff\n"+Sentinel+"\n"), "")
	f.Add([]byte("no sentinel\r\nhere"), "a\x00b\ufffec")
	f.Fuzz(func(t *testing.T, old []byte, text string) {
		path := filepath.Join(t.TempDir(), "ledger")
		if old != nil {
			if err := os.WriteFile(path, old, 0o600); err != nil {
				t.Fatal(err)
			}
			before, _ := Texts(path)
			for _, r := range before {
				if r == "" || !isNormal(r) || strings.Contains(r, Sentinel) {
					t.Fatalf("Texts of %q gave the record %q", old, r)
				}
			}
		}
		if err := Record(path, text); err != nil {
			t.Fatalf("Record(%q): %v", text, err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(data), Sentinel+"\n") {
			t.Fatalf("file starts %q, want the sentinel", data[:min(len(data), 40)])
		}
		got, err := Texts(path)
		if err != nil {
			t.Fatalf("Texts after Record: %v", err)
		}
		var want []string
		for _, r := range records(text) {
			if !slices.Contains(want, r) {
				want = append(want, r)
			}
		}
		if len(got) < len(want) || !slices.Equal(got[len(got)-len(want):], want) {
			t.Fatalf("Texts after Record(%q) = %q, want it to end with %q", text, got, want)
		}
		m, err := Load(path)
		if err != nil || m.Len() > len(got) {
			t.Fatalf("Load: %v, %d records of %d", err, m.Len(), len(got))
		}
	})
}
