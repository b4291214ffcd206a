package ledger

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestNormalize(t *testing.T) {
	for _, tt := range []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"plain", "continue with the next step", "continue with the next step"},
		{"trim", "  go on\t", "go on"},
		{"collapse", "go \t\t on", "go on"},
		{"nbsp", "❯\u00a0continue", "❯ continue"},
		{"newlines", "one\r\ntwo\nthree", "one two three"},
		{"controls", "a\x00b\x1fc\x7fd\u0085e", "a b c d e"},
		{"noncharacters", "a\ufffeb\uffffc", "a b c"},
		{"ideographic space", "日本\u3000語", "日本 語"},
		{"invalid utf8", "a\xffb", "a\ufffdb"},
		{"only spaces", " \t\u00a0 ", ""},
		{"emoji", "ship it 🚀  now", "ship it 🚀 now"},
		{"sentinel", Sentinel, "omega-monitor echo ledger"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := normalize(tt.in)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("normalize(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
			if !isNormal(got) {
				t.Errorf("isNormal(%q) = false, want true", got)
			}
			if isNormal(tt.in) != (tt.in == got) {
				t.Errorf("isNormal(%q) = %v, want %v", tt.in, isNormal(tt.in), tt.in == got)
			}
		})
	}
}

func TestRecords(t *testing.T) {
	long := strings.Repeat("abcdefghi ", 300) // 3000 runes, one line
	for _, tt := range []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", nil},
		{"blank lines", "\n \r\n\t\n", nil},
		{"one", "  continue  ", []string{"continue"}},
		{"lines", "first line\r\n\n  second   line \rthird", []string{"first line", "second line", "third"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, records(tt.in)); diff != "" {
				t.Errorf("records(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}

	t.Run("long", func(t *testing.T) {
		recs := records(long)
		if len(recs) < 3 {
			t.Fatalf("records of a 3000-rune line: %d pieces, want 3 or more", len(recs))
		}
		for _, r := range recs {
			if n := utf8.RuneCountInString(r); n > maxRecord || !isNormal(r) {
				t.Errorf("piece of %d runes, normal %v", n, isNormal(r))
			}
		}
		// Every slice of the line is whole in some piece.
		line := normalize(long)
		if got := NewMatcher(long).Mask(line); got != "" {
			t.Errorf("Mask of the long line left %q", got)
		}
		if got, want := naiveMask(recs, line), ""; got != want {
			t.Errorf("naiveMask of the long line left %q", got)
		}
	})
}

func TestMask(t *testing.T) {
	m := NewMatcher(
		"continue with the next step",
		"keep going until the queue is empty",
		"short one", // shorter than SliceLen: never masks
		"日本語のテキストを表示します",
		"deploy 🚀 when the tests are green ✅",
	)
	for _, tt := range []struct {
		name, line, want string
	}{
		{"empty", "", ""},
		{"unrelated", "✻ Crunching… (esc to interrupt · 3m 0s)", "✻ Crunching… (esc to interrupt · 3m 0s)"},
		{"whole", "continue with the next step", ""},
		{"prompt prefix", "❯ continue with the next step", "❯ "},
		{"nbsp after prompt", "❯\u00a0continue with the next step", "❯\u00a0"},
		{"box", "│ > keep going until the queue is empty      │", "│ >       │"},
		{"continuation indent", "  the queue is empty", "  "},
		{"bash call", `⏺ Bash(omega send w "continue with the next step")`, `⏺ Bash(omega send w "")`},
		{"fragment at both ends", "ue with the next step · esc to interrupt", " · esc to interrupt"},
		{"between unrelated", "Enter to select keep going until the queue is empty to navigate",
			"Enter to select  to navigate"},
		{"wrapped fragment", "keep going unt", ""},
		{"fragment shorter than a slice", "keep going", "keep going"},
		{"short record", "short one", "short one"},
		{"collapsed whitespace", "continue  with\tthe\u00a0next   step", ""},
		{"case differs", "Continue With The Next Step", "Continue With The Next Step"},
		{"two echoes", "continue with the next step | keep going until the queue", " | "},
		{"cjk", "出力: 日本語のテキストを表示します。", "出力: 。"},
		{"emoji", "› deploy 🚀 when the tests are green ✅ (y/n)", "›  (y/n)"},
		{"invalid utf8 kept", "\xff\xfe continue with the next step \xff", "\xff\xfe  \xff"},
		{"nul kept", "\x00continue with the next step\x00", "\x00\x00"},
		{"almost", "continue with the next stop", "continue with the next stop"},
		{"wrapped inside a word", "❯ continue with the next ste", "❯ "},
		{"whole record inside prose", "We will continue with the next step", "We will "},
		{"phrase after a prompt", "❯ We will continue with the next step", "❯ We will "},
		{"record's middle inside prose", "Now keep going until the queue drains.", "Now keep going until the queue drains."},
		{"record's end inside prose", "Do it until the queue is empty, then stop.", "Do it until the queue is empty, then stop."},
		{"record's end after an indent", "   until the queue is empty, then stop.", "   , then stop."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := m.Mask(tt.line)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Mask(%q) mismatch (-want +got):\n%s", tt.line, diff)
			}
		})
	}
}

func TestMaskNil(t *testing.T) {
	lines := []string{"continue with the next step", "", "\xff"}
	for _, m := range []*Matcher{nil, NewMatcher(), NewMatcher("", "short")} {
		for _, l := range lines {
			if got := m.Mask(l); got != l {
				t.Errorf("Mask(%q) = %q with an empty matcher, want it unchanged", l, got)
			}
		}
		if diff := cmp.Diff(lines, m.MaskLines(lines)); diff != "" {
			t.Errorf("MaskLines mismatch (-want +got):\n%s", diff)
		}
	}
	if got := (*Matcher)(nil).Len(); got != 0 {
		t.Errorf("nil Len() = %d, want 0", got)
	}
}

func TestLen(t *testing.T) {
	for _, tt := range []struct {
		texts []string
		want  int
	}{
		{nil, 0},
		{[]string{""}, 0},
		{[]string{"go on"}, 1},
		{[]string{"go on", "go  on", "continue with the next step"}, 2},
		{[]string{"line one\nline two\n\n"}, 2},
	} {
		if got := NewMatcher(tt.texts...).Len(); got != tt.want {
			t.Errorf("NewMatcher(%q).Len() = %d, want %d", tt.texts, got, tt.want)
		}
	}
}

func TestMaskLines(t *testing.T) {
	m := NewMatcher("keep going until the queue is empty")
	in := []string{"✻ Baking… (4s)", "❯ keep going until the queue", "  is empty", "done"}
	want := []string{"✻ Baking… (4s)", "❯ ", "  is empty", "done"}
	got := m.MaskLines(in)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("MaskLines mismatch (-want +got):\n%s", diff)
	}
	if in[1] != "❯ keep going until the queue" {
		t.Errorf("MaskLines changed its input")
	}
}

// A frame is how an agent's screen draws a text that was typed into it.
type frame struct {
	name        string
	first, cont string // prefix of the first line and of the others
	suffix      string // drawn after the text, after padding to the width
}

var frames = []frame{
	{"plain", "", "", ""},
	{"prompt", "❯ ", "  ", ""},
	{"era A box", "│ > ", "│   ", " │"},
	{"quote", "> ", "> ", ""},
	{"bash", "⏺ Bash(", "     ", ""},
	{"tool result", "  ⎿  ", "     ", ""},
}

// wrapTexts are texts the watcher might send, long and short.
var wrapTexts = append([]string{
	`q=$(grep -cE 'Enter to select.*to navigate' "panes/$s.txt")`,
	"The queue still holds 12 steps. Continue with the next one, run its tests, and if they are RED. fix them before you move on; do not stop to ask for confirmation between steps.",
	"日本語のテキストを表示します。次のステップに進んでください。",
	"ship it 🚀 when everything is ✅ and the pipeline is green again",
}, nudges...)

// TestMaskWrapped types each text into a pane of every width from 20 to 300
// columns, wrapped hard (by runes) and by words, in every frame, and checks
// that each line either loses exactly its fragment of the text or, only when
// the fragment is shorter than a slice, nothing.
func TestMaskWrapped(t *testing.T) {
	m := NewMatcher(wrapTexts...)
	wraps := []struct {
		name string
		wrap func(string, int) []string
	}{{"hard", hardWrap}, {"word", wordWrap}}
	var lines, masked, kept int
	for _, text := range wrapTexts {
		text = normalize(text)
		for _, f := range frames {
			for _, w := range wraps {
				for width := 20; width <= 300; width++ {
					inner := width - max(utf8.RuneCountInString(f.first), utf8.RuneCountInString(f.cont)) -
						utf8.RuneCountInString(f.suffix)
					for i, frag := range w.wrap(text, inner) {
						prefix := f.cont
						if i == 0 {
							prefix = f.first
						}
						pad := ""
						if f.suffix != "" {
							pad = strings.Repeat(" ", inner-utf8.RuneCountInString(frag))
						}
						line := prefix + frag + pad + f.suffix
						got := m.Mask(line)
						lines++
						if got == line {
							kept++
							if utf8.RuneCountInString(normalize(frag)) >= SliceLen {
								t.Errorf("%s wrap at %d, %s frame: Mask(%q) masked nothing", w.name, width, f.name, line)
							}
							continue
						}
						// Masked: the fragment is gone, and only the fragment.
						// (A fragment one or two runes short of a slice is
						// masked when the space beside it was ours too.)
						masked++
						if want := normalize(prefix + f.suffix); normalize(got) != want {
							t.Errorf("%s wrap at %d, %s frame: Mask(%q) = %q, want only %q left", w.name, width, f.name, line, got, want)
						}
					}
				}
			}
		}
	}
	t.Logf("%d pane lines: %d fragments masked, %d shorter than a slice kept", lines, masked, kept)
}

// TestMaskSelfEcho is the seed's hardest case: our own command text, with
// both question markers on one line, echoed into a pane at any width, never
// leaves the two markers together on a line.
func TestMaskSelfEcho(t *testing.T) {
	cmd := `q=$(grep -cE 'Enter to select.*to navigate' "panes/$s.txt")`
	m := NewMatcher(cmd)
	for width := 20; width <= 300; width++ {
		for _, f := range frames {
			for i, frag := range hardWrap(cmd, width-6) {
				prefix := f.cont
				if i == 0 {
					prefix = f.first
				}
				got := m.Mask(prefix + frag + f.suffix)
				if strings.Contains(got, "Enter to select") || strings.Contains(got, "to navigate") {
					t.Errorf("width %d, %s frame: a marker survived: %q", width, f.name, got)
				}
			}
		}
	}
	// The real question footer, with that command in the ledger, is untouched.
	footer := "Enter to select · ↑/↓ to navigate · Esc to cancel"
	if got := m.Mask(footer); got != footer {
		t.Errorf("Mask(%q) = %q, want it unchanged", footer, got)
	}
}

// TestMaskKeepsUnrelated checks that a ledger of ordinary nudges takes
// nothing from a few hundred lines of agents' screens.
func TestMaskKeepsUnrelated(t *testing.T) {
	lines := screenLines(t)
	if len(lines) < 300 {
		t.Fatalf("only %d screen lines; the corpus is meant to hold a few hundred", len(lines))
	}
	m := NewMatcher(nudges...)
	if diff := cmp.Diff(lines, m.MaskLines(lines)); diff != "" {
		t.Errorf("MaskLines took text from unrelated lines (-want +got):\n%s", diff)
	}
	// The same lines with an echo between them keep everything but the echo.
	for _, l := range lines {
		line := l + " ❯ " + nudges[0] + " " + l
		if got, want := m.Mask(line), l+" ❯  "+l; got != want {
			t.Errorf("Mask(%q) = %q, want %q", line, got, want)
		}
	}
}

// TestMaskAgainstNaive compares Mask with the definition, run the slow way.
func TestMaskAgainstNaive(t *testing.T) {
	texts := append(append([]string{}, wrapTexts...), benchNudges(60)...)
	var recs []string
	for _, tx := range texts {
		recs = append(recs, records(tx)...)
	}
	m := NewMatcher(texts...)
	lines := append(screenLines(t), benchPane(t, 200, texts)...)
	for i, tx := range texts {
		lines = append(lines, tx, "x"+tx+"y", fmt.Sprintf("%d %s %s", i, tx, texts[(i+1)%len(texts)]))
	}
	for _, l := range lines {
		if got, want := m.Mask(l), naiveMask(recs, l); got != want {
			t.Errorf("Mask(%q) = %q, naive %q", l, got, want)
		}
	}
}

func TestMaskLongLine(t *testing.T) {
	m := NewMatcher(nudges...)
	line := strings.Repeat("unrelated text, ", 1<<16) + nudges[1] + strings.Repeat("\x00\xff日本", 1<<14)
	want := strings.Repeat("unrelated text, ", 1<<16) + strings.Repeat("\x00\xff日本", 1<<14)
	if got := m.Mask(line); got != want {
		t.Errorf("Mask of a %d-byte line: got %d bytes, want %d", len(line), len(got), len(want))
	}
}

// TestMaskAfterGrowth: records that share no slice fill the table past its
// first size, so it grows; after that and after two more doublings, Mask
// still agrees with the definition.
func TestMaskAfterGrowth(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	word := func() string {
		b := make([]rune, 3+r.IntN(8))
		for i := range b {
			b[i] = rune('a' + r.IntN(26))
		}
		return string(b)
	}
	var texts, recs []string
	for range 150 {
		var ws []string
		for range 4 + r.IntN(8) {
			ws = append(ws, word())
		}
		texts = append(texts, strings.Join(ws, " "))
		recs = append(recs, records(texts[len(texts)-1])...)
	}
	windows := 0
	for _, rec := range recs {
		if n := utf8.RuneCountInString(rec); n >= SliceLen {
			windows += n - SliceLen + 1
		}
	}
	m := NewMatcher(texts...)
	first := 16
	for 3*first < windows {
		first <<= 1
	}
	if len(m.slots) < 2*first {
		t.Fatalf("table of %d slots for %d slices: want it grown from %d", len(m.slots), windows, first)
	}
	if 4*m.used >= 3*len(m.slots) {
		t.Errorf("%d of %d slots used after growing", m.used, len(m.slots))
	}
	lines := []string{"unrelated text that no record holds at all", ""}
	for i, tx := range texts {
		lines = append(lines, tx, "x"+tx+"y", "❯ "+tx, tx+" "+texts[(i+1)%len(texts)], word()+" "+tx[3:])
	}
	for grown := range 3 {
		for _, l := range lines {
			if got, want := m.Mask(l), naiveMask(recs, l); got != want {
				t.Fatalf("after %d more doublings: Mask(%q) = %q, naive %q", grown, l, got, want)
			}
		}
		m.grow()
	}
}
