package classify

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/omega-monitor/omega-monitor/probe"
)

func FuzzNormalise(f *testing.F) {
	for _, s := range []string{
		"", "\n", "a\r\nb", "❯\u00a0\n", "\x1b[2mdim\x1b[22m\n", "\x1b]8;;x\x1b\\y\n",
		"a\x00b\xffc\n", "\x1b[38;5;2;2mq\n", "\x1b", "\x1b[", "\x1b]", strings.Repeat("─", 300),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, capture []byte) {
		s := ParseScreen(capture)
		again := ParseScreen(capture)
		if diff := cmp.Diff(s, again); diff != "" {
			t.Fatalf("same input, different screens:\n%s", diff)
		}
		streamed, err := ReadScreen(bytes.NewReader(capture))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(s, streamed); diff != "" {
			t.Fatalf("ReadScreen differs from ParseScreen (-parse +read):\n%s", diff)
		}
		if len(s.Lines) > s.Total {
			t.Fatalf("%d lines kept of %d", len(s.Lines), s.Total)
		}
		for _, l := range s.Lines {
			if !utf8.ValidString(l.Text) || !utf8.ValidString(l.Loud) {
				t.Fatalf("line %d is not valid UTF-8: %q", l.N, l.Text)
			}
			for _, r := range l.Text {
				if r < 0x20 || r == 0x7f || r == '\u00a0' {
					t.Fatalf("line %d keeps control or no-break space %U: %q", l.N, r, l.Text)
				}
			}
			if utf8.RuneCountInString(l.Loud) > utf8.RuneCountInString(l.Text) {
				t.Fatalf("Loud %q is longer than Text %q", l.Loud, l.Text)
			}
		}
	})
}

func FuzzClassify(f *testing.F) {
	for _, s := range []string{
		"────\n❯\u00a0\n────\n",
		"✻ Crunching… (3s)\n\n────\n❯ x\n────\n  esc to interrupt\n",
		"❯ 1. Yes\n  2. No\n\nEsc to cancel\n",
		"Enter to select · ↑/↓ to navigate · Esc to cancel\n",
		"╭──╮\n│ > │\n╰──╯\n",
		"› Ask Codex to do anything\n",
	} {
		f.Add([]byte(s), "7", true)
	}
	f.Fuzz(func(t *testing.T, capture []byte, work string, present bool) {
		opt := Options{Work: WorkReading(probe.Read(work, present)), WorkPresent: present}
		r := Classify(ParseScreen(capture), opt)
		again := Classify(ParseScreen(capture), opt)
		if diff := cmp.Diff(r, again); diff != "" {
			t.Fatalf("same input, different results:\n%s", diff)
		}
		if r.State < Working || r.State > Blocked {
			t.Fatalf("state %v is not one of the four", r.State)
		}
		if r.Hold != HoldNone && (r.State == Working || r.State == Question) {
			t.Fatalf("%v with hold %q: holds belong to stopped screens", r.State, r.Hold)
		}
		if r.Rule == "" || r.Explain() == "" {
			t.Fatal("a verdict without a rule or an explanation")
		}
	})
}

// FuzzDescribed holds a description's pattern, whether a literal line
// matches it by hand or its expression is compiled, to the expression.
func FuzzDescribed(f *testing.F) {
	for _, expr := range []string{`^(?:a|b\.c)$`, `^(?:a|b\.c)x$`, `^ *Tip: `, `^ *\(x`, `^a|b$`, `^(?:a)|(b)$`, `^Try "[^"]*"$`, ruleLine} {
		for _, s := range []string{"a", "b.c", "bxc", "  Tip: x", "(x", "Try \"x\"", "───"} {
			f.Add(expr, s)
		}
	}
	f.Fuzz(func(t *testing.T, expr, line string) {
		x, err := regexp.Compile(expr)
		if err != nil {
			return
		}
		if got, want := described(expr).MatchString(line), x.MatchString(line); got != want {
			t.Fatalf("%q on %q: %v, the expression says %v", expr, line, got, want)
		}
	})
}
