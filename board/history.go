package board

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"time"
)

// History events the board counts (tick writes them; see DESIGN.md).
const (
	// eventAdvance is a progress advance: the progress figure rose, which
	// resets the nudge budget.
	eventAdvance = "budget_reset"
	eventNudge   = "nudge"
	eventEscal   = "escalate"
	eventFailure = "failure"
	eventDisagr  = "disagreement"
)

// historyStats is what the tail of one history gave.
type historyStats struct {
	advances                                     []time.Time // in the sparkline's window
	recentAdvances                               int         // in the last hour
	nudges, escalations, failures, disagreements int
	bad                                          int // lines in the window that could not be read
}

// readSlack is how far out of time order a history may be: the read goes
// this far before the window before it stops.
const readSlack = time.Hour

// chunk is how much of a history is read at a time, from the end.
const chunk = 64 << 10

// readHistory reads history.jsonl from its END back to the start of the
// sparkline's window, never the whole file: appends are in time order, so
// the first line older than the window (by more than readSlack) ends the
// read. A last line without
// its newline is a write in progress (or torn by a crash) and is skipped.
func readHistory(path string, now time.Time) (historyStats, error) {
	var h historyStats
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return h, nil
	}
	if err != nil {
		return h, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return h, err
	}
	from := windowStart(now)
	hourAgo := now.Add(-activityWindow)
	end := info.Size()
	var carry []byte // a line whose start lies in an earlier chunk
	tail := true     // the next line found is what follows the last newline
	buf := make([]byte, chunk)
	for end > 0 {
		start := max(end-chunk, 0)
		n, err := f.ReadAt(buf[:end-start], start)
		if err != nil && !errors.Is(err, io.EOF) {
			return h, err
		}
		data := append(buf[:n:n], carry...)
		for {
			i := bytes.LastIndexByte(data, '\n')
			if i < 0 {
				break
			}
			line := data[i+1:]
			data = data[:i]
			if tail {
				tail = false // empty, or a line still being written
				continue
			}
			if len(line) > 0 && !h.add(line, from, hourAgo) {
				return h, nil
			}
		}
		carry = append([]byte(nil), data...)
		end = start
	}
	if len(carry) > 0 && !tail {
		h.add(carry, from, hourAgo)
	}
	return h, nil
}

// add counts one line; it reports false once the line is older than the
// window, which ends the read.
func (h *historyStats) add(line []byte, from, hourAgo time.Time) bool {
	ts, event, ok := scanEvent(line)
	if !ok {
		h.bad++
		return true
	}
	if ts.Before(from) {
		// A line a little out of order is skipped; only one well before
		// the window ends the read.
		return !ts.Before(from.Add(-readSlack))
	}
	if event == eventAdvance {
		h.advances = append(h.advances, ts)
	}
	if ts.Before(hourAgo) {
		return true
	}
	switch event {
	case eventAdvance:
		h.recentAdvances++
	case eventNudge:
		h.nudges++
	case eventEscal:
		h.escalations++
	case eventFailure:
		h.failures++
	case eventDisagr:
		h.disagreements++
	}
	return true
}

// scanEvent finds a line's ts and event without decoding the whole object:
// the tick writes them as plain JSON strings, and inside any JSON string a
// quote is escaped, so the byte sequences `"ts":"` and `"event":"` can only
// be keys. A line where they are not found is decoded in full.
func scanEvent(line []byte) (time.Time, string, bool) {
	ts, ok1 := stringField(line, `"ts":"`)
	event, ok2 := stringField(line, `"event":"`)
	if !ok1 || !ok2 {
		var v struct {
			TS    string `json:"ts"`
			Event string `json:"event"`
		}
		if json.Unmarshal(line, &v) != nil || v.TS == "" || v.Event == "" {
			return time.Time{}, "", false
		}
		ts, event = []byte(v.TS), []byte(v.Event)
	}
	t, err := time.Parse(time.RFC3339, string(ts))
	if err != nil {
		return time.Time{}, "", false
	}
	return t, string(event), true
}

func stringField(line []byte, key string) ([]byte, bool) {
	i := bytes.Index(line, []byte(key))
	if i < 0 {
		return nil, false
	}
	rest := line[i+len(key):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 || bytes.IndexByte(rest[:j], '\\') >= 0 {
		return nil, false
	}
	return rest[:j], true
}

// windowStart is the start of the sparkline's first hour: the current
// clock hour is the last of Window hours.
func windowStart(now time.Time) time.Time {
	return now.UTC().Truncate(time.Hour).Add(-(Window - 1) * time.Hour)
}

// glyphs draw a count scaled to the peak: none is '·', then eight steps.
var glyphs = []rune("▁▂▃▄▅▆▇█")

// sparkline counts the advances an hour at a time over the window.
func sparkline(now time.Time, advances []time.Time) Sparkline {
	from := windowStart(now)
	s := Sparkline{Hours: Window, From: from, Counts: make([]int, Window)}
	for _, t := range advances {
		i := int(t.Sub(from) / time.Hour)
		if t.Before(from) || i >= Window {
			continue
		}
		s.Counts[i]++
		s.Total++
	}
	for _, c := range s.Counts {
		s.Peak = max(s.Peak, c)
	}
	g := make([]rune, Window)
	for i, c := range s.Counts {
		switch {
		case c == 0:
			g[i] = '·'
		default:
			// 1..peak onto 0..7: the peak is always a full block, and
			// any advance at least the lowest bar.
			g[i] = glyphs[(c*len(glyphs)-1)/s.Peak]
		}
	}
	s.Glyphs = string(g)
	return s
}
