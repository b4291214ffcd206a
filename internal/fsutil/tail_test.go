package fsutil

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTail(t *testing.T) {
	// big's last 8 MB start inside its first line: the lines after it
	// are read, and it is not.
	body := strings.Repeat(strings.Repeat("x", 999)+"\n", 8000) + "last\n"
	big := strings.Repeat("f", 400_000) + "\n" + body
	for _, c := range []struct {
		name, data string
		n          int
		want       string
		offset     int64
	}{
		{"last two", "a\nb\nc\n", 2, "b\nc\n", 6},
		{"all for 0", "a\nb\nc\n", 0, "a\nb\nc\n", 6},
		{"more than there are", "a\nb\n", 5, "a\nb\n", 4},
		{"a half-written line waits", "a\nb\nhalf", 1, "b\n", 4},
		{"empty", "", 3, "", 0},
		{"no whole line", "half", 1, "", 0},
		{"over 8 MB: the cut first line is left out", big, 0, body, int64(len(big))},
		{"over 8 MB, the last line", big, 1, "last\n", int64(len(big))},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "monitor.log")
			if err := os.WriteFile(path, []byte(c.data), 0o600); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var out bytes.Buffer
			offset, err := Tail(f, c.n, &out)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, out.String()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if offset != c.offset {
				t.Errorf("offset %d, want %d", offset, c.offset)
			}
		})
	}
}
