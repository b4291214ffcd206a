package fsutil

import (
	"bytes"
	"io"
	"os"
)

// maxTail bounds what Tail reads to find the last lines: a watcher's log
// rotates at a few megabytes.
const maxTail = 8 << 20

// Tail writes the last n whole lines of f (all for 0) to w and returns the
// offset after the last whole line, where a follower goes on reading. A
// half-written last line waits for its end; of a file over 8 MB only the
// whole lines of its last 8 MB are read.
func Tail(f *os.File, n int, w io.Writer) (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	start := max(fi.Size()-maxTail, 0)
	data, err := io.ReadAll(io.NewSectionReader(f, start, fi.Size()-start))
	if err != nil {
		return 0, err
	}
	end := bytes.LastIndexByte(data, '\n') + 1
	whole := data[:end]
	if start > 0 { // the first line read may be cut
		if i := bytes.IndexByte(whole, '\n'); i >= 0 {
			whole = whole[i+1:]
		}
	}
	if n > 0 {
		lines := bytes.SplitAfter(whole, []byte("\n"))
		if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
			lines = lines[:len(lines)-1]
		}
		if len(lines) > n {
			whole = bytes.Join(lines[len(lines)-n:], nil)
		}
	}
	_, err = w.Write(whole)
	return start + int64(end), err
}
