package board

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"sync"
	"time"
)

// A Cursor is where the last read of one log ended: its size then, and the
// lines up to there.
type Cursor struct {
	Size  int64 `json:"size"`
	Lines int   `json:"lines"`
}

// Cursors hold a Cursor per log path, for a caller that reads the fleet
// again and again (the live board), or keeps them between runs (--once).
// The census moves them; they are safe for its concurrent readers.
type Cursors struct {
	mu        sync.Mutex
	Logs      map[string]Cursor        `json:"logs"`
	Histories map[string]HistoryCursor `json:"histories"`
}

// history reads a history through its cursor, and moves the cursor.
// Without cursors it reads from the end every time.
func (c *Cursors) history(path string, now time.Time) (HistoryCursor, error) {
	if c == nil {
		return readHistory(path, now, nil)
	}
	c.mu.Lock()
	prev, ok := c.Histories[path]
	c.mu.Unlock()
	var p *HistoryCursor
	if ok {
		p = &prev
	}
	h, err := readHistory(path, now, p)
	if err == nil {
		c.mu.Lock()
		if c.Histories == nil {
			c.Histories = map[string]HistoryCursor{}
		}
		c.Histories[path] = h
		c.mu.Unlock()
	}
	return h, err
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
// cursor. A log shorter than its cursor was rotated or replaced: it is
// counted afresh, and all of it is new. Without cursors the whole log is
// counted and nothing is new.
func (c *Cursors) count(path string) (LogCount, error) {
	f, err := openRegular(path)
	if errors.Is(err, fs.ErrNotExist) {
		return LogCount{}, nil
	}
	if err != nil {
		return LogCount{}, err
	}
	defer f.Close()
	size := f.size
	var from Cursor
	known := false
	if c != nil {
		from, known = c.get(path)
		if from.Size > size {
			from, known = Cursor{}, false
		}
	}
	n, err := countLines(f, from.Size, size)
	if err != nil {
		return LogCount{}, err
	}
	lc := LogCount{Lines: from.Lines + n, Bytes: size}
	if c != nil {
		if known {
			lc.New = n
		}
		c.set(path, Cursor{Size: size, Lines: lc.Lines})
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
