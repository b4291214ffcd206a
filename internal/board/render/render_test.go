package render

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/golden"

	"github.com/omega-monitor/omega-monitor/internal/board"
	"github.com/omega-monitor/omega-monitor/internal/board/boardfix"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// The renderers over the census: what the board prints of the fleet the
// census read, at every width.

// now is the census clock of the fixtures.
var now = boardfix.Now

// fleet is the fleet of the golden files, as the census reads it.
func fleet(t *testing.T) board.Fleet {
	var f board.Fleet
	boardfix.Golden(t, func(dir string, p boardfix.Procs) (any, error) {
		return board.Census(dir, now, board.Options{Procs: p, Cursors: &board.Cursors{}})
	}, &f)
	return f
}

func TestSparklineFromCraftedHistory(t *testing.T) {
	root := t.TempDir()
	var a, b strings.Builder
	// A 49-hour-old advance: outside the window.
	a.WriteString(boardfix.HistoryLine(now.Add(-49*time.Hour), "budget_reset"))
	// The window's first hour starts at 15:00 two days ago.
	first := now.Truncate(time.Hour).Add(-(board.Window - 1) * time.Hour)
	a.WriteString(boardfix.HistoryLine(first, "budget_reset"))
	a.WriteString(boardfix.HistoryLine(first.Add(-time.Second), "budget_reset")) // out of order, just before: ignored
	// An hour boundary: 12:59:59 and 13:00:00 fall in two hours.
	a.WriteString(boardfix.HistoryLine(time.Date(2026, 3, 10, 12, 59, 59, 0, time.UTC), "budget_reset"))
	a.WriteString(boardfix.HistoryLine(time.Date(2026, 3, 10, 13, 0, 0, 0, time.UTC), "budget_reset"))
	// Not advances.
	a.WriteString(boardfix.HistoryLine(now.Add(-time.Minute), "nudge"))
	a.WriteString(boardfix.HistoryLine(now.Add(-time.Minute), "escalate"))
	// The peak, 4 in the current hour across two watchers.
	for i := range 3 {
		a.WriteString(boardfix.HistoryLine(now.Add(-time.Duration(i+1)*time.Minute), "budget_reset"))
	}
	b.WriteString(boardfix.HistoryLine(now.Add(-10*time.Minute), "budget_reset"))
	b.WriteString(`{"event":"budget_reset","ts":"2026-03-10T14:1`) // torn: no newline
	boardfix.WriteDir(t, root, "monitor-a", map[string]string{"history.jsonl": a.String()})
	boardfix.WriteDir(t, root, "monitor-b", map[string]string{"history.jsonl": b.String()})

	f, err := board.Census(root, now, board.Options{Procs: boardfix.Procs{}})
	if err != nil {
		t.Fatal(err)
	}
	if f.Degraded {
		t.Errorf("degraded by a torn last line: %v", f.Errors)
	}
	s := f.Fleet.Sparkline
	want := make([]int, board.Window)
	want[0] = 1
	want[board.Window-3] = 1 // 12:00
	want[board.Window-2] = 1 // 13:00
	want[board.Window-1] = 4 // 14:00, the peak
	if diff := cmp.Diff(want, s.Counts); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	if s.Total != 7 || s.Peak != 4 {
		t.Errorf("total %d peak %d, want 7 and 4", s.Total, s.Peak)
	}
	wantGlyphs := "▂" + strings.Repeat("·", board.Window-4) + "▂▂█"
	if s.Glyphs != wantGlyphs {
		t.Errorf("glyphs\n got %s\nwant %s", s.Glyphs, wantGlyphs)
	}
	if h := Header(f); !strings.HasSuffix(h, " · 48h: "+wantGlyphs+" (7 advances, peak 4/h)") || !strings.Contains(h, " · 2 watchers: 2 gone · ") {
		t.Errorf("header %q", Header(f))
	}
	var acts []board.Activity
	for _, w := range f.Watchers {
		acts = append(acts, w.Activity)
	}
	if acts[0].Advances != 3 || acts[0].Nudges != 1 || acts[0].Escalations != 1 || acts[1].Advances != 1 {
		t.Errorf("activity %+v", acts)
	}
}

func TestDegradedNeverEmpty(t *testing.T) {
	root := t.TempDir()
	started := now.Add(-time.Hour)
	boardfix.WriteDir(t, root, "monitor-good", map[string]string{
		"loop.json":  boardfix.LoopJSON(100, "5000", started, 60, "good"),
		"state.json": boardfix.StateJSON("WORKING", started, now, ""),
	})
	boardfix.WriteDir(t, root, "monitor-corrupt", map[string]string{
		"loop.json":  boardfix.LoopJSON(100, "5000", started.Add(time.Minute), 60, "corrupt"),
		"state.json": `{"version":1,"polls":`,
	})
	if err := os.Symlink(filepath.Join(root, "nowhere"), filepath.Join(root, "monitor-dangling")); err != nil {
		t.Fatal(err)
	}
	// FIFOs with no writer, where a state file and a history should be:
	// named, never waited on.
	fifo := boardfix.WriteDir(t, root, "monitor-fifo", map[string]string{"loop.json": boardfix.LoopJSON(100, "5000", started.Add(2*time.Minute), 60, "fifo")})
	for _, name := range []string{"state.json", "history.jsonl"} {
		if err := syscall.Mkfifo(filepath.Join(fifo, name), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	boardfix.WriteDir(t, root, "bin", map[string]string{"omega-monitor.sh": "#!/bin/sh\n"})
	boardfix.WriteDir(t, root, "not-a-watcher", map[string]string{"notes": "x"})
	f, err := board.Census(root, now, board.Options{Procs: boardfix.Procs{100: "5000"}})
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

func TestCompactGolden(t *testing.T) {
	golden.Assert(t, Compact(fleet(t)), "once.golden")
}

func TestCompactNoLiveWatchers(t *testing.T) {
	f := fleet(t)
	var kept []board.Watcher
	for _, w := range f.Watchers {
		if w.Liveness == board.Stale || w.Liveness == board.Gone {
			kept = append(kept, w)
		}
	}
	root := t.TempDir()
	boardfix.WriteDir(t, root, "monitor-crashed", map[string]string{"loop.json": boardfix.LoopJSON(999, "99", now, 60, "crashed")})
	g, err := board.Census(root, now, board.Options{Procs: boardfix.Procs{}})
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

// TestUndeliveredAlertsAreShown: an escalation the funnel could not deliver
// is not counted as one the operator saw: the activity line and the tmux
// segment say how many were NOT delivered in the last hour.
func TestUndeliveredAlertsAreShown(t *testing.T) {
	root := t.TempDir()
	var h strings.Builder
	h.WriteString(boardfix.HistoryLine(now.Add(-3*time.Minute), "escalate"))
	h.WriteString(boardfix.HistoryLine(now.Add(-2*time.Minute), "alert_not_delivered"))
	h.WriteString(boardfix.HistoryLine(now.Add(-time.Minute), "alert_not_delivered"))
	h.WriteString(boardfix.HistoryLine(now.Add(-2*time.Hour), "alert_not_delivered")) // outside the hour
	boardfix.WriteDir(t, root, "monitor-a", map[string]string{"history.jsonl": h.String()})
	f, err := board.Census(root, now, board.Options{Procs: boardfix.Procs{}})
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
		loop := boardfix.LoopJSON(100, "5000", started, 60, name)
		if setting != "" {
			loop = strings.Replace(loop, `"settings":{}`, `"settings":{"human_idle":`+setting+`}`, 1)
		}
		boardfix.WriteDir(t, root, "monitor-"+name, map[string]string{"loop.json": loop, "state.json": boardfix.StateJSON("WORKING", started, now, "")})
	}
	f, err := board.Census(root, now, board.Options{Procs: boardfix.Procs{100: "5000"}})
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
	w := board.Watcher{Delivery: &statedir.DeliveryRecord{PID: 1, At: now, Channels: []statedir.ChannelHealth{
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
	if n := board.Waiting(w); n != 2 {
		t.Errorf("Waiting = %d, want 2", n)
	}
	f := board.Fleet{Fleet: board.Summary{Undelivered: board.Waiting(w)}}
	if seg := Tmux(f); !strings.Contains(seg, "✉✗2") {
		t.Errorf("tmux segment %q: no mark for the alerts waiting", seg)
	}
}

// Another host's row says how it was read, or why it was not; its
// watchers' targets carry its name.
func TestHostsOnTheBoard(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	behind := now.Add(-5 * time.Minute)
	tests := []struct {
		host board.Host
		want string
	}{
		{board.Host{Name: "box", Reachable: true, FreshAt: &now, RTTMs: 31, Watchers: 2}, "host box: 2 watchers, read in 31ms"},
		{board.Host{Name: "old", Reachable: true, FreshAt: &behind, RTTMs: 40, Watchers: 1}, "host old: 1 watcher, read in 40ms, its clock 00:05:00 behind"},
		{board.Host{Name: "gpu", RTTMs: 5000, Degraded: true, Reason: "unreachable: no answer within 5s"}, "host gpu: DEGRADED: unreachable: no answer within 5s"},
		{board.Host{Name: "torn", Reachable: true, RTTMs: 12, Degraded: true, Reason: "its answer is not a board:\nunexpected EOF"},
			"host torn: DEGRADED: its answer is not a board: unexpected EOF (answered in 12ms)"},
		{board.Host{Name: "half", Reachable: true, FreshAt: &now, RTTMs: 9, Watchers: 3, Degraded: true, Reason: "its census is degraded: 1 thing(s) could not be read"},
			"host half: 3 watchers, read in 9ms; DEGRADED: its census is degraded: 1 thing(s) could not be read"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, HostLine(tt.host, now)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	}

	f := board.Fleet{GeneratedAt: now, Watchers: []board.Watcher{{Host: "box", Name: "monitor-web", Target: "web", Pane: "%3", Liveness: board.Live}},
		Hosts:  []board.Host{tests[0].host, tests[2].host},
		Errors: []board.Error{{Host: "gpu", Error: "unreachable: no answer within 5s"}, {Host: "box", Path: "/h/monitor-x/state.json", Error: "corrupt"}}}
	out := Compact(f)
	for _, want := range []string{"box/web %3 ", "host box: 2 watchers", "host gpu: DEGRADED", "degraded: box:/h/monitor-x/state.json: corrupt", hostLegend} {
		if !strings.Contains(out, want) {
			t.Errorf("the board lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "unreachable"); n != 1 {
		t.Errorf("a host that could not be read is said %d times, want once (its row):\n%s", n, out)
	}
}
