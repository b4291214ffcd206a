package classify

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
)

// benchPane builds a realistic era D capture of n lines: a long session's
// scrollback, a spinner above the box, and the status bar.
func benchPane(n int) []byte {
	var b bytes.Buffer
	body := []string{
		"❯ run the tests and fix what fails",
		"",
		"⏺ I'll run the test suite first.",
		"",
		"⏺ Bash(go test ./... 2>&1 | tail -20)",
		"  ⎿  ok  \tgithub.com/example/project/internal/store\t0.412s",
		"     --- FAIL: TestReplay (0.00s)",
		"         replay_test.go:41: got 3 nudges, want 2",
		"",
		"⏺ The replay test expects two nudges; the budget resets on progress. Let me read it.",
		"",
	}
	tail := "\n✻ Crunching… (3m 0s · ↑ 6.6k tokens)\n  ⎿  Tip: Use /statusline to set up a custom status line\n\n" +
		strings.Repeat("─", 120) + "\n❯\u00a0\n" + strings.Repeat("─", 120) +
		"\n  ⏵⏵ accept edits on (shift+Tab to cycle) · 19 files +152 -56 · esc to interrupt\n"
	for i := 0; i < n-8; i++ {
		b.WriteString(body[i%len(body)])
		b.WriteByte('\n')
	}
	b.WriteString(tail)
	return b.Bytes()
}

func BenchmarkClassify(b *testing.B) {
	for _, n := range []int{200, 2000, 20000, 200000} {
		pane := benchPane(n)
		b.Run(fmt.Sprintf("lines=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(pane)))
			b.ReportAllocs()
			for b.Loop() {
				s, err := ReadScreen(bytes.NewReader(pane))
				if err != nil {
					b.Fatal(err)
				}
				if r := Classify(s, Options{}); r.State != Working {
					b.Fatalf("got %v", r.State)
				}
			}
		})
	}
}

// BenchmarkClassifyColours reads a capture taken with its colours
// (capture-pane -e) of an agent that paints nearly every cell's background:
// the cost of keeping each line's stretches of background colour.
func BenchmarkClassifyColours(b *testing.B) {
	pane, err := os.ReadFile("../golden/real-opencode/opencode-80-approval.e.pane")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(pane)))
	b.ReportAllocs()
	for b.Loop() {
		s, err := ReadScreen(bytes.NewReader(pane))
		if err != nil {
			b.Fatal(err)
		}
		if r := Classify(s, Options{}); r.State != Question {
			b.Fatalf("got %v", r.State)
		}
	}
}
