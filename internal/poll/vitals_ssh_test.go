package poll

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/capture"
	"github.com/omega-monitor/omega-monitor/internal/pollset"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// remoteHost is a real sshd whose HOME holds Claude Code's status file
// naming the pane of a real tmux session, and its transcript.
type remoteHost struct {
	cfg        *testenv.SSHConfig
	home       string
	transcript string
	pane       string
	mux        string
	tmux       *testenv.TmuxServer
}

const remoteSession = "0b6c3a52-9d1e-4f7a-8c2b-1e2f3a4b5c6d"

func newRemoteHost(t *testing.T) *remoteHost {
	t.Helper()
	testenv.Need(t, "wc", "tail", "head", "base64")
	s := testenv.Tmux(t)
	s.NewSession(t, "agent", "printf 'the real pane\\n'; exec sleep 600")
	h := &remoteHost{cfg: testenv.NewSSHConfig(t), home: t.TempDir(), mux: s.Mux, tmux: s}
	testenv.SSHD(t, h.cfg, "box", "HOME="+h.home, "OMEGA_MONITOR_MUX="+s.Mux, "LANG=C.UTF-8")
	h.pane = strings.TrimSpace(s.Run(t, "display-message", "-p", "-t", "=agent:", "#{session_name}:#{window_id}.#{pane_id}"))
	h.status(t, "4242", remoteSession, 2)
	projects := filepath.Join(h.home, ".claude", "projects", "-w-repo")
	if err := os.MkdirAll(projects, 0o700); err != nil {
		t.Fatal(err)
	}
	h.transcript = filepath.Join(projects, remoteSession+".jsonl")
	return h
}

// status writes Claude Code's status file pid.json naming the pane.
func (h *remoteHost) status(t *testing.T, pid, session string, updated int) {
	t.Helper()
	dir := filepath.Join(h.home, ".claude", "sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	data := fmt.Sprintf(`{"pid":%s,"sessionId":%q,"cwd":"/w/repo","tmux":%q,"status":"idle","updatedAt":%d}`, pid, session, h.pane, updated)
	if err := os.WriteFile(filepath.Join(dir, pid+".json"), []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// frame is one remote capture, through ssh, as the loop makes it.
func (h *remoteHost) frame(t *testing.T) []byte {
	t.Helper()
	cmd := exec.Command("ssh", "-F", h.cfg.Path, "-n", "-o", "BatchMode=yes", "--", "box", capture.Remote(20, coord.Exact("agent"), classify.EventsLogs(nil)))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ssh: %v", err)
	}
	return out
}

// poll captures over ssh and runs one tick on it; it returns the vitals
// record the tick wrote.
func (h *remoteHost) poll(t *testing.T, state string, now time.Time) statedir.VitalsRecord {
	t.Helper()
	frame := h.frame(t)
	line, err := Tick(Request{Dir: state, Settings: pollset.Default("agent"), Readings: workOf7, Now: now, Capture: capture.Options{Framed: true, Now: now}}, bytes.NewReader(frame))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(line, "error") {
		t.Errorf("tick: %s", line)
	}
	var r statedir.VitalsRecord
	if err := statedir.Dir(state).ReadRecord(statedir.Vitals, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

type vitalsCounts struct{ Tools, Reason, Text, Wait int }

// A followStep is one change to a followed file: what the record must
// count after it, and whether a new gap must open.
type followStep struct {
	name string
	do   func()
	want vitalsCounts
	gap  bool
}

// checkStep checks the record one step of a followed file left: no error,
// its counts, a new gap or none (gap is the last step's, updated), its
// cursor at the file's end, and its agent and source.
func checkStep(t *testing.T, step string, r statedir.VitalsRecord, want vitalsCounts, newGap bool, gap *int64, file, agent, source string, before int64) {
	t.Helper()
	if r.Error != "" {
		t.Fatalf("%s: %s", step, r.Error)
	}
	if diff := cmp.Diff(want, countsOf(r)); diff != "" {
		t.Errorf("%s: counts (-want +got):\n%s", step, diff)
	}
	if got := r.Cursor.Gap > *gap; got != newGap {
		t.Errorf("%s: gap %d after %d, want a new gap %v", step, r.Cursor.Gap, *gap, newGap)
	}
	*gap = r.Cursor.Gap
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if r.Cursor.Offset+r.Cursor.Behind != fi.Size() {
		t.Errorf("%s: cursor at %d, %d behind, of a file of %d bytes", step, r.Cursor.Offset, r.Cursor.Behind, fi.Size())
	}
	if r.Source != source || r.Agent != agent {
		t.Errorf("%s: source %s %s, want %s %s", step, r.Agent, r.Source, agent, source)
	}
	t.Logf("%s: offset %d → %d, gap %d, %+v", step, before, r.Cursor.Offset, r.Cursor.Gap, countsOf(r))
}

func countsOf(r statedir.VitalsRecord) vitalsCounts {
	var c vitalsCounts
	for _, m := range r.Minutes {
		c.Tools += m.Tools
		c.Reason += m.Reason
		c.Text += m.Text
		c.Wait += m.Wait
	}
	return c
}

// claudeLine is one transcript line as Claude Code writes it.
func claudeLine(id, stop, block string, at time.Time) string {
	return fmt.Sprintf(`{"parentUuid":"p","message":{"id":%q,"type":"message","role":"assistant","content":[%s],"stop_reason":%q},"type":"assistant","uuid":"u","timestamp":%q}`+"\n",
		id, block, stop, at.UTC().Format(time.RFC3339Nano))
}

const (
	textBlock = `{"type":"text","text":"Let me look."}`
	bashBlock = `{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}`
	thinkBlk  = `{"type":"thinking","thinking":"hmm","signature":"x"}`
)

func appendFile(t *testing.T, path, data string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
}

// TestRemoteVitalsOverSSHD: Claude Code's transcript on the host, found
// through the status file naming the watched pane, is counted by polls
// through a real sshd, each poll only what was added: appended (a line cut
// in half waits for its end), more appended between two polls than a
// frame carries (a gap, said, and the lines after it counted), truncated,
// replaced by another file (counted anew), and rewritten in place at a
// greater size (its bytes before the cursor changed: counted anew).
func TestRemoteVitalsOverSSHD(t *testing.T) {
	h := newRemoteHost(t)
	state := t.TempDir()
	now := time.Now()
	ago := now.Add(-2 * time.Minute)

	// No transcript yet: said, not 0.
	r := h.poll(t, state, now)
	if r.Error == "" || r.Minutes != nil {
		t.Fatalf("no transcript: %+v, want an error and no counts", r)
	}

	steps := []followStep{
		{"first read", func() {
			appendFile(t, h.transcript, claudeLine("m1", "tool_use", textBlock, ago)+claudeLine("m1", "tool_use", bashBlock, ago))
		}, vitalsCounts{Tools: 1, Text: 1}, false},
		{"nothing new", func() {}, vitalsCounts{Tools: 1, Text: 1}, false},
		{"appended, the last line cut in half", func() {
			l := claudeLine("m2", "end_turn", textBlock, ago)
			appendFile(t, h.transcript, claudeLine("m2", "end_turn", thinkBlk, ago)+l[:40])
		}, vitalsCounts{Tools: 1, Reason: 1, Text: 1, Wait: 1}, false},
		{"the half line ends", func() {
			l := claudeLine("m2", "end_turn", textBlock, ago)
			appendFile(t, h.transcript, l[40:])
		}, vitalsCounts{Tools: 1, Reason: 1, Text: 2, Wait: 1}, false},
		{"more than a frame carries", func() {
			big := `{"type":"user","message":{"content":"` + strings.Repeat("x", capture.VitalsTail) + `"}}` + "\n"
			appendFile(t, h.transcript, claudeLine("m3", "tool_use", bashBlock, ago)+big+claudeLine("m4", "tool_use", bashBlock, ago))
		}, vitalsCounts{Tools: 2, Reason: 1, Text: 2, Wait: 1}, true},
		{"truncated", func() {
			if err := os.WriteFile(h.transcript, []byte(claudeLine("n1", "end_turn", textBlock, ago)), 0o600); err != nil {
				t.Fatal(err)
			}
		}, vitalsCounts{Text: 1, Wait: 1}, false},
		{"replaced by another file", func() {
			tmp := h.transcript + ".new"
			data := claudeLine("p1", "tool_use", bashBlock, ago) + claudeLine("p2", "tool_use", bashBlock, ago) + claudeLine("p3", "end_turn", textBlock, ago)
			if err := os.WriteFile(tmp, []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, h.transcript); err != nil {
				t.Fatal(err)
			}
		}, vitalsCounts{Tools: 2, Text: 1, Wait: 1}, false},
		{"rewritten in place, longer", func() {
			data := claudeLine("q1", "tool_use", thinkBlk, ago) + claudeLine("q2", "tool_use", thinkBlk, ago) +
				claudeLine("q3", "tool_use", thinkBlk, ago) + claudeLine("q4", "end_turn", textBlock, ago)
			if err := os.WriteFile(h.transcript, []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
		}, vitalsCounts{Reason: 3, Text: 1, Wait: 1}, false},
	}
	var gap int64
	for _, s := range steps {
		before := r.Cursor.Offset
		s.do()
		r = h.poll(t, state, now)
		checkStep(t, s.name, r, s.want, s.gap, &gap, h.transcript, "claude", "~/.claude/projects/-w-repo/"+remoteSession+".jsonl", before)
	}
}

// TestRemoteTranscriptCannotForgeTheFrame: the transcript is the agent's,
// and so whatever a repository makes it write: lines that read as the
// frame's own marks, a status naming the pane, a forged pane. The frame
// still carries the real pane and the real status files, and the forged
// lines are only bytes of the transcript, counted as such.
func TestRemoteTranscriptCannotForgeTheFrame(t *testing.T) {
	h := newRemoteHost(t)
	forged := capture.VitalsEnd + "\n" +
		fmt.Sprintf(`{"tmux":%q,"status":"busy","sessionId":"forged","updatedAt":9}`, h.pane) + "\n" + capture.StatusEnd + "\n" +
		capture.PaneMark + "\n❯ forged pane\n" + capture.VitalsMark + " 1 x y\n"
	appendFile(t, h.transcript, claudeLine("m1", "end_turn", textBlock, time.Now())+forged)
	c, err := capture.Read(bytes.NewReader(h.frame(t)), capture.Options{Framed: true, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	var screen []string
	for _, l := range c.Screen.Lines {
		if l.Text != "" {
			screen = append(screen, l.Text)
		}
	}
	if diff := cmp.Diff([]string{"the real pane"}, screen); diff != "" {
		t.Errorf("the screen (-want +got):\n%s", diff)
	}
	if len(c.Statuses) != 1 || bytes.Contains(c.Statuses[0], []byte("forged")) {
		t.Errorf("statuses %q, want the one real one", c.Statuses)
	}
	if c.Transcript == nil || c.Transcript.Err != nil || !bytes.HasSuffix(c.Transcript.Tail, []byte(forged)) {
		t.Errorf("transcript %+v, want the forged lines as its bytes", c.Transcript)
	}
}

// TestRemoteVitalsRefused: what the host sends is believed only for the
// session this side picks from the same frame. A status file whose id
// could reach a path is passed over by the host's shell and refused here;
// a transcript that is not a regular file is not sent.
func TestRemoteVitalsRefused(t *testing.T) {
	h := newRemoteHost(t)
	now := time.Now()
	appendFile(t, h.transcript, claudeLine("m1", "end_turn", textBlock, now))

	t.Run("an id that reaches a path", func(t *testing.T) {
		h.status(t, "4343", "../../../etc/passwd", 3)
		defer os.Remove(filepath.Join(h.home, ".claude", "sessions", "4343.json"))
		r := h.poll(t, t.TempDir(), now)
		if r.Error == "" || r.Minutes != nil {
			t.Errorf("record %+v, want refused", r)
		}
	})
	t.Run("a link", func(t *testing.T) {
		other := filepath.Join(h.home, "elsewhere.jsonl")
		if err := os.Rename(h.transcript, other); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(other, h.transcript); err != nil {
			t.Fatal(err)
		}
		r := h.poll(t, t.TempDir(), now)
		if !strings.Contains(r.Error, "sent no transcript") || r.Minutes != nil {
			t.Errorf("record %+v, want no transcript sent", r)
		}
		os.Remove(h.transcript)
		if err := syscall.Mkfifo(h.transcript, 0o600); err != nil {
			t.Fatal(err)
		}
		r = h.poll(t, t.TempDir(), now)
		if !strings.Contains(r.Error, "sent no transcript") {
			t.Errorf("a FIFO: record %+v, want no transcript sent", r)
		}
	})
}
