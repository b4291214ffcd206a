package render

import (
	"strings"
	"testing"

	"github.com/omega-monitor/omega-monitor/internal/board"
)

// TestHeaderPartsAtEveryWidth: whatever the width, every render's header
// holds the seed's parts: the 48 hours' count with its peak, the number of
// watchers, and Δ fleet; where 48 glyphs fit, the glyphs too.
func TestHeaderPartsAtEveryWidth(t *testing.T) {
	sp := board.Sparkline{Counts: make([]int, board.Window)}
	sp.Counts[board.Window-1], sp.Counts[board.Window-3], sp.Counts[2] = 2, 1, 4
	f := board.Fleet{Fleet: board.Summary{Watchers: 3, Live: 2, Gone: 1, Questions: 1, Added: 382, Removed: 45, Worktrees: 2, Sparkline: sp}}
	full := SparkText(sp, board.Window)
	for width := 0; width <= 200; width++ {
		// A narrow terminal wraps the parts between words.
		header := strings.Join(strings.Fields(strings.Join(HeaderLines(f, width), "\n")), " ")
		for _, l := range HeaderLines(f, width) {
			// Only a single word wider than the terminal may overflow it.
			if width > 0 && Width(l) > width && strings.Contains(l, " ") {
				t.Errorf("width %d: a line of %d cells: %q", width, Width(l), l)
			}
		}
		for _, want := range []string{"48h: ", "7 advances", "peak 4/h", "3 watchers", "Δ fleet +382 -45"} {
			if !strings.Contains(header, want) {
				t.Errorf("width %d: the header lacks %q:\n%s", width, want, header)
			}
		}
		if fits := width == 0 || width >= Width(full); fits && !strings.Contains(header, full) {
			t.Errorf("width %d: the 48 glyphs fit, yet the header is:\n%s", width, header)
		}
	}
	if got := SparkCount(sp); got != "48h: 7 advances, peak 4/h" {
		t.Errorf("SparkCount = %q", got)
	}
}
