package vitals

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

var now = time.Date(2026, 3, 4, 12, 30, 0, 0, time.UTC)

// counts sums a record over the hour before at, as the board does.
type counts struct{ Tools, Reason, Text, Wait int }

func sumOf(r statedir.VitalsRecord, at time.Time) counts {
	var c counts
	from, to := at.Add(-Window).Unix()/60, at.Unix()/60
	for _, m := range r.Minutes {
		if m.Minute > from && m.Minute <= to {
			c.Tools += m.Tools
			c.Reason += m.Reason
			c.Text += m.Text
			c.Wait += m.Wait
		}
	}
	return c
}

func ts(ago time.Duration) string { return now.Add(-ago).Format(time.RFC3339Nano) }

// assistant is one transcript line as Claude Code writes it: one content
// block a line, each with its message's id and stop reason.
func assistant(id, stop, block string, ago time.Duration) string {
	return fmt.Sprintf(`{"parentUuid":"p","isSidechain":false,"message":{"id":%q,"type":"message","role":"assistant","content":[%s],"stop_reason":%q},"type":"assistant","uuid":"u","timestamp":%q}`+"\n", id, block, stop, ts(ago))
}

const (
	text     = `{"type":"text","text":"Let me look."}`
	bash     = `{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}`
	ask      = `{"type":"tool_use","id":"t2","name":"AskUserQuestion","input":{}}`
	thinking = `{"type":"thinking","thinking":"hmm","signature":"x"}`
)

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func appendTo(t *testing.T, path, data string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
}

func TestClaudeTranscriptCounts(t *testing.T) {
	forged := `{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash"}]}}`
	tests := []struct {
		name string
		data string
		want counts
	}{
		{"a tool call after a text, as one message", assistant("m1", "tool_use", text, time.Minute) + assistant("m1", "tool_use", bash, time.Minute), counts{Tools: 1, Text: 1}},
		{"a turn's end is one wait, however many lines carry it",
			assistant("m2", "end_turn", thinking, time.Minute) + assistant("m2", "end_turn", text, time.Minute) + assistant("m3", "end_turn", text, 0),
			counts{Reason: 1, Text: 2, Wait: 2}},
		{"a question asked is a wait, not a tool", assistant("m4", "tool_use", ask, time.Minute), counts{Wait: 1}},
		{"older than the hour counts nothing", assistant("m5", "end_turn", text, 61*time.Minute), counts{}},
		{"a time to come counts now", assistant("m6", "tool_use", bash, -48*time.Hour), counts{Tools: 1}},
		{"no time counts now", strings.Replace(assistant("m7", "tool_use", bash, 0), `"timestamp"`, `"ts"`, 1), counts{Tools: 1}},
		{"the user's line quoting an assistant's is the user's",
			fmt.Sprintf(`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":%q}]},"timestamp":%q}`+"\n", forged, ts(0)), counts{}},
		{"other records, malformed lines, a string content",
			`{"type":"api-request-blob","message":{"content":[{"type":"text","text":"x"}]}}` + "\n" + "not json\n" + `{"type":"assistant"` + "\n" +
				`{"type":"assistant","message":{"content":"just a string"},"timestamp":"` + ts(0) + `"}` + "\n" + "\x00\xff\n",
			counts{}},
		{"an empty text is no reply", assistant("m8", "tool_use", `{"type":"text","text":""}`, 0), counts{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "s.jsonl")
			write(t, p, tt.data)
			r := Update(statedir.VitalsRecord{}, Source{Agent: Claude, Path: p}, nil, now)
			if r.Error != "" {
				t.Fatal(r.Error)
			}
			if diff := cmp.Diff(tt.want, sumOf(r, now)); diff != "" {
				t.Errorf("counts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCodexLogCounts(t *testing.T) {
	line := func(typ, payload string) string {
		return fmt.Sprintf(`{"timestamp":%q,"type":%q,"payload":%s}`+"\n", ts(time.Minute), typ, payload)
	}
	data := line("session_meta", `{"cwd":"/w"}`) +
		line("response_item", `{"type":"reasoning","summary":[]}`) +
		line("response_item", `{"type":"function_call","name":"shell"}`) +
		line("response_item", `{"type":"custom_tool_call","name":"apply_patch"}`) +
		line("response_item", `{"type":"message","role":"user","content":[]}`) +
		line("response_item", `{"type":"message","role":"assistant","content":[]}`) +
		line("event_msg", `{"type":"task_complete"}`) +
		line("event_msg", `{"type":"agent_message","message":"{\"type\":\"response_item\"}"}`)
	p := filepath.Join(t.TempDir(), "rollout-x.jsonl")
	write(t, p, data)
	r := Update(statedir.VitalsRecord{}, Source{Agent: Codex, Path: p}, nil, now)
	if diff := cmp.Diff(counts{Tools: 2, Reason: 1, Text: 1, Wait: 1}, sumOf(r, now)); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
}

// TestCursor: each poll reads only what was appended; a line still being
// written waits for its end; a file truncated, replaced or rewritten is
// counted anew, never twice.
func TestCursor(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.jsonl")
	src := Source{Agent: Claude, Path: p}
	write(t, p, assistant("a", "tool_use", bash, time.Minute))
	r := Update(statedir.VitalsRecord{}, src, nil, now)
	check := func(step string, want counts) {
		t.Helper()
		if r.Error != "" {
			t.Fatalf("%s: %s", step, r.Error)
		}
		if diff := cmp.Diff(want, sumOf(r, now)); diff != "" {
			t.Errorf("%s: counts (-want +got):\n%s", step, diff)
		}
	}
	check("first read", counts{Tools: 1})
	r = Update(r, src, nil, now)
	check("nothing new", counts{Tools: 1})

	half := assistant("b", "tool_use", bash, 0)
	appendTo(t, p, half[:40])
	r = Update(r, src, nil, now)
	check("half a line", counts{Tools: 1})
	appendTo(t, p, half[40:])
	r = Update(r, src, nil, now)
	check("the line ended", counts{Tools: 2})
	fi, _ := os.Stat(p)
	if r.Cursor.Offset != fi.Size() || r.Cursor.Behind != 0 {
		t.Errorf("cursor at %d (behind %d), want the end %d", r.Cursor.Offset, r.Cursor.Behind, fi.Size())
	}

	// Truncated and written again shorter: counted anew.
	write(t, p, assistant("c", "end_turn", text, 0))
	r = Update(r, src, nil, now)
	check("truncated", counts{Text: 1, Wait: 1})

	// Replaced by another file under the same name, longer than the read.
	other := filepath.Join(dir, "other")
	write(t, other, strings.Repeat(assistant("d", "tool_use", bash, 0), 3))
	if err := os.Rename(other, p); err != nil {
		t.Fatal(err)
	}
	r = Update(r, src, nil, now)
	check("replaced", counts{Tools: 3})

	// Rewritten in place, as long, other first bytes: counted anew.
	old, _ := os.ReadFile(p)
	l := assistant("e", "tool_use", thinking, 0)
	nw := l + strings.TrimSuffix(l, "\n") + strings.Repeat(" ", len(old)-2*len(l)) + "\n"
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte(nw), 0)
	f.Close()
	appendTo(t, p, assistant("e2", "tool_use", bash, 0))
	r = Update(r, src, nil, now)
	check("rewritten", counts{Reason: 2, Tools: 1})
}

// TestHostileRecords: what the agent was made to write cannot grow a read,
// hang it, open another file, or count what it did not.
func TestHostileRecords(t *testing.T) {
	dir := t.TempDir()

	t.Run("a line past MaxLine is dropped to its end", func(t *testing.T) {
		p := filepath.Join(dir, "long.jsonl")
		long := `{"type":"assistant","message":{"content":[` + strings.Repeat(bash+",", MaxLine/len(bash)+10) + bash + `]},"timestamp":"` + ts(0) + "\"}\n"
		write(t, p, assistant("a", "tool_use", bash, 0)+long+assistant("b", "tool_use", bash, 0))
		r := Update(statedir.VitalsRecord{}, Source{Claude, p}, nil, now)
		if diff := cmp.Diff(counts{Tools: 2}, sumOf(r, now)); diff != "" {
			t.Errorf("counts (-want +got):\n%s", diff)
		}
	})

	t.Run("a line past MaxLine still being written is dropped across polls", func(t *testing.T) {
		p := filepath.Join(dir, "growing.jsonl")
		write(t, p, `{"type":"assistant","message":{"content":[`+strings.Repeat(bash+",", MaxLine/len(bash)+10))
		src := Source{Claude, p}
		r := Update(statedir.VitalsRecord{}, src, nil, now)
		if !r.Cursor.Skip {
			t.Fatalf("cursor %+v: want the long line skipped", r.Cursor)
		}
		appendTo(t, p, bash+`]},"timestamp":"`+ts(0)+"\"}\n"+assistant("b", "end_turn", text, 0))
		r = Update(r, src, nil, now)
		if diff := cmp.Diff(counts{Text: 1, Wait: 1}, sumOf(r, now)); diff != "" {
			t.Errorf("counts (-want +got):\n%s", diff)
		}
	})

	t.Run("a huge record is read from near its end, MaxRead a poll", func(t *testing.T) {
		p := filepath.Join(dir, "huge.jsonl")
		line := assistant("h", "tool_use", bash, 0)
		n := (StartTail + 3<<20) / len(line)
		write(t, p, strings.Repeat(line, n))
		src := Source{Claude, p}
		r := Update(statedir.VitalsRecord{}, src, nil, now)
		fi, _ := os.Stat(p)
		if r.Cursor.Offset > fi.Size()-StartTail+MaxRead || r.Cursor.Behind == 0 {
			t.Errorf("cursor %+v of a %d-byte record: want at most MaxRead past the start tail, and behind", r.Cursor, fi.Size())
		}
		for range StartTail/MaxRead + 1 {
			r = Update(r, src, nil, now)
		}
		// Every whole line of the last StartTail bytes, the first one cut.
		want := StartTail/len(line) - 1
		if got := sumOf(r, now).Tools; got < want || got > want+1 || r.Cursor.Behind != 0 {
			t.Errorf("caught up to %d tool calls, behind %d; want %d or %d, behind 0", got, r.Cursor.Behind, want, want+1)
		}
	})

	t.Run("a link is not followed", func(t *testing.T) {
		target := filepath.Join(dir, "secret")
		write(t, target, assistant("s", "tool_use", bash, 0))
		p := filepath.Join(dir, "link.jsonl")
		os.Symlink(target, p)
		r := Update(statedir.VitalsRecord{}, Source{Claude, p}, nil, now)
		if r.Error == "" || len(r.Minutes) != 0 {
			t.Errorf("record %+v: want an error and no counts", r)
		}
	})

	t.Run("a FIFO is not waited on", func(t *testing.T) {
		p := filepath.Join(dir, "fifo.jsonl")
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Skip(err)
		}
		r := Update(statedir.VitalsRecord{}, Source{Claude, p}, nil, now)
		if !strings.Contains(r.Error, "not a regular file") {
			t.Errorf("error %q: want not a regular file", r.Error)
		}
	})

	t.Run("a record gone leaves no counts", func(t *testing.T) {
		p := filepath.Join(dir, "gone.jsonl")
		write(t, p, assistant("g", "tool_use", bash, 0))
		src := Source{Claude, p}
		r := Update(statedir.VitalsRecord{}, src, nil, now)
		os.Remove(p)
		r = Update(r, src, nil, now)
		if r.Error == "" || len(r.Minutes) != 0 {
			t.Errorf("record %+v: want an error and no counts", r)
		}
	})
}

func TestClaudeSource(t *testing.T) {
	home := t.TempDir()
	cwd := "/tmp/w.x/y z"
	id := "707c3d79-d95b-48f6-b64f-d2110aebe7cd"
	proj := filepath.Join(home, "projects", "-tmp-w-x-y-z")
	os.MkdirAll(proj, 0o700)
	write(t, filepath.Join(proj, id+".jsonl"), "")
	status := func(id, pane string, at int64) []byte {
		return []byte(fmt.Sprintf(`{"pid":1,"sessionId":%q,"cwd":%q,"tmux":%q,"status":"idle","updatedAt":%d}`, id, cwd, pane, at))
	}
	tests := []struct {
		name     string
		statuses [][]byte
		want     Source
		err      bool
	}{
		{"the pane's session", [][]byte{status("other", "s:@1.%2", 9), status(id, "s:@0.%0", 5)}, Source{Claude, filepath.Join(proj, id+".jsonl")}, false},
		{"no status for the pane", [][]byte{status(id, "s:@1.%2", 5)}, Source{}, false},
		{"a path as session id", [][]byte{status("../../../etc/passwd", "s:@0.%0", 5)}, Source{Agent: Claude}, true},
		{"a glob as session id", [][]byte{status("*", "s:@0.%0", 5)}, Source{Agent: Claude}, true},
		{"no transcript yet", [][]byte{status("0000-1111", "s:@0.%0", 5)}, Source{Agent: Claude}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ClaudeSource(home, tt.statuses, "s:@0.%0")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("source (-want +got):\n%s", diff)
			}
			if (err != nil) != tt.err {
				t.Errorf("error %v, want one: %v", err, tt.err)
			}
		})
	}
}

func TestProjectDir(t *testing.T) {
	for in, want := range map[string]string{
		"/tmp/TestX123/001/work": "-tmp-TestX123-001-work",
		"/a/../../b":             "-a-------b",
		"/ü/.hidden":             "----hidden",
		"/a😀b":                   "-a--b",
	} {
		if got := ProjectDir(in); got != want {
			t.Errorf("ProjectDir(%q) = %q, want %q", in, got, want)
		}
	}
}
