package poll

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/pollset"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/statedir/event"
)

// BenchmarkTick is one poll's work in the tick, on a working Claude Code
// screen with two probes, a poll a minute, the state directory growing as
// a watcher's does: what the loop pays on top of the binary's start.
func BenchmarkTick(b *testing.B) {
	pane, err := os.ReadFile(filepath.Join("..", "..", "golden", "panes", "adv-custom-statusline-working.pane"))
	if err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(b.TempDir(), "monitor-agent")
	set := pollset.Default("agent")
	r := Readings{Work: ProbeReading{Given: true, Output: "5"}, Progress: ProbeReading{Given: true, Output: "41"}}
	now := t0
	b.ResetTimer()
	for b.Loop() {
		now = now.Add(time.Minute)
		if _, err := Tick(Request{Dir: dir, Settings: set, Readings: r, Now: now}, strings.NewReader(string(pane))); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTickWritingHistory is a poll that writes history lines of its
// own each time (the progress figure rises: the budget is reset), after
// another writer appended one (as an action's outcome does): the tally
// goes on over both.
func BenchmarkTickWritingHistory(b *testing.B) {
	pane, err := os.ReadFile(filepath.Join("..", "..", "golden", "panes", "adv-custom-statusline-working.pane"))
	if err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(b.TempDir(), "monitor-agent")
	set := pollset.Default("agent")
	d := statedir.Dir(dir)
	now := t0
	progress := 40
	b.ResetTimer()
	for b.Loop() {
		now = now.Add(time.Minute)
		progress++
		r := Readings{Work: ProbeReading{Given: true, Output: "5"}, Progress: ProbeReading{Given: true, Output: strconv.Itoa(progress)}}
		if _, err := Tick(Request{Dir: dir, Settings: set, Readings: r, Now: now}, strings.NewReader(string(pane))); err != nil {
			b.Fatal(err)
		}
		if err := d.AppendHistory(now, "agent", []event.Event{{Name: event.AlertDelivered, State: "?", Fields: map[string]any{"alert": "x"}}}); err != nil {
			b.Fatal(err)
		}
	}
}
