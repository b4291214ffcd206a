package board

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"slices"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/statedir/event"
)

// History events the board counts (tick writes them; see DESIGN.md).
const (
	// eventAdvance is a progress advance: the progress figure rose, which
	// resets the nudge budget.
	eventAdvance = event.BudgetReset
	eventNudge   = event.Nudge
	eventEscal   = event.Escalate
	eventFailure = event.Failure
	eventDisagr  = event.Disagreement
	// eventUndelivered is an alert the funnel could not deliver.
	eventUndelivered = event.AlertNotDelivered
)

// The kinds counted a minute at a time, for the last hour's activity.
const (
	kindAdvance = iota
	kindNudge
	kindEscalate
	kindFailure
	kindDisagree
	kindUndelivered
	kinds
)

// HistoryCursor is what was counted of one history.jsonl, so that the next
// read takes only what was appended: the file's identity and the offset
// after its last complete line, the advances an hour at a time (Unix hour)
// and the activity a minute at a time (Unix minute), and the lines that
// could not be read. A line that cannot be read has no time of its own: it
// is counted in the hour of the next line that can, so that it leaves the
// count with the window as that line does (BadHours); those after the last
// readable line wait for one (Unplaced).
type HistoryCursor struct {
	Ino      uint64       `json:"ino"`
	Offset   int64        `json:"offset"`
	Hours    HourCounts   `json:"hours,omitempty"`
	Minutes  MinuteCounts `json:"minutes,omitempty"`
	BadHours HourCounts   `json:"bad_hours,omitempty"`
	Unplaced int          `json:"bad_unplaced,omitempty"`
}

// readSlack is how far out of time order a history may be: the read from
// the end goes this far before the window before it stops.
const readSlack = time.Hour

// chunk is how much of a history is read at a time.
const chunk = 64 << 10

// readHistory counts history.jsonl. It goes on from the start with the
// furthest offset among starts (a cursor of the board's own, the tally a
// tick kept) that is of the same file, within it and just after a newline:
// only the bytes appended since are read. Without one the file is read from
// its END back to the start of the sparkline's window, never the whole file:
// appends are in time order, so the first line older than the window (by
// more than readSlack) ends the read. A last line without its newline is a
// write in progress (or torn by a crash) and is not counted; the cursor
// stops before it.
func readHistory(path string, now time.Time, starts ...*HistoryCursor) (HistoryCursor, error) {
	from := windowStart(now)
	f, err := openRegular(path)
	if errors.Is(err, fs.ErrNotExist) {
		return newHistoryCursor(), nil
	}
	if err != nil {
		return newHistoryCursor(), err
	}
	defer f.Close()
	var within []*HistoryCursor
	for _, s := range starts {
		if s != nil && s.Ino == f.ino && s.Offset <= f.size {
			within = append(within, s)
		}
	}
	slices.SortFunc(within, func(a, b *HistoryCursor) int { return cmp.Compare(b.Offset, a.Offset) })
	for _, s := range within {
		if afterNewline(f, s.Offset) {
			c := s.prune(from, now)
			return c, c.readForward(f, f.size, from, now)
		}
	}
	c := newHistoryCursor()
	c.Ino = f.ino
	return c, c.readBackward(f, f.size, from, now)
}

func newHistoryCursor() HistoryCursor {
	return HistoryCursor{Hours: HourCounts{}, Minutes: MinuteCounts{}, BadHours: HourCounts{}}
}

// afterNewline says whether off is the start of a file or follows a
// newline: a cursor into a file rewritten in place (or a reused inode) is
// then most likely refused, at the cost of one byte read.
func afterNewline(f *rawFile, off int64) bool {
	if off == 0 {
		return true
	}
	var b [1]byte
	n, _ := f.ReadAt(b[:], off-1)
	return n == 1 && b[0] == '\n'
}

// prune copies the cursor without the hours and minutes out of the window.
func (c *HistoryCursor) prune(from, now time.Time) HistoryCursor {
	n := HistoryCursor{Ino: c.Ino, Offset: c.Offset, Unplaced: c.Unplaced,
		Hours: make(HourCounts, len(c.Hours)), Minutes: make(MinuteCounts, len(c.Minutes)), BadHours: make(HourCounts, len(c.BadHours))}
	firstHour, firstMinute := from.Unix()/3600, now.Add(-activityWindow).Unix()/60
	for h, v := range c.Hours {
		if h >= firstHour {
			n.Hours[h] = v
		}
	}
	for h, v := range c.BadHours {
		if h >= firstHour {
			n.BadHours[h] = v
		}
	}
	for m, v := range c.Minutes {
		if m > firstMinute {
			n.Minutes[m] = v
		}
	}
	return n
}

// Bad is how many lines of the window could not be read.
func (c *HistoryCursor) Bad(now time.Time) int {
	n := c.Unplaced
	first := windowStart(now).Unix() / 3600
	for h, v := range c.BadHours {
		if h >= first {
			n += v
		}
	}
	return n
}

// readForward counts the complete lines from the cursor's offset to size.
func (c *HistoryCursor) readForward(f *rawFile, size int64, from, now time.Time) error {
	if size <= c.Offset {
		return nil
	}
	buf := make([]byte, min(chunk, size-c.Offset))
	var carry []byte
	for off := c.Offset; off < size; {
		n, err := f.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
		if n == 0 && err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return err
		}
		off += int64(n)
		data := append(carry, buf[:n]...)
		end := bytes.LastIndexByte(data, '\n') + 1
		c.countForward(data[:end], from, now)
		carry = append(carry[:0:0], data[end:]...)
	}
	return nil
}

// countForward counts the complete lines of data, which follow the
// cursor's offset in the file.
func (c *HistoryCursor) countForward(data []byte, from, now time.Time) {
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return
		}
		if i > 0 {
			c.addForward(data[:i], from, now)
		}
		c.Offset += int64(i + 1)
		data = data[i+1:]
	}
}

// readBackward counts from the end back to the window's start.
func (c *HistoryCursor) readBackward(f *rawFile, size int64, from, now time.Time) error {
	end := size
	tail := true      // the next line found is what follows the last newline
	next := int64(-1) // the hour of the readable line after this one, if any
	buf := make([]byte, min(chunk, size))
	var nl []int // where the newlines of a chunk are
	// line counts one line read from the end; false ends the read.
	line := func(l []byte) bool {
		ts, ok := c.add(l, from, now)
		switch {
		case !ok && next < 0:
			c.Unplaced++
		case !ok:
			c.badIn(next, from)
		case ts < from.Add(-readSlack).Unix():
			// A line a little out of order is skipped; only one well
			// before the window ends the read.
			return false
		default:
			next = hourOf(ts)
		}
		return true
	}
	for end > 0 {
		start := max(end-int64(len(buf)), 0)
		n, err := f.ReadAt(buf[:end-start], start)
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		data := buf[:n]
		// The newlines are found forward (bytes.IndexByte is the fast
		// one), the lines between them counted backward.
		nl = nl[:0]
		for p := 0; ; {
			i := bytes.IndexByte(data[p:], '\n')
			if i < 0 {
				break
			}
			nl = append(nl, p+i)
			p += i + 1
		}
		for j := len(nl) - 1; j >= 0; j-- {
			l := data[nl[j]+1:]
			data = data[:nl[j]]
			if tail {
				tail = false // empty, or a line still being written
				c.Offset = start + int64(nl[j]) + 1
				continue
			}
			if len(l) > 0 && !line(l) {
				return nil
			}
		}
		// data is what precedes the chunk's first newline: the file's first
		// line, or the end of a line that starts earlier, read again with
		// the next chunk (never copied).
		switch {
		case start == 0:
			if len(data) > 0 && !tail {
				line(data)
			}
			return nil
		case len(data) == n:
			buf = make([]byte, 2*len(buf)) // a line longer than the chunk
		default:
			end = start + int64(len(data))
		}
	}
	return nil
}

// addForward counts one line read in file order: lines that could not be
// read before it are placed in its hour.
func (c *HistoryCursor) addForward(line []byte, from, now time.Time) {
	ts, ok := c.add(line, from, now)
	if !ok {
		c.Unplaced++
		return
	}
	for ; c.Unplaced > 0; c.Unplaced-- {
		c.badIn(hourOf(ts), from)
	}
}

// badIn counts an unreadable line in hour h, when h is in the window.
func (c *HistoryCursor) badIn(h int64, from time.Time) {
	if h >= from.Unix()/3600 {
		c.BadHours[h]++
	}
}

// hourOf is a Unix time's Unix hour.
func hourOf(ts int64) int64 { return ts / 3600 }

// add counts one line, and returns its time; ok is false for a line that
// cannot be read. A line before the window counts nothing.
func (c *HistoryCursor) add(line []byte, from, now time.Time) (ts int64, ok bool) {
	ts, event, ok := scanEvent(line)
	if !ok || ts < from.Unix() {
		return ts, ok
	}
	k := -1
	switch string(event) {
	case eventAdvance:
		k = kindAdvance
		c.Hours[hourOf(ts)]++
	case eventNudge:
		k = kindNudge
	case eventEscal:
		k = kindEscalate
	case eventFailure:
		k = kindFailure
	case eventDisagr:
		k = kindDisagree
	case eventUndelivered:
		k = kindUndelivered
	}
	if k >= 0 && ts > now.Add(-activityWindow).Unix() {
		m := c.Minutes[ts/60]
		m[k]++
		c.Minutes[ts/60] = m
	}
	return ts, true
}

// activity sums the minutes of the last hour.
func (c *HistoryCursor) activity(a *Activity, now time.Time) {
	first := now.Add(-activityWindow).Unix() / 60
	for m, v := range c.Minutes {
		if m <= first {
			continue
		}
		a.Advances += v[kindAdvance]
		a.Nudges += v[kindNudge]
		a.Escalations += v[kindEscalate]
		a.Failures += v[kindFailure]
		a.Disagreements += v[kindDisagree]
		a.Undelivered += v[kindUndelivered]
	}
}

// scanEvent finds a line's ts (as Unix seconds) and event without decoding
// the whole object: the tick writes them as plain JSON strings, and inside
// any JSON string a quote is escaped, so the byte sequences `"ts":"` and
// `"event":"` can only be keys. A line where they are not found is decoded
// in full.
func scanEvent(line []byte) (int64, []byte, bool) {
	ts, ok1 := stringField(line, `"ts":"`)
	event, ok2 := stringField(line, `"event":"`)
	if !ok1 || !ok2 {
		var v struct {
			TS    string `json:"ts"`
			Event string `json:"event"`
		}
		if json.Unmarshal(line, &v) != nil || v.TS == "" || v.Event == "" {
			return 0, nil, false
		}
		ts, event = []byte(v.TS), []byte(v.Event)
	}
	if u, ok := utcSeconds(ts); ok {
		return u, event, true
	}
	t, err := time.Parse(time.RFC3339, string(ts))
	if err != nil {
		return 0, nil, false
	}
	return t.Unix(), event, true
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

// utcSeconds reads the form the tick writes, 2006-01-02T15:04:05Z, without
// time.Parse (the census reads every line of 48 hours of every watcher).
// Any other form reports false, and time.Parse decides.
func utcSeconds(b []byte) (int64, bool) {
	if len(b) != 20 || b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' || b[16] != ':' || b[19] != 'Z' {
		return 0, false
	}
	num := func(i, n int) (int, bool) {
		v := 0
		for _, c := range b[i : i+n] {
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		return v, true
	}
	y, ok1 := num(0, 4)
	mo, ok2 := num(5, 2)
	d, ok3 := num(8, 2)
	h, ok4 := num(11, 2)
	mi, ok5 := num(14, 2)
	s, ok6 := num(17, 2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60 {
		return 0, false
	}
	return daysFromCivil(y, mo, d)*86400 + int64(h*3600+mi*60+s), true
}

// daysFromCivil is the number of days from 1970-01-01 to y-m-d in the
// proleptic Gregorian calendar.
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

// windowStart is the start of the sparkline's first hour: the current
// clock hour is the last of Window hours.
func windowStart(now time.Time) time.Time {
	return now.UTC().Truncate(time.Hour).Add(-(Window - 1) * time.Hour)
}

// glyphs draw a count scaled to the peak: none is '·', then eight steps.
var glyphs = []rune("▁▂▃▄▅▆▇█")

// sparkline draws the advances counted by Unix hour over the window.
func sparkline(now time.Time, hours map[int64]int) Sparkline {
	from := windowStart(now)
	s := Sparkline{Hours: Window, From: from, Counts: make([]int, Window)}
	first := from.Unix() / 3600
	for h, n := range hours {
		if i := h - first; i >= 0 && i < Window {
			s.Counts[i] += n
			s.Total += n
		}
	}
	s.Glyphs, _, s.Peak = Draw(s.Counts)
	return s
}

// Draw scales counts onto the glyphs, one an hour: '·' for none, the peak
// always a full block and any advance at least the lowest bar.
func Draw(counts []int) (string, int, int) {
	total, peak := 0, 0
	for _, c := range counts {
		total += c
		peak = max(peak, c)
	}
	g := make([]rune, len(counts))
	for i, c := range counts {
		if c == 0 {
			g[i] = '·'
			continue
		}
		g[i] = glyphs[(c*len(glyphs)-1)/peak]
	}
	return string(g), total, peak
}
