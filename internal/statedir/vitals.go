package statedir

import "time"

// A VitalsRecord is vitals.json: the watched agent's own activity, counted
// by package vitals from the agent's own record (Claude Code's transcript,
// Codex's session log) and the cursor it reads that record through, so that
// no poll reads a byte of it twice. The tick's effects write it; the board
// sums its minutes over the last hour.
type VitalsRecord struct {
	// Agent is the record's agent (claude, codex); Source the record's
	// path on the agent's machine. Both are empty when no record was found.
	Agent  string `json:"agent,omitempty"`
	Source string `json:"source,omitempty"`
	// Error says why no record is readable now; the counts then are not
	// shown (a board says "-", never 0).
	Error string `json:"error,omitempty"`
	// At is when the record was last read.
	At time.Time `json:"at"`
	// Minutes counts the record's events a minute, oldest first, over the
	// last hour before At.
	Minutes []VitalsMinute `json:"minutes"`
	// Cursor is where reading resumes.
	Cursor VitalsCursor `json:"cursor"`
}

// A VitalsMinute counts one minute's events: tool calls, reasoning blocks,
// text replies and waits for the human.
type VitalsMinute struct {
	Minute int64 `json:"minute"` // Unix time / 60
	Tools  int   `json:"tools,omitempty"`
	Reason int   `json:"reason,omitempty"`
	Text   int   `json:"text,omitempty"`
	Wait   int   `json:"wait,omitempty"`
}

// A VitalsCursor is how far a record was read, and which file it was: a
// file whose identity or first bytes changed, or that shrank below Offset,
// is another record and is read from its start.
type VitalsCursor struct {
	Dev     uint64 `json:"dev,omitempty"`
	Ino     uint64 `json:"ino,omitempty"`
	Head    string `json:"head,omitempty"` // a hash of the first HeadLen bytes
	HeadLen int    `json:"head_len,omitempty"`
	Offset  int64  `json:"offset"`
	// Skip says the bytes at Offset are the rest of a line too long to
	// count, dropped up to its end.
	Skip bool `json:"skip,omitempty"`
	// Behind is how many bytes of the record were left for the next read
	// (each read is bounded).
	Behind int64 `json:"behind,omitempty"`
	// LastWait is the message whose turn's end was counted as a wait: the
	// agent writes one line a block, each carrying the message's end.
	LastWait string `json:"last_wait,omitempty"`
	// Of a record read over ssh (its host sends its size and its last
	// bytes, and keeps no cursor): Tail is a hash of the TailLen bytes
	// before Offset, found again in the next poll's bytes when the
	// record only grew; Gap counts the bytes written between two polls
	// beyond what a poll carries, never read.
	Tail    string `json:"tail,omitempty"`
	TailLen int    `json:"tail_len,omitempty"`
	Gap     int64  `json:"gap,omitempty"`
}
