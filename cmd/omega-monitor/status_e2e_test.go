package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/icmd"
	"gotest.tools/v3/poll"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/board"
	"github.com/omega-monitor/omega-monitor/internal/board/render"
)

// loopPid is the pid of a watcher's loop: the watcher session's pane runs
// the loop script by exec.
func (f *fleet) loopPid(t *testing.T, watcher string) int {
	t.Helper()
	out := f.tmux.Run(t, "display-message", "-p", "-t", coord.Exact(watcher), "#{pane_pid}")
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		t.Fatalf("pane pid of %s: %q", watcher, out)
	}
	return pid
}

// ensureLoopRecord waits for the watcher's loop.json and writes one from
// the pane's pid where the loop does not record it itself.
func (f *fleet) ensureLoopRecord(t *testing.T, watcher, target string, interval int) board.LoopRecord {
	t.Helper()
	path := filepath.Join(f.state, watcher, "loop.json")
	var rec board.LoopRecord
	if data, err := os.ReadFile(path); err == nil && json.Unmarshal(data, &rec) == nil && rec.Pid > 0 {
		return rec
	}
	pid := f.loopPid(t, watcher)
	token, ok := board.SystemProcs{}.StartToken(pid)
	if !ok {
		t.Fatalf("loop pid %d of %s does not run", pid, watcher)
	}
	rec = board.LoopRecord{Pid: pid, StartToken: token, StartedAt: time.Now().UTC().Truncate(time.Second),
		IntervalS: interval, Target: target, Watcher: watcher, Version: "test"}
	data, _ := json.Marshal(rec)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return rec
}

func (f *fleet) census(t *testing.T) board.Fleet {
	t.Helper()
	res := f.run(t, "status", "--json")
	res.Assert(t, icmd.Success)
	var fl board.Fleet
	if err := json.Unmarshal([]byte(res.Stdout()), &fl); err != nil {
		t.Fatalf("status --json: %v\n%s", err, res.Stdout())
	}
	return fl
}

func livenessOf(fl board.Fleet) map[string]string {
	m := map[string]string{}
	for _, w := range fl.Watchers {
		m[w.Target] = w.Liveness
	}
	return m
}

// Real watchers on a real tmux server, each in the state the board must
// tell apart: one runs (live), one's loop was killed with SIGKILL (stale),
// one was stopped (gone), one is frozen by SIGSTOP (quiet), and one's
// recorded pid is now another process (pid reuse: stale, never live), and
// one's session was ended by hand (gone: the loop said it was stopped).
func TestStatusOfRealWatchers(t *testing.T) {
	t.Parallel()
	f := newFleet(t)
	const interval = 2
	targets := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot"}
	for _, s := range targets {
		f.tmux.NewSession(t, s, "sleep 600")
		// A long call clock: the frozen call must stay hung for the test.
		cmd := icmd.Command(omegaMonitor(t), s, "--interval", strconv.Itoa(interval), "--mux-wake", "0")
		cmd.Env = []string{"HOME=" + f.home, "PATH=" + os.Getenv("PATH"), "OMEGA_MONITOR_HOME=" + f.state,
			"OMEGA_MONITOR_MUX=" + f.tmux.Mux, "OMEGA_MONITOR_TIMEOUT=600"}
		icmd.RunCmd(cmd).Assert(t, icmd.Success)
	}
	recs := map[string]board.LoopRecord{}
	for _, s := range targets {
		recs[s] = f.ensureLoopRecord(t, "monitor-"+s, s, interval)
	}
	// Every watcher has polled.
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		for _, s := range targets {
			if _, err := os.Stat(filepath.Join(f.state, "monitor-"+s, "state.json")); err != nil {
				return poll.Continue("%s has not polled", s)
			}
		}
		return poll.Success()
	}, poll.WithTimeout(60*time.Second), poll.WithDelay(100*time.Millisecond))

	kill(t, recs["bravo"].Pid, syscall.SIGKILL)
	f.run(t, "stop", "charlie").Assert(t, icmd.Success)
	// Ending the watcher's session by hand is a stop too: the loop, hung
	// up, says so on its way out.
	f.tmux.Run(t, "kill-session", "-t", "=monitor-foxtrot:")
	freeze(t, recs["delta"].Pid)
	t.Cleanup(func() { syscall.Kill(recs["delta"].Pid, syscall.SIGKILL) })
	// Pid reuse: echo's loop dies, and its pid now names another process.
	kill(t, recs["echo"].Pid, syscall.SIGKILL)
	other := exec.Command("sleep", "600")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Process.Kill(); other.Wait() })
	reused := recs["echo"]
	reused.Pid = other.Process.Pid
	data, _ := json.Marshal(reused)
	if err := os.WriteFile(filepath.Join(f.state, "monitor-echo", "loop.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}

	want := map[string]string{"alpha": board.Live, "bravo": board.Stale, "charlie": board.Gone, "delta": board.Quiet, "echo": board.Stale, "foxtrot": board.Gone}
	var last board.Fleet
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		last = f.census(t)
		got := livenessOf(last)
		for s, w := range want {
			if got[s] != w {
				for _, x := range last.Watchers {
					if x.Target == s {
						return poll.Continue("%s is %s, want %s: %s (last poll %v)", s, got[s], w, x.LivenessReason, x.LastPoll)
					}
				}
				return poll.Continue("%s is %s, want %s", s, got[s], w)
			}
		}
		return poll.Success()
	}, poll.WithTimeout(60*time.Second), poll.WithDelay(200*time.Millisecond))
	for _, w := range last.Watchers {
		if w.Target == "echo" && !strings.Contains(w.LivenessReason, "another process now") {
			t.Errorf("echo: %s", w.LivenessReason)
		}
	}
	if last.Fleet.Running != 2 || last.Degraded {
		t.Errorf("running %d degraded %v (%v)", last.Fleet.Running, last.Degraded, last.Errors)
	}

	res := f.run(t, "status", "--once")
	res.Assert(t, icmd.Success)
	// A line a watcher under the headings, as its target begins it.
	rows := 0
	for _, l := range strings.Split(res.Stdout(), "\n") {
		if f, _, _ := strings.Cut(l, " "); slices.Contains(targets, f) {
			rows++
		}
	}
	if rows != len(targets) || !strings.Contains(res.Stdout(), "\nTARGET ") || !strings.Contains(res.Stdout(), "NUDGES: typed/budget") {
		t.Errorf("--once printed %d rows, want %d, under the headings and with the legend:\n%s", rows, len(targets), res.Stdout())
	}
	t.Logf("status --once:\n%s", res.Stdout())
	if seg := f.run(t, "status", "--tmux"); !strings.Contains(seg.Stdout(), "●2") || !strings.Contains(seg.Stdout(), "✗2") {
		t.Errorf("--tmux: %q", seg.Stdout())
	}

	// With no loop left running, --once says so and exits 3.
	kill(t, recs["alpha"].Pid, syscall.SIGKILL)
	kill(t, recs["delta"].Pid, syscall.SIGKILL)
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		res = f.run(t, "status", "--once")
		if res.ExitCode != 3 {
			return poll.Continue("exit %d:\n%s", res.ExitCode, res.Stdout())
		}
		return poll.Success()
	}, poll.WithTimeout(30*time.Second), poll.WithDelay(100*time.Millisecond))
	if !strings.HasSuffix(res.Stdout(), "\nno live watchers\n") {
		t.Errorf("--once without a live watcher:\n%s", res.Stdout())
	}
}

func kill(t *testing.T, pid int, sig syscall.Signal) {
	t.Helper()
	if err := syscall.Kill(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("kill -%d %d: %v", sig, pid, err)
	}
}

// freeze stops the loop with SIGSTOP where it waits: tmux continues a pane's
// own process the moment it stops (it answers SIGCHLD with SIGCONT), so the
// loop itself cannot stay stopped; its children can, and the loop then
// waits on a call that never returns, the hung call that quiet is for.
func freeze(t *testing.T, pid int) {
	t.Helper()
	// A call lasts milliseconds and comes every interval: on a loaded
	// machine the window is narrow, so the children are read often and for
	// long.
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
		if err != nil {
			t.Skipf("no /proc children list: %v", err)
		}
		// A call runs in a process group of its own; the loop's watchdog,
		// in the loop's group, is not a call.
		calls := 0
		for _, k := range strings.Fields(string(data)) {
			c, err := strconv.Atoi(k)
			if err != nil {
				continue
			}
			if pgid, err := syscall.Getpgid(c); err != nil || pgid != c {
				continue
			}
			syscall.Kill(c, syscall.SIGSTOP)
			t.Cleanup(func() { syscall.Kill(c, syscall.SIGKILL) })
			if stopped(c) { // not a call that ended as it was read
				calls++
			}
		}
		if calls > 0 {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("the loop %d never ran a call to freeze", pid)
}

// stopped says whether process pid is stopped, within a second of a
// SIGSTOP.
func stopped(pid int) bool {
	for range 50 {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return false
		}
		_, rest, _ := strings.Cut(string(data), ") ")
		switch state, _, _ := strings.Cut(rest, " "); state {
		case "T", "t":
			return true
		case "Z", "X":
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// The live form in a real terminal: a tmux pane runs the board, which is
// captured as drawn; the window is resized and the board redraws to the new
// width; q ends it and the terminal is as it was (the same stty settings,
// the main screen back with what it held, nothing of the board in the
// scrollback).
func TestStatusLiveInATerminal(t *testing.T) {
	f := newFleet(t)
	bin := omegaMonitor(t)
	dir := t.TempDir()
	started := time.Now().Add(-time.Hour).UTC()
	// A watcher whose loop is this test's own process, polling now: live.
	token, _ := board.SystemProcs{}.StartToken(os.Getpid())
	w := filepath.Join(f.state, "monitor-api")
	if err := os.MkdirAll(w, 0o700); err != nil {
		t.Fatal(err)
	}
	rec, _ := json.Marshal(board.LoopRecord{Pid: os.Getpid(), StartToken: token, StartedAt: started, IntervalS: 3600, Target: "api"})
	os.WriteFile(filepath.Join(w, "loop.json"), rec, 0o600)
	os.WriteFile(filepath.Join(w, "state.json"), []byte(fmt.Sprintf(
		`{"version":1,"budget":{"limit":5,"used":1},"state":"STALLED","state_since":%q,"last_poll":%q,"agent":"claude","work":"7","last_transition":{"at":%q,"from":"WORKING","to":"STALLED","line":"MONITOR · api · STALLED · nudged (1/5)"}}`,
		started.Format(time.RFC3339), time.Now().UTC().Format(time.RFC3339), started.Format(time.RFC3339))), 0o600)

	script := fmt.Sprintf(`echo BEFORE; stty -a >%[1]s/before; OMEGA_MONITOR_HOME=%[2]s %[3]s status --interval 200ms; echo "exit $?" >%[1]s/exit; stty -a >%[1]s/after; echo AFTER; exec sleep 600`,
		shellQuote(dir), shellQuote(f.state), shellQuote(bin))
	f.tmux.NewSession(t, "board", "sh -c "+shellQuote(script))
	capture := func() string { return f.tmux.Run(t, "capture-pane", "-p", "-t", "=board:") }
	waitScreen := func(what string, ok func(string) bool) string {
		t.Helper()
		var screen string
		poll.WaitOn(t, func(poll.LogT) poll.Result {
			screen = capture()
			if ok(screen) {
				return poll.Success()
			}
			return poll.Continue("%s; the pane shows:\n%s", what, screen)
		}, poll.WithTimeout(30*time.Second), poll.WithDelay(50*time.Millisecond))
		return screen
	}
	screen := waitScreen("no board", func(s string) bool { return strings.Contains(s, "monitor-api") })
	for _, want := range []string{"omega-monitor status", "48h: ", "▶ api", "[live]", "STALLED", "transition", "WORKING → STALLED", "NUDGES: typed/budget"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the board lacks %q:\n%s", want, screen)
		}
	}
	if strings.Contains(screen, "BEFORE") {
		t.Errorf("the board is not on the alternate screen:\n%s", screen)
	}
	t.Logf("120x40:\n%s", screen)

	f.tmux.Run(t, "resize-window", "-t", "=board:", "-x", "50", "-y", "12")
	screen = waitScreen("not redrawn at 50 columns", func(s string) bool {
		lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
		return strings.Contains(s, "▶ api") && strings.Contains(s, "STALLED") && strings.Contains(s, "1/5") && len(lines) <= 12
	})
	for _, l := range strings.Split(screen, "\n") {
		if render.Width(l) > 50 {
			t.Errorf("a line wider than 50 columns after the resize: %q", l)
		}
	}
	t.Logf("50x12:\n%s", screen)

	// Enter jumps: the board runs inside tmux, so the client that shows it
	// (here a client attached from another session's pane) switches to
	// the selected watcher's session, and the board keeps running.
	f.tmux.NewSession(t, "api", "sleep 600")
	f.tmux.NewSession(t, "viewer", f.tmux.Mux+" attach-session -t =board:")
	clients := func() string {
		return f.tmux.Run(t, "list-clients", "-F", "#{client_session}")
	}
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if strings.Contains(clients(), "board") {
			return poll.Success()
		}
		return poll.Continue("no client on the board: %q", clients())
	}, poll.WithTimeout(30*time.Second), poll.WithDelay(50*time.Millisecond))
	f.tmux.Run(t, "send-keys", "-t", "=board:", "Enter")
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if strings.Contains(clients(), "api") {
			return poll.Success()
		}
		return poll.Continue("the client did not switch to api: %q", clients())
	}, poll.WithTimeout(30*time.Second), poll.WithDelay(50*time.Millisecond))
	f.tmux.Run(t, "kill-session", "-t", "=viewer:")

	f.tmux.Run(t, "send-keys", "-t", "=board:", "q")
	screen = waitScreen("not back to the shell", func(s string) bool { return strings.Contains(s, "AFTER") })
	if !strings.Contains(screen, "BEFORE") || strings.Contains(screen, "monitor-api") {
		t.Errorf("the main screen was not restored:\n%s", screen)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "before"))
	after, _ := os.ReadFile(filepath.Join(dir, "after"))
	// The size differs, by the resize; every setting must be as it was.
	_, before, _ = bytes.Cut(before, []byte("\n"))
	_, after, _ = bytes.Cut(after, []byte("\n"))
	if len(before) == 0 || string(before) != string(after) {
		t.Errorf("the terminal settings changed:\nbefore %s\nafter  %s", before, after)
	}
	if code, _ := os.ReadFile(filepath.Join(dir, "exit")); strings.TrimSpace(string(code)) != "exit 0" {
		t.Errorf("the board ended with %q", code)
	}
	history := f.tmux.Run(t, "capture-pane", "-p", "-S", "-", "-E", "-1", "-t", "=board:")
	if strings.Contains(history, "omega-monitor status") {
		t.Errorf("the board scrolled into the history:\n%s", history)
	}
}

func shellQuote(s string) string { return coord.ShellQuote(s) }

// TestStatusLiveAt80Columns: status --live in a real tmux pane 80 columns
// wide: every watcher's row holds its state, its nudge count and what it
// needs you for, whole; nothing passes the 80th column; a watcher stopped
// an hour after its state began says an hour, however long ago that was.
func TestStatusLiveAt80Columns(t *testing.T) {
	f := newFleet(t)
	bin := omegaMonitor(t)
	now := time.Now().UTC().Truncate(time.Second)
	token, _ := board.SystemProcs{}.StartToken(os.Getpid())
	watcher := func(name, target string, pid int, state string, since time.Time, used, limit int, latch bool, extra map[string]string) {
		dir := filepath.Join(f.state, name)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		rec, _ := json.Marshal(board.LoopRecord{Pid: pid, StartToken: token, StartedAt: now.Add(-5 * time.Hour), IntervalS: 3600, Target: target})
		st, _ := json.Marshal(map[string]any{"state": state, "state_since": since, "last_poll": now, "agent": "claude", "work": "7",
			"budget": map[string]int{"used": used, "limit": limit}, "budget_latch": latch})
		files := map[string][]byte{"loop.json": rec, "state.json": st}
		for k, v := range extra {
			files[k] = []byte(v)
		}
		for file, data := range files {
			if err := os.WriteFile(filepath.Join(dir, file), data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	me := os.Getpid()
	watcher("monitor-api", "api", me, "QUESTION", now.Add(-3*time.Minute), 2, 5, false, nil)
	watcher("monitor-build-box-web", "build-box:web", me, "WORKING", now.Add(-23*time.Minute), 1, 5, false, nil)
	watcher("monitor-docs", "docs", me, "STALLED", now.Add(-40*time.Minute), 12, 12, true, nil)
	watcher("monitor-4f2a", "a-rather-long-session-name-for-the-agent-of-the-shop", me, "BLOCKED", now.Add(-9*time.Minute), 0, 5, false, nil)
	watcher("monitor-old", "old", 1<<22, "STALLED", now.Add(-3*time.Hour), 3, 5, false,
		map[string]string{"ended.json": fmt.Sprintf(`{"at":%q,"by":"stop"}`, now.Add(-2*time.Hour).Format(time.RFC3339))})

	script := fmt.Sprintf(`OMEGA_MONITOR_HOME=%s %s status --live --interval 200ms; exec sleep 600`, shellQuote(f.state), shellQuote(bin))
	f.tmux.Run(t, "new-session", "-d", "-s", "board", "-x", "80", "-y", "24", "sh -c "+shellQuote(script))
	var screen string
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		screen = f.tmux.Run(t, "capture-pane", "-p", "-t", "=board:")
		if strings.Contains(screen, "monitor-old") || strings.Count(screen, "[") >= 5 {
			return poll.Success()
		}
		return poll.Continue("no board; the pane shows:\n%s", screen)
	}, poll.WithTimeout(30*time.Second), poll.WithDelay(50*time.Millisecond))
	t.Logf("80x24:\n%s", screen)
	if w := f.tmux.Run(t, "display-message", "-p", "-t", "=board:", "#{pane_width}"); strings.TrimSpace(w) != "80" {
		t.Fatalf("the pane is %s columns wide", w)
	}
	lines := strings.Split(screen, "\n")
	for _, l := range lines {
		if render.Width(l) > 80 {
			t.Errorf("a line wider than 80 columns: %q", l)
		}
	}
	rowOf := func(target string) string {
		for _, l := range lines {
			if strings.HasPrefix(strings.TrimLeft(l, "▶ "), target) {
				return l
			}
		}
		return ""
	}
	for target, want := range map[string][]string{
		"api":                 {"QUESTION", " 2/5 ", "question"},
		"build-box:web":       {"WORKING", " 1/5"},
		"docs":                {"STALLED", " 12/12 ", "budget spent"},
		"a-rather-long-sessi": {"BLOCKED", " 0/5 ", "blocked"},
		"old":                 {"[gone]", "STALLED", "01:00:00", " 3/5"},
	} {
		row := rowOf(target)
		for _, w := range want {
			if !strings.Contains(row, w) {
				t.Errorf("the row of %s lacks %q: %q", target, w, row)
			}
		}
	}
	for _, want := range []string{"NUDGES", "NEEDS YOU", "needs you: 1 question, 1 blocked, 1 budget spent", "5 watchers: 4 live, 1 gone", "NUDGES: typed/budget since progress"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the board lacks %q", want)
		}
	}
	f.tmux.Run(t, "send-keys", "-t", "=board:", "q")
}
