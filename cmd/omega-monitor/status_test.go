package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"gotest.tools/v3/assert"

	"github.com/omega-monitor/omega-monitor/internal/board"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/tick"
)

func TestStatusUsageErrors(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"status", "--once", "--json"},
		{"status", "--json", "--tmux"},
		{"status", "extra"},
		{"status", "--interval", "1ms"},
		{"status", "--bogus"},
	} {
		var out, errb bytes.Buffer
		if code := run(args, nil, &out, &errb); code != 2 || errb.Len() == 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and a message", args, code, errb.String())
		}
	}
}

func TestStatusOnceOfAnEmptyRootExits3(t *testing.T) {
	t.Parallel()
	env := newTestEnv("OMEGA_MONITOR_HOME=" + t.TempDir())
	var out, errb bytes.Buffer
	if code := env.run([]string{"status", "--once"}, nil, &out, &errb); code != 3 {
		t.Errorf("exit %d, want 3; stderr %s", code, errb.String())
	}
	if !strings.HasSuffix(out.String(), "\nno live watchers\n") {
		t.Errorf("output:\n%s", out.String())
	}
	// Not a terminal: the compact form, with the same exit status.
	out.Reset()
	if code := env.run([]string{"status"}, nil, &out, &errb); code != 3 || strings.Contains(out.String(), "\x1b") {
		t.Errorf("status to a buffer: exit %d\n%q", code, out.String())
	}
}

// The tally real ticks keep in state.json gives the board what it counts
// reading the history from its end and the log whole: with other writers
// appending between polls (as ack, deliver and the outcome of an action do)
// and a sweep replacing the history, the status from the tally is the
// status without it.
func TestBoardTallyOfRealTicksAgreesWithTheFiles(t *testing.T) {
	t.Parallel()
	// The census clock is the system's: an attempt whose censuses fall in
	// two minutes compares two windows, and is made again.
	for range 3 {
		if diffs, steady := boardTallyAgreement(t); steady {
			for _, d := range diffs {
				t.Error(d)
			}
			return
		}
	}
	t.Fatal("the clock crossed a minute in every attempt")
}

func boardTallyAgreement(t *testing.T) (diffs []string, steady bool) {
	home := t.TempDir()
	env := newTestEnv("OMEGA_MONITOR_HOME=" + home)
	state := filepath.Join(home, "monitor-agent")
	d := statedir.Dir(state)
	start := time.Now().UTC().Truncate(time.Minute).Add(-3 * time.Hour)
	poll := func(m int, pane string, args ...string) {
		t.Helper()
		at := start.Add(time.Duration(m) * time.Minute).Format(time.RFC3339)
		args = append([]string{"--state", state, "--target", "agent", "--now", at}, args...)
		if _, errs, code := tickOnce(t, readPane(t, pane), args...); code != 0 {
			t.Fatalf("tick at %s: exit %d: %s", at, code, errs)
		}
	}
	other := func(m int, event string) {
		t.Helper()
		at := start.Add(time.Duration(m) * time.Minute)
		if err := d.AppendHistory(at, "agent", []tick.Event{{Name: event, State: "?"}}); err != nil {
			t.Fatal(err)
		}
	}
	for m := 0; m < 150; m += 7 {
		if m%3 == 0 {
			poll(m, "GOLDEN-stalled-real", "--work", "7", "--progress", fmt.Sprint(40+m/10))
		} else {
			poll(m, "GOLDEN-question-real", "--work", "7", "--progress", fmt.Sprint(40+m/10))
		}
		switch m % 5 {
		case 0:
			other(m+1, "nudge")
		case 1:
			other(m+1, "budget_reset")
		}
		if m == 70 {
			if _, err := statedir.Dir(state).SweepHistory(5); err != nil {
				t.Fatal(err)
			}
		}
	}
	data, err := os.ReadFile(filepath.Join(state, "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]json.RawMessage
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	if len(s["tally"]) == 0 {
		t.Fatalf("no tally in the state:\n%s", data)
	}
	minutes := map[int64]bool{}
	status := func() board.Fleet {
		t.Helper()
		os.Remove(filepath.Join(home, statedir.BoardCursors)) // a cold board
		var out, errb bytes.Buffer
		if code := env.run([]string{"status", "--json"}, nil, &out, &errb); code != 0 && code != 3 {
			t.Fatalf("status: exit %d: %s", code, errb.String())
		}
		var f board.Fleet
		if err := json.Unmarshal(out.Bytes(), &f); err != nil {
			t.Fatal(err)
		}
		if len(f.Watchers) != 1 {
			t.Fatalf("watchers %+v", f.Watchers)
		}
		minutes[f.GeneratedAt.Unix()/60] = true
		return f
	}
	files := map[string][]byte{}
	for _, name := range []string{"history.jsonl", "monitor.log"} {
		path := filepath.Join(state, name)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		files[path] = data
	}
	fromTally := status()
	// The tally is what the board used: with what it counted made
	// unreadable (the history but its newlines, the log whole), the status
	// from it is the same.
	var tally board.Tally
	if err := json.Unmarshal(s["tally"], &tally); err != nil {
		t.Fatal(err)
	}
	for path, n := range map[string]int64{"history.jsonl": tally.History.Offset, "monitor.log": tally.Log.Size} {
		path = filepath.Join(state, path)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i := range data[:n] {
			if data[i] != '\n' || strings.HasSuffix(path, ".log") {
				data[i] = 'x'
			}
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(fromTally, status(), cmpopts.IgnoreFields(board.Fleet{}, "GeneratedAt"), cmpopts.IgnoreFields(board.Watcher{}, "LivenessReason")); diff != "" {
		diffs = append(diffs, "status from the tally, what it counted made unreadable (-before +after):\n"+diff)
	}
	for path, data := range files {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	delete(s, "tally")
	without, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(state, "state.json"), without, 0o600); err != nil {
		t.Fatal(err)
	}
	fromFiles := status()
	if fromFiles.Fleet.Sparkline.Total == 0 || fromFiles.Watchers[0].Activity.Nudges == 0 {
		t.Fatalf("nothing counted: %+v %+v", fromFiles.Fleet.Sparkline, fromFiles.Watchers[0].Activity)
	}
	type counted struct {
		Sparkline board.Sparkline
		Activity  board.Activity
		Log       board.LogCount
		Errors    []board.Error
	}
	of := func(f board.Fleet) counted {
		return counted{f.Fleet.Sparkline, f.Watchers[0].Activity, f.Watchers[0].Log, f.Errors}
	}
	if diff := cmp.Diff(of(fromFiles), of(fromTally)); diff != "" {
		diffs = append(diffs, "status (-without the tally +from the tally):\n"+diff)
	}
	return diffs, len(minutes) == 1
}

// TestStatusDegradedIsNotEmpty: a census that could not read the fleet
// (every state directory a link that leads nowhere, or a watcher whose
// loop.json is corrupt) exits 4, not 3: a scheduled /monitor cancels
// itself only on 3.
func TestStatusDegradedIsNotEmpty(t *testing.T) {
	t.Parallel()
	for name, plant := range map[string]func(t *testing.T, home string){
		"state directories unreadable": func(t *testing.T, home string) {
			assert.NilError(t, os.Symlink(filepath.Join(home, "nowhere"), filepath.Join(home, "monitor-agent")))
		},
		"loop.json corrupt": func(t *testing.T, home string) {
			w := filepath.Join(home, "monitor-agent")
			assert.NilError(t, os.MkdirAll(w, 0o700))
			assert.NilError(t, os.WriteFile(filepath.Join(w, "loop.json"), []byte("{corrupt"), 0o600))
		},
	} {
		t.Run(name, func(t *testing.T) {
			home := t.TempDir()
			plant(t, home)
			env := newTestEnv("OMEGA_MONITOR_HOME=" + home)
			var out, errb bytes.Buffer
			code := env.run([]string{"status", "--once"}, nil, &out, &errb)
			assert.Equal(t, code, 4, "stdout:\n%s\nstderr:\n%s", out.String(), errb.String())
			// Its words are not an empty fleet's either.
			assert.Assert(t, !strings.Contains(out.String(), "no live watchers") &&
				strings.Contains(out.String(), "no live watcher found, but the census is degraded"), out.String())
		})
	}
	// The control: an empty fleet read whole is 3, and says how to start.
	env := newTestEnv("OMEGA_MONITOR_HOME=" + t.TempDir())
	var out, errb bytes.Buffer
	assert.Equal(t, env.run([]string{"status", "--once"}, nil, &out, &errb), 3, out.String())
	assert.Assert(t, strings.HasSuffix(out.String(), "start one with: omega-monitor SESSION (omega-monitor list shows what is watchable)\nno live watchers\n"), out.String())
}
