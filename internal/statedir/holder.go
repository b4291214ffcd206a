package statedir

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/fsutil"
)

// A HolderRecord is what loop.lock says about the loop that holds the
// watcher's directory: the loop writes it once it holds the lock.
type HolderRecord struct {
	PID     int    `json:"pid"`
	Watcher string `json:"watcher"`
	Target  string `json:"target"`
	Since   string `json:"since"`
}

func (h HolderRecord) String() string {
	if h.PID == 0 {
		return "another loop (it did not say which)"
	}
	return fmt.Sprintf("the watcher %s of %s (pid %d, since %s)", h.Watcher, h.Target, h.PID, h.Since)
}

// ReadHolder reads the holder recorded in d's lock file; an unreadable one
// is the zero record.
func (d Dir) ReadHolder() HolderRecord {
	var h HolderRecord
	if data, err := fsutil.ReadCapped(d.Path(Holder), 4096); err == nil {
		json.Unmarshal(data, &h)
	}
	return h
}

// ErrHeld is returned, wrapped, by Hold when another loop holds the lock.
var ErrHeld = errorf("held by another loop")

// Hold takes the loop's lock on d through fd, the descriptor on which the
// loop opened loop.lock (for appending), and records h in it. The loop
// keeps the descriptor, and so the lock, until it exits.
func (d Dir) Hold(fd int, h HolderRecord) error {
	path := d.Path(Holder)
	var onFD, atPath syscall.Stat_t
	if err := syscall.Fstat(fd, &onFD); err != nil {
		return fmt.Errorf("descriptor %d: %w", fd, err)
	}
	if err := syscall.Stat(path, &atPath); err != nil || onFD.Dev != atPath.Dev || onFD.Ino != atPath.Ino {
		return fmt.Errorf("descriptor %d is not %s", fd, path)
	}
	err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
	for err == syscall.EINTR {
		err = syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
	}
	if err == syscall.EWOULDBLOCK {
		return ErrHeld
	}
	if err != nil {
		return fmt.Errorf("flock %s: %w", path, err)
	}
	data, _ := json.Marshal(h)
	// The descriptor was opened for appending: emptied first, the record
	// lands at the start.
	if err := syscall.Ftruncate(fd, 0); err == nil {
		syscall.Write(fd, append(data, '\n'))
	}
	return nil
}

// Free reports whether no loop holds d, and if one does, which. It takes
// the lock for a moment to find out.
func (d Dir) Free() (bool, HolderRecord, error) {
	f, err := fsutil.TryLock(d.Path(Holder))
	if errors.Is(err, fsutil.ErrLocked) {
		return false, d.ReadHolder(), nil
	}
	if errors.Is(err, os.ErrNotExist) {
		return true, HolderRecord{}, nil // no state directory: nobody holds it
	}
	if err != nil {
		return false, HolderRecord{}, err
	}
	f.Close()
	return true, HolderRecord{}, nil
}

// WaitFree waits until no loop holds d, or until within has passed. It
// reports whether the lock came free.
func (d Dir) WaitFree(within time.Duration) (bool, HolderRecord, error) {
	deadline := time.Now().Add(within)
	for {
		free, h, err := d.Free()
		if free || err != nil || time.Now().After(deadline) {
			return free, h, err
		}
		time.Sleep(100 * time.Millisecond)
	}
}
