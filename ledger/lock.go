package ledger

import "github.com/omega-monitor/omega-monitor/internal/fsutil"

// lock takes an exclusive advisory lock on the file at path, creating it,
// and returns the function that releases it. The lock lives on a file of its
// own because the ledger itself is replaced by rename: a lock on the ledger's
// old inode would not exclude a writer that opened the new one.
func lock(path string) (unlock func(), err error) {
	f, err := fsutil.Lock(path)
	if err != nil {
		return nil, err
	}
	return func() { f.Close() }, nil
}
