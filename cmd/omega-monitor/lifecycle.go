package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/fsutil"
	"github.com/omega-monitor/omega-monitor/statedir"
)

// A lockHolder is what the lock file says about the loop that holds it.
type lockHolder struct {
	PID     int    `json:"pid"`
	Watcher string `json:"watcher"`
	Target  string `json:"target"`
	Since   string `json:"since"`
}

func (h lockHolder) String() string {
	if h.PID == 0 {
		return "another loop (it did not say which)"
	}
	return fmt.Sprintf("the watcher %s of %s (pid %d, since %s)", h.Watcher, h.Target, h.PID, h.Since)
}

// readHolder reads the holder recorded in a state directory's lock file.
func readHolder(state string) lockHolder {
	var h lockHolder
	if data, err := fsutil.ReadCapped(filepath.Join(state, statedir.Holder), 4096); err == nil {
		json.Unmarshal(data, &h)
	}
	return h
}

// lockFree reports whether no loop holds the state directory, and if one
// does, which. It takes the lock for a moment to find out.
func lockFree(state string) (bool, lockHolder, error) {
	f, err := fsutil.TryLock(filepath.Join(state, statedir.Holder))
	if errors.Is(err, fsutil.ErrLocked) {
		return false, readHolder(state), nil
	}
	if errors.Is(err, os.ErrNotExist) {
		return true, lockHolder{}, nil // no state directory: nobody holds it
	}
	if err != nil {
		return false, lockHolder{}, err
	}
	f.Close()
	return true, lockHolder{}, nil
}

// waitForRelease waits until no loop holds the state directory, or until
// the deadline. It reports whether the lock came free.
func waitForRelease(state string, within time.Duration) (bool, lockHolder, error) {
	deadline := time.Now().Add(within)
	for {
		free, h, err := lockFree(state)
		if free || err != nil || time.Now().After(deadline) {
			return free, h, err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

const holdUsage = `usage: omega-monitor hold --fd N --state DIR --pid PID --watcher NAME --target T

The poll loop's lock on its state directory, taken once at start: the loop
opens DIR/loop.lock on descriptor N (exec N>>"$state/loop.lock") and hold
takes an exclusive flock on that descriptor, which the loop keeps until it
exits. When another loop holds it, hold says which (its watcher and pid)
and exits 1; the loop must not start.
`

func runHold(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("hold", holdUsage, stderr)
	fd := fs.Int("fd", -1, "the descriptor of the lock file")
	state := fs.String("state", "", "state directory")
	pid := fs.Int("pid", 0, "the loop's process id")
	watcher := fs.String("watcher", "", "the watcher's name")
	target := fs.String("target", "", "the watched target")
	if code, stop := parseFlags(fs, args, stdout, holdUsage); stop {
		return code
	}
	if *fd < 3 || *state == "" || *pid <= 0 || fs.NArg() > 0 {
		io.WriteString(stderr, holdUsage)
		return 2
	}
	path := filepath.Join(*state, statedir.Holder)
	var onFD, atPath syscall.Stat_t
	if err := syscall.Fstat(*fd, &onFD); err != nil {
		fmt.Fprintf(stderr, "omega-monitor hold: descriptor %d: %v\n", *fd, err)
		return 2
	}
	if err := syscall.Stat(path, &atPath); err != nil || onFD.Dev != atPath.Dev || onFD.Ino != atPath.Ino {
		fmt.Fprintf(stderr, "omega-monitor hold: descriptor %d is not %s\n", *fd, path)
		return 2
	}
	err := syscall.Flock(*fd, syscall.LOCK_EX|syscall.LOCK_NB)
	for err == syscall.EINTR {
		err = syscall.Flock(*fd, syscall.LOCK_EX|syscall.LOCK_NB)
	}
	if err == syscall.EWOULDBLOCK {
		fmt.Fprintf(stderr, "omega-monitor: %s is held by %s: one loop per state directory (stop it first: omega-monitor stop %s)\n",
			*state, readHolder(*state), readHolder(*state).Target)
		return 1
	}
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor hold: flock %s: %v\n", path, err)
		return 1
	}
	h := lockHolder{PID: *pid, Watcher: *watcher, Target: *target, Since: time.Now().UTC().Format(time.RFC3339)}
	data, _ := json.Marshal(h)
	// The descriptor was opened for appending: emptied first, the record
	// lands at the start.
	if err := syscall.Ftruncate(*fd, 0); err == nil {
		syscall.Write(*fd, append(data, '\n'))
	}
	return 0
}
