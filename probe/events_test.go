package probe

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// copilotLog is Copilot CLI's events log as its description gives it
// (classify/agents/copilot.json; classify's TestEventsLogs holds the two
// the same).
var copilotLog = EventsLog{Agent: "Copilot CLI", Key: "copilot-cli", Home: "COPILOT_HOME", Default: ".copilot",
	Path: "session-state/*/events.jsonl", Type: []string{"type"}, Time: []string{"timestamp"}, Dir: []string{"data", "context", "cwd"},
	Says: map[string]string{
		"user.message": "busy", "assistant.turn_start": "busy", "assistant.message": "busy", "tool.execution_start": "busy",
		"permission.completed": "busy", "permission.requested": "waiting", "assistant.turn_end": "idle", "abort": "idle",
		"session.start": "", "session.usage_record": "", "session.model_change": "", "assistant.usage": "", "tool.execution_update": "",
	}}

// copilotEvent is a line of a Copilot CLI events log as 1.0.102 writes it.
func copilotEvent(at time.Time, typ string) string {
	return fmt.Sprintf(`{"type":%q,"data":{},"id":"e","timestamp":%q,"parentId":null}`+"\n", typ, at.UTC().Format(time.RFC3339Nano))
}

// TestParseEvents: what each moment of a Copilot CLI turn leaves
// last in its events log, as seen on the real program
// (docs/credibility.md), reads as the turn open, waiting for a human, or
// ended; a quiet log, one stamped in the future, one ending in an event
// its description does not name and text that is no events log are no
// witness.
func TestParseEvents(t *testing.T) {
	now := time.Date(2026, 12, 3, 14, 0, 0, 0, time.UTC)
	at := func(ago time.Duration) time.Time { return now.Add(-ago) }
	start := `{"type":"session.start","data":{"context":{"cwd":"/w"}},"id":"s","timestamp":"2026-12-03T13:58:00Z","parentId":null}` + "\n"
	sent := copilotEvent(at(40*time.Second), "user.message") + copilotEvent(at(39*time.Second), "assistant.turn_start")
	asked := sent + copilotEvent(at(20*time.Second), "assistant.message") + copilotEvent(at(20*time.Second), "tool.execution_start") +
		copilotEvent(at(19*time.Second), "permission.requested")
	tests := []struct {
		name, log string
		want      string // the status, or the error's words
	}{
		{"started, nothing asked", start, "none that says"},
		{"a prompt sent, no answer yet", start + sent, "busy"},
		{"its usage counted as it answers", start + sent + copilotEvent(at(time.Second), "session.usage_record"), "busy"},
		{"the turn ended", start + sent + copilotEvent(at(time.Second), "assistant.turn_end"), "idle"},
		{"its permission dialog", start + asked, "waiting"},
		{"the dialog answered", start + asked + copilotEvent(at(time.Second), "permission.completed"), "busy"},
		{"the tool refused", start + asked + copilotEvent(at(time.Second), "permission.completed") +
			copilotEvent(at(time.Second), "assistant.turn_end") + copilotEvent(at(time.Second), "abort"), "idle"},
		{"an event it does not name", start + sent + copilotEvent(at(time.Second), "session.shutdown"), `ends in "session.shutdown", which its description does not say`},
		{"a tail starting mid-line", sent[10:] + copilotEvent(at(time.Second), "assistant.turn_end"), "idle"},
		{"quiet for long", copilotEvent(at(10*time.Minute), "assistant.turn_start"), "stale"},
		{"stamped in the future", copilotEvent(now.Add(time.Hour), "assistant.turn_start"), "in the future"},
		{"a Claude Code status", `{"tmux":"a:@1.%2","status":"busy","updatedAt":1}`, "not a Copilot CLI events log"},
		{"a Qwen Code record", `{"uuid":"u","timestamp":"2026-12-03T13:59:59Z","type":"user","cwd":"/w"}`, `ends in "user"`},
		{"a type that is no string", `{"type":7,"timestamp":"2026-12-03T13:59:59Z"}`, "not a Copilot CLI events log"},
		{"nothing", "", "not a Copilot CLI events log"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := copilotLog.ParseEvents([]byte(tt.log), now)
			got := w.Status
			if err != nil {
				got = err.Error()
			}
			if !strings.Contains(got, tt.want) || err == nil && w.Kind != EventsKind("copilot-cli") {
				t.Errorf("ParseEvents = %+v, %v; want %q", w, err, tt.want)
			}
			if w.Status == "waiting" && w.WaitingFor != "permission.requested" {
				t.Errorf("waiting for %q, want permission.requested", w.WaitingFor)
			}
		})
	}
	if got := copilotLog.DirOf([]byte(strings.TrimSpace(start))); got != "/w" {
		t.Errorf("DirOf = %q, want /w", got)
	}
	for _, line := range []string{copilotEvent(now, "user.message"), `{"data":{"context":"/w"}}`, `{"data":{"context":{"cwd":7}}}`, "[1]"} {
		if got := copilotLog.DirOf([]byte(strings.TrimSpace(line))); got != "" {
			t.Errorf("DirOf(%s) = %q, want none", line, got)
		}
	}
}

// FuzzParseEvents: whatever a log holds, reading it never panics,
// and a witness read from it is Copilot CLI's, fresh at now.
func FuzzParseEvents(f *testing.F) {
	now := time.Date(2026, 12, 3, 14, 0, 0, 0, time.UTC)
	f.Add(copilotEvent(now, "permission.requested"))
	f.Add(copilotEvent(now, "abort"))
	f.Fuzz(func(t *testing.T, log string) {
		w, err := copilotLog.ParseEvents([]byte(log), now)
		if err != nil {
			return
		}
		if w.Kind != EventsKind("copilot-cli") || w.Status != "busy" && w.Status != "waiting" && w.Status != "idle" || now.Sub(w.Updated) > WitnessMaxAge || w.Updated.After(now.Add(time.Minute)) {
			t.Fatalf("ParseEvents(%q) = %+v", log, w)
		}
	})
}
