package probe

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// qwenEntry is a line of a Qwen Code chat record as 0.24.4 writes it, of
// type typ with the message's parts, written at at.
func qwenEntry(at time.Time, typ, parts string) string {
	msg := ""
	if parts != "" {
		msg = `,"message":{"role":"user","parts":` + parts + `}`
	}
	return fmt.Sprintf(`{"uuid":"u","parentUuid":null,"sessionId":"s","timestamp":%q,"type":%q,"cwd":"/w","version":"0.24.4"%s}`+"\n",
		at.UTC().Format(time.RFC3339Nano), typ, msg)
}

// TestParseQwenChat: what each moment of a Qwen Code turn leaves last in
// its record, as seen on the real program (docs/credibility.md), reads as
// the turn open or ended; a pending tool call, a quiet record, one stamped
// in the future and text that is no record are no witness.
func TestParseQwenChat(t *testing.T) {
	now := time.Date(2026, 12, 3, 14, 0, 0, 0, time.UTC)
	at := func(ago time.Duration) time.Time { return now.Add(-ago) }
	user := qwenEntry(at(30*time.Second), "user", `[{"text":"please think first"}]`)
	snapshot := qwenEntry(at(29*time.Second), "system", "")
	answer := qwenEntry(at(5*time.Second), "assistant", `[{"text":"Thought it through."}]`)
	call := qwenEntry(at(5*time.Second), "assistant", `[{"text":"I will run a command."},{"functionCall":{"id":"c","name":"run_shell_command","args":{"command":"touch x"}}}]`)
	refused := qwenEntry(at(2*time.Second), "tool_result", `[{"functionResponse":{"id":"c","name":"run_shell_command","response":{"error":"[Operation Cancelled] Reason: User did not allow tool call"}}}]`)
	ran := qwenEntry(at(2*time.Second), "tool_result", `[{"functionResponse":{"id":"c","name":"run_shell_command","response":{"output":"Command: touch x"}}}]`)
	apiError := qwenEntry(at(time.Second), "system", "")
	tests := []struct {
		name, record string
		want         string // the status, or the error's words
	}{
		{"a message sent, no answer yet", user + snapshot, "busy"},
		{"the API erring, retried", user + snapshot + apiError, "busy"},
		{"the answer whole", user + snapshot + answer + apiError, "idle"},
		{"an answer cut short by Esc", user + answer, "idle"},
		{"a tool call without its result", user + call, "without its result"},
		{"a tool refused", user + call + refused, "idle"},
		{"a tool's result, the model asked again", user + call + ran, "busy"},
		{"a tail starting mid-line", user[len(user)/2:] + snapshot, "no turn yet"},
		{"quiet for long", qwenEntry(at(10*time.Minute), "user", `[{"text":"x"}]`), "stale"},
		{"stamped in the future", qwenEntry(now.Add(time.Hour), "user", `[{"text":"x"}]`), "in the future"},
		{"a Claude Code status", `{"tmux":"a:@1.%2","status":"busy","updatedAt":1}`, "not a Qwen Code chat record"},
		{"a Codex log", `{"timestamp":"2026-12-03T13:59:59Z","type":"event_msg","payload":{"type":"task_started"}}`, "no turn yet"},
		{"nothing", "", "not a Qwen Code chat record"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := ParseQwenChat([]byte(tt.record), now)
			got := w.Status
			if err != nil {
				got = err.Error()
			}
			if !strings.Contains(got, tt.want) || err == nil && w.Kind != QwenChat {
				t.Errorf("ParseQwenChat = %+v, %v; want %q", w, err, tt.want)
			}
		})
	}
}

// TestQwenChatDir: the working directory is read from any whole line of a
// record, and from nothing else.
func TestQwenChatDir(t *testing.T) {
	for _, tt := range []struct{ line, want string }{
		{strings.TrimSpace(qwenEntry(time.Now(), "user", `[{"text":"x"}]`)), "/w"},
		{`{"cwd":"/w"}`, ""},
		{`{"type":"user","timestamp":"x","cwd":"/w"`, ""},
		{"", ""},
	} {
		if diff := cmp.Diff(tt.want, QwenChatDir([]byte(tt.line))); diff != "" {
			t.Errorf("QwenChatDir(%q) (-want +got):\n%s", tt.line, diff)
		}
	}
}

// FuzzParseQwenChat: whatever a record holds, reading it never panics, and
// a witness read from it is Qwen Code's, busy or idle, fresh at now.
func FuzzParseQwenChat(f *testing.F) {
	now := time.Date(2026, 12, 3, 14, 0, 0, 0, time.UTC)
	f.Add(qwenEntry(now, "user", `[{"text":"x"}]`))
	f.Add(qwenEntry(now, "tool_result", `[{"functionResponse":{"response":{"error":"[Operation Cancelled]"}}}]`))
	f.Add(qwenEntry(now, "assistant", `[{"functionCall":null}]`))
	f.Fuzz(func(t *testing.T, record string) {
		w, err := ParseQwenChat([]byte(record), now)
		if err != nil {
			return
		}
		if w.Kind != QwenChat || w.Status != "busy" && w.Status != "idle" || now.Sub(w.Updated) > WitnessMaxAge || w.Updated.After(now.Add(time.Minute)) {
			t.Fatalf("ParseQwenChat(%q) = %+v", record, w)
		}
	})
}
