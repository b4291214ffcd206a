//go:build unix

package vitals

import (
	"os"
	"syscall"
)

// A record is opened without following a link, and without waiting on a
// FIFO planted in its place.
const (
	oNoFollow = syscall.O_NOFOLLOW
	oNonBlock = syscall.O_NONBLOCK
)

// fileID is the file's device and inode: a record replaced under the same
// name is another file.
func fileID(fi os.FileInfo) (dev, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino)
	}
	return 0, 0
}
