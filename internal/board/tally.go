package board

import (
	"encoding/json"
	"path/filepath"
	"time"
)

// A Tally is what a watcher's tick keeps in its state (state.json "tally")
// for the board: its history and its log counted up to where they ended
// when the state was written. A census then reads only what was appended
// after, even the first (a cold board has no cursors of its own). At is the
// clock of the count; the board uses a tally only when At is not in a later
// minute than its own clock (a tally counted later has let go of what an
// earlier clock still shows), and only for the same files (their inodes),
// and otherwise reads as it would without one: history from its end, log
// whole.
//
// The tally is counted from the files as the tick found them: other writers
// append to the history (ack, deliver, the outcome of an action), and the
// sweep replaces it. The history lines the tick writes itself it counts as
// it writes them, never read back (NextTallyAppending): the tally a tick
// keeps ends after its own history lines and before its own log line.
type Tally struct {
	At      time.Time     `json:"at"`
	History HistoryCursor `json:"history"`
	Log     Cursor        `json:"log"`
}

// usableAt says whether a tally counted at t holds what a census at now
// shows: everything the census counts of the lines before the tally's
// offsets (see HistoryCursor.prune).
func (t *Tally) usableAt(now time.Time) bool {
	return t != nil && t.At.Unix()/60 <= now.Unix()/60
}

// ReadTally counts the history and the log of the watcher's state directory
// dir as of now, going on from prev (the tally the last poll kept, nil when
// none): a tick calls it each poll and keeps the result in its state, so
// each call reads only what was appended since the last. The tally holds
// counts, not lines, and stays small: an hour of minutes, 48 hours of
// hours.
func ReadTally(dir string, now time.Time, prev *Tally) (Tally, error) {
	var h *HistoryCursor
	var l *Cursor
	if prev.usableAt(now) {
		h, l = &prev.History, &prev.Log
	}
	t := Tally{At: now.UTC().Truncate(time.Second)}
	var err error
	if t.History, err = readHistory(filepath.Join(dir, historyFile), now, h); err != nil {
		return Tally{}, err
	}
	cur := &Cursors{}
	lc, err := cur.count(filepath.Join(dir, logFile), l)
	if err != nil {
		return Tally{}, err
	}
	if lc.Bytes > 0 {
		t.Log = cur.Logs[filepath.Join(dir, logFile)]
	}
	return t, nil
}

// decodeTally reads a state's tally; nil when there is none or it cannot be
// read (a census then reads as without one).
func decodeTally(data json.RawMessage) *Tally {
	if len(data) == 0 {
		return nil
	}
	var t Tally
	if json.Unmarshal(data, &t) != nil {
		return nil
	}
	return &t
}

// NextTally is ReadTally for a state file: prev is the tally the last poll
// kept, as kept (empty when none), and the result is the tally to keep now,
// nil when the files could not be counted. A missing tally is never an
// error: the board then reads the files itself.
func NextTally(dir string, now time.Time, prev json.RawMessage) json.RawMessage {
	t, err := ReadTally(dir, now, decodeTally(prev))
	if err != nil {
		return nil
	}
	data, err := json.Marshal(t)
	if err != nil {
		return nil
	}
	return data
}

// NextTallyAppending is NextTally for a tick that is about to append own
// (whole lines) to the history, and holds its lock: nothing else appends
// to it before the tick does, so own goes where the history ends now, as
// the history of identity ino and size stands (ino 0: none). The history
// is read as NextTally reads it, and own counted after it as the tick
// writes it: the tally holds own lines, as if read back after the write.
// A history that does not end where the tally ends (a line torn at its
// end), or another file than the one held, leaves own uncounted (counted
// is false): the next poll reads it.
func NextTallyAppending(dir string, now time.Time, prev json.RawMessage, ino uint64, size int64, own []byte) (tally json.RawMessage, counted bool) {
	t, err := ReadTally(dir, now, decodeTally(prev))
	if err != nil {
		return nil, false
	}
	if ino != 0 && t.History.Ino == ino && t.History.Offset == size {
		t.History.countForward(own, windowStart(now), now)
		counted = true
	}
	data, err := json.Marshal(t)
	if err != nil {
		return nil, false
	}
	return data, counted
}
