package board

import (
	"io/fs"
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
