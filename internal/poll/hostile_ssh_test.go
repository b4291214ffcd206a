package poll

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/capture"
	"github.com/omega-monitor/omega-monitor/internal/pollset"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// hostileWorld is a real tmux pane that shows Codex stopped (a screen of
// the corpus), in a working directory of its own, on a host reached
// through a real sshd that logs every command it is given and can answer
// the capture as an attacker would (testenv.HostileHost). The host's
// HOME holds the pane's Codex session log, its turn over: the real
// pane's and the real log's word is a stopped agent, to be nudged.
type hostileWorld struct {
	host *testenv.HostileHost
	cfg  *testenv.SSHConfig
	home string // the host's HOME
	dir  string // the pane's working directory
	day  string // the host's ~/.codex/sessions/2026/03/04
	pane string // its coordinate
	now  time.Time
}

func newHostileWorld(t *testing.T) *hostileWorld {
	t.Helper()
	testenv.Need(t, "find", "wc", "tail", "head", "base64", "sed")
	screen, err := os.ReadFile(filepath.Join("..", "..", "golden", "real-codex", "codex-0.169-120-ran-command.pane"))
	if err != nil {
		t.Fatal(err)
	}
	w := &hostileWorld{cfg: testenv.NewSSHConfig(t), home: t.TempDir(), dir: filepath.Join(t.TempDir(), "work"), now: time.Now()}
	if err := os.Mkdir(w.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	// Without its last line break, so that the 40 lines fill the pane
	// and none scrolls away.
	shown := filepath.Join(t.TempDir(), "screen")
	if err := os.WriteFile(shown, bytes.TrimSuffix(screen, []byte("\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	s := testenv.Tmux(t)
	s.Run(t, "new-session", "-d", "-s", "agent", "-x", "120", "-y", "40", "-c", w.dir, "cat "+coord.ShellQuote(shown)+"; exec sleep 600")
	w.pane = strings.TrimSpace(s.Run(t, "display-message", "-p", "-t", "=agent:", "#{session_name}:#{window_id}.#{pane_id}"))
	w.host = testenv.HostileSSHD(t, w.cfg, "box", "HOME="+w.home, "OMEGA_MONITOR_MUX="+s.Mux, "LANG=C.UTF-8")
	w.day = filepath.Join(w.home, ".codex", "sessions", "2026", "03", "04")
	if err := os.MkdirAll(w.day, 0o700); err != nil {
		t.Fatal(err)
	}
	ago := w.now.Add(-time.Minute)
	w.plant(t, "rollout-2026-03-04T12-00-00-0199a213-81c0-7800-8aa1-bbab2a035a53.jsonl",
		codexMeta(w.dir, ago)+codexEvent("task_started", ago)+codexItem("message", ago)+codexEvent("task_complete", ago), ago)
	return w
}

// codexEvent is a Codex log's event line: task_started or task_complete.
func codexEvent(typ string, at time.Time) string {
	return fmt.Sprintf(`{"timestamp":%q,"type":"event_msg","payload":{"type":%q}}`+"\n", at.UTC().Format(time.RFC3339Nano), typ)
}

// plant writes a log into the host's day folder, last written at.
func (w *hostileWorld) plant(t *testing.T, name, data string, at time.Time) {
	t.Helper()
	p := filepath.Join(w.day, name)
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, at, at); err != nil {
		t.Fatal(err)
	}
}

// A look is one capture through the host, as the loop makes it (ssh's
// output into a file, which the tick reads), and what this side made of
// it.
type look struct {
	frame   int64 // bytes the host sent
	c       capture.Capture
	readErr error
	said    string // the witness, as the poll says it
	once    string // watch --once's account of it, but for the witness
}

// look captures the pane through the host and reads it twice: as the
// tick's first step does (capture.Read) and as watch --once judges it.
func (w *hostileWorld) look(t *testing.T) look {
	t.Helper()
	out := filepath.Join(t.TempDir(), "frame")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ssh", "-F", w.cfg.Path, "-n", "-o", "BatchMode=yes", "--", "box", capture.Remote(20, coord.Exact("agent"), classify.EventsLogs(nil)))
	cmd.Stdout = f
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("ssh: %v\n%s", err, stderr.Bytes())
	}
	var l look
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	l.frame = fi.Size()
	opt := capture.Options{Framed: true, Now: w.now}
	f.Seek(0, 0)
	l.c, l.readErr = capture.Read(f, opt)
	if l.readErr == nil {
		_, l.said = l.c.Witness(w.now)
	}
	f.Seek(0, 0)
	var b strings.Builder
	if err := Once(OnceRequest{Settings: pollset.Default("agent"), Readings: workOf7, Capture: opt, Now: w.now}, f, &b); err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(b.String()) {
		if !strings.HasPrefix(line, "  witness:") {
			l.once += line
		}
	}
	return l
}

// screen is the text of a capture's pane, its blank lines left out.
func screenOf(c capture.Capture) string {
	if c.Screen == nil {
		return ""
	}
	var b strings.Builder
	for _, l := range c.Screen.Lines {
		if strings.TrimSpace(l.Text) != "" {
			b.WriteString(strings.TrimRight(l.Text, " ") + "\n")
		}
	}
	return b.String()
}

// forgedLines are lines a log's text may hold to pose as the frame's own:
// the end of a status, a Claude Code status naming the pane that says it
// is busy, the pane's mark and a question on a forged pane, a title and a
// foreground block.
func forgedLines(pane string, now time.Time) string {
	return capture.StatusEnd + "\n" +
		fmt.Sprintf(`{"tmux":%q,"status":"busy","sessionId":"forged","updatedAt":%d}`, pane, now.UnixMilli()) + "\n" +
		capture.StatusEnd + "\n" +
		capture.TitleMark + " ⠋ forged\n" +
		capture.ForegroundMark + "\n" + capture.ProcMark + " 1 1 1\x1fforged\n" + capture.ForegroundEnd + "\n" +
		capture.PaneMark + "\n" +
		"Which failure of the current watcher costs you the most? (forged)\n\n" +
		"❯ 1. [ ] False questions\n  2. [ ] Stale spinners\n\nEnter to select · ↑/↓ to navigate · Esc to cancel\n"
}

// TestHostileHostOverSSHD: what a host sends is hostile, and so is every
// log on it. Through a real sshd, a Codex log planted on an honest host
// that holds the frame's own lines, thousands of logs of the pane's
// directory, and a host that answers the capture as an attacker would
// (thousands of log blocks, frame lines inside a block, a block that is not
// base64, blocks of 10 and 50 MB, a block without its end) each cost a
// defined, bounded result: the verdict of the real pane, with no forged
// word believed, or a capture that failed. The host is given the capture's
// script and nothing else. (Before the logs were sent in base64, the log
// that forges frame lines had its forged status believed, the nudge held
// on its word; the 3,000 logs were all sent, 5 MB a poll.)
func TestHostileHostOverSSHD(t *testing.T) {
	w := newHostileWorld(t)
	honest := w.look(t)
	if honest.readErr != nil {
		t.Fatalf("the honest host's frame: %v", honest.readErr)
	}
	if !strings.Contains(honest.once, "STALLED") || !strings.Contains(honest.said, "idle") {
		t.Fatalf("the honest host: witness %q, judged\n%s", honest.said, honest.once)
	}
	realScreen := screenOf(honest.c)
	t.Logf("honest: %d bytes, witness %s", honest.frame, honest.said)

	busy := codexMeta(w.dir, w.now) + codexEvent("task_started", w.now.Add(-time.Second))
	block := capture.CodexLogMark + "\n" + base64.StdEncoding.EncodeToString([]byte(busy)) + "\n" + capture.CodexLogEnd + "\n"
	// An answer runs the capture as given, and sends what attack prints
	// after the frame's first part (its foreground block), where the
	// host's own records are.
	around := func(attack string) string {
		return `o=$(mktemp) || exit; sh -c "$SSH_ORIGINAL_COMMAND" >"$o" || exit
sed '/^\[omega-monitor:fg-end\]$/q' "$o"
` + attack + `
sed '1,/^\[omega-monitor:fg-end\]$/d' "$o"; rm -f "$o"
`
	}
	tests := []struct {
		name   string
		plant  func(t *testing.T) (undo func())
		answer string // the host's answer to the capture; "" runs it
		// failed says the capture must fail; else its verdict is the
		// honest one's, on the real screen.
		failed string
		// logs is how many Codex logs are believed; refused says the
		// host's logs are taken as absent, and why.
		logs    int
		refused string
	}{
		{name: "a log that forges frame lines", logs: 2, plant: func(t *testing.T) func() {
			name := "rollout-2026-03-04T12-30-00-0199a213-81c0-7800-8aa1-000000000001.jsonl"
			w.plant(t, name, codexMeta(w.dir, w.now)+codexEvent("task_complete", w.now)+forgedLines(w.pane, w.now), w.now)
			return func() { os.Remove(filepath.Join(w.day, name)) }
		}},
		{name: "3,000 logs of the pane's directory", logs: capture.MaxCodexLogs, plant: func(t *testing.T) func() {
			idle := codexMeta(w.dir, w.now) + codexEvent("task_started", w.now) + strings.Repeat(codexItem("message", w.now), 8) + codexEvent("task_complete", w.now)
			for i := range 3000 {
				w.plant(t, fmt.Sprintf("rollout-2026-03-04T13-00-00-%012d.jsonl", i), idle, w.now)
			}
			return func() {
				for i := range 3000 {
					os.Remove(filepath.Join(w.day, fmt.Sprintf("rollout-2026-03-04T13-00-00-%012d.jsonl", i)))
				}
			}
		}},
		{name: "5,000 log blocks", refused: "more than 4 Codex logs", answer: around(`i=0; while [ $i -lt 5000 ]; do printf '%s' '` + block + `'; i=$((i + 1)); done`)},
		{name: "frame lines inside a log block", refused: "not base64", answer: around(`printf '%s\n' '` + capture.CodexLogMark + `'; cat <<'EOF'
` + forgedLines(w.pane, w.now) + `EOF
printf '%s\n' '` + capture.CodexLogEnd + `'`)},
		{name: "a block that is not base64", refused: "not base64", answer: around(`printf '%s\n' '` + capture.CodexLogMark + `' 'e30K!!!!' '` + capture.CodexLogEnd + `'`)},
		{name: "a block cut short", refused: "not base64", answer: around(`printf '%s\n' '` + capture.CodexLogMark + `' 'e30' '` + capture.CodexLogEnd + `'`)},
		{name: "a block of 10 MB", refused: "more than 65536 bytes of a Codex log", answer: around(`printf '%s\n' '` + capture.CodexLogMark + `'; yes '` + strings.Repeat("QUFB", 19) + `' | head -c 10485760; printf '\n%s\n' '` + capture.CodexLogEnd + `'`)},
		{name: "a block of 50 MB", failed: "more than 16 MiB", answer: around(`printf '%s\n' '` + capture.CodexLogMark + `'; yes '` + strings.Repeat("QUFB", 19) + `' | head -c 52428800; printf '\n%s\n' '` + capture.CodexLogEnd + `'`)},
		{name: "a block without its end", failed: "without its end",
			answer: `sh -c "$SSH_ORIGINAL_COMMAND" | sed '/^\[omega-monitor:fg-end\]$/q'; printf '%s\n' '` + capture.CodexLogMark + `' 'e30K'`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.plant != nil {
				defer tt.plant(t)()
			}
			w.host.Answer(t, capture.PaneMark, tt.answer)
			defer w.host.Answer(t, "", "")
			before := len(w.host.Commands(t))
			l := w.look(t)
			t.Logf("%d bytes from the host; read: %v; %d statuses, %d Codex logs (%v); witness %s", l.frame, l.readErr, len(l.c.Statuses), len(l.c.CodexLogs), l.c.CodexLogsErr, l.said)
			if tt.failed != "" {
				if l.readErr == nil || !strings.Contains(l.readErr.Error(), tt.failed) || !strings.Contains(l.once, "no screen: ") {
					t.Errorf("read %v, judged\n%s\nwant the capture failed (%s)", l.readErr, l.once, tt.failed)
				}
			} else {
				if l.readErr != nil {
					t.Fatalf("read: %v", l.readErr)
				}
				if got := screenOf(l.c); got != realScreen {
					t.Errorf("the screen read:\n%s\nwant the real pane's:\n%s", got, realScreen)
				}
				if l.once != honest.once {
					t.Errorf("judged:\n%s\nwant as the honest host's frame:\n%s", l.once, honest.once)
				}
				for _, s := range l.c.Statuses {
					if bytes.Contains(s, []byte("forged")) {
						t.Errorf("a forged status is believed: %q", s)
					}
				}
				if strings.Contains(l.said, "busy") {
					t.Errorf("the witness says %s: a forged word is believed", l.said)
				}
				if len(l.c.CodexLogs) != tt.logs || (l.c.CodexLogsErr == nil) != (tt.refused == "") ||
					tt.refused != "" && !strings.Contains(l.c.CodexLogsErr.Error(), tt.refused) {
					t.Errorf("%d Codex logs believed (%v), want %d (refused: %q)", len(l.c.CodexLogs), l.c.CodexLogsErr, tt.logs, tt.refused)
				}
				for _, log := range l.c.CodexLogs {
					if bytes.Contains(log, []byte(capture.StatusEnd)) && !bytes.HasSuffix(log, []byte(forgedLines(w.pane, w.now))) {
						t.Errorf("a Codex log believed is not a log's end: %q", log)
					}
				}
			}
			// An honest host's frame grows by the newest logs' ends at
			// most, however many logs it holds.
			if tt.answer == "" && l.frame > honest.frame+int64(capture.MaxCodexLogs*(base64.StdEncoding.EncodedLen(capture.MaxStatusFile)*77/76+64)) {
				t.Errorf("the honest host sent %d bytes, %d more than without the planted logs", l.frame, l.frame-honest.frame)
			}
			// The host was given the capture's script, and nothing else.
			for _, c := range w.host.Commands(t)[before:] {
				if c != capture.Remote(20, coord.Exact("agent"), classify.EventsLogs(nil)) {
					t.Errorf("the host was given %.300q", c)
				}
			}
		})
	}
}
