package companion

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestLookPath(t *testing.T) {
	t.Parallel()
	dir, other := t.TempDir(), t.TempDir()
	prog := filepath.Join(dir, "prog")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "plain"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := other + string(filepath.ListSeparator) + dir
	if got, err := LookPath("prog", path); err != nil || got != prog {
		t.Errorf("LookPath(prog) = %q, %v; want %q", got, err, prog)
	}
	// Not executable, or not on the PATH given (whatever this process's is).
	for _, name := range []string{"plain", "sh"} {
		if got, err := LookPath(name, path); !errors.Is(err, exec.ErrNotFound) {
			t.Errorf("LookPath(%s) = %q, %v; want not found", name, got, err)
		}
	}
	if got, err := LookPath(prog, ""); err != nil || got != prog {
		t.Errorf("a path with a slash: %q, %v", got, err)
	}
}

func TestFindSaysHowToInstall(t *testing.T) {
	t.Parallel()
	_, err := Find("omega-monitor-none-such")
	if err == nil || !strings.Contains(err.Error(), "nor on PATH; install omega-monitor's binaries from a checkout with "+InstallAll) {
		t.Errorf("Find: %v", err)
	}
}
