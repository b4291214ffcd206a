// Package vitals counts a watched agent's own activity from the agent's own
// record: tool calls, reasoning blocks, text replies and waits for the human
// (seed 004's WorkerVitals), a minute at a time over the last hour, so that
// a quiet but live agent still shows signs of life on the board.
//
// The records are Claude Code's transcript,
// ~/.claude/projects/<dir>/<session>.jsonl (its session is named by the
// status file of the watched pane, ~/.claude/sessions/<pid>.json), and
// Codex CLI's session log, $CODEX_HOME/sessions/.../rollout-*.jsonl (the
// latest one of the pane's working directory). Each is read through a
// cursor kept in the watcher's vitals.json (statedir.VitalsRecord): a poll
// reads only what was appended since, at most MaxRead bytes; a file
// replaced or truncated is read again from its start.
//
// A record is hostile input (the agent writes what a repository makes it
// write): every read is bounded, a line longer than MaxLine is dropped
// unread, a line that is not JSON is passed over, no path a record names is
// ever opened, and only counts leave this package. The paths it opens are
// made here from a validated session id and the pane's directory reduced to
// Claude Code's own [A-Za-z0-9-] form.
package vitals

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// The agents whose records are counted.
const (
	Claude = "claude"
	Codex  = "codex"
)

// Bounds on what one poll reads.
const (
	// MaxRead is the most one poll reads of a record; the rest waits for
	// the next poll (the cursor's Behind says how much).
	MaxRead = 2 << 20
	// MaxLine is the longest line counted: an agent's own lines are a few
	// KB, and a tool's output pasted whole may be more; past it the line
	// is dropped to its end, unread.
	MaxLine = 512 << 10
	// StartTail is how far from its end a record seen for the first time
	// is read: the last hour is at its end, and a transcript of days is
	// not read whole.
	StartTail = 8 << 20
	// headLen is how many of a record's first bytes identify it.
	headLen = 256
)

// Window is how far back the counts go.
const Window = time.Hour

// A Source is the record to count: its agent and its path.
type Source struct {
	Agent string
	Path  string
}

// Update reads what src added since prev's cursor and returns the record
// with the new events counted. A src with no path, or a record that cannot
// be read, gives a record with Error set and no counts: where nothing is
// readable the board says so, never 0.
func Update(prev statedir.VitalsRecord, src Source, why error, now time.Time) statedir.VitalsRecord {
	next := statedir.VitalsRecord{Agent: src.Agent, Source: src.Path, At: now.UTC()}
	if src.Path == "" || why != nil {
		if why == nil {
			why = errors.New("vitals: no record of the agent found")
		}
		next.Error = why.Error()
		return next
	}
	if prev.Source == src.Path && prev.Agent == src.Agent && prev.Error == "" {
		next.Minutes, next.Cursor = prev.Minutes, prev.Cursor
	}
	cur, events, again, err := read(src, next.Cursor)
	if err != nil {
		next.Error, next.Minutes, next.Cursor = err.Error(), nil, statedir.VitalsCursor{}
		return next
	}
	if again {
		next.Minutes = nil // another record, or this one rewritten: counted anew
	}
	for _, e := range events {
		next.Minutes = add(next.Minutes, e, now)
	}
	next.Cursor = cur
	next.Minutes = prune(next.Minutes, now)
	return next
}

// An event is what one line of a record counts.
type event struct {
	tools, reason, text, wait int
	at                        time.Time // zero: the line says no time
	waitID                    string    // the message whose end is a wait
}

// add counts e in its minute: the line's own time, or now when it has none
// or says a time to come; a line older than the window counts nothing.
func add(ms []statedir.VitalsMinute, e event, now time.Time) []statedir.VitalsMinute {
	if e.tools+e.reason+e.text+e.wait == 0 {
		return ms
	}
	at := e.at
	if at.IsZero() || at.After(now) {
		at = now
	}
	if now.Sub(at) >= Window {
		return ms
	}
	min := at.Unix() / 60
	i := len(ms)
	for i > 0 && ms[i-1].Minute > min {
		i--
	}
	if i == 0 || ms[i-1].Minute != min {
		ms = append(ms, statedir.VitalsMinute{})
		copy(ms[i+1:], ms[i:])
		ms[i] = statedir.VitalsMinute{Minute: min}
		i++
	}
	m := &ms[i-1]
	m.Tools += e.tools
	m.Reason += e.reason
	m.Text += e.text
	m.Wait += e.wait
	return ms
}

// prune drops the minutes out of the window, and any past now (a clock
// set back).
func prune(ms []statedir.VitalsMinute, now time.Time) []statedir.VitalsMinute {
	from, to := now.Add(-Window).Unix()/60, now.Unix()/60
	out := ms[:0]
	for _, m := range ms {
		if m.Minute > from && m.Minute <= to {
			out = append(out, m)
		}
	}
	if out == nil {
		out = []statedir.VitalsMinute{}
	}
	return out
}

// read reads src from cur and returns the cursor after the last whole line
// read, and the events of the lines read; again says the record was read
// from its start (or near its end) as one not seen before.
func read(src Source, cur statedir.VitalsCursor) (next statedir.VitalsCursor, events []event, again bool, err error) {
	fi, err := os.Lstat(src.Path)
	if err != nil {
		return cur, nil, false, fmt.Errorf("vitals: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return cur, nil, false, fmt.Errorf("vitals: %s is not a regular file", src.Path)
	}
	f, err := os.OpenFile(src.Path, os.O_RDONLY|oNoFollow|oNonBlock, 0)
	if err != nil {
		return cur, nil, false, fmt.Errorf("vitals: %w", err)
	}
	defer f.Close()
	fi, err = f.Stat()
	if err != nil {
		return cur, nil, false, fmt.Errorf("vitals: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return cur, nil, false, fmt.Errorf("vitals: %s is not a regular file", src.Path)
	}
	size := fi.Size()
	dev, ino := fileID(fi)
	head := make([]byte, min(int64(headLen), size))
	if _, err := f.ReadAt(head, 0); err != nil && err != io.EOF {
		return cur, nil, false, fmt.Errorf("vitals: %w", err)
	}
	same := cur.Dev == dev && cur.Ino == ino && cur.Offset <= size && cur.HeadLen <= len(head) &&
		cur.Head == sum(head[:cur.HeadLen]) && cur.Head != ""
	if !same {
		// Another file, or this one truncated or rewritten: start over,
		// near its end when it is large.
		again = true
		cur = statedir.VitalsCursor{Dev: dev, Ino: ino, HeadLen: len(head), Head: sum(head)}
		if size > StartTail {
			cur.Offset, cur.Skip = size-StartTail, true
		}
	}
	n := min(size-cur.Offset, MaxRead)
	buf := make([]byte, n)
	got, err := f.ReadAt(buf, cur.Offset)
	if err != nil && err != io.EOF {
		return cur, nil, false, fmt.Errorf("vitals: %w", err)
	}
	buf = buf[:got]
	events, consumed := scan(src.Agent, buf, &cur)
	cur.Offset += consumed
	cur.Behind = size - cur.Offset
	if cur.HeadLen < headLen && len(head) > cur.HeadLen && cur.Offset >= int64(len(head)) {
		cur.HeadLen, cur.Head = len(head), sum(head) // a record that grew past its first bytes
	}
	return cur, events, again, nil
}

// scan counts the whole lines of buf, read at cur, and returns their
// events and how many bytes of buf it is done with: all but a last line
// with no end yet, unless that one is already too long to count (it is then
// dropped to its end, cur.Skip).
func scan(agent string, buf []byte, cur *statedir.VitalsCursor) (events []event, consumed int64) {
	rest := buf
	for {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break
		}
		line := rest[:i]
		rest = rest[i+1:]
		if cur.Skip {
			cur.Skip = false // the end of a line dropped
			continue
		}
		if len(line) > MaxLine {
			continue
		}
		if e := parse(agent, line, cur); e.tools+e.reason+e.text+e.wait > 0 {
			events = append(events, e)
		}
	}
	consumed = int64(len(buf) - len(rest))
	if len(rest) > MaxLine || cur.Skip && len(rest) > 0 {
		consumed, cur.Skip = int64(len(buf)), true
	}
	return events, consumed
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
}

// parse reads one line of an agent's record.
func parse(agent string, line []byte, cur *statedir.VitalsCursor) event {
	switch agent {
	case Claude:
		return claudeLine(line, cur)
	case Codex:
		return codexLine(line)
	}
	return event{}
}

// timeOf reads a line's RFC 3339 time; zero when it has none.
func timeOf(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// claudeLine counts a line of Claude Code's transcript. Only the model's
// own messages count (type assistant): each content block is a line of its
// own, carrying the message's stop reason. A tool_use block is a tool call,
// unless it asks the human (AskUserQuestion: a wait); a thinking block is
// reasoning; a text block is a reply; a message that ended its turn
// (end_turn) hands over to the human, a wait, counted once a message.
func claudeLine(line []byte, cur *statedir.VitalsCursor) event {
	if !bytes.Contains(line, []byte(`"assistant"`)) {
		return event{}
	}
	var l struct {
		Type      string `json:"type"`
		Timestamp string `json:"timestamp"`
		Message   struct {
			ID         string          `json:"id"`
			StopReason string          `json:"stop_reason"`
			Content    json.RawMessage `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal(line, &l) != nil || l.Type != "assistant" {
		return event{}
	}
	var blocks []struct {
		Type string `json:"type"`
		Name string `json:"name"`
		Text string `json:"text"`
	}
	json.Unmarshal(l.Message.Content, &blocks) // a string content has no block
	e := event{at: timeOf(l.Timestamp)}
	for _, b := range blocks {
		switch b.Type {
		case "tool_use", "server_tool_use":
			if b.Name == "AskUserQuestion" {
				e.wait++
			} else {
				e.tools++
			}
		case "thinking", "redacted_thinking":
			e.reason++
		case "text":
			if b.Text != "" {
				e.text++
			}
		}
	}
	if l.Message.StopReason == "end_turn" {
		id := l.Message.ID
		if id == "" || id != cur.LastWait {
			e.wait++
		}
		if len(id) <= 128 {
			cur.LastWait = id
		}
	}
	return e
}

// codexLine counts a line of Codex CLI's session log: a response item that
// calls a tool, reasons or says something to the human, and the end of a
// task (task_complete), after which Codex waits for the human.
func codexLine(line []byte) event {
	var l struct {
		Timestamp string `json:"timestamp"`
		Type      string `json:"type"`
		Payload   struct {
			Type string `json:"type"`
			Role string `json:"role"`
		} `json:"payload"`
	}
	if json.Unmarshal(line, &l) != nil {
		return event{}
	}
	e := event{at: timeOf(l.Timestamp)}
	switch {
	case l.Type == "response_item":
		switch l.Payload.Type {
		case "function_call", "custom_tool_call", "local_shell_call", "web_search_call", "tool_search_call":
			e.tools++
		case "reasoning":
			e.reason++
		case "message":
			if l.Payload.Role == "assistant" {
				e.text++
			}
		}
	case l.Type == "event_msg" && l.Payload.Type == "task_complete":
		e.wait++
	}
	return e
}
