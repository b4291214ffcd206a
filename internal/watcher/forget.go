package watcher

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/board"
	"github.com/omega-monitor/omega-monitor/internal/fsutil"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// ForgetName reads what an operator typed to name a watcher to forget, as
// stop reads it (ResolveTarget: the target, or the watcher's own name), and
// returns the name of its state directory under home. A directory the
// board lists whose target cannot be read back (a fingerprint's whose
// target file is lost) is also taken by its own name, as long as that
// name is a watcher's and a safe session name: one path element, never
// "..", a slash or a dot. An error here is a usage error.
func ForgetName(home, arg string) (string, error) {
	t, err := ResolveTarget(home, arg)
	switch {
	case err == nil && exists(filepath.Join(home, coord.WatcherName(t))):
		return coord.WatcherName(t), nil
	case asDirName(home, arg):
		return arg, nil
	case err == nil:
		return coord.WatcherName(t), nil // Forget says there is none
	}
	return "", err
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// asDirName says whether arg is, as it is, the name of an entry of home
// that may be a watcher's directory.
func asDirName(home, arg string) bool {
	return coord.IsWatcher(arg) && coord.CheckSession(arg) == nil && exists(filepath.Join(home, arg))
}

// Forget removes the state directory of the watcher name under home once
// its loop no longer runs, and says what it removed. It refuses, saying why
// and how to stop it, a watcher whose loop runs (live or quiet, as the board
// reads it), whose loop still holds the directory's lock, or whose session
// still exists in m; and it refuses a directory that is a symbolic link,
// is not this user's alone, or holds none of a watcher's files. The removal
// follows no link (a link inside is removed as a link) and stays inside
// the directory.
func Forget(ctx context.Context, m coord.Mux, home, name string, now time.Time) (string, error) {
	if !coord.IsWatcher(name) || coord.CheckSession(name) != nil || filepath.Base(name) != name {
		return "", fmt.Errorf("%q is not a watcher's name", name)
	}
	dir := filepath.Join(home, name)
	if !exists(dir) {
		return "", fmt.Errorf("no watcher %s under %s (omega-monitor status shows the watchers)", name, home)
	}
	if fi, err := os.Lstat(dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return "", fmt.Errorf("not forgetting %s: %s is a symbolic link, not a watcher's directory; forget follows none (rm %s removes the link alone)", name, dir, dir)
	}
	if err := statedir.CheckPrivate(dir); err != nil {
		return "", fmt.Errorf("not forgetting %s: %v", name, err)
	}
	w, err := board.One(home, name, now, board.Options{})
	if err != nil {
		return "", fmt.Errorf("not forgetting %s: %v", name, err)
	}
	target, of := w.Target, ", the watcher of "+w.Target
	if target == "" {
		target, of = name, ", whose target is not recorded"
	}
	stopFirst := fmt.Sprintf("stop it first: omega-monitor stop %s", target)
	if w.Liveness == board.Live || w.Liveness == board.Quiet {
		return "", fmt.Errorf("%s is running (%s: %s); %s", name, w.Liveness, w.LivenessReason, stopFirst)
	}
	running, err := m.HasSession(ctx, coord.Target{Session: name})
	if err != nil {
		return "", fmt.Errorf("not forgetting %s: cannot tell whether its session runs: %v", name, err)
	}
	if running {
		return "", fmt.Errorf("%s still has its session (its loop is %s: %s); %s", name, w.Liveness, w.LivenessReason, stopFirst)
	}
	// The loop holds this lock for its whole life; held here, no loop can
	// take the directory while it goes.
	d := statedir.Dir(dir)
	lock, err := d.TryLock(statedir.Holder)
	if errors.Is(err, fsutil.ErrLocked) {
		return "", fmt.Errorf("%s is running: its loop holds its state directory (%s); %s", name, d.ReadHolder(), stopFirst)
	}
	if err != nil {
		return "", fmt.Errorf("not forgetting %s: %v", name, err)
	}
	defer lock.Close()
	files, size := measure(dir)
	if err := os.RemoveAll(dir); err != nil {
		return "", fmt.Errorf("forgot %s only in part: %v", name, err)
	}
	return fmt.Sprintf("forgot %s%s (%s: %s): removed %s, %d files, %s",
		name, of, w.Liveness, w.LivenessReason, dir, files, bytesText(size)), nil
}

// measure counts the files under dir and their bytes, following no link.
func measure(dir string) (files int, size int64) {
	filepath.WalkDir(dir, func(_ string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return nil
		}
		files++
		if e.Type().IsRegular() {
			if info, err := e.Info(); err == nil {
				size += info.Size()
			}
		}
		return nil
	})
	return files, size
}

// bytesText prints a size in B, KiB or MiB.
func bytesText(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
