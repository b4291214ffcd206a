package ledger

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchLedger writes a ledger file of n realistic records and returns its path.
func benchLedger(b *testing.B, n int) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "ledger")
	data := Sentinel + "\n" + strings.Join(benchNudges(n), "\n") + "\n"
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkLoad reads a full ledger and builds its Matcher, as a fresh
// process does once per tick.
func BenchmarkLoad(b *testing.B) {
	path := benchLedger(b, DefaultMax)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(path); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRecord adds one record to a full ledger: lock, read, rewrite,
// fsync, rename.
func BenchmarkRecord(b *testing.B) {
	path := benchLedger(b, DefaultMax)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := Record(path, fmt.Sprintf("continue with step %d of the plan", i)); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkMaskLines masks a 2000-line pane of realistic lines, 80 to 200
// columns, with ledgers of 0, 1 and 2000 records; every 50th line echoes a
// record. The cost must not grow with the ledger.
func BenchmarkMaskLines(b *testing.B) {
	recs := benchNudges(DefaultMax)
	pane := benchPane(b, 2000, recs)
	var bytes int64
	for _, l := range pane {
		bytes += int64(len(l))
	}
	for _, n := range []int{0, 1, DefaultMax} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			m := NewMatcher(recs[:n]...)
			b.SetBytes(bytes)
			b.ReportAllocs()
			for b.Loop() {
				m.MaskLines(pane)
			}
		})
	}
}

// BenchmarkMask masks one line with a 2000-record ledger: an unrelated line,
// and one that holds an echo.
func BenchmarkMask(b *testing.B) {
	recs := benchNudges(DefaultMax)
	m := NewMatcher(recs...)
	for _, bc := range []struct{ name, line string }{
		{"unrelated", "  ⏵⏵ bypass permissions on (shift+tab to cycle) · esc to interrupt · ctrl+t to hide tasks · 19 files +152 -56 · ← 2 agents"},
		{"echo", "❯ " + recs[1234] + " · esc to interrupt · ctrl+t to hide tasks · 19 files +152 -56"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.line)))
			b.ReportAllocs()
			for b.Loop() {
				m.Mask(bc.line)
			}
		})
	}
}
