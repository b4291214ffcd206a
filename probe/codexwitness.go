package probe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// Codex CLI keeps no status file, but it logs every session as JSON lines
// ($CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl), among them a
// task_started event when a turn begins and task_complete or turn_aborted
// when it ends: the agent's own word on whether a turn is open, which its
// screen does not show while an answer streams. The file names no pane; the
// loop hands over only the one the pane's Codex process holds open.

// codexRollout reports whether data looks like a Codex rollout log: JSON
// lines with a timestamp and a type, the first whole one of them a known
// kind.
func codexRollout(data []byte) bool {
	for line := range bytes.Lines(data) {
		var l struct {
			Timestamp string `json:"timestamp"`
			Type      string `json:"type"`
		}
		if json.Unmarshal(line, &l) != nil {
			continue // the loop may hand a tail that starts mid-line
		}
		switch l.Type {
		case "session_meta", "event_msg", "response_item", "turn_context", "compacted":
			return l.Timestamp != ""
		}
		return false
	}
	return false
}

// parseCodexRollout reads the last turn's state from a rollout log (or its
// tail): busy after task_started, idle after task_complete or turn_aborted.
// Updated is the time of the last line, so a session idle for long reads as
// stale and the screen decides alone.
func parseCodexRollout(data []byte, now time.Time) (Witness, error) {
	w := Witness{Kind: CodexLog}
	var last time.Time
	for line := range bytes.Lines(data) {
		var l struct {
			Timestamp string `json:"timestamp"`
			Type      string `json:"type"`
			Payload   struct {
				Type       string `json:"type"`
				CLIVersion string `json:"cli_version"`
			} `json:"payload"`
		}
		if json.Unmarshal(line, &l) != nil {
			continue
		}
		if t, err := time.Parse(time.RFC3339Nano, l.Timestamp); err == nil {
			last = t
		}
		switch {
		case l.Type == "session_meta" && l.Payload.CLIVersion != "":
			w.Version = l.Payload.CLIVersion
		case l.Type != "event_msg":
		case l.Payload.Type == "task_started":
			w.Status = "busy"
		case l.Payload.Type == "task_complete", l.Payload.Type == "turn_aborted":
			w.Status = "idle"
		}
	}
	switch {
	case w.Status == "":
		return Witness{}, fmt.Errorf("probe: agent status: the Codex log shows no turn yet")
	case last.IsZero() || now.Sub(last) > WitnessMaxAge:
		return Witness{}, fmt.Errorf("probe: agent status: stale (Codex log last written %s)", last.UTC().Format(time.RFC3339))
	}
	w.Updated = last
	return w, nil
}

// CodexLogDir returns the working directory a Codex session log names on
// its first line; "" when it names none.
func CodexLogDir(firstLine []byte) string {
	var l struct {
		Type    string `json:"type"`
		Payload struct {
			Cwd string `json:"cwd"`
		} `json:"payload"`
	}
	if json.Unmarshal(firstLine, &l) != nil || l.Type != "session_meta" {
		return ""
	}
	return l.Payload.Cwd
}
