package poll

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/capture"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// codexHost is a remoteHost whose pane runs no Claude Code (no status file
// names it): its record is Codex's session log of the pane's directory,
// under the host's ~/.codex/sessions.
type codexHost struct {
	*remoteHost
	dir  string // the pane's working directory
	day  string // ~/.codex/sessions/2026/03/04 on the host
	logs string // ~/.codex/sessions
}

func newCodexHost(t *testing.T) *codexHost {
	t.Helper()
	testenv.Need(t, "find")
	h := &codexHost{remoteHost: newRemoteHost(t)}
	if err := os.Remove(filepath.Join(h.home, ".claude", "sessions", "4242.json")); err != nil {
		t.Fatal(err)
	}
	h.dir = strings.TrimSpace(h.tmux.Run(t, "display-message", "-p", "-t", "=agent:", "#{pane_current_path}"))
	h.logs = filepath.Join(h.home, ".codex", "sessions")
	h.day = filepath.Join(h.logs, "2026", "03", "04")
	if err := os.MkdirAll(h.day, 0o700); err != nil {
		t.Fatal(err)
	}
	return h
}

// codexMeta is the first line of a Codex session log: its working
// directory.
func codexMeta(dir string, at time.Time) string {
	return fmt.Sprintf(`{"timestamp":%q,"type":"session_meta","payload":{"id":"s","cwd":%q,"originator":"codex_cli_rs","cli_version":"0.171.0"}}`+"\n",
		at.UTC().Format(time.RFC3339Nano), dir)
}

// codexItem is one line of a Codex session log: a response item of type
// typ (a tool call, reasoning, a message of the assistant or the user), or
// the event task_complete.
func codexItem(typ string, at time.Time) string {
	ts := at.UTC().Format(time.RFC3339Nano)
	switch typ {
	case "task_complete":
		return fmt.Sprintf(`{"timestamp":%q,"type":"event_msg","payload":{"type":"task_complete","last_agent_message":"done"}}`+"\n", ts)
	case "function_call":
		return fmt.Sprintf(`{"timestamp":%q,"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"ls\"}","call_id":"c1"}}`+"\n", ts)
	case "reasoning":
		return fmt.Sprintf(`{"timestamp":%q,"type":"response_item","payload":{"type":"reasoning","summary":[],"encrypted_content":null}}`+"\n", ts)
	case "user":
		return fmt.Sprintf(`{"timestamp":%q,"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"go"}]}}`+"\n", ts)
	}
	return fmt.Sprintf(`{"timestamp":%q,"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Let me look."}]}}`+"\n", ts)
}

// TestRemoteCodexVitalsOverSSHD: Codex's session log of the pane's
// directory on the host, with no Claude Code status file naming the pane,
// is counted by polls through a real sshd, each poll only what was added,
// as Claude Code's transcript is: appended (a line cut in half waits for
// its end), more appended than a frame carries (a gap), truncated,
// replaced by another file, rewritten in place at a greater size, and a
// newer log of the same directory (another session: counted anew).
func TestRemoteCodexVitalsOverSSHD(t *testing.T) {
	h := newCodexHost(t)
	state := t.TempDir()
	now := time.Now()
	ago := now.Add(-2 * time.Minute)
	log := filepath.Join(h.day, "rollout-2026-03-04T12-00-00-0199a213-81c0-7800-8aa1-bbab2a035a53.jsonl")
	rel := "2026/03/04/" + filepath.Base(log)

	// No log yet: said, not 0.
	r := h.poll(t, state, now)
	if r.Error == "" || r.Minutes != nil || !strings.Contains(r.Error, "no Codex log") {
		t.Fatalf("no log: %+v, want an error and no counts", r)
	}

	steps := []followStep{
		{"first read", func() {
			appendFile(t, log, codexMeta(h.dir, ago)+codexItem("user", ago)+codexItem("reasoning", ago)+codexItem("message", ago)+codexItem("function_call", ago))
		}, vitalsCounts{Tools: 1, Reason: 1, Text: 1}, false},
		{"nothing new", func() {}, vitalsCounts{Tools: 1, Reason: 1, Text: 1}, false},
		{"appended, the last line cut in half", func() {
			appendFile(t, log, codexItem("message", ago)+codexItem("task_complete", ago)[:30])
		}, vitalsCounts{Tools: 1, Reason: 1, Text: 2}, false},
		{"the half line ends", func() {
			appendFile(t, log, codexItem("task_complete", ago)[30:])
		}, vitalsCounts{Tools: 1, Reason: 1, Text: 2, Wait: 1}, false},
		{"more than a frame carries", func() {
			big := fmt.Sprintf(`{"timestamp":%q,"type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"%s"}}`+"\n",
				ago.UTC().Format(time.RFC3339Nano), strings.Repeat("x", capture.VitalsTail))
			appendFile(t, log, codexItem("function_call", ago)+big+codexItem("function_call", ago))
		}, vitalsCounts{Tools: 2, Reason: 1, Text: 2, Wait: 1}, true},
		{"truncated", func() {
			if err := os.WriteFile(log, []byte(codexMeta(h.dir, ago)+codexItem("message", ago)), 0o600); err != nil {
				t.Fatal(err)
			}
		}, vitalsCounts{Text: 1}, false},
		{"replaced by another file", func() {
			tmp := filepath.Join(h.home, "new.jsonl")
			data := codexMeta(h.dir, ago) + codexItem("function_call", ago) + codexItem("function_call", ago) + codexItem("message", ago) + codexItem("task_complete", ago)
			if err := os.WriteFile(tmp, []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, log); err != nil {
				t.Fatal(err)
			}
		}, vitalsCounts{Tools: 2, Text: 1, Wait: 1}, false},
		{"rewritten in place, longer", func() {
			data := codexMeta(h.dir, ago) + codexItem("reasoning", ago) + codexItem("reasoning", ago) + codexItem("reasoning", ago) +
				codexItem("message", ago) + codexItem("message", ago) + codexItem("task_complete", ago)
			if err := os.WriteFile(log, []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
		}, vitalsCounts{Reason: 3, Text: 2, Wait: 1}, false},
		{"a newer log of the directory", func() {
			next := filepath.Join(h.day, "rollout-2026-03-04T12-30-00-0199a213-81c0-7800-8aa1-000000000002.jsonl")
			appendFile(t, next, codexMeta(h.dir, ago)+codexItem("function_call", ago))
			later := time.Now().Add(time.Second)
			if err := os.Chtimes(next, later, later); err != nil {
				t.Fatal(err)
			}
			log = next
			rel = "2026/03/04/" + filepath.Base(next)
		}, vitalsCounts{Tools: 1}, false},
		{"a log of another directory, newer still", func() {
			other := filepath.Join(h.day, "rollout-2026-03-04T12-40-00-0199a213-81c0-7800-8aa1-000000000003.jsonl")
			appendFile(t, other, codexMeta(h.dir+"/elsewhere", ago)+codexItem("reasoning", ago))
			later := time.Now().Add(2 * time.Second)
			if err := os.Chtimes(other, later, later); err != nil {
				t.Fatal(err)
			}
		}, vitalsCounts{Tools: 1}, false},
	}
	var gap int64
	for _, s := range steps {
		before := r.Cursor.Offset
		s.do()
		r = h.poll(t, state, now)
		checkStep(t, s.name, r, s.want, s.gap, &gap, log, "codex", "$CODEX_HOME/sessions/"+rel, before)
	}
}

// TestRemoteCodexVitalsRefused: what the host's logs may be that is not
// counted: a log older than the hour, a link to a log, a FIFO under a
// log's name (the frame still comes, without waiting on it), a log in a
// folder not Codex's YYYY/MM/DD, and a log whose first line names the pane's
// directory only inside another field. And where a Claude Code status file
// names the pane, its transcript is the record, never the Codex log.
func TestRemoteCodexVitalsRefused(t *testing.T) {
	h := newCodexHost(t)
	now := time.Now()
	ago := now.Add(-2 * time.Minute)
	data := codexMeta(h.dir, ago) + codexItem("function_call", ago)
	tests := []struct {
		name  string
		plant func(t *testing.T) (undo func())
		want  string // in the record's error
	}{
		{"older than the hour", func(t *testing.T) func() {
			p := filepath.Join(h.day, "rollout-old.jsonl")
			appendFile(t, p, data)
			past := now.Add(-61 * time.Minute)
			if err := os.Chtimes(p, past, past); err != nil {
				t.Fatal(err)
			}
			return func() { os.Remove(p) }
		}, "no Codex log"},
		{"a link", func(t *testing.T) func() {
			target := filepath.Join(h.home, "elsewhere.jsonl")
			appendFile(t, target, data)
			p := filepath.Join(h.day, "rollout-link.jsonl")
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			return func() { os.Remove(p) }
		}, "no Codex log"},
		{"a FIFO", func(t *testing.T) func() {
			p := filepath.Join(h.day, "rollout-fifo.jsonl")
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatal(err)
			}
			return func() { os.Remove(p) }
		}, "no Codex log"},
		{"a folder not Codex's", func(t *testing.T) func() {
			d := filepath.Join(h.logs, "x")
			os.MkdirAll(d, 0o700)
			appendFile(t, filepath.Join(d, "rollout-a.jsonl"), data)
			return func() { os.RemoveAll(d) }
		}, "not named as Codex"},
		{"the directory only inside another field", func(t *testing.T) func() {
			p := filepath.Join(h.day, "rollout-quoted.jsonl")
			appendFile(t, p, fmt.Sprintf(`{"type":"session_meta","payload":{"cwd":"/x","note":"\"cwd\":\"%s\""}}`+"\n", h.dir)+codexItem("function_call", ago))
			return func() { os.Remove(p) }
		}, "no Codex log"},
		{"a Claude Code status file names the pane", func(t *testing.T) func() {
			p := filepath.Join(h.day, "rollout-claude.jsonl")
			appendFile(t, p, data)
			h.status(t, "4242", remoteSession, 2)
			return func() { os.Remove(p); os.Remove(filepath.Join(h.home, ".claude", "sessions", "4242.json")) }
		}, "sent no transcript of session " + remoteSession},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer tt.plant(t)()
			r := h.poll(t, t.TempDir(), now)
			if r.Minutes != nil || !strings.Contains(r.Error, tt.want) {
				t.Errorf("record %+v, want no counts and the error %q", r, tt.want)
			}
		})
	}
}
