package statedir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHome(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		home, state, want string
	}{
		{"/home/u", "", "/home/u/.omega/monitor"},
		{"/home/u", "/srv/omega", "/srv/omega"},
		{"/home/u", "rel/state", filepath.Join(wd, "rel", "state")},
	} {
		t.Setenv("HOME", c.home)
		t.Setenv("OMEGA_MONITOR_HOME", c.state)
		if got, err := Home(); err != nil || got != c.want {
			t.Errorf("HOME=%s OMEGA_MONITOR_HOME=%s: %q, %v; want %q", c.home, c.state, got, err, c.want)
		}
	}
	t.Setenv("HOME", "")
	t.Setenv("OMEGA_MONITOR_HOME", "")
	if _, err := Home(); err == nil || !strings.HasPrefix(err.Error(), "statedir: no state directory: set OMEGA_MONITOR_HOME") {
		t.Errorf("no HOME: %v", err)
	}
}
