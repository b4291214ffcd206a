//go:build !unix

package fsutil

import (
	"errors"
	"os"
)

// ErrLocked is returned by TryLock when another process holds the lock.
var ErrLocked = errors.New("fsutil: locked by another process")

// Lock opens the lock file but takes no lock: this platform has no flock.
func Lock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
}

// TryLock is Lock.
func TryLock(path string) (*os.File, error) { return Lock(path) }
