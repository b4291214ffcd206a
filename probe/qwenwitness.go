package probe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Qwen Code keeps no status file, but it records each session as JSON lines
// ($QWEN_HOME/projects/<dir>/chats/<session>.jsonl, QWEN_HOME defaulting to
// ~/.qwen), each line stamped with its time and the session's working
// directory. What 0.24.4 writes, seen on the real program against the fake
// API (docs/credibility.md): the human's message (type "user") the moment it
// is sent; the answer (type "assistant") only when it is whole, or cut short
// when the turn is interrupted; a tool call as an assistant entry with a
// functionCall part, then its result (type "tool_result"), whose error says
// "[Operation Cancelled]" when the human refused it; telemetry and snapshots
// (type "system") at any time. So the last entry that is not "system" says
// whether a turn is open: a message or a tool's result waiting for the
// model is; an answer is not. A tool call with no result yet says nothing
// the screen can be weighed against (a permission dialog, or the tool
// running), so it is no witness.

// qwenCancelled starts the error of a tool's result the human refused.
const qwenCancelled = "[Operation Cancelled]"

// qwenLine is what the witness reads of one line of a Qwen Code chat record.
type qwenLine struct {
	Timestamp string `json:"timestamp"`
	Type      string `json:"type"`
	Cwd       string `json:"cwd"`
	Version   string `json:"version"`
	Message   struct {
		Parts []struct {
			FunctionCall     json.RawMessage `json:"functionCall"`
			FunctionResponse struct {
				Response struct {
					Error json.RawMessage `json:"error"`
				} `json:"response"`
			} `json:"functionResponse"`
		} `json:"parts"`
	} `json:"message"`
}

// qwenTurn is what one entry says of the turn: "busy", "idle", "tool" (a
// tool call without its result), or "" (nothing: telemetry, a snapshot, a
// type it does not know).
func (l qwenLine) turn() string {
	switch l.Type {
	case "user":
		return "busy"
	case "assistant":
		for _, p := range l.Message.Parts {
			if len(p.FunctionCall) > 0 && string(p.FunctionCall) != "null" {
				return "tool"
			}
		}
		return "idle"
	case "tool_result":
		for _, p := range l.Message.Parts {
			var e string
			if json.Unmarshal(p.FunctionResponse.Response.Error, &e) == nil && strings.HasPrefix(e, qwenCancelled) {
				return "idle"
			}
		}
		return "busy"
	}
	return ""
}

// ParseQwenChat reads the last turn's state from a Qwen Code chat record
// (or its tail; a first line cut in the middle is skipped): busy while a
// turn is open, idle after an answer. Updated is the time of the last line,
// so a session quiet for long reads as stale and the screen decides alone;
// a line stamped in the future is no word at all.
func ParseQwenChat(data []byte, now time.Time) (Witness, error) {
	w := Witness{Kind: QwenChat}
	var last time.Time
	read := false
	for line := range bytes.Lines(data) {
		var l qwenLine
		if json.Unmarshal(line, &l) != nil {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, l.Timestamp)
		if err != nil || l.Type == "" {
			continue // not a line of a chat record
		}
		read, last = true, t
		if l.Version != "" {
			w.Version = l.Version
		}
		if s := l.turn(); s != "" {
			w.Status = s
		}
	}
	switch {
	case !read:
		return Witness{}, fmt.Errorf("probe: agent status: not a Qwen Code chat record")
	case !fresh(last, now):
		return Witness{}, notFresh("Qwen Code record", last, now)
	case w.Status == "":
		return Witness{}, fmt.Errorf("probe: agent status: the Qwen Code record shows no turn yet")
	case w.Status == "tool":
		return Witness{}, fmt.Errorf("probe: agent status: the Qwen Code record shows a tool call without its result (a permission asked, or the tool running)")
	}
	w.Updated = last
	return w, nil
}

// QwenChatDir returns the working directory a line of a Qwen Code chat
// record names; "" when it names none.
func QwenChatDir(line []byte) string {
	var l qwenLine
	if json.Unmarshal(line, &l) != nil || l.Type == "" || l.Timestamp == "" {
		return ""
	}
	return l.Cwd
}
