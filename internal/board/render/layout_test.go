package render

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/golden"

	"github.com/omega-monitor/omega-monitor/internal/board"
	"github.com/omega-monitor/omega-monitor/internal/board/boardfix"
)

// The compact form at the widths of real terminals: the table keeps what
// it can, the header and the legend wrap, nothing of them passes the
// width. What follows the legend (an error's path) is never cut.
func TestCompactWidthGolden(t *testing.T) {
	f := fleet(t)
	for _, width := range []int{120, 80, 60, 40} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			out := CompactWidth(f, width)
			for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				if Width(l) > width && !strings.HasPrefix(l, "degraded: ") {
					t.Errorf("a line wider than %d: %q", width, l)
				}
			}
			golden.Assert(t, out, fmt.Sprintf("once-%d.golden", width))
		})
	}
}

// longFleet is fleet with a watcher of a long target that needs you: the
// target gives way, never its state, its nudges or what it needs.
func longFleet(t *testing.T) board.Fleet {
	f := fleet(t)
	since := now.Add(-7 * time.Minute)
	f.Watchers = append(f.Watchers, board.Watcher{
		Name: "monitor-" + strings.Repeat("x", 50), Target: "build-box:" + strings.Repeat("long-session-name-", 3) + "end",
		Pane: "%12", Liveness: board.Live, State: "STALLED", StateSince: &since, StateForS: 420, Agent: "gemini",
		Nudges: board.Nudges{Used: 12, Limit: 12, Exhausted: true}, NeedsHuman: board.NeedsBudgetExhausted,
	})
	return f
}

// TestNarrowBoardsKeepStateNudgesAndNeeds: at every width from 200
// columns down to 30, every watcher's state, nudge count and what it needs
// you for are whole in its row (or rows), and no line of the live board
// passes the width.
func TestNarrowBoardsKeepStateNudgesAndNeeds(t *testing.T) {
	f := longFleet(t)
	for width := 200; width >= 30; width-- {
		tb := newTable(f, width)
		for i, w := range f.Watchers {
			lines := tb.row(i)
			for _, l := range lines {
				if Width(l) > width {
					t.Fatalf("width %d, %s: a row line of %d cells: %q", width, w.Name, Width(l), l)
				}
			}
			row := strings.Join(lines, "\n")
			want := []string{orDash(w.State), needsWord(w)}
			if w.State != "" {
				want = append(want, fmt.Sprintf("%d/%d", w.Nudges.Used, w.Nudges.Limit))
			}
			for _, s := range want {
				if !strings.Contains(row, s) {
					t.Fatalf("width %d, %s: %q is not whole in its row:\n%s", width, w.Name, s, row)
				}
			}
		}
		for sel := range f.Watchers {
			for _, l := range Screen(f, View{Width: width, Height: 40, Selected: sel, Interval: "3s"}) {
				if Width(l) > width {
					t.Fatalf("width %d: a screen line of %d cells: %q", width, Width(l), l)
				}
			}
		}
	}
	// Below 30 columns the board degrades, never past the width, and
	// never with a panic, down to a single cell.
	for width := 29; width >= 1; width-- {
		for height := 1; height <= 6; height++ {
			for _, l := range Screen(f, View{Width: width, Height: height, Selected: 2, Interval: "3s"}) {
				if Width(l) > width {
					t.Fatalf("%dx%d: a screen line of %d cells: %q", width, height, Width(l), l)
				}
			}
		}
		CompactWidth(f, width)
	}
	// At 80 columns a watcher is one line, its target cut to make room.
	tb := newTable(f, 80)
	last := tb.row(len(f.Watchers) - 1)
	if len(last) != 1 || !strings.Contains(last[0], "…") || !strings.Contains(last[0], "12/12") || !strings.HasSuffix(strings.TrimSpace(last[0][strings.Index(last[0], "12/12"):]), "budget spent") {
		t.Errorf("the long target's row at 80 columns: %q", last)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// TestStoppedWatchersDurationIsFrozen: a watcher whose loop no longer runs
// has held its state until its stop (ended.json), or until its last poll
// when it died: hours later the board says the same, while a running
// watcher's time grows.
func TestStoppedWatchersDurationIsFrozen(t *testing.T) {
	root := t.TempDir()
	started := now.Add(-3 * time.Hour)
	ended := func(at time.Time) string { return fmt.Sprintf(`{"at":%q,"by":"stop"}`, at.Format(time.RFC3339)) }
	boardfix.WriteDir(t, root, "monitor-live", map[string]string{
		"loop.json":  boardfix.LoopJSON(100, "5000", started, 3600, "live"),
		"state.json": boardfix.StateJSON("STALLED", now.Add(-10*time.Minute), now.Add(-time.Minute), ""),
	})
	boardfix.WriteDir(t, root, "monitor-stopped", map[string]string{
		"loop.json":  boardfix.LoopJSON(400, "5000", started.Add(time.Second), 60, "stopped"),
		"state.json": boardfix.StateJSON("QUESTION", now.Add(-50*time.Minute), now.Add(-31*time.Minute), ""),
		"ended.json": ended(now.Add(-30 * time.Minute)),
	})
	boardfix.WriteDir(t, root, "monitor-died", map[string]string{
		"loop.json":  boardfix.LoopJSON(401, "5000", started.Add(2*time.Second), 60, "died"),
		"state.json": boardfix.StateJSON("WORKING", now.Add(-30*time.Minute), now.Add(-25*time.Minute), ""),
	})
	boardfix.WriteDir(t, root, "monitor-noloop", map[string]string{
		"state.json": boardfix.StateJSON("BLOCKED", now.Add(-2*time.Hour), now.Add(-time.Hour), ""),
	})
	type span struct {
		For   int
		Until string
		Text  string
	}
	read := func(at time.Time) map[string]span {
		f, err := board.Census(root, at, board.Options{Procs: boardfix.Procs{100: "5000"}})
		if err != nil {
			t.Fatal(err)
		}
		tb := newTable(f, 0)
		got := map[string]span{}
		for i, w := range f.Watchers {
			until := ""
			if w.StateUntil != nil {
				until = w.StateUntil.Format("15:04:05")
			}
			got[w.Target+w.Name] = span{w.StateForS, until, strings.Fields(tb.row(i)[0])[3]}
		}
		return got
	}
	want := map[string]span{
		"livemonitor-live":       {600, "", "00:10:00"},
		"stoppedmonitor-stopped": {1200, "13:50:00", "00:20:00"},
		"diedmonitor-died":       {300, "13:55:00", "00:05:00"},
		"monitor-noloop":         {3600, "13:20:00", "01:00:00"},
	}
	if diff := cmp.Diff(want, read(now)); diff != "" {
		t.Errorf("now (-want +got):\n%s", diff)
	}
	// Two hours on, the live watcher's loop still runs (its interval is an
	// hour): its time grew; the others' did not.
	want["livemonitor-live"] = span{600 + 7200, "", "02:10:00"}
	if diff := cmp.Diff(want, read(now.Add(2*time.Hour))); diff != "" {
		t.Errorf("two hours on (-want +got):\n%s", diff)
	}
}

// TestDeltaFleetCountsEachWorktreeOnce: the fleet's diff sums the running
// watchers' diffs, a worktree once however many watchers see it (through a
// link, from a subdirectory), the later measure of it; a stopped watcher's
// diff is not in it, nor one that could not be measured; the same path on
// two hosts is two worktrees.
func TestDeltaFleetCountsEachWorktreeOnce(t *testing.T) {
	src := t.TempDir()
	repo := filepath.Join(src, "shop")
	other := filepath.Join(src, "other")
	for _, d := range []string{filepath.Join(repo, ".git"), filepath.Join(repo, "web", "static"), filepath.Join(other, ".git")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(src, "shop-link")
	if err := os.Symlink(repo, link); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	started := now.Add(-time.Hour)
	n := 0
	watch := func(name, target string, pid int, dir string, added, removed, ago int, extra map[string]string) {
		n++
		files := map[string]string{
			"loop.json":  boardfix.LoopJSON(pid, "5000", started.Add(time.Duration(n)*time.Second), 60, target),
			"state.json": boardfix.StateJSON("WORKING", started, now, ""),
			"diff.json":  fmt.Sprintf(`{"added":%d,"removed":%d,"at":%q,"dir":%q,"base":"origin/main"}`, added, removed, now.Add(-time.Duration(ago)*time.Minute).Format(time.RFC3339), dir),
		}
		for k, v := range extra {
			files[k] = v
		}
		boardfix.WriteDir(t, root, name, files)
	}
	watch("monitor-a", "a", 100, repo, 10, 1, 9, nil)
	watch("monitor-b", "b", 100, link, 12, 2, 2, nil)                                 // the same worktree, through a link, measured later: counted
	watch("monitor-c", "c", 100, filepath.Join(repo, "web", "static"), 11, 1, 5, nil) // from a subdirectory
	watch("monitor-d", "d", 100, other, 5, 5, 1, nil)
	watch("monitor-e", "e", 400, other, 900, 900, 0, nil) // stale: not counted
	watch("monitor-f", "f", 400, filepath.Join(src, "gone"), 700, 0, 0, map[string]string{"ended.json": fmt.Sprintf(`{"at":%q,"by":"stop"}`, now.Format(time.RFC3339))})
	watch("monitor-h1-x", "h1:x", 100, repo, 3, 0, 1, nil) // the same path on other hosts: other worktrees
	watch("monitor-h2-x", "h2:x", 100, repo, 4, 0, 1, nil)
	watch("monitor-h2-y", "h2:y", 100, repo+"/", 6, 0, 3, nil)
	boardfix.WriteDir(t, root, "monitor-g", map[string]string{
		"loop.json": boardfix.LoopJSON(100, "5000", started.Add(time.Minute), 60, "g"),
		"diff.json": fmt.Sprintf(`{"at":%q,"dir":%q,"error":"not a git worktree"}`, now.Format(time.RFC3339), src),
	})
	f, err := board.Census(root, now, board.Options{Procs: boardfix.Procs{100: "5000"}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, w := range f.Watchers {
		mark := " "
		if w.DiffCounted {
			mark = "*"
		}
		got[w.Target] = mark + strings.TrimPrefix(w.Worktree, src)
	}
	want := map[string]string{
		"a": " /shop", "b": "*/shop", "c": " /shop", "d": "*/other", "e": " /other", "f": " " + "/gone",
		"g": " ", "h1:x": "*h1:" + repo, "h2:x": "*h2:" + repo, "h2:y": " h2:" + repo,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("worktrees, * counted (-want +got):\n%s", diff)
	}
	s := f.Fleet
	if s.Added != 12+5+3+4 || s.Removed != 2+5 || s.Worktrees != 4 {
		t.Errorf("Δ fleet +%d -%d in %d worktrees, want +24 -7 in 4", s.Added, s.Removed, s.Worktrees)
	}
	if d := DeltaText(s); d != "Δ fleet +24 -7 in 4 worktrees" {
		t.Errorf("header says %q", d)
	}
	// A diff not in the sum is shown in brackets.
	tb := newTable(f, 0)
	for i, w := range f.Watchers {
		row := tb.row(i)[0]
		if w.Target == "a" && !strings.Contains(row, "(+10 -1)") || w.Target == "b" && !strings.Contains(row, " +12 -2 ") {
			t.Errorf("%s: %q", w.Target, row)
		}
	}
}

// TestHeaderSaysItInWords: counts agree in number with what they count,
// and a fleet that needs nothing says so.
func TestHeaderSaysItInWords(t *testing.T) {
	one := board.Sparkline{Counts: make([]int, board.Window)}
	one.Counts[board.Window-1] = 1
	tests := []struct {
		s    board.Summary
		want string
	}{
		{board.Summary{}, "needs you: nothing · Δ fleet +0 -0 · 0 watchers · 48h: "},
		{board.Summary{Watchers: 1, Live: 1, Questions: 1, Added: 3, Worktrees: 1, Sparkline: one},
			"needs you: 1 question · Δ fleet +3 -0 in 1 worktree · 1 watcher: 1 live · 48h: "},
		{board.Summary{Watchers: 5, Live: 2, Gone: 3, Questions: 2, Blocked: 2, BudgetsExhausted: 1},
			"needs you: 2 questions, 2 blocked, 1 budget spent · Δ fleet +0 -0 · 5 watchers: 2 live, 3 gone · 48h: "},
		{board.Summary{Watchers: 2, Quiet: 1, Stale: 1, BudgetsExhausted: 2},
			"needs you: 2 budgets spent · Δ fleet +0 -0 · 2 watchers: 1 quiet, 1 stale · 48h: "},
	}
	for _, tt := range tests {
		if tt.s.Sparkline.Counts == nil {
			tt.s.Sparkline.Counts = make([]int, board.Window)
		}
		if got := Header(board.Fleet{Fleet: tt.s}); !strings.HasPrefix(got, tt.want) {
			t.Errorf("Header = %q\nwant it to begin %q", got, tt.want)
		}
	}
	if got := SparkText(one, 6); got != "6h: ·····█ (1 advance, peak 1/h)" {
		t.Errorf("SparkText = %q", got)
	}
}

// TestBoardTextIsInert: a state directory's files are not trusted to be
// the watcher's: a target, an agent, a reason or a transition carrying
// escape sequences and line breaks reaches no render as such, and a row
// stays one line.
func TestBoardTextIsInert(t *testing.T) {
	root := t.TempDir()
	evil := "api\x1b]0;owned\x07\n\x1b[2Jrm -rf ~"
	boardfix.WriteDir(t, root, "monitor-api", map[string]string{
		"loop.json": boardfix.LoopJSON(100, "5000", now.Add(-time.Hour), 60, evil),
		"state.json": boardfix.StateJSON("QUESTION\x1b[31m", now.Add(-time.Minute), now,
			`,"agent":"claude\r\n\u009b2J","last_transition":{"at":"2026-03-10T14:19:00Z","from":"W","to":"Q","line":"MONITOR \u001b[8mhidden"},"last_explain":"x\u001b]8;;http://evil\u0007link"`),
	})
	f, err := board.Census(root, now, board.Options{Procs: boardfix.Procs{100: "5000"}})
	if err != nil {
		t.Fatal(err)
	}
	tb := newTable(f, 0)
	if rows := tb.row(0); len(rows) != 1 || strings.ContainsAny(rows[0], "\x1b\x07\r\n\u009b") {
		t.Errorf("row %q", rows)
	}
	for _, width := range []int{160, 80, 40} {
		for _, l := range Screen(f, View{Width: width, Height: 30, Interval: "3s"}) {
			if strings.ContainsAny(l, "\x1b\x07\r\n\u009b") {
				t.Errorf("screen line at %d: %q", width, l)
			}
		}
	}
}

// TestCursorsLeaveForgottenWatchers: the board's cursors name only the
// watchers it still finds: a forgotten watcher's directory leaves no trace
// in the file kept between runs.
func TestCursorsLeaveForgottenWatchers(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"monitor-a", "monitor-b"} {
		boardfix.WriteDir(t, root, name, map[string]string{"monitor.log": "one\n", "history.jsonl": boardfix.HistoryLine(now, "nudge")})
	}
	cur := &board.Cursors{}
	census := func() {
		t.Helper()
		if _, err := board.Census(root, now, board.Options{Procs: boardfix.Procs{}, Cursors: cur}); err != nil {
			t.Fatal(err)
		}
	}
	census()
	if err := os.RemoveAll(filepath.Join(root, "monitor-b")); err != nil {
		t.Fatal(err)
	}
	census()
	board.SaveCursors(root, cur)
	data, err := os.ReadFile(filepath.Join(root, ".board-cursors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var kept struct {
		Logs, Histories map[string]json.RawMessage
	}
	if err := json.Unmarshal(data, &kept); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for p := range kept.Logs {
		paths = append(paths, strings.TrimPrefix(p, root))
	}
	for p := range kept.Histories {
		paths = append(paths, strings.TrimPrefix(p, root))
	}
	slices.Sort(paths)
	if diff := cmp.Diff([]string{"/monitor-a/history.jsonl", "/monitor-a/monitor.log"}, paths); diff != "" {
		t.Errorf("cursors kept (-want +got):\n%s", diff)
	}
}

// TestNeedsWordNudgingOff: a stall the watcher does not nudge
// (--nudge-budget 0) is said as such, not as a budget spent.
func TestNeedsWordNudgingOff(t *testing.T) {
	w := board.Watcher{State: "STALLED", NeedsHuman: board.NeedsBudgetExhausted, Nudges: board.Nudges{Limit: 0, Exhausted: true}}
	if got := needsWord(w); got != "stalled, nudging off" {
		t.Errorf("budget 0: %q", got)
	}
	w.Nudges = board.Nudges{Used: 5, Limit: 5, Exhausted: true}
	if got := needsWord(w); got != "budget spent" {
		t.Errorf("budget 5/5: %q", got)
	}
}
