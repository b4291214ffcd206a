package main

import (
	"strings"
	"testing"

	"github.com/omega-monitor/omega-monitor/internal/board/hosts"
	"github.com/omega-monitor/omega-monitor/internal/testfleet"
)

// TestReadWatcherExits: read-watcher prints the records asked as JSON and
// exits 0; a command line it does not take exits 2, and no such watcher
// 1, each with one line on standard error.
func TestReadWatcherExits(t *testing.T) {
	t.Parallel()
	home := testfleet.Home(t)
	env := newTestEnv("OMEGA_MONITOR_HOME=" + home)
	tests := []struct {
		args     []string
		code     int
		wantErrs string
	}{
		{[]string{"proj"}, 2, "omega-monitor: read-watcher: give one of --history DAYS, --explain, --logs N; "},
		{[]string{"--explain", "--logs", "3", "proj"}, 2, "give one of"},
		{[]string{"--explain"}, 2, "takes one watcher, got 0"},
		{[]string{"--history", "31", "proj"}, 2, "days must be 1 to 30, got 31"},
		{[]string{"--logs", "-1", "proj"}, 2, "lines must be 1 to 2000, got -1"},
		{[]string{"--explain", "nobody"}, 1, `omega-monitor: read-watcher: no watcher "nobody"`},
		{[]string{"--explain", "../monitor-proj"}, 1, `no watcher "../monitor-proj"`},
	}
	for _, tt := range tests {
		var out, errs strings.Builder
		code := env.run(append([]string{"read-watcher"}, tt.args...), strings.NewReader(""), &out, &errs)
		if code != tt.code || out.String() != "" || !strings.Contains(errs.String(), tt.wantErrs) || strings.Count(errs.String(), "\n") != 1 {
			t.Errorf("read-watcher %q: exit %d, out %q, err %q; want exit %d and one line with %q", tt.args, code, out.String(), errs.String(), tt.code, tt.wantErrs)
		}
	}
	var out, errs strings.Builder
	if code := env.run([]string{"read-watcher", "proj", "--logs", "2"}, strings.NewReader(""), &out, &errs); code != 0 || errs.Len() != 0 {
		t.Fatalf("read-watcher proj --logs 2: exit %d: %s", code, errs.String())
	}
	if _, err := hosts.DecodeRecords([]byte(out.String()), hosts.Query{Kind: hosts.Logs, Lines: 2}); err != nil {
		t.Errorf("read-watcher proj --logs 2: %v\n%s", err, out.String())
	}
}

// TestWakeMuxUsage: wake --mux refuses what it does not take with its
// usage, exit 2, before it arms anything.
func TestWakeMuxUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--state", "/s", "--target", "%1", "--silence", "2"},
		{"--state", "/s", "--host", "box", "--target", "%1", "--silence", "0"},
		{"--no-such-flag"},
	} {
		var out, errs strings.Builder
		code := newTestEnv().run(append([]string{"wake", "--mux"}, args...), strings.NewReader(""), &out, &errs)
		if code != 2 || out.Len() != 0 || !strings.Contains(errs.String(), "usage: omega-monitor wake --mux") {
			t.Errorf("wake --mux %q: exit %d, out %q, err %q; want exit 2 and the usage", args, code, out.String(), errs.String())
		}
	}
}
