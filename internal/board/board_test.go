package board

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/golden"

	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// now is the census clock of these tests: 14:20 UTC, so the current hour
// holds twenty minutes.
var now = time.Date(2026, 3, 10, 14, 20, 0, 0, time.UTC)

// procs is a fixed process table: pid -> start token.
type procs map[int]string

func (p procs) StartToken(pid int) (string, bool) {
	t, ok := p[pid]
	return t, ok
}

// writeDir writes a watcher's files, 0600 in a 0700 directory.
func writeDir(t *testing.T, root, name string, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for f, content := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func loopJSON(pid int, token string, started time.Time, interval int, target string) string {
	return fmt.Sprintf(`{"pid":%d,"start_token":%q,"started_at":%q,"interval_s":%d,"target":%q,"watcher":"w","version":"test","settings":{}}`,
		pid, token, started.Format(time.RFC3339), interval, target)
}

func stateJSON(state string, since, lastPoll time.Time, extra string) string {
	return fmt.Sprintf(`{"version":1,"polls":9,"last":%q,"budget":{"limit":5,"used":2},"state":%q,"state_since":%q,"last_poll":%q%s}`,
		state, state, since.Format(time.RFC3339), lastPoll.Format(time.RFC3339), extra)
}

func historyLine(at time.Time, name string) string {
	return fmt.Sprintf(`{"event":%q,"state":"WORKING","target":"t","ts":%q}`+"\n", name, at.UTC().Format(time.RFC3339))
}

func TestLiveness(t *testing.T) {
	started := now.Add(-time.Hour)
	p := procs{100: "5000", 200: "6000", 300: "7000-reused"}
	tests := []struct {
		name     string
		files    map[string]string
		want     string
		inReason string
	}{
		{"polled within two intervals", map[string]string{
			"loop.json":  loopJSON(100, "5000", started, 60, "a"),
			"state.json": stateJSON("WORKING", started, now.Add(-110*time.Second), ""),
		}, Live, "pid 100 runs"},
		{"no poll in two intervals", map[string]string{
			"loop.json":  loopJSON(200, "6000", started, 60, "b"),
			"state.json": stateJSON("WORKING", started, now.Add(-121*time.Second), ""),
		}, Quiet, "no poll for 2m1s"},
		{"a slower pace asked for, not yet an interval late", map[string]string{
			"loop.json":  loopJSON(200, "6000", started, 60, "b"),
			"state.json": stateJSON("WORKING", started, now.Add(-5*time.Minute), fmt.Sprintf(`,"next_poll":%q`, now.Add(-50*time.Second).Format(time.RFC3339))),
		}, Live, "last poll 5m0s ago"},
		{"a slower pace asked for, over an interval late", map[string]string{
			"loop.json":  loopJSON(200, "6000", started, 60, "b"),
			"state.json": stateJSON("WORKING", started, now.Add(-7*time.Minute), fmt.Sprintf(`,"next_poll":%q`, now.Add(-61*time.Second).Format(time.RFC3339))),
		}, Quiet, "no poll for 7m0s"},
		{"just started, no poll yet", map[string]string{
			"loop.json": loopJSON(100, "5000", now.Add(-5*time.Second), 60, "a"),
		}, Live, "started 5s ago"},
		{"pid dead", map[string]string{
			"loop.json":  loopJSON(400, "5000", started, 60, "c"),
			"state.json": stateJSON("WORKING", started, now, ""),
		}, Stale, "pid 400 is dead"},
		{"pid reused by another process", map[string]string{
			"loop.json":  loopJSON(300, "7000", started, 60, "d"),
			"state.json": stateJSON("WORKING", started, now, ""),
		}, Stale, "another process now"},
		{"pid alive but no token recorded", map[string]string{
			"loop.json": loopJSON(100, "", started, 60, "a"),
		}, Stale, "a pid alone proves nothing"},
		{"stopped", map[string]string{
			"loop.json":  loopJSON(400, "5000", started, 60, "c"),
			"ended.json": fmt.Sprintf(`{"at":%q,"by":"stop"}`, now.Add(-time.Minute).Format(time.RFC3339)),
		}, Gone, "stopped 1m0s ago"},
		{"stopped before a restart that died", map[string]string{
			"loop.json":  loopJSON(400, "5000", started, 60, "c"),
			"ended.json": fmt.Sprintf(`{"at":%q,"by":"stop"}`, started.Add(-time.Minute).Format(time.RFC3339)),
		}, Stale, "pid 400 is dead"},
		{"no loop record", map[string]string{
			"state.json": stateJSON("WORKING", started, now, ""),
		}, Gone, "no loop record"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			writeDir(t, root, "monitor-x", tt.files)
			f, err := Census(root, now, Options{Procs: p})
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Watchers) != 1 {
				t.Fatalf("%d watchers, want 1 (errors %v)", len(f.Watchers), f.Errors)
			}
			w := f.Watchers[0]
			if w.Liveness != tt.want || !strings.Contains(w.LivenessReason, tt.inReason) {
				t.Errorf("liveness %s (%s), want %s with %q", w.Liveness, w.LivenessReason, tt.want, tt.inReason)
			}
		})
	}
}

func TestSparklineFromCraftedHistory(t *testing.T) {
	root := t.TempDir()
	var a, b strings.Builder
	// A 49-hour-old advance: outside the window.
	a.WriteString(historyLine(now.Add(-49*time.Hour), "budget_reset"))
	// The window's first hour starts at 15:00 two days ago.
	first := windowStart(now)
	a.WriteString(historyLine(first, "budget_reset"))
	a.WriteString(historyLine(first.Add(-time.Second), "budget_reset")) // out of order, just before: ignored
	// An hour boundary: 12:59:59 and 13:00:00 fall in two hours.
	a.WriteString(historyLine(time.Date(2026, 3, 10, 12, 59, 59, 0, time.UTC), "budget_reset"))
	a.WriteString(historyLine(time.Date(2026, 3, 10, 13, 0, 0, 0, time.UTC), "budget_reset"))
	// Not advances.
	a.WriteString(historyLine(now.Add(-time.Minute), "nudge"))
	a.WriteString(historyLine(now.Add(-time.Minute), "escalate"))
	// The peak, 4 in the current hour across two watchers.
	for i := range 3 {
		a.WriteString(historyLine(now.Add(-time.Duration(i+1)*time.Minute), "budget_reset"))
	}
	b.WriteString(historyLine(now.Add(-10*time.Minute), "budget_reset"))
	b.WriteString(`{"event":"budget_reset","ts":"2026-03-10T14:1`) // torn: no newline
	writeDir(t, root, "monitor-a", map[string]string{"history.jsonl": a.String()})
	writeDir(t, root, "monitor-b", map[string]string{"history.jsonl": b.String()})

	f, err := Census(root, now, Options{Procs: procs{}})
	if err != nil {
		t.Fatal(err)
	}
	if f.Degraded {
		t.Errorf("degraded by a torn last line: %v", f.Errors)
	}
	s := f.Fleet.Sparkline
	want := make([]int, Window)
	want[0] = 1
	want[Window-3] = 1 // 12:00
	want[Window-2] = 1 // 13:00
	want[Window-1] = 4 // 14:00, the peak
	if diff := cmp.Diff(want, s.Counts); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	if s.Total != 7 || s.Peak != 4 {
		t.Errorf("total %d peak %d, want 7 and 4", s.Total, s.Peak)
	}
	wantGlyphs := "▂" + strings.Repeat("·", Window-4) + "▂▂█"
	if s.Glyphs != wantGlyphs {
		t.Errorf("glyphs\n got %s\nwant %s", s.Glyphs, wantGlyphs)
	}
	if h := Header(f); !strings.HasSuffix(h, " · 48h: "+wantGlyphs+" (7 advances, peak 4/h)") || !strings.Contains(h, " · 2 watchers: 2 gone · ") {
		t.Errorf("header %q", Header(f))
	}
	var acts []Activity
	for _, w := range f.Watchers {
		acts = append(acts, w.Activity)
	}
	if acts[0].Advances != 3 || acts[0].Nudges != 1 || acts[0].Escalations != 1 || acts[1].Advances != 1 {
		t.Errorf("activity %+v", acts)
	}
}

// The history is read from its end: lines older than the window are never
// reached, so garbage at the start of a file does not count as unreadable.
func TestHistoryIsReadFromTheEnd(t *testing.T) {
	root := t.TempDir()
	var b strings.Builder
	b.WriteString("garbage from long ago\n")
	for i := range 20000 {
		b.WriteString(historyLine(now.Add(-72*time.Hour+time.Duration(i)*time.Second), "nudge"))
	}
	b.WriteString(historyLine(now.Add(-time.Hour/2), "budget_reset"))
	b.WriteString("{not json}\n")
	writeDir(t, root, "monitor-a", map[string]string{"history.jsonl": b.String()})
	f, err := Census(root, now, Options{Procs: procs{}})
	if err != nil {
		t.Fatal(err)
	}
	if f.Fleet.Sparkline.Total != 1 {
		t.Errorf("total %d, want 1", f.Fleet.Sparkline.Total)
	}
	// The one bad line in the window is named; the garbage before it was
	// never read.
	if len(f.Errors) != 1 || !strings.Contains(f.Errors[0].Error, "1 line(s)") {
		t.Errorf("errors %v", f.Errors)
	}
}

func TestDegradedNeverEmpty(t *testing.T) {
	root := t.TempDir()
	started := now.Add(-time.Hour)
	writeDir(t, root, "monitor-good", map[string]string{
		"loop.json":  loopJSON(100, "5000", started, 60, "good"),
		"state.json": stateJSON("WORKING", started, now, ""),
	})
	writeDir(t, root, "monitor-corrupt", map[string]string{
		"loop.json":  loopJSON(100, "5000", started.Add(time.Minute), 60, "corrupt"),
		"state.json": `{"version":1,"polls":`,
	})
	if err := os.Symlink(filepath.Join(root, "nowhere"), filepath.Join(root, "monitor-dangling")); err != nil {
		t.Fatal(err)
	}
	// FIFOs with no writer, where a state file and a history should be:
	// named, never waited on.
	fifo := writeDir(t, root, "monitor-fifo", map[string]string{"loop.json": loopJSON(100, "5000", started.Add(2*time.Minute), 60, "fifo")})
	for _, name := range []string{"state.json", "history.jsonl"} {
		if err := syscall.Mkfifo(filepath.Join(fifo, name), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeDir(t, root, "bin", map[string]string{"omega-monitor.sh": "#!/bin/sh\n"})
	writeDir(t, root, "not-a-watcher", map[string]string{"notes": "x"})
	f, err := Census(root, now, Options{Procs: procs{100: "5000"}})
	if err != nil {
		t.Fatal(err)
	}
	if !f.Degraded || len(f.Errors) != 4 {
		t.Fatalf("degraded %v errors %v, want four", f.Degraded, f.Errors)
	}
	var names []string
	for _, w := range f.Watchers {
		names = append(names, w.Name+"="+w.Liveness)
	}
	if diff := cmp.Diff([]string{"monitor-good=live", "monitor-corrupt=quiet", "monitor-fifo=quiet"}, names); diff != "" {
		t.Errorf("watchers (-want +got):\n%s", diff)
	}
	out := Compact(f)
	for _, want := range []string{"degraded: " + filepath.Join(root, "monitor-corrupt", "state.json") + ": corrupt",
		"degraded: " + filepath.Join(root, "monitor-dangling") + ": state directory unreadable"} {
		if !strings.Contains(out, want) {
			t.Errorf("compact form lacks %q:\n%s", want, out)
		}
	}
}

func TestLogCountsOnlyWhatWasAppended(t *testing.T) {
	root := t.TempDir()
	dir := writeDir(t, root, "monitor-a", map[string]string{"monitor.log": "one\ntwo\nthree\n"})
	cur := &Cursors{}
	count := func() LogCount {
		f, err := Census(root, now, Options{Procs: procs{}, Cursors: cur})
		if err != nil {
			t.Fatal(err)
		}
		return f.Watchers[0].Log
	}
	if got := count(); got.Lines != 3 || got.New != 0 {
		t.Errorf("first read %+v", got)
	}
	appendFile(t, filepath.Join(dir, "monitor.log"), "four\nfive\n")
	if got := count(); got.Lines != 5 || got.New != 2 {
		t.Errorf("after two appended %+v", got)
	}
	// The cursor is trusted: a rewrite of the counted part, same size and
	// more, is not read again (this is what "only the appended bytes" costs).
	if err := os.WriteFile(filepath.Join(dir, "monitor.log"), []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := count(); got.Lines != 1 || got.New != 0 {
		t.Errorf("after a rotation %+v", got)
	}
}

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// vitalsJSON is a vitals.json read at at, with the minutes given.
func vitalsJSON(at time.Time, agent, source, minutes string) string {
	return fmt.Sprintf(`{"agent":%q,"source":%q,"at":%q,"minutes":[%s],"cursor":{"offset":100}}`, agent, source, at.Format(time.RFC3339), minutes)
}

// fleet builds the fleet of the golden files: every liveness, every need,
// a diff that is known, one that is not, a degraded directory.
func fleet(t *testing.T) Fleet {
	root := "/home/op/.omega/monitor"
	tmp := t.TempDir()
	p := procs{101: "11", 102: "12", 103: "13", 104: "14", 105: "15"}
	at := func(m int) time.Time { return now.Add(time.Duration(m) * time.Minute) }
	alertJSON := fmt.Sprintf(`,"agent":"claude","work":"7","progress":"41","last_alert":{"at":%q,"kind":"question","text":"Do you want to proceed?"},"last_transition":{"at":%q,"from":"WORKING","to":"QUESTION","line":"MONITOR · api · QUESTION · escalated to the operator, NOT answered"},"last_explain":"QUESTION: a live dialog\n  agent:    claude"`, at(-3).Format(time.RFC3339), at(-3).Format(time.RFC3339))
	writeDir(t, tmp, "monitor-api", map[string]string{
		"loop.json":   loopJSON(101, "11", at(-300), 60, "api"),
		"state.json":  stateJSON("QUESTION", at(-3), at(-1), alertJSON),
		"diff.json":   fmt.Sprintf(`{"added":382,"removed":45,"at":%q,"dir":"/src/api","base":"origin/main"}`, at(-4).Format(time.RFC3339)),
		"monitor.log": strings.Repeat("MONITOR · api · WORKING\n", 540),
		// Seed 004's line: an hour ago and before is not counted.
		"vitals.json": vitalsJSON(at(0), "claude", "/home/op/.claude/projects/-src-api/s.jsonl",
			fmt.Sprintf(`{"minute":%d,"tools":5},{"minute":%d,"tools":30,"reason":4,"text":100,"wait":1},{"minute":%d,"tools":9,"text":12,"wait":1}`,
				at(-60).Unix()/60, at(-30).Unix()/60, at(-2).Unix()/60)),
		"history.jsonl": historyLine(at(-200), "budget_reset") + historyLine(at(-62), "budget_reset") + historyLine(at(-30), "nudge") +
			historyLine(at(-20), "budget_reset") + historyLine(at(-3), "escalate"),
	})
	writeDir(t, tmp, "monitor-build-box-web", map[string]string{
		"loop.json":  loopJSON(102, "12", at(-200), 30, "build-box:web"),
		"state.json": stateJSON("WORKING", at(-23), at(0), `,"agent":"codex","work":"3","recent_polls":[{"m":`+fmt.Sprint(at(-2).Unix()/60)+`,"c":{"WORKING":2}},{"m":`+fmt.Sprint(at(-1).Unix()/60)+`,"c":{"WORKING":1,"STALLED":1}}]`),
		"diff.json":  fmt.Sprintf(`{"added":0,"removed":0,"at":%q,"dir":"/srv/web","base":"origin/master"}`, at(-1).Format(time.RFC3339)),
		"vitals.json": vitalsJSON(at(-1), "codex", "/home/op/.codex/sessions/2026/01/02/rollout-x.jsonl",
			fmt.Sprintf(`{"minute":%d,"tools":3,"reason":2,"text":1}`, at(-5).Unix()/60)),
	})
	writeDir(t, tmp, "monitor-docs", map[string]string{
		"loop.json":  loopJSON(103, "13", at(-100), 60, "docs"),
		"state.json": fmt.Sprintf(`{"version":1,"budget":{"limit":3,"used":3},"budget_latch":true,"state":"STALLED","state_since":%q,"last_poll":%q,"work":"?"}`, at(-40).Format(time.RFC3339), at(0).Format(time.RFC3339)),
		"diff.json":  fmt.Sprintf(`{"added":0,"removed":0,"at":%q,"dir":"/tmp","error":"not a git worktree"}`, at(-1).Format(time.RFC3339)),
		// No record readable: "-", never 0.
		"vitals.json": fmt.Sprintf(`{"error":"vitals: no record of the agent found","at":%q,"minutes":null,"cursor":{"offset":0}}`, at(0).Format(time.RFC3339)),
	})
	writeDir(t, tmp, "monitor-frozen", map[string]string{
		"loop.json":  loopJSON(104, "14", at(-90), 60, "frozen"),
		"state.json": stateJSON("BLOCKED", at(-30), at(-10), ""),
	})
	writeDir(t, tmp, "monitor-crashed", map[string]string{
		"loop.json":  loopJSON(999, "99", at(-80), 60, "crashed"),
		"state.json": stateJSON("STALLED", at(-30), at(-25), ""),
	})
	writeDir(t, tmp, "monitor-old", map[string]string{
		"loop.json":  loopJSON(105, "not-15", at(-3000), 60, "old"),
		"ended.json": fmt.Sprintf(`{"at":%q,"by":"stop"}`, at(-2000).Format(time.RFC3339)),
		"state.json": `{"broken`,
	})
	f, err := Census(tmp, now, Options{Procs: p, Cursors: &Cursors{}})
	if err != nil {
		t.Fatal(err)
	}
	// The golden files name a fixed root, not the temporary one.
	data, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	data = []byte(strings.ReplaceAll(string(data), tmp, root))
	var g Fleet
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

func TestCompactGolden(t *testing.T) {
	golden.Assert(t, Compact(fleet(t)), "once.golden")
}

func TestCompactNoLiveWatchers(t *testing.T) {
	f := fleet(t)
	var kept []Watcher
	for _, w := range f.Watchers {
		if w.Liveness == Stale || w.Liveness == Gone {
			kept = append(kept, w)
		}
	}
	root := t.TempDir()
	writeDir(t, root, "monitor-crashed", map[string]string{"loop.json": loopJSON(999, "99", now, 60, "crashed")})
	g, err := Census(root, now, Options{Procs: procs{}})
	if err != nil {
		t.Fatal(err)
	}
	out := Compact(g)
	if !strings.HasSuffix(out, "\n"+NoLiveWatchers+"\n") {
		t.Errorf("compact form without a live watcher:\n%s", out)
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("escape sequence in the compact form")
	}
}

func TestTmuxSegment(t *testing.T) {
	f := fleet(t)
	if got, want := Tmux(f), "✋1 ⛔1 ⌛1 ●4 ✗1 !"; got != want {
		t.Errorf("tmux segment %q, want %q", got, want)
	}
}

func TestScreenGolden(t *testing.T) {
	f := fleet(t)
	for _, v := range []View{
		{Width: 160, Height: 30, Selected: 1, Interval: "3s"},
		{Width: 80, Height: 24, Selected: 3, Interval: "3s"},
		{Width: 60, Height: 12, Selected: 4, Interval: "3s"},
		{Width: 40, Height: 20, Selected: 1, Interval: "3s"},
	} {
		lines := Screen(f, v)
		if len(lines) != v.Height {
			t.Errorf("%d lines, want %d", len(lines), v.Height)
		}
		for _, l := range lines {
			if Width(l) > v.Width {
				t.Errorf("line wider than %d: %q", v.Width, l)
			}
		}
		golden.Assert(t, strings.Join(lines, "\n")+"\n", fmt.Sprintf("screen-%dx%d.golden", v.Width, v.Height))
	}
}

// TestJSONSchema pins the JSON field names and types, which the MCP status
// tool and the task mirror read: a rename or a removal fails here, an added
// field updates testdata/schema.golden.
func TestJSONSchema(t *testing.T) {
	data, err := json.Marshal(fleet(t))
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	paths := map[string]string{}
	schema(v, "", paths)
	var lines []string
	for p, ty := range paths {
		lines = append(lines, p+" "+ty)
	}
	sort.Strings(lines)
	golden.Assert(t, strings.Join(lines, "\n")+"\n", "schema.golden")
	for _, top := range []string{"watchers []", "fleet object", "degraded bool", "errors []"} {
		if !slices.Contains(lines, top) {
			t.Errorf("no top-level %s", top)
		}
	}
}

// schema records each path's JSON type; an array's elements are merged
// under path[], and a type seen as null and as something else keeps the
// something else with "|null".
func schema(v any, path string, out map[string]string) {
	var ty string
	switch x := v.(type) {
	case nil:
		ty = "null"
	case bool:
		ty = "bool"
	case float64:
		ty = "number"
	case string:
		ty = "string"
	case []any:
		ty = "[]"
		for _, e := range x {
			schema(e, path+"[]", out)
		}
	case map[string]any:
		ty = "object"
		for k, e := range x {
			p := k
			if path != "" {
				p = path + "." + k
			}
			if strings.HasPrefix(path, "watchers[].activity.polls") {
				p = path + ".<STATE>"
			}
			schema(e, p, out)
		}
	}
	if path == "" {
		return
	}
	switch old := out[path]; {
	case old == "" || old == ty:
		out[path] = ty
	case old == "null":
		out[path] = ty + "|null"
	case ty == "null" && !strings.HasSuffix(old, "|null"):
		out[path] = old + "|null"
	}
}

// Through cursors, a history is read once; later reads take only what was
// appended, a torn line is counted once it is complete, and a history the
// sweep replaced (a new file) is read afresh.
func TestHistoryCursorReadsOnlyWhatWasAppended(t *testing.T) {
	root := t.TempDir()
	dir := writeDir(t, root, "monitor-a", map[string]string{
		"history.jsonl": historyLine(now.Add(-3*time.Hour), "budget_reset") + historyLine(now.Add(-time.Minute), "nudge"),
	})
	path := filepath.Join(dir, "history.jsonl")
	cur := &Cursors{}
	census := func(at time.Time) Fleet {
		t.Helper()
		f, err := Census(root, at, Options{Procs: procs{}, Cursors: cur})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	f := census(now)
	if f.Fleet.Sparkline.Total != 1 || f.Watchers[0].Activity.Nudges != 1 {
		t.Fatalf("first read: %d advances, %+v", f.Fleet.Sparkline.Total, f.Watchers[0].Activity)
	}
	// A line the cursor has passed is never read again: garbage written over
	// it (same file, same size) changes nothing.
	data, _ := os.ReadFile(path)
	garbage := bytes.Repeat([]byte("x"), len(data)-1)
	if err := os.WriteFile(path, append(garbage, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	torn := historyLine(now.Add(time.Minute), "budget_reset")
	appendFile(t, path, historyLine(now, "budget_reset")+torn[:20])
	f = census(now.Add(2 * time.Minute))
	if f.Fleet.Sparkline.Total != 2 || f.Degraded {
		t.Errorf("after an append and a torn line: %d advances, errors %v", f.Fleet.Sparkline.Total, f.Errors)
	}
	appendFile(t, path, torn[20:])
	f = census(now.Add(2 * time.Minute))
	if f.Fleet.Sparkline.Total != 3 || f.Watchers[0].Activity.Advances != 2 {
		t.Errorf("after the torn line completed: %d advances, %+v", f.Fleet.Sparkline.Total, f.Watchers[0].Activity)
	}
	// An hour later the nudge has left the activity window.
	f = census(now.Add(60 * time.Minute))
	if a := f.Watchers[0].Activity; a.Nudges != 0 || a.Advances != 1 {
		t.Errorf("an hour later: %+v", a)
	}
	// The sweep replaces the file: the new one is read from its end.
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(historyLine(now, "budget_reset")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	f = census(now.Add(2 * time.Minute))
	if f.Fleet.Sparkline.Total != 1 {
		t.Errorf("after a replace: %d advances, want 1", f.Fleet.Sparkline.Total)
	}
}

func TestUTCSecondsAgreesWithTimeParse(t *testing.T) {
	for s := int64(-86400 * 800); s < 86400*365*200; s += 86400*13 + 3607 {
		ts := time.Unix(s, 0).UTC().Format(time.RFC3339)
		got, ok := utcSeconds([]byte(ts))
		if !ok || got != s {
			t.Fatalf("%s: %d %v, want %d", ts, got, ok, s)
		}
	}
	for _, bad := range []string{"2026-13-01T00:00:00Z", "2026-01-01T00:00:00+01:00", "2026-01-01 00:00:00Z", "20x6-01-01T00:00:00Z"} {
		if _, ok := utcSeconds([]byte(bad)); ok {
			t.Errorf("%s read as a time", bad)
		}
	}
}

// TestHostWakeIsShown: where the wake relay of an ssh target stands is
// the watcher's, as its wake.json says; a watcher without one has none.
func TestHostWakeIsShown(t *testing.T) {
	root := t.TempDir()
	writeDir(t, root, "monitor-box-a", map[string]string{"wake.json": `{"status":"absent","why":"exit status 127","at":"2026-01-05T08:59:00Z"}`,
		"history.jsonl": historyLine(now.Add(-time.Minute), "escalate")})
	writeDir(t, root, "monitor-b", map[string]string{"history.jsonl": historyLine(now.Add(-time.Minute), "escalate")})
	f, err := Census(root, now, Options{Procs: procs{}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*statedir.RemoteWakeRecord{}
	for _, w := range f.Watchers {
		got[w.Name] = w.HostWake
	}
	want := map[string]*statedir.RemoteWakeRecord{
		"monitor-box-a": {Status: "absent", Why: "exit status 127", At: time.Date(2026, 1, 5, 8, 59, 0, 0, time.UTC)},
		"monitor-b":     nil,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("host wake (-want +got):\n%s", diff)
	}
}

// TestUndeliveredAlertsAreShown: an escalation the funnel could not deliver
// is not counted as one the operator saw: the activity line and the tmux
// segment say how many were NOT delivered in the last hour.
func TestUndeliveredAlertsAreShown(t *testing.T) {
	root := t.TempDir()
	var h strings.Builder
	h.WriteString(historyLine(now.Add(-3*time.Minute), "escalate"))
	h.WriteString(historyLine(now.Add(-2*time.Minute), "alert_not_delivered"))
	h.WriteString(historyLine(now.Add(-time.Minute), "alert_not_delivered"))
	h.WriteString(historyLine(now.Add(-2*time.Hour), "alert_not_delivered")) // outside the hour
	writeDir(t, root, "monitor-a", map[string]string{"history.jsonl": h.String()})
	f, err := Census(root, now, Options{Procs: procs{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Watchers) != 1 || f.Watchers[0].Activity.Undelivered != 2 || f.Fleet.Undelivered != 2 {
		t.Fatalf("undelivered: %+v, fleet %d", f.Watchers, f.Fleet.Undelivered)
	}
	if line := ActivityText(f.Watchers[0].Activity); !strings.Contains(line, "esc:1") || !strings.HasSuffix(line, " NOT-delivered:2") {
		t.Errorf("activity line %q", line)
	}
	if seg := Tmux(f); !strings.Contains(seg, "✉✗2") {
		t.Errorf("tmux segment %q", seg)
	}
}

// TestHumanIdleShown: the watcher's human_idle setting, as its loop
// recorded it, is in the census and its compact line: seconds, off, or
// nothing for a loop that did not record it or a value no loop writes.
func TestHumanIdleShown(t *testing.T) {
	root := t.TempDir()
	started := now.Add(-time.Hour)
	for name, setting := range map[string]string{"on": `"60"`, "off": `"0"`, "odd": `"6e1"`, "none": ""} {
		loop := loopJSON(100, "5000", started, 60, name)
		if setting != "" {
			loop = strings.Replace(loop, `"settings":{}`, `"settings":{"human_idle":`+setting+`}`, 1)
		}
		writeDir(t, root, "monitor-"+name, map[string]string{"loop.json": loop, "state.json": stateJSON("WORKING", started, now, "")})
	}
	f, err := Census(root, now, Options{Procs: procs{100: "5000"}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, w := range f.Watchers {
		got[w.Target] = w.HumanIdle
	}
	if diff := cmp.Diff(map[string]string{"on": "60s", "off": "off", "odd": "", "none": ""}, got); diff != "" {
		t.Errorf("human_idle (-want +got):\n%s", diff)
	}
	out := Compact(f)
	if !strings.Contains(out, " HUMAN") || !strings.Contains(out, " 60s") || !strings.Contains(out, " off") || !strings.Contains(out, "HUMAN: how recent") {
		t.Errorf("compact form:\n%s", out)
	}
}

// TestDeliveryOnTheBoard: a channel with a send under way is said as
// such, with its try and how long; one holding alerts after a failure is
// said with the failure; the tmux segment counts the alerts waiting.
func TestDeliveryOnTheBoard(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	w := Watcher{Delivery: &statedir.DeliveryRecord{PID: 1, At: now, Channels: []statedir.ChannelHealth{
		{ID: "funnel", Name: "Telegram (the funnel)", Delivered: 3, DeliveredAt: now.Add(-time.Minute)},
		{ID: "a1", Name: "channel line 1 (generic, hooks.example.com)", Queued: 2,
			FailedAt: now.Add(-12 * time.Second), Why: "connection refused",
			Sending: &statedir.Sending{Alert: "x.alert", Try: 3, Since: now.Add(-8 * time.Second)}},
		{ID: "b2", Name: "channel line 2 (ntfy, ntfy.sh)", Queued: 2, FailedAt: now.Add(-30 * time.Second),
			DeliveredAt: now.Add(-time.Hour), Why: "HTTP 502"},
	}}}
	got := DeliveryLines(w, now)
	want := []string{
		"delivering to channel line 1 (generic, hooks.example.com): try 3, for 8s; last failure: connection refused",
		"channel line 2 (ntfy, ntfy.sh): 2 alert(s) waiting; last failure 30s ago: HTTP 502; last delivered 1h0m0s ago",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DeliveryLines (-want +got):\n%s", diff)
	}
	if n := Waiting(w); n != 2 {
		t.Errorf("Waiting = %d, want 2", n)
	}
	f := Fleet{Fleet: Summary{Undelivered: Waiting(w)}}
	if seg := Tmux(f); !strings.Contains(seg, "✉✗2") {
		t.Errorf("tmux segment %q: no mark for the alerts waiting", seg)
	}
}
