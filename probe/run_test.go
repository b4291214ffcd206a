//go:build unix

package probe

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// bound is how long any probe in these tests may take to come back. The
// clocks under test are a fraction of it; it only catches a hang.
const bound = 5 * time.Second

// ignoreRun leaves out of comparisons what differs from run to run.
var ignoreRun = cmpopts.IgnoreFields(Output{}, "Elapsed", "Pgid")

func TestRun(t *testing.T) {
	tests := []struct {
		name    string
		command string
		want    Output
		wantErr string
	}{
		{"count", "echo 7", Output{Stdout: "7\n"}, ""},
		{"stdout and stderr", "printf 5; printf warn >&2", Output{Stdout: "5", Stderr: "warn"}, ""},
		{"stdin is /dev/null", "cat; echo done", Output{Stdout: "done\n"}, ""},
		{"exit status", "echo 3; exit 3", Output{Stdout: "3\n", ExitCode: 3}, "probe: exit status 3"},
		{"exit status with stderr", "echo 'no such file' >&2; echo more >&2; exit 2", Output{Stderr: "no such file\nmore\n", ExitCode: 2}, "probe: exit status 2: no such file"},
		{"killed by a signal", "kill -9 $$", Output{ExitCode: -1}, "probe: signal: killed"},
		{"grep -c counting nothing fails", "printf 'a\\n' | grep -c zzz", Output{Stdout: "0\n", ExitCode: 1}, "probe: exit status 1"},
		{"grep -c counting nothing, || true", "printf 'a\\n' | grep -c zzz || true", Output{Stdout: "0\n"}, ""},
		{"background job that let go of the output", "sleep 100 >/dev/null 2>&1 & echo 4", Output{Stdout: "4\n"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Run(context.Background(), tt.command, bound)
			if diff := cmp.Diff(tt.want, got, ignoreRun); diff != "" {
				t.Errorf("Run(%q) (-want +got):\n%s", tt.command, diff)
			}
			if diff := cmp.Diff(tt.wantErr, errString(err)); diff != "" {
				t.Errorf("Run(%q) error (-want +got):\n%s", tt.command, diff)
			}
			if got.Pgid <= 0 {
				t.Errorf("Run(%q).Pgid = %d; want the shell's pid", tt.command, got.Pgid)
			}
			waitGroupGone(t, got.Pgid)
		})
	}
}

// TestRunTimeout runs probes that never finish by themselves, each under a
// clock of 1s: every one must come back well inside the bound, say that it
// timed out, keep what it printed, and leave no process of its group behind.
// The clock is long enough for the shell to print its figure on a loaded
// machine; the process group is killed at 1s and Run returns by 2s.
func TestRunTimeout(t *testing.T) {
	const clock = time.Second
	tests := []struct {
		name    string
		command string
		want    Output
		wantErr string
		anyOut  bool // what it printed depends on how fast it ran
	}{{
		name:    "shell waits for a background job",
		command: "sleep 100 & echo 3; wait",
		want:    Output{Stdout: "3\n", ExitCode: -1, TimedOut: true},
		wantErr: "probe: timed out after 1s",
	}, {
		name:    "grandchild holds stdout after the shell exits",
		command: "(sleep 100) & echo 5",
		want:    Output{Stdout: "5\n", ExitCode: 0, TimedOut: true},
		wantErr: "probe: timed out after 1s (the shell had exited, but a background process kept its output open)",
	}, {
		name:    "grandchild holds stderr after the shell exits",
		command: "(sleep 100 >/dev/null) & echo 5",
		want:    Output{Stdout: "5\n", ExitCode: 0, TimedOut: true},
		wantErr: "probe: timed out after 1s (the shell had exited, but a background process kept its output open)",
	}, {
		name:    "shell ignores SIGTERM",
		command: "trap '' TERM; echo 6; sleep 100",
		want:    Output{Stdout: "6\n", ExitCode: -1, TimedOut: true},
		wantErr: "probe: timed out after 1s",
	}, {
		name:    "grandchild ignores SIGTERM and holds stdout",
		command: "(trap '' TERM; sleep 100) & echo 7",
		want:    Output{Stdout: "7\n", ExitCode: 0, TimedOut: true},
		wantErr: "probe: timed out after 1s (the shell had exited, but a background process kept its output open)",
	}, {
		name:    "busy loop printing",
		command: "while :; do echo 1; done",
		want:    Output{ExitCode: -1, TimedOut: true},
		wantErr: "probe: timed out after 1s",
		anyOut:  true,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Run(context.Background(), tt.command, clock)
			if got.Elapsed < clock || got.Elapsed > bound {
				t.Errorf("Run(%q) took %v; want between the clock %v and %v", tt.command, got.Elapsed, clock, bound)
			}
			if tt.anyOut {
				got.Stdout, got.StdoutTruncated = "", false
			}
			if diff := cmp.Diff(tt.want, got, ignoreRun); diff != "" {
				t.Errorf("Run(%q) (-want +got):\n%s", tt.command, diff)
			}
			if diff := cmp.Diff(tt.wantErr, errString(err)); diff != "" {
				t.Errorf("Run(%q) error (-want +got):\n%s", tt.command, diff)
			}
			waitGroupGone(t, got.Pgid)
		})
	}
}

// TestRunEscapedGroup: a process that leaves the group cannot be signalled
// through it, but holding the pipe must still not keep Run waiting.
func TestRunEscapedGroup(t *testing.T) {
	setsid := testenv.Need(t, "setsid")[0]
	pidFile := filepath.Join(t.TempDir(), "pid")
	command := setsid + " sh -c 'echo $$ >" + pidFile + "; exec sleep 100' & echo 8"
	t.Cleanup(func() {
		// The escaped sleep is this test's own child's child; end it by pid.
		deadline := time.Now().Add(bound)
		for time.Now().Before(deadline) {
			if data, err := os.ReadFile(pidFile); err == nil {
				if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && pid > 0 {
					syscall.Kill(pid, syscall.SIGKILL)
					return
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Errorf("escaped process never wrote its pid to %s", pidFile)
	})
	got, err := Run(context.Background(), command, time.Second)
	if got.Elapsed > bound {
		t.Errorf("Run took %v with an escaped process holding stdout; want under %v", got.Elapsed, bound)
	}
	if got.Stdout != "8\n" || !got.TimedOut || err == nil {
		t.Errorf("Run = %+v, %v; want stdout \"8\\n\", timed out, an error", got, err)
	}
}

func TestRunContextCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	got, err := Run(ctx, "sleep 100 & wait", time.Minute)
	if got.Elapsed > bound {
		t.Errorf("Run took %v after its context was cancelled; want under %v", got.Elapsed, bound)
	}
	if !errors.Is(err, context.Canceled) || got.TimedOut {
		t.Errorf("Run = TimedOut %v, error %v; want not timed out, context.Canceled", got.TimedOut, err)
	}
	waitGroupGone(t, got.Pgid)

	_, err = Run(ctx, "echo 1", time.Minute)
	if diff := cmp.Diff("probe: not started: context canceled", errString(err)); diff != "" {
		t.Errorf("Run with a done context (-want +got):\n%s", diff)
	}
}

func TestRunTruncates(t *testing.T) {
	got, err := Run(context.Background(), "head -c 200000 /dev/zero | tr '\\000' 1; head -c 100000 /dev/zero >&2", bound)
	if err != nil {
		t.Fatal(err)
	}
	type sizes struct {
		Stdout, Stderr                   int
		StdoutTruncated, StderrTruncated bool
	}
	want := sizes{MaxStdout, MaxStderr, true, true}
	if diff := cmp.Diff(want, sizes{len(got.Stdout), len(got.Stderr), got.StdoutTruncated, got.StderrTruncated}); diff != "" {
		t.Errorf("Run of 200000 bytes (-want +got):\n%s", diff)
	}
}

func TestRunRefuses(t *testing.T) {
	tests := []struct {
		command string
		timeout time.Duration
		wantErr string
	}{
		{"", time.Second, "probe: empty command"},
		{" \n", time.Second, "probe: empty command"},
		{"echo 1", 0, "probe: timeout must be positive"},
		{"echo 1", -time.Second, "probe: timeout must be positive"},
	}
	for _, tt := range tests {
		got, err := Run(context.Background(), tt.command, tt.timeout)
		if diff := cmp.Diff(tt.wantErr, errString(err)); diff != "" {
			t.Errorf("Run(%q, %v) error (-want +got):\n%s", tt.command, tt.timeout, diff)
		}
		if got.ExitCode != -1 || got.Pgid != 0 {
			t.Errorf("Run(%q, %v) = %+v; want ExitCode -1, Pgid 0", tt.command, tt.timeout, got)
		}
	}
}

func TestMeasure(t *testing.T) {
	tests := []struct {
		command string
		want    Reading
		wantErr string
	}{
		{"echo 7", Reading{"7\n", 7, true}, ""},
		{"echo 0", Reading{"0\n", 0, true}, ""},
		{"printf ' 12\\r\\n'", Reading{" 12\r\n", 12, true}, ""},
		{"echo seven", Reading{"seven\n", 0, false}, ""},
		{"echo 0; exit 1", Reading{"0\n", 0, false}, "probe: exit status 1"},
		{"echo 0; sleep 100", Reading{"0\n", 0, false}, "probe: timed out after 1s"},
		{"head -c 70000 /dev/zero | tr '\\000' 0", Reading{strings.Repeat("0", MaxStdout), 0, false}, ""},
		{"", Reading{}, ""},
	}
	for _, tt := range tests {
		got, _, err := Measure(context.Background(), tt.command, time.Second)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Measure(%q) (-want +got):\n%s", tt.command, diff)
		}
		if diff := cmp.Diff(tt.wantErr, errString(err)); diff != "" {
			t.Errorf("Measure(%q) error (-want +got):\n%s", tt.command, diff)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// waitGroupGone fails the test unless every process of group pgid is gone
// within the bound. Zombies count as gone: where orphans are reaped late,
// one that was killed can stay in the table for a while without running.
func waitGroupGone(t *testing.T, pgid int) {
	t.Helper()
	if pgid <= 0 {
		return
	}
	deadline := time.Now().Add(bound)
	for {
		live := groupMembers(pgid)
		if len(live) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("process group %d still has live processes %v %v after Run returned", pgid, live, bound)
			syscall.Kill(-pgid, syscall.SIGKILL)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// groupMembers lists the live (not zombie) processes of group pgid, from
// /proc where there is one, else by probing the group with signal 0.
func groupMembers(pgid int) []string {
	entries, err := os.ReadDir("/proc")
	if err != nil || len(entries) == 0 {
		if syscall.Kill(-pgid, 0) == nil {
			return []string{"pgid " + strconv.Itoa(pgid)}
		}
		return nil
	}
	var live []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone since the listing
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parens.
		s := string(data)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) < 3 || fields[2] != strconv.Itoa(pgid) || fields[0] == "Z" {
			continue
		}
		live = append(live, e.Name()+" "+s[strings.IndexByte(s, '('):strings.LastIndexByte(s, ')')+1])
	}
	return live
}
