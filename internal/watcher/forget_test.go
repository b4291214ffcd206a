package watcher

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/board"
	"github.com/omega-monitor/omega-monitor/internal/fsutil"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// plant writes a watcher's directory under home: files by name, 0600, in
// a 0700 directory.
func plant(t *testing.T, home, name string, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(home, name)
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

// loopOf is a loop.json of pid, with its real start token when it runs.
func loopOf(t *testing.T, pid int, target string, started time.Time) string {
	t.Helper()
	token, _ := board.SystemProcs{}.StartToken(pid)
	if token == "" {
		token = "1"
	}
	data, err := json.Marshal(board.LoopRecord{Pid: pid, StartToken: token, StartedAt: started, IntervalS: 60, Target: target, Watcher: coord.WatcherName(coord.Target{Session: target})})
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func stateAt(state string, since, last time.Time) string {
	data, _ := json.Marshal(map[string]any{"state": state, "state_since": since, "last_poll": last, "budget": map[string]int{"limit": 5}})
	return string(data)
}

// deadPid is a pid no process has.
const deadPid = 1 << 22

// TestForget: a watcher whose loop no longer runs is removed whole, named
// by its target or its own name; a running one (live, quiet, its loop
// holding the lock, its session still there) is refused with the reason
// and the stop that ends it, and a directory that is a link, not the
// user's alone or not a watcher's is refused; nothing outside the watcher's
// directory is touched, whatever links it holds.
func TestForget(t *testing.T) {
	tmux := testenv.Tmux(t)
	m := coord.Mux{Bin: tmux.Mux}
	now := time.Now().UTC().Truncate(time.Second)
	hour := now.Add(-time.Hour)
	outside := t.TempDir()
	keep := filepath.Join(outside, "precious")
	if err := os.WriteFile(keep, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	ended := `{"at":"` + now.Add(-time.Minute).Format(time.RFC3339) + `","by":"stop"}`
	tests := []struct {
		name   string
		arg    string
		setup  func(t *testing.T, home string)
		want   string // in the message said, or in the error
		gone   string // the directory that must be gone ("" none)
		failed bool
	}{
		{name: "stopped, by its target", arg: "docs", setup: func(t *testing.T, home string) {
			plant(t, home, "monitor-docs", map[string]string{"loop.json": loopOf(t, deadPid, "docs", hour), "ended.json": ended,
				"state.json": stateAt("STALLED", hour, now.Add(-2*time.Minute)), "monitor.log": "MONITOR · docs\n"})
		}, want: "forgot monitor-docs, the watcher of docs (gone: stopped 1m0s ago", gone: "monitor-docs"},
		{name: "stopped, by its own name", arg: "monitor-docs", setup: func(t *testing.T, home string) {
			plant(t, home, "monitor-docs", map[string]string{"loop.json": loopOf(t, deadPid, "docs", hour), "ended.json": ended})
		}, want: "removed ", gone: "monitor-docs"},
		{name: "died without a stop", arg: "api", setup: func(t *testing.T, home string) {
			plant(t, home, "monitor-api", map[string]string{"loop.json": loopOf(t, deadPid, "api", hour), "state.json": stateAt("WORKING", hour, hour)})
		}, want: "(stale: pid 4194304 is dead", gone: "monitor-api"},
		{name: "a fingerprint's directory whose target is lost", arg: coord.WatcherName(coord.Target{Session: "a-b"}), setup: func(t *testing.T, home string) {
			plant(t, home, coord.WatcherName(coord.Target{Session: "a-b"}), map[string]string{"history.jsonl": "{}\n"})
		}, want: "forgot " + coord.WatcherName(coord.Target{Session: "a-b"}) + ", whose target is not recorded (gone: no loop record", gone: coord.WatcherName(coord.Target{Session: "a-b"})},
		{name: "a link inside is removed as a link", arg: "docs", setup: func(t *testing.T, home string) {
			dir := plant(t, home, "monitor-docs", map[string]string{"loop.json": loopOf(t, deadPid, "docs", hour), "ended.json": ended})
			if err := os.Symlink(outside, filepath.Join(dir, "outbox")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(keep, filepath.Join(dir, "monitor.log")); err != nil {
				t.Fatal(err)
			}
		}, want: "removed ", gone: "monitor-docs"},

		{name: "live", arg: "api", setup: func(t *testing.T, home string) {
			plant(t, home, "monitor-api", map[string]string{"loop.json": loopOf(t, os.Getpid(), "api", hour), "state.json": stateAt("WORKING", hour, now)})
		}, want: "monitor-api is running (live: pid ", failed: true},
		{name: "quiet", arg: "monitor-api", setup: func(t *testing.T, home string) {
			plant(t, home, "monitor-api", map[string]string{"loop.json": loopOf(t, os.Getpid(), "api", hour), "state.json": stateAt("WORKING", hour, hour)})
		}, want: "monitor-api is running (quiet: pid ", failed: true},
		{name: "its loop holds the lock", arg: "api", setup: func(t *testing.T, home string) {
			dir := plant(t, home, "monitor-api", map[string]string{"loop.json": loopOf(t, deadPid, "api", hour), "ended.json": ended})
			lock, err := fsutil.TryLock(filepath.Join(dir, statedir.Holder))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { lock.Close() })
		}, want: "monitor-api is running: its loop holds its state directory", failed: true},
		{name: "its session still exists", arg: "sess", setup: func(t *testing.T, home string) {
			plant(t, home, "monitor-sess", map[string]string{"loop.json": loopOf(t, deadPid, "sess", hour)})
			tmux.NewSession(t, "monitor-sess", "sleep 600")
		}, want: "monitor-sess still has its session (its loop is stale", failed: true},

		{name: "a link to a directory elsewhere", arg: "monitor-evil", setup: func(t *testing.T, home string) {
			plant(t, outside, "fake", map[string]string{"state.json": "{}", "loop.json": "{}"})
			if err := os.Symlink(filepath.Join(outside, "fake"), filepath.Join(home, "monitor-evil")); err != nil {
				t.Fatal(err)
			}
		}, want: "is a symbolic link, not a watcher's directory; forget follows none", failed: true},
		{name: "writable by others", arg: "docs", setup: func(t *testing.T, home string) {
			dir := plant(t, home, "monitor-docs", map[string]string{"loop.json": loopOf(t, deadPid, "docs", hour), "ended.json": ended})
			if err := os.Chmod(dir, 0o777); err != nil {
				t.Fatal(err)
			}
		}, want: "is writable by others", failed: true},
		{name: "not a watcher's directory", arg: "monitor-notes", setup: func(t *testing.T, home string) {
			plant(t, home, "monitor-notes", map[string]string{"notes": "x"})
		}, want: "holds none of a watcher's files", failed: true},
		{name: "nothing of that name", arg: "nobody", want: "no watcher monitor-nobody under ", failed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			if tt.setup != nil {
				tt.setup(t, home)
			}
			name, err := ForgetName(home, tt.arg)
			if err != nil {
				t.Fatalf("ForgetName(%q): %v", tt.arg, err)
			}
			said, err := Forget(context.Background(), m, home, name, now)
			switch {
			case tt.failed && err == nil:
				t.Fatalf("forget %s said %q, want a refusal with %q", tt.arg, said, tt.want)
			case tt.failed && !strings.Contains(err.Error(), tt.want):
				t.Errorf("forget %s: %v\nwant %q", tt.arg, err, tt.want)
			case tt.failed && strings.Contains(tt.want, "running") && !strings.Contains(err.Error(), "stop it first: omega-monitor stop "):
				t.Errorf("forget %s: %v\nwant how to stop it", tt.arg, err)
			case !tt.failed && err != nil:
				t.Fatalf("forget %s: %v", tt.arg, err)
			case !tt.failed && !strings.Contains(said, tt.want):
				t.Errorf("forget %s said %q, want %q", tt.arg, said, tt.want)
			}
			if tt.gone != "" {
				if _, err := os.Lstat(filepath.Join(home, tt.gone)); err == nil {
					t.Errorf("%s is still there", tt.gone)
				}
			}
			if tt.failed {
				entries, _ := os.ReadDir(home)
				if tt.setup != nil && len(entries) == 0 {
					t.Errorf("a refused forget removed the watcher")
				}
			}
			if data, err := os.ReadFile(keep); err != nil || string(data) != "mine" {
				t.Errorf("the file outside was touched: %q %v", data, err)
			}
			if _, err := os.Stat(filepath.Join(outside, "fake", "state.json")); tt.name == "a link to a directory elsewhere" && err != nil {
				t.Errorf("the linked directory lost its files: %v", err)
			}
		})
	}
}

// TestForgetNameRefusesPaths: whatever is typed, forget names one entry of
// the state home, never a path: a name with a slash or a dot, or one that
// is not a watcher's, is refused, or read as a target whose watcher's name
// is safe.
func TestForgetNameRefusesPaths(t *testing.T) {
	home := t.TempDir()
	plant(t, home, "monitor-docs", map[string]string{"ended.json": "{}"})
	for _, arg := range []string{"../x", "monitor-../../etc", "monitor-docs/../../x", "..", ".", "", "/etc", "monitor-docs/", `monitor-a\b`, "x:../y"} {
		name, err := ForgetName(home, arg)
		if err != nil {
			continue
		}
		if !coord.IsWatcher(name) || coord.CheckSession(name) != nil {
			t.Errorf("ForgetName(%q) = %q", arg, name)
		}
	}
	for _, name := range []string{"..", "monitor-../x", "monitor-docs/..", "bin", "audits", ".board-cursors.json", "monitor-a/b"} {
		if _, err := Forget(context.Background(), coord.Mux{Bin: "/nonexistent"}, home, name, time.Now()); err == nil || !strings.Contains(err.Error(), "is not a watcher's name") {
			t.Errorf("Forget(%q): %v, want a refusal of the name", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(home, "monitor-docs")); err != nil {
		t.Errorf("monitor-docs: %v", err)
	}
}
