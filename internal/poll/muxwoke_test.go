package poll

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// TestWokenByTheMultiplexer: a woken poll that finds wake --mux's mark is
// the multiplexer's, and takes the mark; a poll no wake brought leaves it
// for the poll the wake brings; a wake without the mark is a hook's.
func TestWokenByTheMultiplexer(t *testing.T) {
	for _, tc := range []struct {
		name      string
		mark      bool
		in, want  Readings
		markAfter bool
	}{
		{"a hook's wake", false, Readings{Woken: true}, Readings{Woken: true}, false},
		{"the multiplexer's wake", true, Readings{Woken: true}, Readings{MuxWoken: true}, false},
		{"no wake: the mark waits", true, Readings{}, Readings{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := stateDirectory(t.TempDir())
			mark := filepath.Join(string(d), statedir.MuxWoke)
			if tc.mark {
				if err := os.WriteFile(mark, nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(tc.want, d.wokenBy(tc.in)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if _, err := os.Stat(mark); (err == nil) != tc.markAfter {
				t.Errorf("the mark left: %v, want %v", err == nil, tc.markAfter)
			}
		})
	}
}
