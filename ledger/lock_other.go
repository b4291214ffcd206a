//go:build !unix

package ledger

import "os"

// lock creates the lock file but takes no lock: without flock, concurrent
// writers on this platform can lose a record to each other, though never the
// file itself, which is always replaced whole.
func lock(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	return func() { f.Close() }, nil
}
