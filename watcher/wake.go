package watcher

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/omega-monitor/omega-monitor/board"
	"github.com/omega-monitor/omega-monitor/statedir"
)

// ErrNotRunning is Wake's answer for a watcher whose loop does not run.
var ErrNotRunning = errors.New("its loop does not run")

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
	token, running := board.SystemProcs{}.StartToken(rec.Pid)
	if !running || rec.StartToken == "" || token != rec.StartToken {
		return fmt.Errorf("watcher: wake %s: %w", dir, ErrNotRunning)
	}
	if err := syscall.Kill(rec.Pid, syscall.SIGUSR1); err != nil {
		return fmt.Errorf("watcher: wake %s: %w", dir, err)
	}
	return nil
}
