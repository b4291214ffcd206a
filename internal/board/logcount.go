package board

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"sync"
	"time"
)

// A Cursor is where the last read of one log ended: the file's identity
// (0 in a cursor from before it was kept: not checked), its size then, and
// the lines up to there.
type Cursor struct {
	Ino   uint64 `json:"ino,omitempty"`
	Size  int64  `json:"size"`
	Lines int    `json:"lines"`
}

// Cursors hold a Cursor per log path, for a caller that reads the fleet
// again and again (the live board), or keeps them between runs (--once).
// The census moves them; they are safe for its concurrent readers.
type Cursors struct {
	mu        sync.Mutex
	Logs      map[string]Cursor        `json:"logs"`
	Histories map[string]HistoryCursor `json:"histories"`
	// tallied are the histories whose state holds a tally: their ticks
	// keep them, and the cursors kept between runs leave them out.
	tallied map[string]bool
}

// cursorsVersion is the form of the cursors kept between runs: cursors of
// another form are not read (their counts would be misread), which costs
// one run the +new figures.
const cursorsVersion = 2

// cursorsFile is the form of the cursors kept between runs.
type cursorsFile struct {
	Version   int                      `json:"version"`
	Logs      map[string]Cursor        `json:"logs"`
	Histories map[string]HistoryCursor `json:"histories"`
}

// MarshalJSON writes the cursors to keep between runs, without the
// histories whose ticks keep a tally of them.
func (c *Cursors) MarshalJSON() ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	hs := make(map[string]HistoryCursor, len(c.Histories))
	for p, h := range c.Histories {
		if !c.tallied[p] {
			hs[p] = h
		}
	}
	return json.Marshal(cursorsFile{Version: cursorsVersion, Logs: c.Logs, Histories: hs})
}

// UnmarshalJSON reads cursors kept between runs; cursors of another form
// are none.
func (c *Cursors) UnmarshalJSON(data []byte) error {
	var f cursorsFile
	if err := json.Unmarshal(data, &f); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.Logs, c.Histories = nil, nil
	if f.Version == cursorsVersion {
		c.Logs, c.Histories = f.Logs, f.Histories
	}
	return nil
}

// history reads a history through its cursor, or on from the tally a tick
// kept (nil when none), whichever reaches further, and moves the cursor.
// Without cursors it reads from the tally, or from the end.
func (c *Cursors) history(path string, now time.Time, tally *HistoryCursor) (HistoryCursor, error) {
	if c == nil {
		return readHistory(path, now, tally)
	}
	c.mu.Lock()
	prev, ok := c.Histories[path]
	c.mu.Unlock()
	var p *HistoryCursor
	if ok {
		p = &prev
	}
	h, err := readHistory(path, now, p, tally)
	if err == nil {
		c.mu.Lock()
		if c.Histories == nil {
			c.Histories = map[string]HistoryCursor{}
		}
		if c.tallied == nil {
			c.tallied = map[string]bool{}
		}
		c.Histories[path] = h
		c.tallied[path] = tally != nil && tally.Ino == h.Ino
		c.mu.Unlock()
	}
	return h, err
}

// retain keeps the cursors of the files in dirs alone: the directory of
// a watcher that was forgotten leaves no cursor behind in the file the
// board keeps between runs.
func (c *Cursors) retain(dirs map[string]bool) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for p := range c.Logs {
		if !dirs[filepath.Dir(p)] {
			delete(c.Logs, p)
		}
	}
	for p := range c.Histories {
		if !dirs[filepath.Dir(p)] {
			delete(c.Histories, p)
		}
	}
}

func (c *Cursors) get(path string) (Cursor, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cur, ok := c.Logs[path]
	return cur, ok
}

func (c *Cursors) set(path string, cur Cursor) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.Logs == nil {
		c.Logs = map[string]Cursor{}
	}
	c.Logs[path] = cur
}

// count counts a log's lines, reading only what was appended since the
// cursor, or since the tally a tick kept (nil when none), whichever reaches
// further. A log of another file than its cursor's, or shorter, was rotated
// or replaced: the cursor is not used. Without a cursor the log is counted
// from the tally, or whole, and nothing is new.
func (c *Cursors) count(path string, tally *Cursor) (LogCount, error) {
	f, err := openRegular(path)
	if errors.Is(err, fs.ErrNotExist) {
		return LogCount{}, nil
	}
	if err != nil {
		return LogCount{}, err
	}
	defer f.Close()
	size := f.size
	var cur Cursor
	known := false
	if c != nil {
		cur, known = c.get(path)
		known = known && (cur.Ino == 0 || cur.Ino == f.ino) && cur.Size <= size
	}
	var from Cursor
	if known {
		from = cur
	}
	if tally != nil && tally.Ino == f.ino && tally.Size <= size && tally.Size > from.Size {
		from = *tally
	}
	n, err := countLines(f, from.Size, size)
	if err != nil {
		return LogCount{}, err
	}
	lc := LogCount{Lines: from.Lines + n, Bytes: size}
	if c != nil {
		if known {
			lc.New = max(lc.Lines-cur.Lines, 0)
		}
		c.set(path, Cursor{Ino: f.ino, Size: size, Lines: lc.Lines})
	}
	return lc, nil
}

// countLines counts the newlines in f between the offsets from and to.
func countLines(f *rawFile, from, to int64) (int, error) {
	if to <= from {
		return 0, nil
	}
	buf := make([]byte, min(256<<10, to-from))
	n := 0
	for off := from; off < to; {
		want := min(int64(len(buf)), to-off)
		got, err := f.ReadAt(buf[:want], off)
		n += bytes.Count(buf[:got], []byte{'\n'})
		off += int64(got)
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return n, err
		}
	}
	return n, nil
}
