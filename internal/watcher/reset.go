package watcher

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/pkgerr"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// Reset re-arms the nudge budget of target's watcher, which otherwise only
// progress does: it leaves a request in the watcher's directory for its
// next tick and wakes its loop, then waits up to wait for the tick to take
// it. A watcher that does not run takes it at its next start. It says what
// became of the request.
func Reset(home string, target coord.Target, by string, wait time.Duration) (string, error) {
	dir := filepath.Join(home, coord.WatcherName(target))
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return "", &pkgerr.Error{Pkg: "watcher", Err: fmt.Errorf("reset: %s was never watched here (omega-monitor status shows the watchers)", target)}
	}
	if err := statedir.CheckPrivate(dir); err != nil {
		return "", &pkgerr.Error{Pkg: "watcher", Err: fmt.Errorf("reset: %w", err)}
	}
	d := statedir.Dir(dir)
	if err := d.RequestReset(statedir.ResetRequest{By: by, At: time.Now().UTC()}); err != nil {
		return "", &pkgerr.Error{Pkg: "watcher", Err: fmt.Errorf("reset: %w", err)}
	}
	if err := Wake(dir); errors.Is(err, ErrNotRunning) || errors.Is(err, fs.ErrNotExist) {
		return fmt.Sprintf("the nudge budget of %s will be re-armed when its watcher starts again (it does not run)", target), nil
	} else if err != nil {
		return "", &pkgerr.Error{Pkg: "watcher", Err: fmt.Errorf("reset: %w", err)}
	}
	for deadline := time.Now().Add(wait); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if _, err := os.Stat(d.Path(statedir.Reset)); errors.Is(err, fs.ErrNotExist) {
			return fmt.Sprintf("re-armed the nudge budget of %s: its watcher's poll took it (omega-monitor logs %s shows the line)", target, target), nil
		}
	}
	return fmt.Sprintf("asked the watcher of %s to re-arm its nudge budget; its next poll takes it", target), nil
}
