package ledger

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLoadRecent: the newest n records, read from the file's end, mask as
// Load's would; older ones are not read at all.
func TestLoadRecent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger")
	var recs []string
	for i := range 2000 {
		recs = append(recs, fmt.Sprintf("continue with step %d of the plan; say what you wait for", i))
	}
	if err := write(path, recs); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 400, 1999, 2000, 5000} {
		m, err := LoadRecent(path, n)
		if err != nil {
			t.Fatalf("LoadRecent(%d): %v", n, err)
		}
		want := min(n, 2000)
		if m.Len() != want {
			t.Errorf("LoadRecent(%d) holds %d records, want %d", n, m.Len(), want)
		}
		newest, oldest := "❯ "+recs[1999], "❯ "+recs[0]
		if m.Mask(newest) == newest {
			t.Errorf("LoadRecent(%d) does not mask the newest record", n)
		}
		if (m.Mask(oldest) == oldest) != (n < 2000) {
			t.Errorf("LoadRecent(%d) masks the oldest record: %v", n, m.Mask(oldest) != oldest)
		}
	}
	if m, err := LoadRecent(filepath.Join(t.TempDir(), "none"), 400); err != nil || m.Len() != 0 {
		t.Errorf("a missing ledger: %v, %v", m, err)
	}
	// A small file is read whole, sentinel checked.
	small := filepath.Join(t.TempDir(), "small")
	os.WriteFile(small, []byte("not a sentinel\nsome text we sent\n"), 0o600)
	if m, err := LoadRecent(small, 400); err == nil || m.Len() != 2 {
		t.Errorf("a file without its sentinel: %v, %v", m.Len(), err)
	}
}

// TestLoadRecentAgreesWithTexts: whatever the records' length, so that the
// backwards reads end anywhere in a record and the buffer grows, the newest
// n records are the last n that Texts reads from the whole file.
func TestLoadRecentAgreesWithTexts(t *testing.T) {
	for _, width := range []int{1, 60, 1000} {
		path := filepath.Join(t.TempDir(), "ledger")
		var recs []string
		for i := range 900 {
			recs = append(recs, fmt.Sprintf("%d %s", i, strings.Repeat("x", width)))
		}
		if err := write(path, recs); err != nil {
			t.Fatal(err)
		}
		all, err := Texts(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{1, 7, 300, 400, 899, 900, 901} {
			m, err := LoadRecent(path, n)
			if err != nil {
				t.Fatalf("width %d, LoadRecent(%d): %v", width, n, err)
			}
			if diff := cmp.Diff(all[max(len(all)-n, 0):], m.recs); diff != "" {
				t.Errorf("width %d, LoadRecent(%d) (-Texts +LoadRecent):\n%s", width, n, diff)
			}
		}
	}
}
