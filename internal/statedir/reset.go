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

// ReadReset reads the reset request waiting, if any. A request that
// cannot be read is an error, and is to be dropped as one that was read
// (DropReset): either way it is applied at most once.
func (d Dir) ReadReset() (r ResetRequest, ok bool, err error) {
	err = d.ReadRecord(Reset, &r)
	if errors.Is(err, fs.ErrNotExist) {
		return r, false, nil
	}
	if err != nil {
		return ResetRequest{}, false, err
	}
	return r, true, nil
}

// DropReset removes the reset request read (ReadReset), so that it is
// applied once. A request that cannot be removed must not be applied: its
// error says so.
func (d Dir) DropReset() error {
	if err := os.Remove(d.Path(Reset)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return errorf("%s: cannot remove it, so it is not applied: %w", Reset, err)
	}
	return nil
}
