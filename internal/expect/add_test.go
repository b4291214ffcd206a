package expect

import (
	"os"
	"path/filepath"
	"testing"
)

// TestAddCaseWholeOrNothing: a case is written whole, never over another,
// and a clash on its last file leaves none of its files behind.
func TestAddCaseWholeOrNothing(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "perm")
	w := Want{State: "QUESTION", Why: "a dialog"}
	if err := AddCase(base, []byte("pane\n"), w, nil); err != nil {
		t.Fatal(err)
	}
	if err := AddCase(base, []byte("other\n"), w, nil); err == nil {
		t.Fatal("a case was written over another")
	}
	if b, _ := os.ReadFile(base + ".pane"); string(b) != "pane\n" {
		t.Errorf("the first case's pane: %q", b)
	}
	second := filepath.Join(dir, "second")
	if err := os.WriteFile(second+".rules.json", []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := AddCase(second, []byte("pane\n"), w, []byte(`{"rules":[]}`)); err == nil {
		t.Fatal("a clash on the rules file was not an error")
	}
	for _, ext := range []string{".pane", ".want"} {
		if _, err := os.Stat(second + ext); !os.IsNotExist(err) {
			t.Errorf("%s was left behind: %v", ext, err)
		}
	}
}
