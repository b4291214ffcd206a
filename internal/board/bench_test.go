package board

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// benchFleet writes n watchers, each with a 10,000-line history inside the
// sparkline's window (the worst case of the read from the end) and a 1 MB
// log, all live (this process is their loop).
func benchFleet(b *testing.B, n int) string {
	b.Helper()
	root := b.TempDir()
	now := time.Now()
	token, _ := SystemProcs{}.StartToken(os.Getpid())
	var h strings.Builder
	for i := range 10000 {
		at := now.Add(-47*time.Hour + time.Duration(i)*47*time.Hour/10000)
		name := []string{"budget_reset", "nudge", "state", "state", "state"}[i%5]
		fmt.Fprintf(&h, `{"event":%q,"from":41,"state":"WORKING","target":"agent","to":42,"ts":%q}`+"\n", name, at.UTC().Format(time.RFC3339))
	}
	line := "2026-11-30T13:00:00Z MONITOR · host:agent · WORKING · work=7 · progress=41 · nudges 0/5 · 13:00:00\n"
	log := strings.Repeat(line, (1<<20)/len(line))
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("monitor-agent%d", i))
		os.Mkdir(dir, 0o700)
		files := map[string]string{
			"history.jsonl": h.String(),
			"monitor.log":   log,
			"loop.json":     loopJSON(os.Getpid(), token, now.Add(-48*time.Hour), 60, fmt.Sprintf("agent%d", i)),
			"state.json":    stateJSON("WORKING", now.Add(-time.Hour), now, `,"agent":"claude","work":"7","progress":"41"`),
			"diff.json":     fmt.Sprintf(`{"added":120,"removed":7,"at":%q,"dir":"/src","base":"origin/HEAD"}`, now.Format(time.RFC3339)),
		}
		for f, c := range files {
			if err := os.WriteFile(filepath.Join(dir, f), []byte(c), 0o600); err != nil {
				b.Fatal(err)
			}
		}
	}
	return root
}

// BenchmarkCensus200 is status over 200 such watchers: Cold reads every
// history from its end and counts every log (watchers without a tally);
// Warm has the cursors of a previous census and reads what was appended
// (here nothing); Tallied has no cursors but the tally each state keeps;
// Brief is the tmux segment's census. scripts/bench-board.sh times the
// whole command.
func BenchmarkCensus200(b *testing.B) {
	root := benchFleet(b, 200)
	b.Run("Cold", func(b *testing.B) {
		for b.Loop() {
			Census(root, time.Now(), Options{Cursors: &Cursors{}})
		}
	})
	b.Run("Warm", func(b *testing.B) {
		c := &Cursors{}
		Census(root, time.Now(), Options{Cursors: c})
		for b.Loop() {
			Census(root, time.Now(), Options{Cursors: c})
		}
	})
	b.Run("Tallied", func(b *testing.B) {
		entries, _ := os.ReadDir(root)
		for _, e := range entries {
			dir := filepath.Join(root, e.Name())
			tally := NextTally(dir, time.Now(), nil)
			state := stateJSON("WORKING", time.Now().Add(-time.Hour), time.Now(), `,"agent":"claude","work":"7","progress":"41","tally":`+string(tally))
			os.WriteFile(filepath.Join(dir, "state.json"), []byte(state), 0o600)
		}
		b.ResetTimer()
		for b.Loop() {
			Census(root, time.Now(), Options{Cursors: &Cursors{}})
		}
	})
	b.Run("Brief", func(b *testing.B) {
		for b.Loop() {
			Census(root, time.Now(), Options{Brief: true})
		}
	})
}

// BenchmarkNextTally is what the tally costs a tick at fleet size (one
// watcher of benchFleet): Steady goes on from the last poll's tally, one
// line appended since; First has none (the first poll after an upgrade or
// a sweep) and reads the history from its end and the log whole.
func BenchmarkNextTally(b *testing.B) {
	dir := filepath.Join(benchFleet(b, 1), "monitor-agent0")
	line := historyLine(time.Now(), "nudge")
	b.Run("Steady", func(b *testing.B) {
		prev := NextTally(dir, time.Now(), nil)
		for b.Loop() {
			f, _ := os.OpenFile(filepath.Join(dir, historyFile), os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString(line)
			f.Close()
			prev = NextTally(dir, time.Now(), prev)
		}
	})
	b.Run("First", func(b *testing.B) {
		for b.Loop() {
			NextTally(dir, time.Now(), nil)
		}
	})
}
