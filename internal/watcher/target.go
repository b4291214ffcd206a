package watcher

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/atomicfile"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// WriteTarget records, in the watcher's state directory, which target
// it watches: list reads it back for a watcher whose name is a fingerprint.
func WriteTarget(home, watcher string, target coord.Target) error {
	dir := filepath.Join(home, watcher)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, statedir.Target), []byte(target.String()+"\n"), 0o600)
}

// ReadTarget is the target recorded for watcher, if any.
func ReadTarget(home, watcher string) (coord.Target, bool) {
	data, err := os.ReadFile(filepath.Join(home, watcher, statedir.Target))
	if err != nil {
		return coord.Target{}, false
	}
	t, err := coord.ParseTarget(strings.TrimSpace(string(data)))
	return t, err == nil && coord.WatcherName(t) == watcher
}

// ResolveTarget reads what an operator typed to name a watcher: the target
// it watches (agent2, host:agent) or the watcher's own name, as its start
// and the board show it (monitor-agent2). A watcher's name is taken as one
// when it has the form of a watcher's and names a watcher this home knows:
// its plain name read back, or the target recorded in its directory.
// Anything else is a target.
func ResolveTarget(home, arg string) (coord.Target, error) {
	if coord.IsWatcher(arg) && !strings.ContainsAny(arg, `/\`) {
		if t, ok := ReadTarget(home, arg); ok {
			return t, nil
		}
		if t, ok := coord.WatchedBy(arg); ok {
			if _, err := os.Stat(filepath.Join(home, arg)); err == nil {
				return t, nil
			}
		}
	}
	return coord.ParseTarget(arg)
}
