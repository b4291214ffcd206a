package board

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// tallyJSON counts dir as a tick would at, going on from prev, and returns
// the tally as kept in the state.
func tallyJSON(t *testing.T, dir string, at time.Time, prev json.RawMessage) json.RawMessage {
	t.Helper()
	var p *Tally
	if len(prev) > 0 {
		p = &Tally{}
		if err := json.Unmarshal(prev, p); err != nil {
			t.Fatal(err)
		}
	}
	tally, err := ReadTally(dir, at, p)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(tally)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// writeState writes a watcher's state.json, with the tally when there is
// one.
func writeState(t *testing.T, dir string, tally json.RawMessage) {
	t.Helper()
	extra := ""
	if tally != nil {
		extra = `,"tally":` + string(tally)
	}
	state := stateJSON("WORKING", now.Add(-time.Hour), now, extra)
	if err := os.WriteFile(filepath.Join(dir, "state.json"), []byte(state), 0o600); err != nil {
		t.Fatal(err)
	}
}

// counted is what a census counted of one watcher's history and log.
type counted struct {
	State     string
	Sparkline Sparkline
	Activity  Activity
	Log       LogCount
	Errors    []Error
}

func countedBy(t *testing.T, root string, at time.Time, cur *Cursors) counted {
	t.Helper()
	f, err := Census(root, at, Options{Procs: procs{}, Cursors: cur})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Watchers) != 1 {
		t.Fatalf("%d watchers, errors %v", len(f.Watchers), f.Errors)
	}
	w := f.Watchers[0]
	return counted{w.State, f.Fleet.Sparkline, w.Activity, w.Log, f.Errors}
}

// A census that goes on from the tally the ticks kept counts exactly what
// it counts reading the history from its end and the log whole: over
// histories written by ticks and by other writers between them, with
// advances on hour boundaries, events more than 48 hours old, lines that
// cannot be read, torn lines completed later, a log rotated, and a census
// clock later than the last tally.
func TestTallyAgreesWithTheReadFromTheEnd(t *testing.T) {
	names := []string{"budget_reset", "budget_reset", "nudge", "escalate", "failure", "disagreement", "state", "ack"}
	for seed := range uint64(40) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 13))
			root := t.TempDir()
			dir := writeDir(t, root, "monitor-a", map[string]string{"history.jsonl": "", "monitor.log": ""})
			history, log := filepath.Join(dir, "history.jsonl"), filepath.Join(dir, "monitor.log")
			var tally json.RawMessage
			var torn string // the rest of a line written in two parts
			midCursors := &Cursors{}
			at := now.Add(-60 * time.Hour)
			end := now.Add(-time.Duration(rng.IntN(90)) * time.Minute)
			for at.Before(end) {
				at = at.Add(time.Duration(1+rng.IntN(120)) * time.Minute)
				// Other writers (ack, deliver), in time order within an
				// hour: a line a little late, one on an hour boundary, a
				// line that cannot be read, one torn by a write in progress.
				var others strings.Builder
				others.WriteString(torn)
				torn = ""
				for range rng.IntN(3) {
					late := time.Duration(rng.IntN(59)) * time.Minute
					others.WriteString(historyLine(at.Add(-late), names[rng.IntN(len(names))]))
				}
				switch rng.IntN(8) {
				case 0:
					hour := at.Truncate(time.Hour)
					others.WriteString(historyLine(hour.Add(-time.Second), "budget_reset") + historyLine(hour, "budget_reset"))
				case 1:
					others.WriteString("{not json\n")
				case 2:
					line := historyLine(at, "budget_reset")
					cut := 1 + rng.IntN(len(line)-2)
					others.WriteString(line[:cut])
					torn = line[cut:]
				}
				appendFile(t, history, others.String())
				// The tick: the tally first, then its own lines.
				tally = tallyJSON(t, dir, at, tally)
				var own strings.Builder
				for range rng.IntN(3) {
					own.WriteString(historyLine(at, names[rng.IntN(len(names))]))
				}
				appendFile(t, history, own.String())
				if rng.IntN(40) == 0 {
					if err := os.Rename(log, log+".1"); err != nil {
						t.Fatal(err)
					}
					writeDir(t, root, "monitor-a", map[string]string{"monitor.log": ""})
				}
				appendFile(t, log, fmt.Sprintf("MONITOR · a · WORKING · %s\n", at.Format(time.RFC3339)))
				if rng.IntN(30) == 0 {
					writeState(t, dir, tally)
					countedBy(t, root, at, midCursors)
				}
			}
			if rng.IntN(2) == 0 {
				appendFile(t, history, `{"event":"budget_reset","ts":"2026-03`)
			}
			census := at.Add(time.Duration(rng.IntN(4*60)) * time.Minute)

			writeState(t, dir, nil)
			want := countedBy(t, root, census, nil)
			writeState(t, dir, tally)
			if diff := cmp.Diff(want, countedBy(t, root, census, nil)); diff != "" {
				t.Errorf("from the tally (-from the end +from the tally):\n%s", diff)
			}
			// And it was the tally that counted: with what it counted made
			// unreadable (the history but its newlines, the log whole), the
			// census from it counts the same.
			var kept Tally
			if err := json.Unmarshal(tally, &kept); err != nil {
				t.Fatal(err)
			}
			blank(t, history, kept.History.Offset, true)
			if inode(t, log) == kept.Log.Ino { // not rotated since
				blank(t, log, kept.Log.Size, false)
			}
			if diff := cmp.Diff(want, countedBy(t, root, census, nil)); diff != "" {
				t.Errorf("from the tally, what it counted made unreadable (-from the end +from the tally):\n%s", diff)
			}
			// With cursors of a census before: the furthest start is taken,
			// and only the +new figure may differ.
			got := countedBy(t, root, census, midCursors)
			got.Log.New = 0
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("from the tally and a cursor (-from the end +got):\n%s", diff)
			}
		})
	}
}

// blank overwrites a file's first n bytes with x, but for its newlines when
// newlines is true.
func blank(t *testing.T, path string, n int64, newlines bool) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range data[:n] {
		if !newlines || data[i] != '\n' {
			data[i] = 'x'
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(data[:n], 0); err != nil {
		t.Fatal(err)
	}
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// A census with a tally reads only what was appended after it: what the
// tally counted is not read again, so garbage written over it (same files,
// same sizes) changes nothing, and log:<total> is exact without a cursor.
func TestCensusReadsOnlyAfterTheTally(t *testing.T) {
	root := t.TempDir()
	dir := writeDir(t, root, "monitor-a", map[string]string{
		"history.jsonl": historyLine(now.Add(-49*time.Hour), "budget_reset") + historyLine(now.Add(-3*time.Hour), "budget_reset") + historyLine(now.Add(-time.Minute), "nudge"),
		"monitor.log":   "one\ntwo\nthree\n",
	})
	writeState(t, dir, tallyJSON(t, dir, now.Add(-time.Minute), nil))
	for _, name := range []string{"history.jsonl", "monitor.log"} {
		path := filepath.Join(dir, name)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		garbage := strings.Repeat("x", len(data)-1) + "\n"
		if err := os.WriteFile(path, []byte(garbage), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	appendFile(t, filepath.Join(dir, "history.jsonl"), historyLine(now, "budget_reset"))
	appendFile(t, filepath.Join(dir, "monitor.log"), "four\n")
	got := countedBy(t, root, now, nil)
	if got.Sparkline.Total != 2 || got.Activity.Nudges != 1 || got.Activity.Advances != 1 || len(got.Errors) != 0 {
		t.Errorf("from the tally: %d advances, activity %+v, errors %v", got.Sparkline.Total, got.Activity, got.Errors)
	}
	if want := (LogCount{Lines: 4, Bytes: 19}); got.Log != want {
		t.Errorf("log %+v, want %+v", got.Log, want)
	}
}

// A tally that does not hold what the census shows is not used: the census
// reads as it does without one (the history from its end, the log whole).
// Each tally here counts far too much, which would show.
func TestTallyNotUsed(t *testing.T) {
	history := historyLine(now.Add(-49*time.Hour), "budget_reset") + historyLine(now.Add(-2*time.Hour), "budget_reset") +
		historyLine(now.Add(-time.Minute), "nudge") + "{torn"
	log := "one\ntwo\n"
	wrong := func(dir string, at time.Time) Tally {
		tally, err := ReadTally(dir, at, nil)
		if err != nil {
			t.Fatal(err)
		}
		tally.History.Hours[now.Unix()/3600] += 99
		tally.Log.Lines += 99
		return tally
	}
	encode := func(tally Tally) json.RawMessage {
		data, err := json.Marshal(tally)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	tests := []struct {
		name  string
		tally func(t *testing.T, dir string) json.RawMessage
	}{
		{"state without a tally (an older watcher)", func(t *testing.T, dir string) json.RawMessage { return nil }},
		{"a tally the board cannot read", func(t *testing.T, dir string) json.RawMessage { return json.RawMessage(`"counted"`) }},
		{"a tally whose counts the board cannot read", func(t *testing.T, dir string) json.RawMessage {
			data := encode(wrong(dir, now))
			return bytes.Replace(data, []byte(`"hours":"`), []byte(`"hours":"x `), 1)
		}},
		{"a tally of a later minute than the census clock", func(t *testing.T, dir string) json.RawMessage {
			return encode(wrong(dir, now.Add(time.Minute)))
		}},
		{"files replaced since (the sweep, a rotation)", func(t *testing.T, dir string) json.RawMessage {
			tally := wrong(dir, now)
			for _, name := range []string{"history.jsonl", "monitor.log"} {
				path := filepath.Join(dir, name)
				data, _ := os.ReadFile(path)
				if err := os.WriteFile(path+".new", data, 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(path+".new", path); err != nil {
					t.Fatal(err)
				}
			}
			return encode(tally)
		}},
		{"files shorter than counted", func(t *testing.T, dir string) json.RawMessage {
			tally := wrong(dir, now)
			tally.History.Offset += 1000
			tally.Log.Size += 1000
			return encode(tally)
		}},
		{"a history offset not after a newline", func(t *testing.T, dir string) json.RawMessage {
			tally := wrong(dir, now)
			tally.History.Offset -= 3
			tally.Log = Cursor{}
			return encode(tally)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			dir := writeDir(t, root, "monitor-a", map[string]string{"history.jsonl": history, "monitor.log": log})
			writeState(t, dir, tt.tally(t, dir))
			got := countedBy(t, root, now, nil)
			if got.State != "WORKING" || got.Sparkline.Total != 1 || got.Activity.Nudges != 1 || got.Log.Lines != 2 || len(got.Errors) != 0 {
				t.Errorf("state %q, %d advances, activity %+v, log %+v, errors %v; want WORKING, 1 advance, 1 nudge, 2 log lines",
					got.State, got.Sparkline.Total, got.Activity, got.Log, got.Errors)
			}
		})
	}
}

// Lines that cannot be read are counted while the line after them is in the
// window, whichever way the history is read.
func TestUnreadableLinesLeaveWithTheWindow(t *testing.T) {
	root := t.TempDir()
	dir := writeDir(t, root, "monitor-a", map[string]string{
		"history.jsonl": "{old garbage\n" + historyLine(now.Add(-47*time.Hour), "nudge") + "{not json\n" + historyLine(now.Add(-time.Hour), "nudge") + "{last\n",
	})
	for _, tt := range []struct {
		at   time.Time
		want int
	}{
		{now, 3},                          // the line after the old garbage is in the window
		{now.Add(time.Hour), 2},           // it has left: the old garbage goes with it
		{now.Add(47 * time.Hour), 1},      // only the line after the last readable one is left
		{now.Add(30 * 24 * time.Hour), 1}, // which waits for a readable line
	} {
		writeState(t, dir, nil)
		fromEnd := countedBy(t, root, tt.at, nil)
		writeState(t, dir, tallyJSON(t, dir, now, nil))
		fromTally := countedBy(t, root, tt.at, nil)
		for _, got := range []counted{fromEnd, fromTally} {
			wantErr := fmt.Sprintf("%d line(s) could not be read", tt.want)
			if len(got.Errors) != 1 || got.Errors[0].Error != wantErr {
				t.Errorf("at %v: errors %v, want %q", tt.at, got.Errors, wantErr)
			}
		}
	}
}

// Counts are kept as one string a field (a state written indented stays
// small); what is written is read back, and what is not counts is refused.
func TestCountsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		c := HistoryCursor{Ino: 7, Offset: 99, Hours: HourCounts{}, Minutes: MinuteCounts{}, BadHours: HourCounts{}, Unplaced: rng.IntN(3)}
		for range rng.IntN(50) {
			c.Hours[rng.Int64N(1<<40)-1<<39] = rng.IntN(1000)
			c.BadHours[rng.Int64N(500000)] = 1 + rng.IntN(9)
			var m [kinds]int
			for k := range m {
				m[k] = rng.IntN(100)
			}
			c.Minutes[rng.Int64N(1<<35)] = m
		}
		data, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		var back HistoryCursor
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		if diff := cmp.Diff(c, back, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("round trip (-wrote +read):\n%s", diff)
		}
	}
	for _, bad := range []string{
		`{"hours":"1"}`, `{"hours":"1:x"}`, `{"hours":"1:-2"}`, `{"hours":7}`,
		`{"minutes":"1:1,2,3,4"}`, `{"minutes":"1:1,2,3,4,5,6,7"}`, `{"minutes":"x:1,2,3,4,5,6"}`,
	} {
		var c HistoryCursor
		if err := json.Unmarshal([]byte(bad), &c); err == nil {
			t.Errorf("%s read as %+v", bad, c)
		}
	}
}

// The cursors kept between runs leave out the histories whose ticks keep a
// tally, and cursors of an earlier form are not read.
func TestCursorsKeptBetweenRuns(t *testing.T) {
	root := t.TempDir()
	history := historyLine(now.Add(-time.Hour), "budget_reset")
	tallied := writeDir(t, root, "monitor-a", map[string]string{"history.jsonl": history, "monitor.log": "one\n"})
	writeState(t, tallied, tallyJSON(t, tallied, now, nil))
	older := writeDir(t, root, "monitor-b", map[string]string{"history.jsonl": history, "monitor.log": "one\n"})
	cur := &Cursors{}
	if _, err := Census(root, now, Options{Procs: procs{}, Cursors: cur}); err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(cur)
	if err != nil {
		t.Fatal(err)
	}
	var kept Cursors
	if err := json.Unmarshal(data, &kept); err != nil {
		t.Fatal(err)
	}
	var histories []string
	for p := range kept.Histories {
		histories = append(histories, p)
	}
	if diff := cmp.Diff([]string{filepath.Join(older, "history.jsonl")}, histories); diff != "" {
		t.Errorf("histories kept (-want +got):\n%s", diff)
	}
	if len(kept.Logs) != 2 {
		t.Errorf("logs kept: %v", kept.Logs)
	}
	appendFile(t, filepath.Join(tallied, "monitor.log"), "two\n")
	f, err := Census(root, now, Options{Procs: procs{}, Cursors: &kept})
	if err != nil {
		t.Fatal(err)
	}
	if f.Fleet.Sparkline.Total != 2 || f.Watchers[0].Log != (LogCount{Lines: 2, New: 1, Bytes: 8}) {
		t.Errorf("from the kept cursors: %d advances, log %+v", f.Fleet.Sparkline.Total, f.Watchers[0].Log)
	}
	old := `{"logs":{"` + filepath.Join(older, "monitor.log") + `":{"size":1,"lines":40}},"histories":{}}`
	var none Cursors
	if err := json.Unmarshal([]byte(old), &none); err != nil || len(none.Logs) != 0 {
		t.Errorf("cursors of the earlier form read: %v %v", none.Logs, err)
	}
}

// Read from its end in chunks, a history counts what a read from its start
// counts when every line is in the window: lines across chunk boundaries,
// lines longer than a chunk (readable or not), a torn last line longer than
// a chunk.
func TestReadFromTheEndAcrossChunks(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	names := []string{"budget_reset", "nudge", "escalate", "failure", "disagreement", "state"}
	for _, torn := range []string{"", `{"event":"budget_reset","ts":"2026-03-10T14:19:00Z"`, strings.Repeat("t", 3*chunk)} {
		var b strings.Builder
		for i := range 6000 {
			at := now.Add(-40*time.Hour + time.Duration(i)*24*time.Second)
			switch rng.IntN(500) {
			case 0:
				fmt.Fprintf(&b, `{"event":"nudge","text":%q,"ts":%q}`+"\n", strings.Repeat("n", chunk+rng.IntN(3*chunk)), at.Format(time.RFC3339))
			case 1:
				b.WriteString(strings.Repeat("{", chunk+rng.IntN(chunk)) + "\n")
			case 2:
				b.WriteString("{not json\n")
			default:
				b.WriteString(historyLine(at, names[rng.IntN(len(names))]))
			}
		}
		b.WriteString(torn)
		dir := writeDir(t, t.TempDir(), "monitor-a", map[string]string{"history.jsonl": b.String()})
		path := filepath.Join(dir, "history.jsonl")
		fromEnd, err := readHistory(path, now)
		if err != nil {
			t.Fatal(err)
		}
		fromStart, err := readHistory(path, now, &HistoryCursor{Ino: inode(t, path)})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(fromStart, fromEnd); diff != "" {
			t.Errorf("torn %d bytes: from the end (-from the start +from the end):\n%s", len(torn), diff)
		}
		if want := int64(b.Len() - len(torn)); fromEnd.Offset != want {
			t.Errorf("offset %d, want %d", fromEnd.Offset, want)
		}
	}
}

// A crafted history, tallied at every line: wherever the tick's tally
// ends, the census from it counts what the read from the end counts, and
// that is the crafted figure.
func TestCraftedHistoryTalliedAtEveryLine(t *testing.T) {
	first := windowStart(now)
	lines := []string{
		historyLine(now.Add(-49*time.Hour), "budget_reset"),  // outside the window
		historyLine(first, "budget_reset"),                   // the window's first hour
		historyLine(first.Add(-time.Second), "budget_reset"), // out of order, just before it: not counted
		"{not json\n", // unreadable, before a line in the window
		historyLine(time.Date(2026, 3, 10, 12, 59, 59, 0, time.UTC), "budget_reset"), // an hour boundary
		historyLine(time.Date(2026, 3, 10, 13, 0, 0, 0, time.UTC), "budget_reset"),
		historyLine(now.Add(-61*time.Minute), "nudge"), // out of the activity hour
		historyLine(now.Add(-time.Minute), "nudge"),
		historyLine(now.Add(-time.Minute), "escalate"),
		historyLine(now.Add(-3*time.Minute), "budget_reset"),
		historyLine(now.Add(-2*time.Minute), "budget_reset"),
		historyLine(now.Add(-time.Minute), "budget_reset"),
		"{unreadable, last\n",
	}
	torn := `{"event":"budget_reset","ts":"2026-03-10T14:1`
	wantCounts := make([]int, Window)
	wantCounts[0], wantCounts[Window-3], wantCounts[Window-2], wantCounts[Window-1] = 1, 1, 1, 3
	for k := range len(lines) + 1 {
		root := t.TempDir()
		dir := writeDir(t, root, "monitor-a", map[string]string{"history.jsonl": strings.Join(lines[:k], "")})
		tally := tallyJSON(t, dir, now.Add(-30*time.Second), nil)
		appendFile(t, filepath.Join(dir, "history.jsonl"), strings.Join(lines[k:], "")+torn)
		writeState(t, dir, nil)
		want := countedBy(t, root, now, nil)
		writeState(t, dir, tally)
		got := countedBy(t, root, now, nil)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("tallied after %d lines (-from the end +from the tally):\n%s", k, diff)
		}
		a := got.Activity
		if diff := cmp.Diff(wantCounts, got.Sparkline.Counts); diff != "" || a.Advances != 3 || a.Nudges != 1 || a.Escalations != 1 ||
			len(got.Errors) != 1 || got.Errors[0].Error != "2 line(s) could not be read" {
			t.Errorf("tallied after %d lines: activity %+v, errors %v, counts (-want +got):\n%s", k, a, got.Errors, diff)
		}
	}
}
