package hosts_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// TestTenHostsCost measures one refresh of a board of 10 hosts of 20
// watchers each (10 real sshd, each reading a state home of 20 watchers):
// the wall time and the CPU of status --json and everything it waited for
// (the ssh clients), cold (a handshake a host) and warm (through the
// connections the last refresh kept), and the CPU of one host's side
// (its status --json of 20 watchers). It runs only when
// OMEGA_MONITOR_MEASURE is set, and asserts nothing but that it works.
func TestTenHostsCost(t *testing.T) {
	testenv.EndToEnd(t)
	if os.Getenv("OMEGA_MONITOR_MEASURE") == "" {
		t.Skip("set OMEGA_MONITOR_MEASURE=1 to measure")
	}
	cfg := testenv.NewSSHConfig(t)
	var aliases []string
	home := watchers(t, "w", 20)
	for i := range 10 {
		alias := fmt.Sprintf("h%d", i)
		testenv.SSHD(t, cfg, alias, hostEnv(t, home)...)
		aliases = append(aliases, alias)
	}
	local := t.TempDir()
	closeMasters(t, cfg, local)
	refresh := func(label string) {
		cmd := exec.Command(bin(t), "status", "--json", "--ssh-config", cfg.Path, "--hosts", strings.Join(aliases, ","))
		cmd.Env = append(os.Environ(), "OMEGA_MONITOR_HOME="+local, "HOME="+t.TempDir())
		start := time.Now()
		out, err := cmd.Output()
		wall := time.Since(start)
		if err != nil {
			t.Fatalf("status: %v", err)
		}
		if n := strings.Count(string(out), `"liveness": "live"`); n != 200 {
			t.Fatalf("%d live watchers, want 200", n)
		}
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		t.Logf("%s refresh of 10 hosts x 20 watchers: wall %v, CPU %v (status and its ssh clients), answer %d bytes",
			label, wall.Round(time.Millisecond), cpu.Round(time.Millisecond), len(out))
	}
	refresh("cold")
	for range 3 {
		refresh("warm")
	}
	host := exec.Command(bin(t), "status", "--json")
	host.Env = append(os.Environ(), "OMEGA_MONITOR_HOME="+home, "OMEGA_MONITOR_READ_BY_BOARD=1")
	start := time.Now()
	if err := host.Run(); err != nil {
		t.Fatal(err)
	}
	ru := host.ProcessState.SysUsage().(*syscall.Rusage)
	t.Logf("one host's side: status --json of 20 watchers: wall %v, CPU %v", time.Since(start).Round(time.Millisecond),
		time.Duration(ru.Utime.Nano()+ru.Stime.Nano()).Round(time.Millisecond))
}
