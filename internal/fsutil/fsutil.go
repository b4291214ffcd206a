// Package fsutil holds the few file operations the watcher's commands share:
// reading a file with a size cap, its first line, the last lines of a log, and advisory
// locks on a lock file. It is
// not a general file library; each function exists because a caller was
// hurt without it (a status file pointed at /dev/zero grew a reader to
// 2.5 GB; two ticks on one state directory lost each other's counts).
package fsutil

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrTooLarge is returned, wrapped, by ReadCapped for a file over its cap.
var ErrTooLarge = errors.New("fsutil: file too large")

// ReadCapped reads the file at path, refusing one larger than max bytes
// without reading more than max+1 of it. A file that is not regular (a
// device, a FIFO, a directory) is refused without being read: /dev/zero
// never ends, and a FIFO with no writer never answers.
func ReadCapped(path string, max int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s)", path, kind(fi.Mode()))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s is larger than %d bytes: %w", path, max, ErrTooLarge)
	}
	return data, nil
}

func kind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeSocket != 0:
		return "a socket"
	}
	return m.Type().String()
}

// FirstLine returns the first line of the file at path, without its
// newline, when the file has a whole one within max bytes; nil otherwise.
func FirstLine(path string, max int) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	line, err := bufio.NewReader(io.LimitReader(f, int64(max))).ReadBytes('\n')
	if err != nil {
		return nil
	}
	return line[:len(line)-1]
}
