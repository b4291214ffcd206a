package statedir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mapEnv is an environment for getenv: a test's own, so that tests run in
// parallel.
func mapEnv(vars ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(vars); i += 2 {
		m[vars[i]] = vars[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestHome(t *testing.T) {
	t.Parallel()
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
		{"", "/srv/omega", "/srv/omega"},
	} {
		if got, err := Home(mapEnv("HOME", c.home, "OMEGA_MONITOR_HOME", c.state)); err != nil || got != c.want {
			t.Errorf("HOME=%s OMEGA_MONITOR_HOME=%s: %q, %v; want %q", c.home, c.state, got, err, c.want)
		}
	}
	if _, err := Home(mapEnv()); err == nil || !strings.HasPrefix(err.Error(), "statedir: no state directory: set OMEGA_MONITOR_HOME") {
		t.Errorf("no HOME: %v", err)
	}
}
