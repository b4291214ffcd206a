package proc

import (
	"os"
	"os/exec"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAlive: a process is proven by its pid and its start token; a pid
// alone, a token of another process, or a process gone proves nothing.
func TestAlive(t *testing.T) {
	self := Self()
	if self == "" {
		t.Fatal("this process has no start token")
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		pid   int
		token string
		want  bool
	}{
		{"this process", os.Getpid(), self, true},
		{"its pid without a token", os.Getpid(), "", false},
		{"its pid, another process's token (a pid reused)", os.Getpid(), self + "1", false},
		{"a process gone", cmd.Process.Pid, self, false},
		{"no pid", 0, self, false},
		{"a negative pid", -1, self, false},
	} {
		if got := Alive(c.pid, c.token); got != c.want {
			t.Errorf("%s: Alive(%d, %q) = %v, want %v", c.name, c.pid, c.token, got, c.want)
		}
	}
}

// TestParseStat: the command name is in parentheses and may hold spaces
// and parentheses of its own; the fields are counted from the last one.
func TestParseStat(t *testing.T) {
	tail := " S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 987654 20 21"
	for _, comm := range []string{"bash", "a b", "x) S 1 2 (y", ")"} {
		token, state, err := ParseStat("42 (" + comm + ")" + tail)
		if diff := cmp.Diff([]string{"987654", "S"}, []string{token, state}); diff != "" || err != nil {
			t.Errorf("comm %q (-want +got):\n%s %v", comm, diff, err)
		}
	}
	for _, bad := range []string{"", "42 bash S 1", "42 (bash) S 1 2 3"} {
		if _, _, err := ParseStat(bad); err == nil {
			t.Errorf("ParseStat(%q) took it", bad)
		}
	}
}
