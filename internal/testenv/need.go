// Package testenv gives tests the real parts they run against: a check that a
// tool exists (fatal in CI, a skip elsewhere), a private tmux server and a
// real sshd on loopback. It is for tests only.
package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// InCI reports whether the tests run in CI, where a missing tool is a missing
// install step and must fail rather than skip.
func InCI() bool { return os.Getenv("CI") == "true" }

// EndToEnd skips the test under go test -short: the developer's quick set
// runs every rule against every golden screen and recorded session, and
// leaves the end-to-end tests (a real tmux server, sshd, the agents'
// programs, the poll loop) to the whole run, which CI makes. Every helper
// that starts a real part calls it.
func EndToEnd(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("testenv: an end-to-end test, left out of -short (the quick set)")
	}
}

// Need returns the path of each named tool, in order. A missing one fails the
// test in CI and skips it elsewhere.
func Need(t testing.TB, tools ...string) []string {
	t.Helper()
	paths := make([]string, 0, len(tools))
	for _, name := range tools {
		p, err := exec.LookPath(name)
		if err != nil {
			if InCI() {
				t.Fatalf("testenv: %s is not installed, and CI must install it (.ci/run)", name)
			}
			t.Skipf("testenv: %s is not installed", name)
		}
		paths = append(paths, p)
	}
	return paths
}
