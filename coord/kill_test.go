package coord

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestProcSessionMembers: the processes of a session are read from each
// process's stat, its session the fourth field after its name's last ")",
// whatever the name holds; an entry that is no process, a stat gone or
// garbled, and another session's process are not taken.
func TestProcSessionMembers(t *testing.T) {
	root := t.TempDir()
	for pid, stat := range map[string]string{
		"10":   "10 (ssh) S 1 10 10 0 -1",
		"11":   "11 (proxy) S 10 11 10 0 -1",
		"12":   "12 (a) b) 7 (c) S 11 12 10 0 -1", // a name with ") " in it, and a session-like word
		"13":   "13 (other) S 1 13 13 0 -1",
		"14":   "14 (cut",
		"15":   "",
		"self": "99 (self) S 1 99 10 0 -1",
	} {
		if err := os.MkdirAll(filepath.Join(root, pid), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, pid, "stat"), []byte(stat+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "16"), 0o700); err != nil { // gone: no stat
		t.Fatal(err)
	}
	got, ok := procSessionMembers(root, 10)
	slices.Sort(got)
	if diff := cmp.Diff([]int{10, 11, 12}, got); diff != "" || !ok {
		t.Errorf("session 10's processes (-want +got):\n%s(read: %v)", diff, ok)
	}
	if _, ok := procSessionMembers(filepath.Join(root, "none"), 10); ok {
		t.Error("no proc file system read as one")
	}
}

// TestKillSessionLeavesNothing: what a call's session left running (a
// proxy's child, say) is killed once its leader is over, on this machine's
// own /proc.
func TestKillSessionLeavesNothing(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here: ps lists the sessions")
	}
	cmd := exec.Command("sh", "-c", "sleep 300 >/dev/null 2>&1 & echo $!")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var child int
	if _, err := fmt.Sscan(string(out), &child); err != nil {
		t.Fatalf("%q: %v", out, err)
	}
	t.Cleanup(func() { syscall.Kill(child, syscall.SIGKILL) })
	if got := sessionMembers(cmd.Process.Pid); !slices.Contains(got, child) {
		t.Fatalf("session %d: %v, want its sleep %d among them", cmd.Process.Pid, got, child)
	}
	killSession(cmd.Process.Pid)
	for range 100 {
		if !slices.Contains(sessionMembers(cmd.Process.Pid), child) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("the sleep %d outlived killSession", child)
}
