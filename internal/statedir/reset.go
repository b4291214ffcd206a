package statedir

import (
	"errors"
	"io/fs"
	"os"
	"time"
)

// Reset is reset.json: the operator's request to re-arm a watcher's nudge
// budget ("omega-monitor reset"), taken by the watcher's next tick. A
// spent budget is otherwise re-armed only by progress.
const Reset = "reset.json"

// A ResetRequest is what reset.json holds.
type ResetRequest struct {
	By string    `json:"by"` // who asked, for the history
	At time.Time `json:"at"`
}

// RequestReset leaves r for the watcher's next tick; a request waiting
// already is replaced (two resets before a tick are one).
func (d Dir) RequestReset(r ResetRequest) error { return d.WriteRecord(Reset, r) }

// TakeReset takes the reset request waiting, if any: it is removed once
// read, so that it is applied once. A request that cannot be read is
// removed too, and said.
func (d Dir) TakeReset() (r ResetRequest, ok bool, err error) {
	err = d.ReadRecord(Reset, &r)
	if errors.Is(err, fs.ErrNotExist) {
		return r, false, nil
	}
	if rmErr := os.Remove(d.Path(Reset)); rmErr != nil && !errors.Is(rmErr, fs.ErrNotExist) {
		return r, false, errorf("%s: cannot remove it, so it is not applied: %w", Reset, rmErr)
	}
	if err != nil {
		return ResetRequest{}, false, err
	}
	return r, true, nil
}
