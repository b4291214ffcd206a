package testenv_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

func TestTmuxPrivateServer(t *testing.T) {
	s := testenv.Tmux(t)
	s.NewSession(t, "agent", "sleep 300")
	if diff := cmp.Diff([]string{"agent"}, s.Sessions(t)); diff != "" {
		t.Errorf("sessions (-want +got):\n%s", diff)
	}
	// The wrapper reaches the same server.
	out, err := exec.Command(s.Mux, "display-message", "-p", "-t", "=agent:", "#S").Output()
	if err != nil {
		t.Fatalf("wrapper: %v", err)
	}
	if got := strings.TrimSpace(string(out)); got != "agent" {
		t.Errorf("wrapper sees session %q, want agent", got)
	}
}

func TestSSHDRunsCommands(t *testing.T) {
	cfg := testenv.NewSSHConfig(t)
	testenv.SSHD(t, cfg, "testbox", "OMEGA_TEST_MARK=a b")
	out, err := exec.Command("ssh", "-F", cfg.Path, "-n", "-o", "BatchMode=yes", "testbox", `printf %s "$OMEGA_TEST_MARK"`).CombinedOutput()
	if err != nil {
		t.Fatalf("ssh: %v\n%s", err, out)
	}
	if got := string(out); got != "a b" {
		t.Errorf("remote environment OMEGA_TEST_MARK = %q, want %q", got, "a b")
	}
}

func TestSSHHungHostNeedsAWallClock(t *testing.T) {
	cfg := testenv.NewSSHConfig(t)
	testenv.HungHost(t, cfg, "silent", false)
	testenv.HungHost(t, cfg, "stalled", true)
	testenv.ClosedHost(t, cfg, "closed")
	for _, alias := range []string{"silent", "stalled", "closed"} {
		t.Run(alias, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			start := time.Now()
			err := exec.CommandContext(ctx, "ssh", "-F", cfg.Path, "-n", "-o", "BatchMode=yes", "-o", "ConnectTimeout=1", alias, "true").Run()
			if err == nil {
				t.Fatalf("ssh %s succeeded; want a failure", alias)
			}
			if time.Since(start) > 10*time.Second {
				t.Errorf("ssh %s was not ended by its wall clock", alias)
			}
		})
	}
}
