package board

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// A rawFile is an open regular file read by offset with plain system
// calls: at fleet size the census is mostly system calls, and os.File adds
// some to each open.
type rawFile struct {
	fd   int
	path string
	size int64
	// ino is the file's identity, which tells an appended history from
	// one the sweep replaced.
	ino uint64
}

// openRegular opens a file for reading and refuses one that is not a
// regular file. The open does not block: a FIFO with no writer put in a
// state directory must not hold the board.
func openRegular(path string) (*rawFile, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return nil, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		syscall.Close(fd)
		return nil, errors.New("not a regular file")
	}
	return &rawFile{fd: fd, path: path, size: st.Size, ino: uint64(st.Ino)}, nil
}

// ReadAt reads len(p) bytes at off, fewer only at the end of the file
// (then with io.EOF).
func (f *rawFile) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		m, err := syscall.Pread(f.fd, p[n:], off+int64(n))
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return n, &os.PathError{Op: "read", Path: f.path, Err: err}
		}
		if m == 0 {
			return n, io.EOF
		}
		n += m
	}
	return n, nil
}

func (f *rawFile) Close() error { return syscall.Close(f.fd) }

// readCapped reads a regular file of at most max bytes: open, fstat, read,
// close.
func readCapped(path string, max int64) ([]byte, error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if f.size > max {
		return nil, fmt.Errorf("larger than %d bytes", max)
	}
	data := make([]byte, f.size+1)
	n, err := f.ReadAt(data, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if int64(n) > max {
		return nil, fmt.Errorf("larger than %d bytes", max)
	}
	return data[:n], nil
}
