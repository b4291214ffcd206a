package capture

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/probe"
)

// qwenBlock is a Qwen Code record's block as the host's script prints it.
func qwenBlock(record string) string {
	return QwenChatMark + "\n" + base64Lines(record) + "\n" + QwenChatEnd + "\n"
}

// qwenUser is a line of a Qwen Code record: the human's message, sent in
// dir at at.
func qwenUser(dir string, at time.Time) string {
	return fmt.Sprintf(`{"uuid":"u","sessionId":"s","timestamp":%q,"type":"user","cwd":%q,"version":"0.24.4","message":{"role":"user","parts":[{"text":"go"}]}}`+"\n",
		at.UTC().Format(time.RFC3339Nano), dir)
}

// TestReadQwenChatsHostile: the Qwen Code records of a remote frame are
// read with the caps Codex's logs are (TestReadCodexLogsHostile), apart
// from them: a host that sends too many records, or one that does not
// read, is believed on none of its records, and its Codex logs and status
// files still count. Only a block without its end fails the frame.
func TestReadQwenChatsHostile(t *testing.T) {
	const (
		head   = "agent:@1.%2\t/w\n"
		status = `{"tmux":"agent:@1.%2","status":"idle","updatedAt":1}`
		tail   = status + "\n" + StatusEnd + "\n" + PaneMark + "\nthe pane\n"
	)
	rec := func(i int) string { return qwenUser("/w", time.Date(2026, 11, 30, 10, 0, i, 0, time.UTC)) }
	blocks := func(n int) string {
		var b strings.Builder
		for i := range n {
			b.WriteString(qwenBlock(rec(i % 10)))
		}
		return b.String()
	}
	codexLog := `{"timestamp":"2026-11-30T10:00:00Z","type":"event_msg","payload":{"type":"task_started"}}` + "\n"
	type view struct {
		Statuses, CodexLogs, QwenChats []string
		QwenChatsErr                   string
		Screen                         []string
	}
	real := view{Statuses: []string{status + "\n"}, Screen: []string{"the pane"}}
	with := func(recs []string, why string) view {
		v := real
		v.QwenChats, v.QwenChatsErr = recs, why
		return v
	}
	absent := func(why string) view {
		return with(nil, "capture: "+why+": its Qwen Code records are taken as absent")
	}
	forged := StatusEnd + "\n" + `{"tmux":"agent:@1.%2","status":"busy","updatedAt":9}` + "\n" + StatusEnd + "\n" + PaneMark + "\n❯ 1. Yes\n"
	tests := []struct {
		name     string
		frame    string
		want     view
		frameErr string
	}{
		{"one", head + qwenBlock(rec(1)) + tail, with([]string{rec(1)}, ""), ""},
		{"as many as a frame carries", head + blocks(MaxQwenChats) + tail, with([]string{rec(0), rec(1), rec(2), rec(3)}, ""), ""},
		{"one more", head + blocks(MaxQwenChats+1) + tail, absent("the host sent more than 4 Qwen Code records"), ""},
		{"thousands", head + blocks(5000) + tail, absent("the host sent more than 4 Qwen Code records"), ""},
		{"not base64", head + QwenChatMark + "\ne30K!!!!\n" + QwenChatEnd + "\n" + tail, absent("a Qwen Code record the host sent is not base64"), ""},
		{"frame marks inside a block", head + QwenChatMark + "\n" + forged + QwenChatEnd + "\n" + tail, absent("a Qwen Code record the host sent is not base64"), ""},
		{"a Codex log's end does not end it", head + QwenChatMark + "\n" + base64Lines(rec(1)) + CodexLogEnd + "\n" + QwenChatEnd + "\n" + tail,
			absent("a Qwen Code record the host sent is not base64"), ""},
		{"beside a Codex log, each read as its own", head + codexBlock(codexLog) + qwenBlock(rec(1)) + tail,
			view{Statuses: real.Statuses, Screen: real.Screen, CodexLogs: []string{codexLog}, QwenChats: []string{rec(1)}}, ""},
		{"a bad record costs no Codex log", head + codexBlock(codexLog) + QwenChatMark + "\n!\n" + QwenChatEnd + "\n" + tail,
			view{Statuses: real.Statuses, Screen: real.Screen, CodexLogs: []string{codexLog},
				QwenChatsErr: "capture: a Qwen Code record the host sent is not base64: its Qwen Code records are taken as absent"}, ""},
		{"no end", head + QwenChatMark + "\n" + base64Lines(rec(1)) + tail, view{}, "a Qwen Code record without its end"},
		{"after a status line", head + status + "\n" + StatusEnd + "\n" + qwenBlock(rec(1)) + PaneMark + "\nthe pane\n", real, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Read(strings.NewReader(tt.frame), Options{Framed: true})
			if tt.frameErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.frameErr) {
					t.Fatalf("frame error %v, want %q", err, tt.frameErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := view{}
			for _, s := range c.Statuses {
				got.Statuses = append(got.Statuses, string(s))
			}
			for _, l := range c.CodexLogs {
				got.CodexLogs = append(got.CodexLogs, string(l))
			}
			for _, l := range c.QwenChats {
				got.QwenChats = append(got.QwenChats, string(l))
			}
			if c.QwenChatsErr != nil {
				got.QwenChatsErr = c.QwenChatsErr.Error()
			}
			for _, l := range c.Screen.Lines {
				got.Screen = append(got.Screen, l.Text)
			}
			if diff := cmp.Diff(tt.want, got, frameOpts); diff != "" {
				t.Errorf("frame (-want +got):\n%s", diff)
			}
		})
	}
}

// qwenHome lays out a Qwen Code home whose records are: the pane's,
// written now; another directory's; the pane's, but quiet for ten minutes;
// a FIFO and a link under a record's name. It returns the pane's record.
func qwenHome(t *testing.T, home, dir string) string {
	t.Helper()
	chats := filepath.Join(home, "projects", "p", "chats")
	other := filepath.Join(home, "projects", "q", "chats")
	for _, d := range []string{chats, other} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	mine := qwenUser(dir, now)
	write := func(path, text string, mod time.Time) { writeAt(t, path, text, mod) }
	write(filepath.Join(chats, "mine.jsonl"), mine, now)
	write(filepath.Join(other, "theirs.jsonl"), qwenUser("/elsewhere", now), now)
	write(filepath.Join(chats, "old.jsonl"), qwenUser(dir, now.Add(-10*time.Minute)), now.Add(-10*time.Minute))
	if err := syscall.Mkfifo(filepath.Join(chats, "fifo.jsonl"), 0o600); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "outside.jsonl")
	write(outside, qwenUser(dir, now), now)
	if err := os.Symlink(outside, filepath.Join(chats, "link.jsonl")); err != nil {
		t.Fatal(err)
	}
	return mine
}

// TestQwenChatsFound: the records that count for a pane are found the same
// way on this machine and on a host: the pane's working directory's,
// written in the last 5 minutes, regular files only ($QWEN_HOME where it
// is set). A FIFO under a record's name holds neither read, and a link
// leads nowhere.
func TestQwenChatsFound(t *testing.T) {
	home := t.TempDir()
	qwen := filepath.Join(home, "qwen-home")
	mine := qwenHome(t, qwen, "/w d")
	for where, c := range bothWays(t, map[string]string{"HOME": home, "QWEN_HOME": qwen}, nil) {
		var got []string
		for _, r := range c.QwenChats {
			got = append(got, string(r))
		}
		if diff := cmp.Diff([]string{mine}, got); diff != "" || c.QwenChatsErr != nil {
			t.Errorf("%s: records (-want +got):\n%s%v", where, diff, c.QwenChatsErr)
		}
		w, said := c.Witness(time.Now())
		if w == nil || w.Kind != probe.QwenChat || w.Status != "busy" {
			t.Errorf("%s: witness %+v (%s), want Qwen Code's, busy", where, w, said)
		}
	}
}

// TestQwenChatsAreNeverStatuses: a record whose text is a Claude Code
// status naming the pane says nothing as a status: records are read as
// Qwen Code's only.
func TestQwenChatsAreNeverStatuses(t *testing.T) {
	now := time.Now()
	status := fmt.Sprintf(`{"tmux":"agent:@1.%%2","status":"busy","updatedAt":%d}`, now.UnixMilli())
	c, err := Read(strings.NewReader("agent:@1.%2\t/w\n"+qwenBlock(status)+PaneMark+"\nthe pane\n"), Options{Framed: true})
	if err != nil {
		t.Fatal(err)
	}
	if w, said := c.Witness(now); w != nil {
		t.Errorf("witness %+v (%s), want none: a record is no status", w, said)
	}
}

// copilotStart is the first line of a Copilot CLI events log, its session
// started in dir, then an event at at that says a turn is open.
func copilotStart(dir string, at time.Time) string {
	return fmt.Sprintf(`{"type":"session.start","data":{"context":{"cwd":%q}},"id":"s","timestamp":%q}`+"\n"+
		`{"type":"assistant.turn_start","data":{},"id":"t","timestamp":%q}`+"\n",
		dir, at.UTC().Format(time.RFC3339Nano), at.UTC().Format(time.RFC3339Nano))
}

// TestCopilotEventsFound: Copilot CLI's events logs are found as Qwen
// Code's records are (TestQwenChatsFound), on this machine and by the
// host's script ($COPILOT_HOME where it is set): the pane's directory's,
// written in the last 5 minutes, regular files only.
func TestCopilotEventsFound(t *testing.T) {
	home := t.TempDir()
	copilot := filepath.Join(home, "copilot-home")
	now := time.Now()
	write := func(session, text string, mod time.Time) string {
		return writeAt(t, filepath.Join(copilot, "session-state", session, "events.jsonl"), text, mod)
	}
	mine := copilotStart("/w d", now)
	write("mine", mine, now)
	write("theirs", copilotStart("/elsewhere", now), now)
	write("old", copilotStart("/w d", now.Add(-10*time.Minute)), now.Add(-10*time.Minute))
	if err := os.MkdirAll(filepath.Join(copilot, "session-state", "fifo"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(copilot, "session-state", "fifo", "events.jsonl"), 0o600); err != nil {
		t.Fatal(err)
	}
	outside := write("../../outside", mine, now)
	if err := os.MkdirAll(filepath.Join(copilot, "session-state", "link"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(copilot, "session-state", "link", "events.jsonl")); err != nil {
		t.Fatal(err)
	}
	for where, c := range bothWays(t, map[string]string{"HOME": home, "COPILOT_HOME": copilot}, nil) {
		e := eventsOf(c, "copilot-cli")
		if diff := cmp.Diff([]string{mine}, texts(e.Tails)); diff != "" || e.Err != nil {
			t.Errorf("%s: events logs (-want +got):\n%s%v", where, diff, e.Err)
		}
		w, said := c.Witness(time.Now())
		if w == nil || w.Kind != probe.EventsKind("copilot-cli") || w.Status != "busy" {
			t.Errorf("%s: witness %+v (%s), want Copilot CLI's, busy", where, w, said)
		}
	}
}

// TestReadCopilotEventsHostile: a host's Copilot CLI events logs are
// capped as its Qwen Code records are, apart from them.
func TestReadCopilotEventsHostile(t *testing.T) {
	const head, tail = "agent:@1.%2\t/w\n", PaneMark + "\nthe pane\n"
	log := copilotStart("/w", time.Now())
	mark, end := eventsMarks(eventsOf(Capture{}, "copilot-cli").Log)
	block := mark + "\n" + base64Lines(log) + "\n" + end + "\n"
	for _, tt := range []struct {
		name, frame string
		events      int
		qwen        int
		err         string
	}{
		{"one", head + block + tail, 1, 0, ""},
		{"one more than a frame carries", head + strings.Repeat(block, MaxEventsLogs+1) + tail, 0, 0, "the host sent more than 4 Copilot CLI events logs"},
		{"a Qwen Code record's end does not end it", head + mark + "\n" + base64Lines(log) + QwenChatEnd + "\n" + end + "\n" + tail, 0, 0,
			"a Copilot CLI events log the host sent is not base64"},
		{"beside a Qwen Code record, each its own", head + block + qwenBlock(qwenUser("/w", time.Now())) + tail, 1, 1, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Read(strings.NewReader(tt.frame), framedOptions)
			if err != nil {
				t.Fatal(err)
			}
			why := ""
			e := eventsOf(c, "copilot-cli")
			if e.Err != nil {
				why = e.Err.Error()
			}
			if len(e.Tails) != tt.events || len(c.QwenChats) != tt.qwen || !strings.Contains(why, tt.err) || (tt.err == "") != (why == "") {
				t.Errorf("%d events logs, %d Qwen Code records (%q); want %d, %d (%q)", len(e.Tails), len(c.QwenChats), why, tt.events, tt.qwen, tt.err)
			}
		})
	}
}
