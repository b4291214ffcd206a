package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// builds is what Build built in this test process: one directory, each set
// of packages built into it once.
var builds struct {
	sync.Mutex
	dir  string
	done map[string]error
}

// Build builds the packages pkgs (paths as go build takes them, relative to
// the test's package) into one directory of this test process, once however
// many tests ask, and returns the directory: binaries built together sit
// side by side, as an install puts them. A build that failed fails every
// test that asks for it. TestMain removes the directory (RemoveBuilds).
func Build(t testing.TB, pkgs ...string) string {
	t.Helper()
	builds.Lock()
	defer builds.Unlock()
	key := strings.Join(pkgs, " ")
	if builds.done == nil {
		builds.done = map[string]error{}
	}
	err, built := builds.done[key]
	if !built {
		if builds.dir == "" {
			builds.dir, err = os.MkdirTemp("", "omega-monitor-build")
		}
		if err == nil {
			args := append([]string{"build", "-o", builds.dir + string(filepath.Separator)}, pkgs...)
			if out, berr := exec.Command("go", args...).CombinedOutput(); berr != nil {
				err = fmt.Errorf("go build %s: %v\n%s", key, berr, out)
			}
		}
		builds.done[key] = err
	}
	if err != nil {
		t.Fatal(err)
	}
	return builds.dir
}

// RemoveBuilds removes what Build built; TestMain calls it after m.Run.
func RemoveBuilds() {
	builds.Lock()
	defer builds.Unlock()
	if builds.dir != "" {
		os.RemoveAll(builds.dir)
	}
}
