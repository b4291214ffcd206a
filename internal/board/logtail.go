package board

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
)

// maxTailRead bounds what LastLines reads of a log: a few lines are asked
// for, and a log whose last lines are longer than this is not a watcher's.
const maxTailRead = 64 << 10

// LastLines is the last n whole lines of the monitor.log of the watcher w,
// oldest first, as written (the caller makes them printable). Only the
// log's last 64 KiB are read, through the census's own open (a FIFO or a
// device in its place is refused, never waited on); a line cut by that
// bound is left out. A watcher with no log yet has no lines.
func LastLines(w Watcher, n int) ([]string, error) {
	// Another host's watcher names a directory of that host: a path here
	// of the same name is not its log, and a host that lies could name
	// any file of this machine.
	if w.Dir == "" || w.Host != "" || n <= 0 {
		return nil, nil
	}
	f, err := openRegular(filepath.Join(w.Dir, logFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	start := max(f.size-maxTailRead, 0)
	buf := make([]byte, f.size-start)
	got, err := f.ReadAt(buf, start)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	buf = buf[:got]
	// Whole lines only: the first one read may be cut, and the last one
	// may be under way.
	buf = buf[:bytes.LastIndexByte(buf, '\n')+1]
	if start > 0 {
		i := bytes.IndexByte(buf, '\n')
		buf = buf[i+1:]
	}
	lines := bytes.Split(bytes.TrimSuffix(buf, []byte("\n")), []byte("\n"))
	if len(buf) == 0 {
		return nil, nil
	}
	lines = lines[max(len(lines)-n, 0):]
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = string(l)
	}
	return out, nil
}
