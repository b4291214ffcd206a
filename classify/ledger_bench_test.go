package classify_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/ledger"
)

// BenchmarkClassifyWithLedger classifies a 2000-line pane without a ledger
// and with one of 2000 recorded nudges: the ledger masks only the regions
// the rules read, so its cost must not multiply with its size (the bound is
// 1.5 times the time without one).
func BenchmarkClassifyWithLedger(b *testing.B) {
	var pane bytes.Buffer
	for i := range 2000 - 8 {
		fmt.Fprintf(&pane, "⏺ step %d: ran the tests for package number %d and read their output carefully\n", i, i%97)
	}
	pane.WriteString("\n✻ Crunching… (3m 0s · ↑ 6.6k tokens)\n\n" + strings.Repeat("─", 120) +
		"\n❯\u00a0\n" + strings.Repeat("─", 120) + "\n  ⏵⏵ accept edits on (shift+tab to cycle) · esc to interrupt\n")
	texts := make([]string, 2000)
	for i := range texts {
		texts[i] = fmt.Sprintf("continue with step %d of the build; say what blocks you if anything does (nudge %d)", i, i*7)
	}
	for _, c := range []struct {
		name   string
		ledger classify.Masker
	}{
		{"ledger=none", nil},
		{"ledger=2000", ledger.NewMatcher(texts...)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s, err := classify.ReadScreen(bytes.NewReader(pane.Bytes()))
				if err != nil {
					b.Fatal(err)
				}
				if r := classify.Classify(s, classify.Options{Ledger: c.ledger}); r.State != classify.Working {
					b.Fatalf("got %v", r.State)
				}
			}
		})
	}
}
