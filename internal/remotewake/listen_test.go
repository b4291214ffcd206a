package remotewake

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// TestListenCommandFindsTheHostsBinary runs the listener's command line as
// the host's login shell would (sh -c, what ssh hands it): it runs the
// host's omega-monitor (OMEGA_MONITOR_BIN, else on PATH, else ~/go/bin,
// else ~/.local/bin) with exactly wake --listen --target T, the target one
// word whatever it holds; with none it exits 127, and a file that cannot
// run, or a directory, is passed by.
func TestListenCommandFindsTheHostsBinary(t *testing.T) {
	sh := testenv.Need(t, "sh")[0]
	stub := "#!/bin/sh\nfor a; do printf '%s|' \"$a\"; done; echo \"$0\"\n"
	put := func(t *testing.T, path string, mode os.FileMode) {
		t.Helper()
		os.MkdirAll(filepath.Dir(path), 0o700)
		if err := os.WriteFile(path, []byte(stub), mode); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, home, bin string) (env []string, want string)
		code  int
	}{
		{"none", func(t *testing.T, home, bin string) ([]string, string) { return nil, "" }, 127},
		{"go install's", func(t *testing.T, home, bin string) ([]string, string) {
			put(t, filepath.Join(home, "go/bin/omega-monitor"), 0o700)
			put(t, filepath.Join(home, ".local/bin/omega-monitor"), 0o700)
			return nil, filepath.Join(home, "go/bin/omega-monitor")
		}, 0},
		{"~/.local/bin", func(t *testing.T, home, bin string) ([]string, string) {
			put(t, filepath.Join(home, "go/bin/omega-monitor"), 0o600) // cannot run
			put(t, filepath.Join(home, ".local/bin/omega-monitor"), 0o700)
			return nil, filepath.Join(home, ".local/bin/omega-monitor")
		}, 0},
		{"on PATH", func(t *testing.T, home, bin string) ([]string, string) {
			put(t, filepath.Join(bin, "omega-monitor"), 0o700)
			put(t, filepath.Join(home, "go/bin/omega-monitor"), 0o700)
			return nil, filepath.Join(bin, "omega-monitor")
		}, 0},
		{"OMEGA_MONITOR_BIN", func(t *testing.T, home, bin string) ([]string, string) {
			p := filepath.Join(t.TempDir(), "om")
			put(t, p, 0o700)
			put(t, filepath.Join(bin, "omega-monitor"), 0o700)
			return []string{"OMEGA_MONITOR_BIN=" + p}, p
		}, 0},
		{"a directory", func(t *testing.T, home, bin string) ([]string, string) {
			os.MkdirAll(filepath.Join(home, "go/bin/omega-monitor"), 0o700)
			return nil, ""
		}, 127},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home, bin := t.TempDir(), t.TempDir()
			env, want := tc.setup(t, home, bin)
			target := "=a b;$(id)`x`'q':"
			cmd := exec.Command(sh, "-c", ListenCommand(target))
			cmd.Env = append([]string{"HOME=" + home, "PATH=" + bin + ":/usr/bin:/bin"}, env...)
			out, err := cmd.Output()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.code {
				t.Fatalf("exit %d, want %d (%s)", code, tc.code, out)
			}
			if tc.code != 0 {
				return
			}
			if diff := cmp.Diff("wake|--listen|--target|"+target+"|"+want+"\n", string(out)); diff != "" {
				t.Errorf("what ran (-want +got):\n%s", diff)
			}
		})
	}
	if strings.Contains(ListenCommand("%1"), "\n") {
		t.Error("the command holds a newline")
	}
}
