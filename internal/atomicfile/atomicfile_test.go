package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

// Write and Replace differ only in the directory's sync, which a crash
// shows and a test cannot: both are held to the same contract.
func TestWriteAndReplace(t *testing.T) {
	for name, write := range map[string]func(string, []byte, os.FileMode) error{"Write": Write, "Replace": Replace} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "f")
			for _, content := range []string{"one", "two, longer", ""} {
				if err := write(path, []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(path)
				if err != nil || string(got) != content {
					t.Errorf("read %q, %v; want %q", got, err, content)
				}
			}
			if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
				t.Errorf("mode %v, want 0600", fi.Mode())
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("left behind: %v", entries)
			}
			if err := write(filepath.Join(dir, "missing", "f"), nil, 0o600); err == nil {
				t.Error("a write into a missing directory succeeded")
			}
		})
	}
}
