// Package atomicfile replaces a file whole or not at all: the one writer of
// every file omega-monitor keeps (state, ledger, actions, loop.json, the
// installed loop script). It is not a lock: writers that must not race take
// their own.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Write replaces path with data, with permissions perm: a temporary file in
// the same directory is written, synced and renamed over path, and the
// directory is synced so that the rename survives a crash. A reader sees the
// old content or the new, never a part.
func Write(path string, data []byte, perm os.FileMode) error {
	return write(path, data, perm, true)
}

// Replace is Write for a record rewritten every poll (a watcher's state and
// vitals): where path already holds one, the directory is not synced, so a
// crash may keep that one, whole, in place of the new; a path that did not
// exist is synced as Write syncs it. The two directory syncs of a poll cost
// its tick about 0.3 ms of 4 of CPU; the record they would save is one the
// next poll rewrites.
func Replace(path string, data []byte, perm os.FileMode) error {
	_, err := os.Lstat(path)
	return write(path, data, perm, err != nil)
}

func write(path string, data []byte, perm os.FileMode, syncDir bool) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
			err = fmt.Errorf("atomicfile: %w", err)
		}
	}()
	if err = tmp.Chmod(perm); err != nil {
		return err
	}
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil || !syncDir {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
