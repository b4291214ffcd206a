package board

import (
	"bytes"
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
// append to the history and the log (ack, deliver, the outcome of an
// action), and the sweep replaces the history. The lines the tick writes
// itself, to the history and to the log, it counts as it writes them,
// never read back (NextTallyAppending): the tally a tick keeps ends after
// its own lines.
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

// Own is what a tick is about to append to a file the tally counts: where
// the file ends now (its identity Ino, 0 for none, and its Size) and the
// whole lines it will write there.
type Own struct {
	Ino   uint64
	Size  int64
	Lines []byte
}

// Counted says which of a tick's own appends a tally counts.
type Counted struct{ History, Log bool }

// NextTallyAppending is NextTally for a tick that is about to append its
// own lines to the history and to the log: history's where the history
// ends now, which the tick holds (its lock taken: nothing else appends to
// it before the tick does), log's where the log ended when the tick looked
// (another writer may still come first: the tick learns it as it writes).
// The files are read as NextTally reads them, and the tick's lines counted
// after them as it writes them: the tally holds them as if read back after
// the writes. A file that does not end where the tally ends (a history
// line torn at its end, a log another wrote to since), or another file
// than the one the tick found, leaves its own lines uncounted: the next
// poll reads them.
func NextTallyAppending(dir string, now time.Time, prev json.RawMessage, history, log Own) (json.RawMessage, Counted) {
	var counted Counted
	t, err := ReadTally(dir, now, decodeTally(prev))
	if err != nil {
		return nil, counted
	}
	if len(history.Lines) > 0 && history.Ino != 0 && t.History.Ino == history.Ino && t.History.Offset == history.Size {
		t.History.countForward(history.Lines, windowStart(now), now)
		counted.History = true
	}
	// An empty log has no cursor in the tally: the tick's line starts it.
	if len(log.Lines) > 0 && log.Ino != 0 && (t.Log.Ino == log.Ino && t.Log.Size == log.Size || t.Log == Cursor{} && log.Size == 0) {
		t.Log = Cursor{Ino: log.Ino, Size: log.Size + int64(len(log.Lines)), Lines: t.Log.Lines + bytes.Count(log.Lines, []byte{'\n'})}
		counted.Log = true
	}
	data, err := json.Marshal(t)
	if err != nil {
		return nil, Counted{}
	}
	return data, counted
}
