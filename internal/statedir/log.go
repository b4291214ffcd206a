package statedir

import (
	"bufio"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/fsutil"
)

// TailLog writes the last n whole lines of d's monitor.log (all for 0) to w
// and returns where they end, for FollowLog. A log not written yet is an
// error that is fs.ErrNotExist.
func (d Dir) TailLog(n int, w io.Writer) (int64, error) {
	f, err := os.Open(d.Path(Log))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return fsutil.Tail(f, n, w)
}

// FollowLog writes the whole lines appended to d's monitor.log after
// offset, looking every interval, until ctx ends. A log that shrank or was
// replaced (rotated to monitor.log.1) is read again from its start; one not
// written yet is waited for. When running is not nil, it is asked at each
// look whether the watcher runs, and said is told each time the answer
// changes (first at the first look): a follower of a stopped watcher is
// not left waiting in silence.
func (d Dir) FollowLog(ctx context.Context, offset int64, w io.Writer, interval time.Duration, running func() bool, said func(running bool)) error {
	path := d.Path(Log)
	var cur os.FileInfo
	known, was := false, false
	for {
		if running != nil {
			if now := running(); !known || now != was {
				known, was = true, now
				said(now)
			}
		}
		fi, err := os.Stat(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			offset = 0
		case err != nil:
			return err
		default:
			if (cur != nil && !os.SameFile(cur, fi)) || fi.Size() < offset {
				offset = 0
			}
			cur = fi
			if fi.Size() > offset {
				offset, err = copyLines(path, offset, w)
				if err != nil {
					return err
				}
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(interval):
		}
	}
}

// copyLines copies the whole lines of path after offset and returns the
// offset after the last one.
func copyLines(path string, offset int64, w io.Writer) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return offset, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return offset, err
	}
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return offset, nil // a half-written line waits for its end
		}
		if _, err := w.Write(line); err != nil {
			return offset, err
		}
		offset += int64(len(line))
	}
}
