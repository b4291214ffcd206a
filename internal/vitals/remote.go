package vitals

import (
	"errors"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// tailLen is how many bytes before the cursor a remote record's next tail
// must hold unchanged for the record to count as the one read before.
const tailLen = 256

// UpdateTail is Update for a record on another host, which keeps no
// cursor: every poll the host sends the record's size and its last bytes
// (tail, the bytes from size-len(tail) to size). The bytes past the
// cursor are counted; the bytes before it must be the ones read last time
// (a hash of the last tailLen of them), else the record was rewritten or
// replaced and is counted anew, as is one that shrank below the cursor.
// More written between two polls than the tail holds is a gap: counted
// from the tail's first whole line, the bytes before it added to
// Cursor.Gap, never read. A record seen for the first time is counted
// from its tail alone (its lines older than the window count nothing
// anyway).
func UpdateTail(prev statedir.VitalsRecord, src Source, size int64, tail []byte, now time.Time) statedir.VitalsRecord {
	next := statedir.VitalsRecord{Agent: src.Agent, Source: src.Path, At: now.UTC()}
	from := size - int64(len(tail))
	if src.Path == "" || from < 0 {
		next.Error = errors.New("vitals: the host sent more of the record than its size").Error()
		return next
	}
	var cur statedir.VitalsCursor
	same := prev.Source == src.Path && prev.Agent == src.Agent && prev.Error == "" && prev.Cursor.Dev == 0 && prev.Cursor.Ino == 0
	if same {
		cur, next.Minutes = prev.Cursor, prev.Minutes
		off := cur.Offset
		switch {
		case off > size:
			same = false // truncated, or replaced by a shorter one
		case off-int64(cur.TailLen) >= from:
			// The bytes before the cursor are in the tail: they must be
			// the ones read.
			at := off - from
			same = sum(tail[at-int64(cur.TailLen):at]) == cur.Tail
		case off < from:
			// More was written than the tail holds.
			cur.Gap += from - off
			cur.Offset, cur.Skip = from, true
		}
		// Else the cursor is in the tail's first tailLen bytes: it
		// cannot be checked whole, and reading goes on from it.
	}
	if !same {
		next.Minutes = nil // another record, or this one rewritten: counted anew
		cur = statedir.VitalsCursor{Offset: from, Skip: from > 0}
	}
	events, consumed := scan(src.Agent, tail[cur.Offset-from:], &cur)
	cur.Offset += consumed
	cur.Behind = size - cur.Offset
	at := cur.Offset - from
	n := min(at, tailLen)
	cur.Tail, cur.TailLen = sum(tail[at-n:at]), int(n)
	for _, e := range events {
		next.Minutes = add(next.Minutes, e, now)
	}
	next.Cursor = cur
	next.Minutes = prune(next.Minutes, now)
	return next
}
