package probe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// Copilot CLI keeps no status file of a pane, but it logs each session's
// events as JSON lines ($COPILOT_HOME/session-state/<session>/events.jsonl,
// COPILOT_HOME defaulting to ~/.copilot), each with its type and time. What
// 1.0.102 writes, seen on the real program against the fake API
// (docs/credibility.md): user.message and assistant.turn_start when a
// prompt is sent; assistant.message and tool.execution_start as the model
// answers; permission.requested when its permission dialog is drawn and
// permission.completed when it is answered; assistant.turn_end at a turn's
// end, or abort after a refused tool. So the last of them says whether a
// turn is open, and whether it waits for a human.

// copilotSays is what each event type says of the turn.
var copilotSays = map[string]string{
	"user.message":          "busy",
	"assistant.turn_start":  "busy",
	"assistant.message":     "busy",
	"tool.execution_start":  "busy",
	"permission.completed":  "busy",
	"permission.requested":  "waiting",
	"assistant.turn_end":    "idle",
	"abort":                 "idle",
	"session.usage_record":  "",
	"session.model_change":  "",
	"assistant.usage":       "",
	"tool.execution_update": "",
}

// ParseCopilotEvents reads the last turn's state from a Copilot CLI
// session's events log (or its tail; a first line cut in the middle is
// skipped): busy while a turn runs, waiting while its permission dialog
// is up, idle after a turn's end. Updated is the time of the last event,
// so a session quiet for long reads as stale and the screen decides
// alone; an event stamped in the future is no word at all.
func ParseCopilotEvents(data []byte, now time.Time) (Witness, error) {
	w := Witness{Kind: CopilotEvents}
	var last time.Time
	read := false
	for line := range bytes.Lines(data) {
		var l struct {
			Type      string `json:"type"`
			Timestamp string `json:"timestamp"`
			ID        string `json:"id"`
		}
		if json.Unmarshal(line, &l) != nil || l.ID == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, l.Timestamp)
		if err != nil || l.Type == "" {
			continue
		}
		read, last = true, t
		switch says, known := copilotSays[l.Type]; {
		case says != "":
			w.Status = says
		case !known:
			// An event this release does not write: its word on the
			// turn is unknown, and what came before may no longer hold.
			w.Status = ""
		}
	}
	switch {
	case !read:
		return Witness{}, fmt.Errorf("probe: agent status: not a Copilot CLI events log")
	case !fresh(last, now):
		return Witness{}, notFresh("Copilot CLI events log", last, now)
	case w.Status == "":
		return Witness{}, fmt.Errorf("probe: agent status: the Copilot CLI events end in none that says whether a turn is open")
	}
	if w.Status == "waiting" {
		w.WaitingFor = "permission"
	}
	w.Updated = last
	return w, nil
}

// CopilotEventsDir returns the working directory the first line of a
// Copilot CLI events log names (its session.start); "" when it names none.
func CopilotEventsDir(firstLine []byte) string {
	var l struct {
		Type string `json:"type"`
		Data struct {
			Context struct {
				Cwd string `json:"cwd"`
			} `json:"context"`
		} `json:"data"`
	}
	if json.Unmarshal(firstLine, &l) != nil || l.Type != "session.start" {
		return ""
	}
	return l.Data.Context.Cwd
}
