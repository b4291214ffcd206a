package poll

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/capture"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/vitals"
)

// updateVitals counts what the watched agent's own record added since the
// last poll (package vitals) and keeps it in vitals.json. The record of a
// remote pane is the end of its transcript or Codex log the frame carried
// (remoteVitals); the record of a local pane is found on this machine: Claude Code's transcript through the
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
		next := remoteVitals(prev, c, now)
		return d.sd().ReplaceRecord(statedir.Vitals, next)
	default:
		src, why = vitals.ClaudeSource(filepath.Dir(o.StatusDir), c.Statuses, c.Pane)
		if src.Agent == "" {
			src = vitals.CodexSource(o.CodexHome, c.Dir, now)
		}
	}
	next := vitals.Update(prev, src, why, now)
	return d.sd().ReplaceRecord(statedir.Vitals, next)
}

// remoteVitals counts the end of the agent's record a remote frame carried:
// Claude Code's transcript, once it is the transcript of the session this
// side picks from the same frame's status files (the host's shell picked
// it: a host that sent another's is not believed); else, where no status
// file names the pane, the newest Codex session log of the pane's
// directory the host's shell found (its name checked by capture; the
// host's bytes are only counted, no path of them opened).
func remoteVitals(prev statedir.VitalsRecord, c capture.Capture, now time.Time) statedir.VitalsRecord {
	id, err := vitals.ClaudeSession(c.Statuses, c.Pane)
	t := c.Transcript
	switch {
	case err != nil:
		return vitals.Update(prev, vitals.Source{Agent: vitals.Claude}, err, now)
	case id == "" && t == nil:
		return vitals.Update(prev, vitals.Source{}, errors.New("vitals: on the host, no Claude Code status file names the pane and no Codex log of its directory was written in the last hour"), now)
	case id == "" && t.Err != nil:
		return vitals.Update(prev, vitals.Source{Agent: vitals.Codex}, t.Err, now)
	case id == "" && t.Log == "":
		return vitals.Update(prev, vitals.Source{}, errors.New("vitals: the host sent a Claude Code transcript where no status file names the pane"), now)
	case id == "":
		return vitals.UpdateTail(prev, vitals.CodexSourceOn(t.Log), t.Size, t.Tail, now)
	case t == nil:
		return vitals.Update(prev, vitals.Source{Agent: vitals.Claude}, fmt.Errorf("vitals: the host sent no transcript of session %s", id), now)
	case t.Session != id:
		return vitals.Update(prev, vitals.Source{Agent: vitals.Claude}, fmt.Errorf("vitals: the host sent the transcript of another session than %s", id), now)
	case t.Err != nil:
		return vitals.Update(prev, vitals.Source{Agent: vitals.Claude}, t.Err, now)
	}
	return vitals.UpdateTail(prev, vitals.ClaudeSourceOn(id, t.Dir), t.Size, t.Tail, now)
}
