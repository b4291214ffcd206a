package board

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLastLines(t *testing.T) {
	long := strings.Repeat("x", maxTailRead)
	for _, tt := range []struct {
		name string
		log  string // "" writes no log
		n    int
		want []string
	}{
		{"no log", "", 5, nil},
		{"empty", "\x00", 5, nil},
		{"fewer than asked", "one\ntwo\n", 5, []string{"one", "two"}},
		{"the last n", "one\ntwo\nthree\nfour\n", 2, []string{"three", "four"}},
		{"a last line under way is left out", "one\ntwo\nthr", 5, []string{"one", "two"}},
		{"an empty line is a line", "one\n\ntwo\n", 5, []string{"one", "", "two"}},
		{"a line cut by the bound is left out", long + "\nlast\n", 5, []string{"last"}},
		{"a huge log: its end only", strings.Repeat("MONITOR · a · WORKING\n", 100000) + "end\n", 2, []string{"MONITOR · a · WORKING", "end"}},
		{"one line longer than the bound", long + long + "\n", 5, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"state.json": "{}"}
			switch tt.log {
			case "":
			case "\x00":
				files["monitor.log"] = ""
			default:
				files["monitor.log"] = tt.log
			}
			dir := writeDir(t, t.TempDir(), "monitor-a", files)
			got, err := LastLines(Watcher{Name: "monitor-a", Dir: dir}, tt.n)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLastLinesRefusesAFIFO: a FIFO with no writer put in place of the log
// is refused at once, never waited on: the receiver reads logs in the
// handling of an update, and one that waits holds every update after it.
func TestLastLinesRefusesAFIFO(t *testing.T) {
	dir := writeDir(t, t.TempDir(), "monitor-a", map[string]string{"state.json": "{}"})
	if err := syscall.Mkfifo(filepath.Join(dir, "monitor.log"), 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	if _, err := LastLines(Watcher{Name: "monitor-a", Dir: dir}, 5); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a FIFO read: %v, want not a regular file", err)
	}
}

// TestLastLinesOfAnotherHost: another host's watcher names a directory of
// that host; a log at the same path here is not read, so a host that
// names a file of this machine (a token, a key) gets nothing of it.
func TestLastLinesOfAnotherHost(t *testing.T) {
	dir := writeDir(t, t.TempDir(), "monitor-a", map[string]string{"state.json": "{}", "monitor.log": "a secret of this machine\n"})
	got, err := LastLines(Watcher{Name: "monitor-a", Dir: dir, Host: "gpu1"}, 5)
	if err != nil || got != nil {
		t.Errorf("another host's watcher: %q, %v; want no line read here", got, err)
	}
}
