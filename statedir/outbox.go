package statedir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/atomicfile"
)

// QueueAlerts writes each message to the outbox, named so that a listing
// sorts them in the order they were written: the poll's time, then its
// sequence. An alert waits there, whatever happens to the watcher, until it
// is delivered or kept as failed.
func (d Dir) QueueAlerts(now time.Time, msgs []string) error {
	if len(msgs) == 0 {
		return nil
	}
	out := d.Path(Outbox)
	if err := os.MkdirAll(out, 0o700); err != nil {
		return err
	}
	stamp := now.UTC().Format("20060102T150405.000000000Z")
	n := 0
	for _, m := range msgs {
		// Never over an alert already waiting: two calls in one instant
		// (a replayed clock) would otherwise lose the first.
		var path string
		for {
			n++
			path = filepath.Join(out, fmt.Sprintf("%s-%03d.alert", stamp, n))
			if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
				break
			}
		}
		if err := atomicfile.Write(path, []byte(m), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// PendingAlerts lists the outbox's alerts, oldest first, by name.
func (d Dir) PendingAlerts() ([]string, error) {
	entries, err := os.ReadDir(d.Path(Outbox))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".alert") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

// KeepFailed appends an alert that cannot be delivered to alert-failed.log
// in the state home home, as the funnel does, with why.
func KeepFailed(home, why string, msg []byte) error {
	if err := os.MkdirAll(home, 0o700); err != nil {
		return err
	}
	f, err := openAppend(filepath.Join(home, FailedAlerts))
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "--- %s · %s\n%s\n", time.Now().UTC().Format(time.RFC3339), why, msg)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
