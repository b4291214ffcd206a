package poll

import (
	"errors"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/omega-monitor/omega-monitor/capture"
	"github.com/omega-monitor/omega-monitor/statedir"
	"github.com/omega-monitor/omega-monitor/vitals"
)

// updateVitals counts what the watched agent's own record added since the
// last poll (package vitals) and keeps it in vitals.json. The record of a
// local pane is found on this machine: Claude Code's transcript through the
// status file that names the pane, else the Codex log of the pane's
// directory. A poll without a screen leaves the record as it was (its
// minutes age out on the board). What cannot be read is said in the record,
// not on the MONITOR line: a missing transcript is no fault of the poll.
func (d stateDirectory) updateVitals(c capture.Capture, o capture.Options, captureErr string, now time.Time) error {
	if captureErr != "" {
		return nil
	}
	var prev statedir.VitalsRecord
	if err := d.sd().ReadRecord(statedir.Vitals, &prev); err != nil && !errors.Is(err, fs.ErrNotExist) {
		prev = statedir.VitalsRecord{} // corrupt or planted: counted anew
	}
	var src vitals.Source
	var why error
	switch {
	case o.StatusDir == "":
		why = errors.New("vitals: the agent's record is not read over ssh")
	default:
		src, why = vitals.ClaudeSource(filepath.Dir(o.StatusDir), c.Statuses, c.Pane)
		if src.Agent == "" {
			src = vitals.CodexSource(o.CodexHome, c.Dir, now)
		}
	}
	next := vitals.Update(prev, src, why, now)
	return d.sd().WriteRecord(statedir.Vitals, next)
}
