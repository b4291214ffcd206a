package capture

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// codexBlock is a Codex log's block as the host's script prints it.
func codexBlock(log string) string {
	return CodexLogMark + "\n" + base64Lines(log) + "\n" + CodexLogEnd + "\n"
}

// A frameView is what a frame says, in values a test compares: every
// field of the Capture, the screen as its lines' text, and errors as
// their words.
type frameView struct {
	Pane, Dir, Title string
	Statuses         []string
	CodexLogs        []string
	CodexLogsErr     string
	Transcript       *Transcript
	Screen           []string
	Capture          Capture // the rest
}

func viewOf(c Capture) frameView {
	v := frameView{Pane: c.Pane, Dir: c.Dir, Title: c.Title, Transcript: c.Transcript}
	for _, s := range c.Statuses {
		v.Statuses = append(v.Statuses, string(s))
	}
	for _, l := range c.CodexLogs {
		v.CodexLogs = append(v.CodexLogs, string(l))
	}
	if c.CodexLogsErr != nil {
		v.CodexLogsErr = c.CodexLogsErr.Error()
	}
	if c.Screen != nil {
		for _, l := range c.Screen.Lines {
			v.Screen = append(v.Screen, l.Text)
		}
	}
	c.Pane, c.Dir, c.Title, c.Statuses, c.CodexLogs, c.CodexLogsErr, c.Transcript, c.Screen = "", "", "", nil, nil, nil, nil, nil
	v.Capture = c
	return v
}

// frameOpts compares frameViews: errors by what they say.
var frameOpts = cmp.Options{cmpopts.EquateEmpty(), cmp.Comparer(func(a, b error) bool {
	return a == nil && b == nil || a != nil && b != nil && a.Error() == b.Error()
})}

// TestReadCodexLogsHostile: the Codex logs of a remote frame are read with
// caps whatever the host sends. At most MaxCodexLogs blocks, each of at
// most MaxStatusFile bytes in base64, are taken; a host that sends more,
// or a block that does not decode, is believed on none of its logs, and
// the frame is still read: its status files and its pane are the real
// ones. Frame marks inside a block mean nothing. Only a block without its
// end fails the frame. A block anywhere but right after the header is a
// status's text, or the pane's; a local frame takes none.
func TestReadCodexLogsHostile(t *testing.T) {
	const (
		head   = "agent:@1.%2\t/w\n"
		status = `{"tmux":"agent:@1.%2","status":"idle","updatedAt":1}`
		tail   = status + "\n" + StatusEnd + "\n" + PaneMark + "\nthe pane\n"
	)
	log := func(i int) string {
		return fmt.Sprintf(`{"timestamp":"2026-11-30T10:00:0%dZ","type":"event_msg","payload":{"type":"task_started"}}`+"\n", i)
	}
	blocks := func(n int) string {
		var b strings.Builder
		for i := range n {
			b.WriteString(codexBlock(log(i % 10)))
		}
		return b.String()
	}
	forged := StatusEnd + "\n" + `{"tmux":"agent:@1.%2","status":"busy","updatedAt":9}` + "\n" + StatusEnd + "\n" +
		TitleMark + " forged\n" + ForegroundMark + "\n" + ForegroundEnd + "\n" + PaneMark + "\n❯ 1. Yes\n"
	big := strings.Repeat(strings.Repeat("A", 76)+"\n", (MaxStatusFile+2)*4/3/76+2)
	real := frameView{Pane: "agent:@1.%2", Dir: "/w", Statuses: []string{status + "\n"}, Screen: []string{"the pane"}}
	with := func(logs []string, why string) frameView {
		v := real
		v.CodexLogs, v.CodexLogsErr = logs, why
		return v
	}
	absent := func(why string) frameView {
		return with(nil, "capture: "+why+": its Codex logs are taken as absent")
	}
	tests := []struct {
		name     string
		frame    string
		local    bool
		want     frameView
		frameErr string
	}{
		{"one", head + codexBlock(log(1)) + tail, false, with([]string{log(1)}, ""), ""},
		{"as many as a frame carries", head + blocks(MaxCodexLogs) + tail, false,
			with([]string{log(0), log(1), log(2), log(3)}, ""), ""},
		{"one more", head + blocks(MaxCodexLogs+1) + tail, false, absent("the host sent more than 4 Codex logs"), ""},
		{"thousands", head + blocks(5000) + tail, false, absent("the host sent more than 4 Codex logs"), ""},
		{"an empty block: no log", head + CodexLogMark + "\n\n" + CodexLogEnd + "\n" + tail, false, real, ""},
		{"not base64", head + CodexLogMark + "\ne30K!!!!\n" + CodexLogEnd + "\n" + tail, false,
			absent("a Codex log the host sent is not base64"), ""},
		{"cut short", head + CodexLogMark + "\ne30\n" + CodexLogEnd + "\n" + tail, false,
			absent("a Codex log the host sent is not base64"), ""},
		{"frame marks inside a block", head + CodexLogMark + "\n" + forged + CodexLogEnd + "\n" + tail, false,
			absent("a Codex log the host sent is not base64"), ""},
		{"a good block, then a bad one", head + codexBlock(log(1)) + CodexLogMark + "\n!\n" + CodexLogEnd + "\n" + tail, false,
			absent("a Codex log the host sent is not base64"), ""},
		{"more than a log's tail", head + CodexLogMark + "\n" + big + CodexLogEnd + "\n" + tail, false,
			absent("the host sent more than 65536 bytes of a Codex log"), ""},
		{"more than a log's tail, on one line", head + CodexLogMark + "\n" + strings.ReplaceAll(big, "\n", "") + "\n" + CodexLogEnd + "\n" + tail, false,
			absent("the host sent more than 65536 bytes of a Codex log"), ""},
		{"a whole tail on one line", head + CodexLogMark + "\n" + strings.ReplaceAll(base64Lines(strings.Repeat("x", MaxStatusFile)), "\n", "") + "\n" + CodexLogEnd + "\n" + tail, false,
			with([]string{strings.Repeat("x", MaxStatusFile)}, ""), ""},
		{"no end", head + CodexLogMark + "\n" + base64Lines(log(1)) + tail, false, frameView{}, "a Codex log without its end"},
		{"after a status line", head + status + "\n" + StatusEnd + "\n" + codexBlock(log(1)) + PaneMark + "\nthe pane\n", false,
			real, ""}, // the block's lines are a status's, never ended
		{"in the pane", head + status + "\n" + StatusEnd + "\n" + PaneMark + "\n" + codexBlock(log(1)), false,
			frameView{Pane: "agent:@1.%2", Dir: "/w", Statuses: []string{status + "\n"}, Screen: strings.Split(strings.TrimSuffix(codexBlock(log(1)), "\n"), "\n")}, ""},
		{"in a local frame", head + codexBlock(log(1)) + PaneMark + "\nthe pane\n", true,
			frameView{Pane: "agent:@1.%2", Screen: []string{"the pane"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Options{Framed: true}
			if tt.local {
				o.StatusDir, o.CodexHome = t.TempDir(), t.TempDir()
			}
			c, err := Read(strings.NewReader(tt.frame), o)
			if tt.frameErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.frameErr) {
					t.Fatalf("frame error %v, want %q", err, tt.frameErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := viewOf(c)
			got.Capture = Capture{}
			if diff := cmp.Diff(tt.want, got, frameOpts); diff != "" {
				t.Errorf("frame (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCodexLogsAreNeverStatuses: a host's Codex log whose text is a Claude
// Code status naming the pane says nothing as a status: the logs are read
// as Codex logs only, and a status file of the pane, stale, still decides
// over them.
func TestCodexLogsAreNeverStatuses(t *testing.T) {
	now := time.Now()
	status := fmt.Sprintf(`{"tmux":"agent:@1.%%2","status":"busy","updatedAt":%d}`, now.UnixMilli())
	c, err := Read(strings.NewReader("agent:@1.%2\t/w\n"+codexBlock(status)+PaneMark+"\nthe pane\n"), Options{Framed: true})
	if err != nil {
		t.Fatal(err)
	}
	if w, said := c.Witness(now); w != nil {
		t.Errorf("witness %+v (%s), want none: a log is no status", w, said)
	}
}

// TestAMarkInACodexLogChangesNothing (property): every mark of the frame,
// written into a Codex log on the host (a line of its own, the start of a
// line, inside one, after a carriage return, with text of any kind about
// it), is only bytes of that log. The real script run over it gives a
// frame that reads as the frame without the mark, but for the log's own
// bytes, which are the file's last ones, whole.
func TestAMarkInACodexLogChangesNothing(t *testing.T) {
	sh := testenv.Need(t, "sh", "find", "tail", "base64")[0]
	home := t.TempDir()
	mux := filepath.Join(home, "mux")
	script := "#!/bin/sh\ncase $1 in\ndisplay-message) printf '[omega-monitor:mux] 100 @1 1:99@1 0:50@2\\nagent:@1.%%2\\t/w d\\n' ;;\ncapture-pane) printf 'the pane\\n' ;;\nesac\n"
	if err := os.WriteFile(mux, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(home, ".claude", "sessions"), 0o700)
	os.WriteFile(filepath.Join(home, ".claude", "sessions", "1.json"), []byte(`{"tmux":"agent:@1.%2","status":"idle","updatedAt":1}`), 0o600)
	day := filepath.Join(home, ".codex", "sessions", "2026", "11", "30")
	os.MkdirAll(day, 0o700)
	logPath := filepath.Join(day, "rollout-a.jsonl")
	meta := `{"timestamp":"2026-11-30T10:00:00Z","type":"session_meta","payload":{"cwd":"/w d"}}` + "\n"
	read := func(t *testing.T, log string) Capture {
		t.Helper()
		if err := os.WriteFile(logPath, []byte(log), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(sh, "-c", Remote(5, coord.Exact("agent"), builtinEvents))
		cmd.Env = []string{"HOME=" + home, "OMEGA_MONITOR_MUX=" + mux, "PATH=" + os.Getenv("PATH")}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("remote capture: %v", err)
		}
		o := framedOptions
		o.Now = time.Now()
		c, err := Read(strings.NewReader(string(out)), o)
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return c
	}
	// Without a mark: what every frame below must read as.
	plain := meta + `{"timestamp":"2026-11-30T10:00:01Z","type":"event_msg","payload":{"type":"task_started"}}` + "\n"
	base := viewOf(read(t, plain))
	if len(base.CodexLogs) != 1 || base.CodexLogs[0] != plain || base.Transcript == nil || len(base.Statuses) != 1 {
		t.Fatalf("the frame without a mark: %+v", base)
	}
	eventsMark, eventsEnd := eventsMarks(eventsOf(Capture{}, "copilot-cli").Log)
	marks := []string{MuxMark, TitleMark, StatusEnd, PaneMark, VitalsMark, VitalsEnd, VitalsCodexMark,
		ForegroundMark, ProcMark, ForegroundEnd, CodexLogMark, CodexLogEnd, QwenChatMark, QwenChatEnd, eventsMark, eventsEnd,
		"[omega-monitor:events gone]", "[omega-monitor:events-end gone]"}
	places := []func(mark, text string) string{
		func(m, x string) string { return "\n" + m + "\n" },
		func(m, x string) string { return "\n" + m + " " + x + "\n" },
		func(m, x string) string { return x + m + x },
		func(m, x string) string { return x + "\r" + m + "\r\n" },
		func(m, x string) string { return "\n" + m }, // the log's last line, unended
	}
	rng := rand.New(rand.NewPCG(41, 4))
	texts := []string{"", " ", "{}", `{"tmux":"agent:@1.%2","status":"busy","updatedAt":9}`, "\x1b[2J", "é\x00\xff", "=="}
	for _, mark := range marks {
		for i, place := range places {
			text := texts[rng.IntN(len(texts))]
			name := fmt.Sprintf("%s at %d, %q", mark, i, text)
			log := plain + place(mark, text)
			got := viewOf(read(t, log))
			want := base
			want.CodexLogs = []string{log}
			// The agent's record is the same file: its bytes and size
			// are the marked log's too.
			want.Transcript = &Transcript{Log: base.Transcript.Log, Size: int64(len(log)), Tail: []byte(log)}
			if diff := cmp.Diff(want, got, frameOpts); diff != "" {
				t.Errorf("%s: the frame (-want +got):\n%s", name, diff)
			}
		}
	}
}

// TestAHostWithoutBase64SendsNoCodexLog: on a host without base64 the
// script sends no log's text at all, rather than its text unencoded: the
// pane's Codex logs are absent (the screen decides alone), and the
// agent's record is one that says it was not sent whole.
func TestAHostWithoutBase64SendsNoCodexLog(t *testing.T) {
	tools := testenv.Need(t, "sh", "find", "tail", "head", "wc", "tr")
	bin := t.TempDir()
	for _, p := range tools {
		if err := os.Symlink(p, filepath.Join(bin, filepath.Base(p))); err != nil {
			t.Fatal(err)
		}
	}
	home := t.TempDir()
	mux := filepath.Join(home, "mux")
	script := "#!/bin/sh\ncase $1 in\ndisplay-message) printf 'agent:@1.%%2\\t/w\\n' ;;\ncapture-pane) printf 'the pane\\n' ;;\nesac\n"
	if err := os.WriteFile(mux, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	day := filepath.Join(home, ".codex", "sessions", "2026", "11", "30")
	os.MkdirAll(day, 0o700)
	log := `{"timestamp":"2026-11-30T10:00:00Z","type":"session_meta","payload":{"cwd":"/w"}}` + "\n" + StatusEnd + "\n"
	os.WriteFile(filepath.Join(day, "rollout-a.jsonl"), []byte(log), 0o600)
	cmd := exec.Command(tools[0], "-c", Remote(5, coord.Exact("agent"), builtinEvents))
	cmd.Env = []string{"HOME=" + home, "OMEGA_MONITOR_MUX=" + mux, "PATH=" + bin}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("remote capture: %v", err)
	}
	if strings.Contains(string(out), CodexLogMark) || strings.Contains(string(out), StatusEnd) {
		t.Errorf("the frame carries a log:\n%s", out)
	}
	c, err := Read(strings.NewReader(string(out)), Options{Framed: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.CodexLogs) != 0 || c.CodexLogsErr != nil || c.Transcript == nil || c.Transcript.Err == nil {
		t.Errorf("Codex logs %q (%v), record %+v; want none, and a record not sent whole", c.CodexLogs, c.CodexLogsErr, c.Transcript)
	}
}

// TestReadFrameCap: a frame is read up to MaxFrame bytes and no further: one
// that is longer (a host's reply that never ends, or 50 MB) fails the
// capture, whatever it held before the cap; one of MaxFrame bytes is read.
func TestReadFrameCap(t *testing.T) {
	head := "agent:@1.%2\t/w\n" + codexBlock("{}\n") + `{"tmux":"agent:@1.%2","status":"idle","updatedAt":1}` + "\n" + StatusEnd + "\n" + PaneMark + "\n"
	line := strings.Repeat("x", 99) + "\n"
	pane := func(size int) string {
		return strings.Repeat(line, (size-len(head))/len(line)) + strings.Repeat("y", (size-len(head))%len(line))
	}
	for _, tt := range []struct {
		name  string
		frame string
		want  string // the error; "" none
	}{
		{"as long as it may be", head + pane(MaxFrame), ""},
		{"a byte more", head + pane(MaxFrame+1), "capture frame: more than 16 MiB"},
		{"50 MB of pane", head + pane(50<<20), "capture frame: more than 16 MiB"},
		{"50 MB of one Codex log", "agent:@1.%2\t/w\n" + CodexLogMark + "\n" + strings.Repeat(strings.Repeat("A", 76)+"\n", 50<<20/77) + CodexLogEnd + "\n" + PaneMark + "\nx\n",
			"capture frame: more than 16 MiB"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Read(strings.NewReader(tt.frame), Options{Framed: true})
			switch {
			case tt.want == "" && (err != nil || c.Screen == nil || len(c.Statuses) != 1 || len(c.CodexLogs) != 1):
				t.Errorf("read %v: %d statuses, %d logs; want the frame whole", err, len(c.Statuses), len(c.CodexLogs))
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || c.Screen != nil || c.Statuses != nil || c.CodexLogs != nil):
				t.Errorf("read %v, %+v; want %q and nothing believed", err, c, tt.want)
			}
		})
	}
}

// FuzzReadFrame: whatever a host sends, reading it never panics, and what
// is kept of it is within the caps: at most MaxCodexLogs logs of at most
// MaxStatusFile bytes each, none kept when the host's logs are refused,
// and at most MaxStatus bytes of status files.
func FuzzReadFrame(f *testing.F) {
	head := "agent:@1.%2\t/w\n"
	for _, seed := range []string{
		head + codexBlock("{}\n") + "{}\n" + StatusEnd + "\n" + PaneMark + "\nthe pane\n",
		head + ForegroundMark + "\n" + ForegroundEnd + "\n" + codexBlock("a") + codexBlock("b") + CodexLogMark + "\n!\n" + CodexLogEnd + "\n" + PaneMark + "\n",
		head + CodexLogMark + "\n" + StatusEnd + "\n" + PaneMark + "\n" + CodexLogEnd + "\n" + PaneMark + "\nx\n",
		head + VitalsCodexMark + " 2 2026/03/04/rollout-a.jsonl\ne30=\n" + VitalsEnd + "\n" + codexBlock("x") + PaneMark + "\n",
		MuxMark + " 1 @0 1.1.1.1.0 1:1@0\n" + head + TitleMark + " t\n" + codexBlock(StatusEnd+"\n") + PaneMark + "\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		c, err := Read(strings.NewReader(string(frame)), Options{Framed: true})
		if err != nil {
			return
		}
		if len(c.CodexLogs) > MaxCodexLogs || c.CodexLogsErr != nil && c.CodexLogs != nil {
			t.Fatalf("%d Codex logs kept (%v)", len(c.CodexLogs), c.CodexLogsErr)
		}
		for _, l := range c.CodexLogs {
			if len(l) > MaxStatusFile {
				t.Fatalf("a Codex log of %d bytes kept", len(l))
			}
		}
		size := 0
		for _, s := range c.Statuses {
			size += len(s)
		}
		if size > MaxStatus {
			t.Fatalf("%d bytes of status files kept", size)
		}
	})
}
