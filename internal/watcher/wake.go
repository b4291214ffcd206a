package watcher

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/proc"
	"github.com/omega-monitor/omega-monitor/internal/remotewake"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/tick"
)

// ErrNotRunning is Wake's answer for a watcher whose loop does not run.
var ErrNotRunning = errors.New("its loop does not run")

// Running says whether the loop of the watcher whose state directory is
// dir runs: the process loop.json names, with the start token recorded
// there.
func Running(dir string) bool {
	var rec statedir.LoopRecord
	return statedir.Dir(dir).ReadRecord(statedir.Loop, &rec) == nil && proc.Alive(rec.Pid, rec.StartToken)
}

// Wake makes the loop of the watcher whose state directory is dir poll now
// rather than at the end of its pause: it signals the process loop.json
// names (SIGUSR1, which the loop takes as a line on its clock), only when
// that process still has the start token recorded there, so that a pid
// reused by another program is never signalled. A wake changes no decision:
// the poll it brings judges the screen as any other.
func Wake(dir string) error {
	var rec statedir.LoopRecord
	if err := statedir.Dir(dir).ReadRecord(statedir.Loop, &rec); err != nil {
		return fmt.Errorf("watcher: wake %s: %w", dir, err)
	}
	if !proc.Alive(rec.Pid, rec.StartToken) {
		return fmt.Errorf("watcher: wake %s: %w", dir, ErrNotRunning)
	}
	if err := syscall.Kill(rec.Pid, syscall.SIGUSR1); err != nil {
		return fmt.Errorf("watcher: wake %s: %w", dir, err)
	}
	return nil
}

// A HookPane is the pane an agent's hook runs in, as its environment names
// it: the pane's id (%N) and the socket of the multiplexer server it belongs
// to, since pane ids are numbered per server.
type HookPane struct {
	Pane   string
	Socket string
}

// HookPaneOf reads the pane a hook runs in from its environment: tmux's
// $TMUX_PANE with $TMUX ("socket,pid,session"), or rmux's $RMUX_PANE with
// $RMUX. ok is false outside a multiplexer, or for values no multiplexer
// writes.
func HookPaneOf(getenv func(string) string) (p HookPane, ok bool) {
	for _, names := range [][2]string{{"TMUX_PANE", "TMUX"}, {"RMUX_PANE", "RMUX"}} {
		pane, server := getenv(names[0]), getenv(names[1])
		if pane == "" {
			continue
		}
		if !isPaneID(pane) {
			return HookPane{}, false
		}
		// The socket path may hold commas: the pid and the session
		// index are the last two fields.
		i := strings.LastIndexByte(server, ',')
		if i < 0 {
			return HookPane{}, false
		}
		j := strings.LastIndexByte(server[:i], ',')
		if j <= 0 || !filepath.IsAbs(server[:j]) {
			return HookPane{}, false
		}
		return HookPane{Pane: pane, Socket: server[:j]}, true
	}
	return HookPane{}, false
}

// WakePane wakes the loop of every watcher in the state home that watches
// pane p: a local watcher whose loop recorded p's server socket at start
// and that follows p (its pinned pane, else the pane its last poll
// captured). It returns the directories of the watchers it woke. A hook
// naming another watcher's pane wakes that one only; a pane no watcher
// follows wakes none, which is not an error. The home is read only when it
// is this user's own and not writable by others, and nothing a record holds
// is opened or run: a record only names a process to signal, which Wake
// checks by its start token.
func WakePane(home string, p HookPane) ([]string, error) {
	if p.Pane == "" || p.Socket == "" {
		return nil, nil
	}
	if err := statedir.CheckPrivate(home); err != nil {
		return nil, fmt.Errorf("watcher: wake: %w", err)
	}
	entries, err := os.ReadDir(home)
	if err != nil {
		return nil, fmt.Errorf("watcher: wake: %w", err)
	}
	var woken []string
	var errs []error
	for _, ent := range entries {
		if !ent.IsDir() {
			continue
		}
		dir := filepath.Join(home, ent.Name())
		if !follows(statedir.Dir(dir), p) {
			continue
		}
		if err := Wake(dir); err != nil {
			errs = append(errs, err)
			continue
		}
		woken = append(woken, dir)
	}
	return woken, errors.Join(errs...)
}

// follows says whether the watcher of d watches pane p.
func follows(d statedir.Dir, p HookPane) bool {
	var rec statedir.LoopRecord
	if d.ReadRecord(statedir.Loop, &rec) != nil || rec.Socket == "" || rec.Socket != p.Socket {
		return false
	}
	return followsPane(d, rec, p.Pane)
}

// followsPane says whether the watcher of d, whose loop recorded rec,
// watches the pane whose id is pane, on whichever server it watches.
func followsPane(d statedir.Dir, rec statedir.LoopRecord, pane string) bool {
	if pinned := rec.Settings["pane"]; pinned != "" {
		return pinned == pane
	}
	// Not pinned: the pane the last poll captured, as session:@W.%N.
	var st tick.State
	if d.ReadRecord(statedir.State, &st) != nil {
		return false
	}
	i := strings.LastIndexByte(st.Pane, '.')
	return i >= 0 && st.Pane[i+1:] == pane
}

// MaxHookPayload is the most of a hook's payload read; the rest is left
// unread (the agent writes it, and gets a closed pipe).
const MaxHookPayload = 1 << 20

// DrainPayload reads and discards the payload an agent gives its hook on
// standard input, at most MaxHookPayload bytes and for at most within: the
// payload carries nothing a wake uses (the pane comes from the hook's
// environment), so it is never parsed, stored or acted on; it is read only
// so that an agent writing it is not cut off mid-write by our exit. An
// input that never ends, or never closes, costs within and no more.
func DrainPayload(r io.Reader, within time.Duration) {
	done := make(chan struct{})
	go func() {
		io.Copy(io.Discard, io.LimitReader(r, MaxHookPayload))
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(within):
	}
}

// Hook is what an agent's hook does: it wakes the watcher of the pane the
// hook runs in (getenv's $TMUX_PANE or $RMUX_PANE), among those of the
// state home home, and posts the pane to the home's wake channel, where
// the watchers of ssh targets on this host listen (remotewake); then it
// reads the hook's payload and discards it, unless it is a terminal, where
// nobody writes one.
func Hook(home string, getenv func(string) string, payload io.Reader) {
	if p, ok := HookPaneOf(getenv); ok && filepath.IsAbs(home) {
		WakePane(home, p)
		remotewake.Post(home, p.Socket, p.Pane)
	}
	if f, ok := payload.(*os.File); ok {
		if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeCharDevice != 0 {
			return
		}
	}
	if payload != nil {
		DrainPayload(payload, 200*time.Millisecond)
	}
}
