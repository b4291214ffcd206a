package procgroup

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/poll"
)

// TestClockKillsTheGroup: a script that starts a grandchild holding its
// output, then hangs, is ended whole by its clock, and Wait returns soon
// after: the grandchild does not outlive it.
func TestClockKillsTheGroup(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	cmd := Command(ctx, 500*time.Millisecond, "sh", "-c", "sleep 60 & echo $! > "+pidFile+"; sleep 60")
	var out strings.Builder
	cmd.Stdout = &out
	start := time.Now()
	err := cmd.Run()
	if err == nil {
		t.Fatal("a hung script exited 0")
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("Run took %v after a 300ms clock", d)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if syscall.Kill(pid, 0) != nil {
			return poll.Success()
		}
		return poll.Continue("grandchild %d still runs", pid)
	}, poll.WithTimeout(5*time.Second))
}

// TestKillEndsWhatWasLeftBehind: a child started in the background by a
// script that exited is ended by Kill.
func TestKillEndsWhatWasLeftBehind(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	cmd := Command(context.Background(), time.Second, "sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $! > "+pidFile)
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	Kill(cmd)
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if syscall.Kill(pid, 0) != nil {
			return poll.Success()
		}
		return poll.Continue("left-behind %d still runs", pid)
	}, poll.WithTimeout(5*time.Second))
}
