package vitals

import (
	"strings"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// TestUpdateTail: a host's sizes and tails that do not fit, and a cursor
// so near the tail's start that its bytes cannot be checked whole.
func TestUpdateTail(t *testing.T) {
	src := Source{Agent: Claude, Path: "~/.claude/projects/-w/s.jsonl"}
	line := assistant("m1", "tool_use", bash, time.Minute)
	r := UpdateTail(statedir.VitalsRecord{}, src, int64(len(line)-1), []byte(line), now)
	if r.Error == "" || r.Minutes != nil {
		t.Errorf("a tail longer than the size: %+v, want an error and no counts", r)
	}
	r = UpdateTail(statedir.VitalsRecord{}, src, int64(len(line)), []byte(line), now)
	if got := sumOf(r, now); got != (counts{Tools: 1}) || r.Cursor.Offset != int64(len(line)) {
		t.Fatalf("first: %+v, offset %d", got, r.Cursor.Offset)
	}
	// The host's next tail starts a few bytes before the cursor: read on
	// from the cursor, nothing counted twice.
	grown := line + assistant("m2", "tool_use", bash, time.Minute)
	from := int64(len(line)) - 10
	r = UpdateTail(r, src, int64(len(grown)), []byte(grown[from:]), now)
	if got := sumOf(r, now); got != (counts{Tools: 2}) || r.Cursor.Gap != 0 {
		t.Errorf("unchecked: %+v, gap %d, want 2 tools and no gap", got, r.Cursor.Gap)
	}
	// A line with no end, longer than any tail: dropped to its end, a gap
	// each poll it grows past the tail, and the line after it counted.
	huge := strings.Repeat("x", 300)
	size := int64(len(grown)) + 1000
	r = UpdateTail(r, src, size, []byte(huge), now)
	if r.Cursor.Gap != size-int64(len(huge))-int64(len(grown)) || !r.Cursor.Skip || r.Cursor.Offset != size {
		t.Errorf("a long line: %+v", r.Cursor)
	}
	next := assistant("m3", "end_turn", text, 0)
	r = UpdateTail(r, src, size+int64(len("yy\n"+next)), []byte("yy\n"+next), now)
	if got := sumOf(r, now); got != (counts{Tools: 2, Text: 1, Wait: 1}) {
		t.Errorf("after the long line: %+v", got)
	}
}
