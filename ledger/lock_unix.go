//go:build unix

package ledger

import (
	"os"
	"syscall"
)

// lock takes an exclusive advisory lock on the file at path, creating it,
// and returns the function that releases it. The lock lives on a file of its
// own because the ledger itself is replaced by rename: a lock on the ledger's
// old inode would not exclude a writer that opened the new one.
func lock(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, &os.PathError{Op: "flock", Path: path, Err: err}
	}
	return func() { f.Close() }, nil
}
