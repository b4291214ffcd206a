// Package backread reads the end of a file backwards, a chunk at a time,
// until it holds the lines its caller keeps. It is for a process that reads
// one file once, where each page of fresh memory it touches costs more than
// the read: a pane's capture, the echo ledger. It reads through the
// io.ReaderAt it is given and does nothing else; it does not split, count or
// interpret the lines.
package backread

import (
	"bytes"
	"fmt"
	"io"
)

const (
	// firstBuffer is the buffer first given to the end of a file: 400
	// lines of a wide pane. It grows fourfold when that is not enough.
	firstBuffer = 64 << 10
	// chunk is how much of it one read fills.
	chunk = 16 << 10
)

// Lines returns the end of the size bytes r holds, read backwards until it
// holds more than newlines newline bytes, so that the last newlines lines
// before its final newline are whole; or until it is all size bytes, or
// limit of them.
//
// The end is read into the end of one buffer, which is fresh memory: the
// pages before what was read are never touched.
func Lines(r io.ReaderAt, size int64, newlines, limit int) ([]byte, error) {
	limit = int(min(int64(limit), size))
	buf := make([]byte, min(firstBuffer, limit))
	from, seen := len(buf), 0
	for seen <= newlines && len(buf)-from < limit {
		if from == 0 {
			grown := make([]byte, min(4*len(buf), limit))
			from = len(grown) - len(buf)
			copy(grown[from:], buf)
			buf = grown
		}
		c := buf[max(from-chunk, 0):from]
		if _, err := r.ReadAt(c, size-int64(len(buf)-from+len(c))); err != nil {
			return nil, fmt.Errorf("backread: %w", err)
		}
		seen += bytes.Count(c, []byte{'\n'})
		from -= len(c)
	}
	return buf[from:], nil
}
