//go:build unix

package fsutil

import (
	"errors"
	"os"
	"syscall"
)

// ErrLocked is returned by TryLock when another process holds the lock.
var ErrLocked = errors.New("fsutil: locked by another process")

// Lock takes an exclusive advisory lock (flock) on the file at path,
// creating it with mode 0600, and waits for it. It returns the open lock
// file: the lock lasts until it is closed, or until every process that
// inherited it has exited.
func Lock(path string) (*os.File, error) {
	return lock(path, syscall.LOCK_EX)
}

// TryLock is Lock without waiting: ErrLocked when another holds it.
func TryLock(path string) (*os.File, error) {
	return lock(path, syscall.LOCK_EX|syscall.LOCK_NB)
}

func lock(path string, how int) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			break
		}
	}
	if err == syscall.EWOULDBLOCK {
		f.Close()
		return nil, ErrLocked
	}
	if err != nil {
		f.Close()
		return nil, &os.PathError{Op: "flock", Path: path, Err: err}
	}
	return f, nil
}
