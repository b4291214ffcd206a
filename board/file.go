package board

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// inode is a file's identity, which tells an appended history from one the
// sweep replaced; 0 where the platform has none to give.
func inode(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}

// openRegular opens a file for reading and refuses one that is not a
// regular file. The open does not block: a FIFO with no writer put in a
// state directory must not hold the board.
func openRegular(path string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !info.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("not a regular file (%s)", info.Mode().Type())
	}
	return f, info, nil
}
