package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeBigCapture writes a capture of about 17 MB in 240k lines: a long
// session's scrollback with a live era D screen at the bottom.
func writeBigCapture(tb testing.TB, path string) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriter(f)
	body := []string{
		"⏺ Bash(go test ./... 2>&1 | tail -40)",
		"  ⎿  ok  \tgithub.com/example/project/internal/store\t0.412s   (cached)   some more words to widen it",
		"     --- FAIL: TestReplay (0.00s) replay_test.go:41: got 3 nudges, want 2 and then some explanation",
		"⏺ The replay test expects two nudges; the budget resets on progress, so I will read the state code.",
		"",
	}
	for i := 0; i < 240000-8; i++ {
		fmt.Fprintln(w, body[i%len(body)])
	}
	fmt.Fprint(w, "\n✻ Crunching… (3m 0s · ↑ 6.6k tokens)\n\n"+strings.Repeat("─", 120)+
		"\n❯\u00a0\n"+strings.Repeat("─", 120)+"\n  ⏵⏵ accept edits on (shift+tab to cycle) · esc to interrupt\n")
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	f.Close()
}

// BenchmarkClassifyProcessVsWC runs the classify command and wc -l as whole
// processes on the same 17 MB capture, alternating, and reports each one's
// time per run and their ratio (the bound is 1.5).
func BenchmarkClassifyProcessVsWC(b *testing.B) {
	wc, err := exec.LookPath("wc")
	if err != nil {
		b.Skip("no wc")
	}
	dir := b.TempDir()
	bin := filepath.Join(dir, "omega-monitor")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	capture := filepath.Join(dir, "capture.txt")
	writeBigCapture(b, capture)
	runOnce := func(name string, args ...string) time.Duration {
		in, err := os.Open(capture)
		if err != nil {
			b.Fatal(err)
		}
		defer in.Close()
		cmd := exec.Command(name, args...)
		cmd.Stdin = in
		start := time.Now()
		out, err := cmd.Output()
		d := time.Since(start)
		if err != nil {
			b.Fatalf("%s: %v", name, err)
		}
		if name == bin && strings.TrimSpace(string(out)) != "WORKING" {
			b.Fatalf("classify said %q", out)
		}
		return d
	}
	runOnce(bin, "classify") // warm the page cache and the binary
	runOnce(wc, "-l")
	var tc, tw time.Duration
	b.ResetTimer()
	for b.Loop() {
		tw += runOnce(wc, "-l")
		tc += runOnce(bin, "classify")
	}
	n := float64(b.N)
	b.ReportMetric(float64(tc.Microseconds())/n, "classify-µs/run")
	b.ReportMetric(float64(tw.Microseconds())/n, "wc-l-µs/run")
	b.ReportMetric(float64(tc)/float64(tw), "ratio")
}
