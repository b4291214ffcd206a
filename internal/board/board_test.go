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
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/board/boardfix"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/golden"

	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// The fixtures, shared with the renderers' tests (package boardfix).
var (
	now         = boardfix.Now
	writeDir    = boardfix.WriteDir
	loopJSON    = boardfix.LoopJSON
	stateJSON   = boardfix.StateJSON
	historyLine = boardfix.HistoryLine
	vitalsJSON  = boardfix.VitalsJSON
)

type procs = boardfix.Procs

// fleet is the fleet of the golden files, as the census reads it.
func fleet(t *testing.T) Fleet {
	var f Fleet
	boardfix.Golden(t, func(dir string, p boardfix.Procs) (any, error) {
		return Census(dir, now, Options{Procs: p, Cursors: &Cursors{}})
	}, &f)
	return f
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

// TestJSONSchema pins the JSON field names and types, which the MCP status
// tool and the task mirror read: a rename or a removal fails here, an added
// field updates testdata/schema.golden.
func TestJSONSchema(t *testing.T) {
	// With other hosts on it, so that their fields are pinned too.
	// And with a group whose every field is set.
	m := Merge(fleet(t), remotes(t))
	m.Groups = []Group{{Host: "box", Name: "usage-limit-000000000000000000000000", Kind: "usage-limit", Agent: "Claude Code",
		CauseHost: "gpu", Limit: "limit reached", Reset: "9:02am", Panes: 2, Gathering: 1, DueAt: &now, PagesPending: 1, PagesMade: 1, Error: "x"}}
	data, err := json.Marshal(m)
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
