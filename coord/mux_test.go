package coord

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

func TestCoordMuxBinary(t *testing.T) {
	home := t.TempDir()
	other := t.TempDir()
	custom := filepath.Join(other, "mymux")
	if err := os.WriteFile(custom, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	noRmuxHome := t.TempDir()
	rmux := filepath.Join(home, ".local", "bin", "rmux")
	if err := os.MkdirAll(filepath.Dir(rmux), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rmux, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	notExecHome := t.TempDir()
	os.MkdirAll(filepath.Join(notExecHome, ".local", "bin"), 0o755)
	os.WriteFile(filepath.Join(notExecHome, ".local", "bin", "rmux"), nil, 0o644)
	tmux := testenv.Need(t, "tmux")[0]

	tests := []struct {
		name string
		flag string
		env  map[string]string
		want string
	}{
		{"flag wins", custom, map[string]string{"OMEGA_MONITOR_MUX": "/nope", "HOME": home}, custom},
		{"env next", "", map[string]string{"OMEGA_MONITOR_MUX": custom, "HOME": home}, custom},
		{"rmux where executable", "", map[string]string{"HOME": home}, rmux},
		{"tmux without rmux", "", map[string]string{"HOME": noRmuxHome}, tmux},
		{"tmux when rmux is not executable", "", map[string]string{"HOME": notExecHome}, tmux},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MuxBinary(tt.flag, func(k string) string { return tt.env[k] })
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("MuxBinary = %q, want %q", got, tt.want)
			}
		})
	}
	if _, err := MuxBinary(filepath.Join(other, "missing"), func(string) string { return "" }); err == nil {
		t.Error("MuxBinary accepted a --mux that does not exist")
	}
}

func TestCoordInRmux(t *testing.T) {
	env := map[string]string{"TMUX": "/tmp/tmux-0/default,1,0"}
	if InRmux(func(k string) string { return env[k] }) {
		t.Error("InRmux is true under $TMUX alone")
	}
	env = map[string]string{"RMUX_PANE": "%3"}
	if !InRmux(func(k string) string { return env[k] }) {
		t.Error("InRmux is false under RMUX_PANE")
	}
}

func TestTmuxSessionsAndExactness(t *testing.T) {
	s := testenv.Tmux(t)
	m := Mux{Bin: s.Mux}
	ctx := context.Background()

	got, err := m.Sessions(ctx, "")
	if err != nil || len(got) != 0 {
		t.Fatalf("Sessions with no server = %q, %v; want none, no error", got, err)
	}

	s.NewSession(t, "agent", "sleep 300")
	s.NewSession(t, "agent2", "sleep 300")
	s.NewSession(t, "x$(y);z w", "sleep 300")
	got, err = m.Sessions(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"agent", "agent2", "x$(y);z w"}, got); diff != "" {
		t.Errorf("Sessions (-want +got):\n%s", diff)
	}
	for _, tt := range []struct {
		session string
		want    bool
	}{{"agent", true}, {"agent2", true}, {"ag", false}, {"agent3", false}} {
		has, err := m.HasSession(ctx, Target{Session: tt.session})
		if err != nil || has != tt.want {
			t.Errorf("HasSession(%s) = %v, %v; want %v (exact, never by prefix)", tt.session, has, err, tt.want)
		}
	}
}

func TestSSHUnreachableWithinBound(t *testing.T) {
	cfg := testenv.NewSSHConfig(t)
	testenv.HungHost(t, cfg, "silent", false)
	testenv.HungHost(t, cfg, "stalled", true)
	testenv.ClosedHost(t, cfg, "closed")
	const bound = 2 * time.Second
	m := Mux{Bin: "tmux", SSH: SSH{Config: cfg.Path, Timeout: bound}}
	for _, host := range []string{"silent", "stalled", "closed"} {
		t.Run(host, func(t *testing.T) {
			start := time.Now()
			_, err := m.Sessions(context.Background(), host)
			took := time.Since(start)
			var ce *CallError
			if !errors.As(err, &ce) || !ce.Unreachable() {
				t.Fatalf("Sessions(%s) = %v; want an unreachable CallError", host, err)
			}
			if took > bound+2*time.Second {
				t.Errorf("Sessions(%s) took %v, beyond its %v wall clock", host, took, bound)
			}
			if !strings.HasPrefix(err.Error(), "coord: host "+host) {
				t.Errorf("error %q does not name the host", err)
			}
		})
	}
}

func FuzzCoordParseSessions(f *testing.F) {
	f.Add([]byte("agent\nbuild\n"))
	f.Add([]byte("a\r\n\n\nb"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, out []byte) {
		names := ParseSessions(out)
		for _, n := range names {
			if n == "" || strings.Contains(n, "\n") || strings.HasSuffix(n, "\r") {
				t.Fatalf("ParseSessions(%q) gave %q", out, n)
			}
		}
		if again := ParseSessions([]byte(strings.Join(names, "\n"))); !cmp.Equal(names, again) {
			t.Fatalf("ParseSessions is not stable: %q then %q", names, again)
		}
	})
}
