package poll

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/capture"
	"github.com/omega-monitor/omega-monitor/probe"
)

// TestAgentLogsOverSSHD: Qwen Code's chat record and Copilot CLI's events
// log of the pane's directory on the host, with no Claude Code status file
// naming the pane, reach the tick through a real sshd in the frame's one
// round trip, each read as its kind and weighed for its own agent only: a
// record saying a turn is open, an events log saying its permission
// dialog waits.
func TestAgentLogsOverSSHD(t *testing.T) {
	h := newCodexHost(t)
	now := time.Now()
	ts := now.UTC().Format(time.RFC3339Nano)
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	qwen := filepath.Join(h.home, ".qwen", "projects", "p", "chats", "s.jsonl")
	write(qwen, fmt.Sprintf(`{"uuid":"u","sessionId":"s","timestamp":%q,"type":"user","cwd":%q,"message":{"role":"user","parts":[{"text":"go"}]}}`+"\n", ts, h.dir))
	copilot := filepath.Join(h.home, ".copilot", "session-state", "s", "events.jsonl")
	write(copilot, fmt.Sprintf(`{"type":"session.start","data":{"context":{"cwd":%q}},"id":"s","timestamp":%q}`+"\n"+
		`{"type":"permission.requested","data":{},"id":"p","timestamp":%q}`+"\n", h.dir, ts, ts))
	read := func() capture.Capture {
		t.Helper()
		c, err := capture.Read(bytes.NewReader(h.frame(t)), capture.Options{Framed: true, Now: now,
			Events: capture.EventsSources(func(string) string { return "" }, classify.EventsLogs(nil))})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := read()
	if len(c.QwenChats) != 1 || len(c.Events) != 1 || len(c.Events[0].Tails) != 1 || len(c.CodexLogs) != 0 {
		t.Fatalf("%d records, events logs %+v, %d Codex logs; want one of each of ours (%v)", len(c.QwenChats), c.Events, len(c.CodexLogs), c.QwenChatsErr)
	}
	// Each agent's screen is weighed against its own kind only: the
	// record of a Qwen Code and the events of a Copilot CLI working in the
	// same directory do not hide each other; an agent whose description
	// names none has no witness.
	for _, tt := range []struct {
		agent, kind, status string
	}{
		{"Qwen Code", probe.QwenChat, "busy"},
		{"Copilot CLI", probe.EventsKind("copilot-cli"), "waiting"},
		{"Gemini CLI", "", ""},
	} {
		w, said := witnessFor(c, nil, tt.agent, now)
		switch {
		case tt.kind == "" && w != nil:
			t.Errorf("%s: witness %+v (%s), want none", tt.agent, w, said)
		case tt.kind != "" && (w == nil || w.Kind != tt.kind || w.Status != tt.status):
			t.Errorf("%s: witness %+v (%s), want %s, %s", tt.agent, w, said, tt.kind, tt.status)
		}
	}
	if err := os.Remove(qwen); err != nil {
		t.Fatal(err)
	}
	if w, said := read().Witness(now); w == nil || w.Kind != probe.EventsKind("copilot-cli") || w.Status != "waiting" || w.WaitingFor != "permission.requested" {
		t.Errorf("witness %+v (%s), want Copilot CLI's events log, waiting for a permission", w, said)
	}
}
