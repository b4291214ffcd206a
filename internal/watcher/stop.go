package watcher

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// Stop ends the watcher of target: it marks the watcher's directory as
// stopped (ended.json), ends its session, and waits up to wait for its loop
// to let go of the state directory under home, the state home. It returns
// what to tell the operator.
func Stop(ctx context.Context, m coord.Mux, home string, target coord.Target, wait time.Duration) (string, error) {
	watcher := coord.WatcherName(target)
	running, err := m.HasSession(ctx, coord.Target{Session: watcher})
	if err != nil {
		return "", err
	}
	if !running {
		return stopStale(home, watcher, target)
	}
	markEnded(filepath.Join(home, watcher))
	if _, err := m.Run(ctx, "", "kill-session", "-t", coord.Exact(watcher)); err != nil {
		return "", fmt.Errorf("cannot stop %s: %v", watcher, err)
	}
	free, h, err := statedir.Dir(filepath.Join(home, watcher)).WaitFree(wait)
	if err != nil {
		return "", fmt.Errorf("stopped %s, but cannot tell whether its loop finished: %v", watcher, err)
	}
	if free {
		cleanMuxWake(ctx, m, string(statedir.Dir(filepath.Join(home, watcher))))
	}
	if !free {
		return "", fmt.Errorf("ended the session %s, but its loop still holds the state directory: gave up waiting at %s, after %v (held by %s)",
			watcher, time.Now().Format("15:04:05"), wait, h)
	}
	return fmt.Sprintf("stopped %s, the watcher of %s", watcher, target), nil
}

// stopStale is Stop of a watcher whose session is gone. One whose loop
// died without a stop (no ended.json; the board shows it stale) is marked
// stopped, and said so; one stopped before, or never started here, is not
// watched.
func stopStale(home, watcher string, target coord.Target) (string, error) {
	d := statedir.Dir(filepath.Join(home, watcher))
	var ended statedir.EndedRecord
	_, statErr := os.Stat(string(d))
	switch {
	case statErr != nil:
		return "", fmt.Errorf("%s is not watched: no watcher of it runs (omega-monitor status shows the watchers)", target)
	case d.ReadRecord(statedir.Ended, &ended) == nil:
		return "", fmt.Errorf("%s is not watched: its watcher %s was stopped at %s (omega-monitor forget %s removes its state)",
			target, watcher, ended.At.Local().Format("2006-01-02 15:04:05"), target)
	}
	if free, h, err := d.WaitFree(0); err != nil || !free {
		return "", fmt.Errorf("no session %s, yet its state directory is held (by %s; %v): nothing changed", watcher, h, err)
	}
	markEnded(string(d))
	cleanMuxWake(context.Background(), coord.Mux{}, string(d))
	return fmt.Sprintf("%s was not running: its loop had ended without a stop; marked stopped (omega-monitor forget %s removes its state)", watcher, target), nil
}

// markEnded records in the watcher's state directory that it was stopped
// (ended.json), so that the board shows it gone rather than stale: a loop
// that died without a stop is a different matter. It is written before the
// session is ended; a stop that then fails leaves a running loop, which
// the board still shows live, since a running pid with its start token
// outweighs the mark.
func markEnded(dir string) {
	if _, err := os.Stat(dir); err != nil {
		return
	}
	statedir.Dir(dir).WriteRecord(statedir.Ended, statedir.EndedRecord{At: time.Now().UTC(), By: "stop"})
}

// cleanMuxWake makes sure that the multiplexer's wakes of the stopped
// watcher whose directory is dir are undone: its listener undoes them as
// the loop ends (a few seconds at most), and what a killed one left is
// undone here, on the multiplexer the loop ran with (else m's), or its
// ssh host's.
func cleanMuxWake(ctx context.Context, m coord.Mux, dir string) {
	d := statedir.Dir(dir)
	for range 30 {
		if _, err := os.Stat(d.Path(statedir.MuxWake)); err != nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	var rec statedir.LoopRecord
	d.ReadRecord(statedir.Loop, &rec)
	if t, err := coord.ParseTarget(rec.Target); err == nil && !t.Local() {
		DisarmMuxWake(ctx, remoteMux(dir, rec.Settings["ssh_config"]), t.Host, dir)
		return
	}
	if rec.Settings["mux"] != "" {
		m.Bin = rec.Settings["mux"]
	}
	if m.Bin == "" {
		return
	}
	m.SSH.Timeout = muxCallTimeout
	DisarmMuxWake(ctx, m, "", dir)
}
