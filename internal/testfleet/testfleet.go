// Package testfleet writes watchers' state directories as running watchers
// leave them (state.json, target, loop.json, history.jsonl, monitor.log),
// for the tests of what reads them: the MCP server, the task mirror, /monitor
// in Claude Code. It is for tests only, and it is not the board: it writes
// files, and the code under test reads them.
package testfleet

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/board"
	"github.com/omega-monitor/omega-monitor/internal/proc"
)

// A Watcher is one watcher's state directory as a test writes it.
type Watcher struct {
	Name, Target, State string
	Work, Progress      string
	Used, Limit         int
	// PID is the loop's pid: 0 for this test process (alive, with its real
	// start token), -1 for no loop.json, else a pid recorded with a token
	// that cannot match.
	PID     int
	History []string // lines of history.jsonl, or nil for none
	Log     []string // lines of monitor.log, or nil for none
}

// Write writes the state directories of ws under a new home and returns
// the home. Their last poll was 30 seconds before now.
func Write(t testing.TB, now time.Time, ws ...Watcher) string {
	t.Helper()
	home := t.TempDir()
	for _, w := range ws {
		dir := filepath.Join(home, w.Name)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		st := map[string]any{"version": 1, "polls": 3, "last": w.State, "state": w.State,
			"last_poll": now.Add(-30 * time.Second).UTC().Format(time.RFC3339),
			"work":      w.Work, "progress": w.Progress, "transition": "✻ Baked for 3s",
			"last_explain":    "rule stalled: the prompt box is idle and work remains",
			"last_transition": map[string]any{"at": "2026-11-30T11:58:00Z", "from": "WORKING", "to": w.State, "line": "✻ Baked for 3s"},
			"budget":          map[string]any{"limit": w.Limit, "used": w.Used}}
		write := func(name string, v any) {
			var b []byte
			switch v := v.(type) {
			case string:
				b = []byte(v)
			default:
				b, _ = json.Marshal(v)
			}
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		write("state.json", st)
		write("target", w.Target+"\n")
		switch {
		case w.PID == 0:
			// An hour's interval: the watcher stays live however long a
			// loaded machine takes to reach the census.
			write("loop.json", map[string]any{"pid": os.Getpid(), "start_token": startToken(t, os.Getpid()),
				"interval_s": 3600, "target": w.Target, "watcher": w.Name})
		case w.PID > 0:
			write("loop.json", map[string]any{"pid": w.PID, "start_token": "1", "interval_s": 60,
				"target": w.Target, "watcher": w.Name})
		}
		if w.History != nil {
			write("history.jsonl", strings.Join(w.History, "\n")+"\n")
		}
		if w.Log != nil {
			write("monitor.log", strings.Join(w.Log, "\n")+"\n")
		}
	}
	return home
}

// startToken returns the start token the board reads for pid.
func startToken(t testing.TB, pid int) string {
	t.Helper()
	token, running := proc.StartToken(pid)
	if !running {
		t.Fatalf("testfleet: no process %d runs", pid)
	}
	return token
}

// Now is the clock the fixed fleet's history is written against: a tool
// that reads the last days of history is run with it.
var Now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// HistoryLine is a history event of the watcher of proj, ago before Now.
func HistoryLine(ago time.Duration, event, state string) string {
	return fmt.Sprintf(`{"ts":%q,"target":"proj","event":%q,"state":%q}`, Now.Add(-ago).Format(time.RFC3339), event, state)
}

// Home writes the fixed fleet of three watchers and returns its home:
// monitor-proj (live, STALLED, one nudge of five, with history over three
// days, one line of it torn, and a log), monitor-box-api (live, QUESTION)
// and monitor-old (gone: no loop.json).
func Home(t testing.TB) string {
	return Write(t, time.Now(),
		Watcher{Name: "monitor-proj", Target: "proj", State: "STALLED", Work: "7", Progress: "41", Used: 1, Limit: 5,
			History: []string{
				HistoryLine(50*time.Hour, "state", "WORKING"),
				HistoryLine(3*time.Hour, "nudge", "STALLED"),
				`{"ts":"torn`,
				HistoryLine(time.Hour, "state", "STALLED"),
			},
			Log: []string{"MONITOR · proj · WORKING · work=7", "MONITOR · proj · STALLED · work=7 · nudged (1/5)", "MONITOR · proj · STALLED · work=7 · nudged (1/5)"}},
		Watcher{Name: "monitor-box-api", Target: "box:api", State: "QUESTION", Work: "3", Progress: "2", Limit: 5},
		Watcher{Name: "monitor-old", Target: "old", State: "WORKING", Limit: 5, PID: -1},
	)
}

// HomeLines are the fixed fleet's watchers as Lines gives them.
var HomeLines = []string{
	"monitor-box-api box:api live QUESTION work=3 progress=2 nudges 0/5",
	"monitor-old old gone WORKING work= progress= nudges 0/5",
	"monitor-proj proj live STALLED work=7 progress=41 nudges 1/5",
}

// Lines returns one line a watcher of a census: what the mirror and an
// agent read of it.
func Lines(f board.Fleet) []string {
	var out []string
	for _, w := range f.Watchers {
		out = append(out, fmt.Sprintf("%s %s %s %s work=%s progress=%s nudges %d/%d",
			w.Name, w.Target, w.Liveness, w.State, w.Work, w.Progress, w.Nudges.Used, w.Nudges.Limit))
	}
	return out
}
