package classify

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

func texts(s *Screen) []string {
	var out []string
	for _, l := range s.Lines {
		out = append(out, l.Text)
	}
	return out
}

func TestNormalise(t *testing.T) {
	tests := []struct {
		name string
		in   string
		text []string
		loud []string
	}{
		{"plain", "a\nb\n", []string{"a", "b"}, []string{"a", "b"}},
		{"no final newline", "a\nb", []string{"a", "b"}, []string{"a", "b"}},
		{"carriage returns", "a\r\nb\r\n", []string{"a", "b"}, []string{"a", "b"}},
		{"no-break space is a space", "❯\u00a0\n  ⎿ \u00a0done\n", []string{"❯", "  ⎿  done"}, []string{"❯", "  ⎿  done"}},
		{"trailing spaces trimmed", "x   \n", []string{"x"}, []string{"x"}},
		{"NUL and controls dropped", "a\x00b\x07c\x7f\n", []string{"abc"}, []string{"abc"}},
		{"tab is a space", "a\tb\n", []string{"a b"}, []string{"a b"}},
		{"invalid UTF-8 replaced", "a\xffb\n", []string{"a\ufffdb"}, []string{"a\ufffdb"}},
		{"SGR stripped", "\x1b[1;38;5;246m✻ Crunching…\x1b[0m\n", []string{"✻ Crunching…"}, []string{"✻ Crunching…"}},
		{"faint blanked in Loud", "❯ \x1b[2mResend your message\x1b[22m\n", []string{"❯ Resend your message"}, []string{"❯"}},
		{"faint carries over lines", "\x1b[2mdim\nstill\x1b[0m ok\n", []string{"dim", "still ok"}, []string{"", "      ok"}},
		{"colour 2 is not faint", "\x1b[38;5;2mgreen\x1b[m\n", []string{"green"}, []string{"green"}},
		{"truecolour with a 2 is not faint", "\x1b[38;2;2;2;2mx\n", []string{"x"}, []string{"x"}},
		{"OSC title and hyperlink", "\x1b]0;title\x07a\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\n", []string{"alink"}, []string{"alink"}},
		{"cursor movement", "\x1b[2K\x1b[1Gline\n", []string{"line"}, []string{"line"}},
		{"escape at end of line", "a\x1b\n", []string{"a"}, []string{"a"}},
		{"unterminated CSI", "a\x1b[12\n", []string{"a"}, []string{"a"}},
		{"charset designation", "\x1b(Bq\n", []string{"q"}, []string{"q"}},
		{"C1 controls dropped", "a\u0085b\n", []string{"ab"}, []string{"ab"}},
		{"empty", "", nil, nil},
		{"one empty line", "\n", []string{""}, []string{""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := ParseScreen([]byte(tt.in))
			if diff := cmp.Diff(tt.text, texts(s)); diff != "" {
				t.Errorf("Text (-want +got):\n%s", diff)
			}
			var loud []string
			for _, l := range s.Lines {
				loud = append(loud, l.Loud)
			}
			if diff := cmp.Diff(tt.loud, loud); diff != "" {
				t.Errorf("Loud (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTailIsBounded(t *testing.T) {
	var b bytes.Buffer
	const n = 10000
	for i := 1; i <= n; i++ {
		b.WriteString(strings.Repeat("x", i%50))
		b.WriteString("\n")
	}
	s := ParseScreen(b.Bytes())
	if s.Total != n {
		t.Errorf("Total = %d, want %d", s.Total, n)
	}
	if len(s.Lines) != MaxTailLines {
		t.Errorf("kept %d lines, want %d", len(s.Lines), MaxTailLines)
	}
	if first, last := s.Lines[0].N, s.Lines[len(s.Lines)-1].N; first != n-MaxTailLines+1 || last != n {
		t.Errorf("kept lines %d-%d, want %d-%d", first, last, n-MaxTailLines+1, n)
	}
}

func TestLongLineIsCut(t *testing.T) {
	long := strings.Repeat("é", MaxLineBytes) // two bytes each: twice the bound
	s := ParseScreen([]byte("a\n" + long + "\nb\n"))
	if got := len(s.Lines[1].Text); got > MaxLineBytes {
		t.Errorf("a long line kept %d bytes, more than %d", got, MaxLineBytes)
	}
	if diff := cmp.Diff([]string{"a", "b"}, []string{s.Lines[0].Text, s.Lines[2].Text}); diff != "" {
		t.Errorf("lines around a long one (-want +got):\n%s", diff)
	}
}

// TestReadScreenMatchesParse streams captures of every size through small
// and large reads, across the point where the tail slides, and expects what
// parsing the whole capture in memory gives.
func TestReadScreenMatchesParse(t *testing.T) {
	line := "⏺ Bash(go test ./...) · some output that is long enough to matter\n"
	for _, lines := range []int{0, 1, 799, 800, 801, 20000, 60000} {
		capture := []byte(strings.Repeat(line, lines) + "────\n❯\u00a0\n────\n")
		want := ParseScreen(capture)
		for _, r := range []struct {
			name string
			r    io.Reader
		}{
			{"whole", bytes.NewReader(capture)},
			{"one byte at a time", iotest.OneByteReader(bytes.NewReader(capture))},
			{"half reads", iotest.HalfReader(bytes.NewReader(capture))},
		} {
			if lines > 1000 && r.name == "one byte at a time" {
				continue
			}
			got, err := ReadScreen(r.r)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%d lines, %s (-want +got):\n%s", lines, r.name, diff)
			}
		}
	}
}

func TestReadScreenSlidesPastTheByteBound(t *testing.T) {
	// Lines long enough that MaxTailLines of them exceed MaxTailBytes: the
	// tail is cut by bytes and its first, partial line dropped.
	line := strings.Repeat("y", 4000) + "\n"
	n := 3 * (MaxTailBytes + readChunk) / len(line)
	capture := strings.Repeat(line, n) + "end\n"
	s, err := ReadScreen(strings.NewReader(capture))
	if err != nil {
		t.Fatal(err)
	}
	if s.Total != n+1 {
		t.Errorf("Total = %d, want %d", s.Total, n+1)
	}
	last := s.Lines[len(s.Lines)-1]
	if last.Text != "end" || last.N != n+1 {
		t.Errorf("last line = %d %q, want %d \"end\"", last.N, last.Text, n+1)
	}
	for _, l := range s.Lines[:len(s.Lines)-1] {
		if len(l.Text) != 4000 {
			t.Fatalf("line %d holds %d bytes: a partial line was kept", l.N, len(l.Text))
		}
	}
}

func TestReadScreenError(t *testing.T) {
	if _, err := ReadScreen(iotest.ErrReader(io.ErrUnexpectedEOF)); err == nil {
		t.Error("a failing reader gave no error")
	}
	if _, err := ReadScreen(nil); err == nil {
		t.Error("a nil reader gave no error")
	}
}

func TestReadScreenSkipsToTheTailOfAFile(t *testing.T) {
	// Short lines fit the first small tail; longer ones make it grow, up
	// to MaxTailBytes, which holds fewer lines than are kept.
	for _, width := range []int{40, 100, 163, 400, 4000} {
		t.Run(strconv.Itoa(width), func(t *testing.T) {
			line := "⏺ " + strings.Repeat("x", width) + "\n"
			capture := strings.Repeat(line, 3*MaxTailBytes/len(line)) + "────\n❯\u00a0\n────\n"
			path := filepath.Join(t.TempDir(), "capture")
			if err := os.WriteFile(path, []byte(capture), 0o600); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			s, err := ReadScreen(f)
			if err != nil {
				t.Fatal(err)
			}
			streamed, err := ReadScreen(strings.NewReader(capture))
			if err != nil {
				t.Fatal(err)
			}
			if s.Total != 0 {
				t.Errorf("Total = %d, want 0: the skipped lines are not counted", s.Total)
			}
			// The same lines are kept, numbered from the first one kept.
			// With lines so long that MaxTailBytes holds fewer than
			// MaxTailLines, the stream's ring may hold a few more: the
			// file's are its last ones.
			want := texts(streamed)
			if got := len(s.Lines); got < len(want) {
				want = want[len(want)-got:]
			}
			if diff := cmp.Diff(want, texts(s)); diff != "" {
				t.Errorf("kept lines differ from a streamed read (-want +got):\n%s", diff)
			}
			if s.Lines[0].N != 1 {
				t.Errorf("first kept line numbered %d, want 1", s.Lines[0].N)
			}
		})
	}
}

// TestBacks: each line's stretches of background colour, as the capture's
// SGR sequences name them, in rune columns of its text; nil for a line
// drawn on the terminal's own background.
func TestBacks(t *testing.T) {
	for _, tt := range []struct {
		name, raw string
		want      []Back
	}{
		{"plain", "hello", nil},
		{"foreground only", "\x1b[38;5;8mgrey\x1b[0m text", nil},
		{"indexed", "ab\x1b[48;5;215m cd \x1b[49mef", []Back{{0, 2, ""}, {2, 6, "5;215"}, {6, 8, ""}}},
		{"true colour", "\x1b[48;2;10;20;30mxy\x1b[0mz", []Back{{0, 2, "2;10;20;30"}, {2, 3, ""}}},
		{"colon form", "\x1b[48:5:215mxy\x1b[mz", []Back{{0, 2, "5;215"}, {2, 3, ""}}},
		{"basic and bright", "\x1b[44ma\x1b[104mb\x1b[49mc", []Back{{0, 1, "44"}, {1, 2, "104"}, {2, 3, ""}}},
		{"reverse video", "a\x1b[7mb\x1b[27mc", []Back{{0, 1, ""}, {1, 2, "7:"}, {2, 3, ""}}},
		{"wide runes count one column each", "\x1b[48;5;1m┃△\x1b[0m x", []Back{{0, 2, "5;1"}, {2, 4, ""}}},
		{"trailing blanks trimmed", "a\x1b[48;5;3m   ", nil},
		{"a foreground after the background keeps it", "\x1b[48;5;3ma\x1b[38;5;1mb", []Back{{0, 2, "5;3"}}},
		{"a truncated sequence", "\x1b[48;5", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := ParseScreen([]byte(tt.raw + "\n"))
			if diff := cmp.Diff(tt.want, s.Lines[0].Backs); diff != "" {
				t.Errorf("%q (-want +got):\n%s", tt.raw, diff)
			}
		})
	}
	// A background set on one line colours the next, as a terminal does.
	s := ParseScreen([]byte("\x1b[48;5;4mone\ntwo\n"))
	if diff := cmp.Diff([]Back{{0, 3, "5;4"}}, s.Lines[1].Backs); diff != "" {
		t.Errorf("the next line (-want +got):\n%s", diff)
	}
}
