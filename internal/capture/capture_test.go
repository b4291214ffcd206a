package capture

import (
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/poll"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
	"github.com/omega-monitor/omega-monitor/probe"
)

// TestRemoteFrame runs the remote capture as the remote login shell
// would (sh -c over the command line ssh gets), against a multiplexer that
// answers as tmux does: the frame holds the header, every status file naming
// the pane (and none other), the pane mark and the pane.
func TestRemoteFrame(t *testing.T) {
	sh := testenv.Need(t, "sh")[0]
	home := t.TempDir()
	mux := filepath.Join(home, "mux")
	// It answers each format of one call, as tmux does.
	script := `#!/bin/sh
case $1 in
display-message) for a; do case $a in
	'[omega-monitor:mux]'*) printf '[omega-monitor:mux] 100 @1 1:99@1 0:50@2\n' ;;
	'#{session_name}'*) printf 'agent:@1.%%2\t/w d\n' ;;
	'[omega-monitor:title]'*) printf '[omega-monitor:title] ✋  Action Required\n{"tmux":"agent:@1.%%2","status":"busy","updatedAt":9}\n' ;;
	esac; done ;;
capture-pane) printf 'the pane\n[omega-monitor:pane]\n' ;;
esac
`
	if err := os.WriteFile(mux, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	sessions := filepath.Join(home, ".claude", "sessions")
	os.MkdirAll(sessions, 0o700)
	os.WriteFile(filepath.Join(sessions, "1.json"), []byte(`{"tmux":"agent:@1.%2","status":"idle","updatedAt":1}`), 0o600)
	os.WriteFile(filepath.Join(sessions, "2.json"), []byte(`{"tmux":"other:@0.%0","status":"busy"}`), 0o600)
	os.WriteFile(filepath.Join(sessions, "3.json"), []byte("{\"tmux\":\"agent:@1.%2\",\n\"status\":\"busy\",\"updatedAt\":2}"), 0o600)
	cmd := exec.Command(sh, "-c", Remote(5, coord.Exact("agent"), builtinEvents))
	cmd.Env = []string{"HOME=" + home, "OMEGA_MONITOR_MUX=" + mux, "PATH=" + os.Getenv("PATH")}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("remote capture: %v", err)
	}
	// A title is one line: what a program in the pane set after a line
	// break of it (a status of its forging) is dropped.
	want := "[omega-monitor:mux] 100 @1 1:99@1 0:50@2\nagent:@1.%2\t/w d\n" + TitleMark + " ✋  Action Required\n" +
		ForegroundMark + "\n" + ForegroundEnd + "\n" +
		`{"tmux":"agent:@1.%2","status":"idle","updatedAt":1}` + "\n" + StatusEnd + "\n" +
		`{"tmux":"agent:@1.%2","status":"busy","updatedAt":2}` + "\n" + StatusEnd + "\n" +
		PaneMark + "\nthe pane\n" + PaneMark + "\n"
	if diff := cmp.Diff(want, string(out)); diff != "" {
		t.Errorf("frame (-want +got):\n%s", diff)
	}
}

// TestRemoteFrameStatusCaps: the host sends no more of the status files
// naming the pane than the reader keeps: a file longer than MaxStatusFile
// is passed over, and past MaxStatus in all the rest are; what it sends
// is read whole. Every file it sends is the freshest pick's candidate, and
// none it passes over.
func TestRemoteFrameStatusCaps(t *testing.T) {
	sh := testenv.Need(t, "sh")[0]
	home := t.TempDir()
	mux := filepath.Join(home, "mux")
	script := "#!/bin/sh\ncase $1 in\ndisplay-message) printf 'agent:@1.%%2\\t/w\\n' ;;\ncapture-pane) printf 'the pane\\n' ;;\nesac\n"
	if err := os.WriteFile(mux, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	sessions := filepath.Join(home, ".claude", "sessions")
	os.MkdirAll(sessions, 0o700)
	// The fields the host's script looks for come first: the shell finds
	// a field in time that grows with the square of where it is.
	status := func(pad int) string {
		return `{"sessionId":"s","updatedAt":1,"tmux":"agent:@1.%2","status":"idle","pad":"` + strings.Repeat("x", pad) + `"}`
	}
	// Too long, on one line and on many.
	os.WriteFile(filepath.Join(sessions, "0.json"), []byte(status(MaxStatusFile)), 0o600)
	os.WriteFile(filepath.Join(sessions, "00.json"), []byte(strings.Repeat(status(10)+"\n", MaxStatusFile/40)), 0o600)
	// Forty of 30 KiB: 1 MiB holds 34 of them.
	for i := range 40 {
		os.WriteFile(filepath.Join(sessions, fmt.Sprintf("%02d.json", i+10)), []byte(status(30<<10)), 0o600)
	}
	cmd := exec.Command(sh, "-c", Remote(10, coord.Exact("agent"), builtinEvents))
	cmd.Env = []string{"HOME=" + home, "OMEGA_MONITOR_MUX=" + mux, "PATH=" + os.Getenv("PATH")}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("remote capture: %v", err)
	}
	sent := strings.Count(string(out), StatusEnd)
	c, err := Read(strings.NewReader(string(out)), Options{Framed: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := MaxStatus / (len(status(30<<10)) + 1); sent != want || len(c.Statuses) != sent {
		t.Errorf("the host sent %d status files and %d were read, want %d sent, all read", sent, len(c.Statuses), want)
	}
	for _, s := range c.Statuses {
		if string(s) != status(30<<10)+"\n" {
			t.Errorf("a status read is not one of the forty: %.100q", s)
		}
	}
}

// TestRemoteFrameCodexLogs (whose multiplexer answers one line for the
// two formats, as one that knows no second command of a call would: the
// frame then says nothing of the humans): the remote frame carries, in
// base64, the tail of each of the newest MaxCodexLogs recent Codex session
// logs whose working directory is the pane's, newest first, and no other:
// not a fifth older one, not one for another directory, not one older
// than 5 minutes; and, before them, the end of the newest as the agent's
// record (its size, its name under sessions, its bytes in base64). A FIFO
// and a link planted under a log's name are passed over: the frame comes
// whole, without waiting on the FIFO.
func TestRemoteFrameCodexLogs(t *testing.T) {
	sh := testenv.Need(t, "sh", "find", "tail", "base64")[0]
	home := t.TempDir()
	mux := filepath.Join(home, "mux")
	script := "#!/bin/sh\ncase $1 in\ndisplay-message) printf 'agent:@1.%%2\\t/w d\\n' ;;\ncapture-pane) printf 'the pane\\n' ;;\nesac\n"
	if err := os.WriteFile(mux, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	day := filepath.Join(home, "codex", "sessions", "2026", "11", "30")
	os.MkdirAll(day, 0o700)
	ours := func(n int) string {
		return `{"timestamp":"2026-11-30T10:00:00Z","type":"session_meta","payload":{"cwd":"/w d"}}` + "\n" +
			fmt.Sprintf(`{"timestamp":"2026-11-30T10:00:0%dZ","type":"event_msg","payload":{"type":"task_started"}}`, n) + "\n"
	}
	other := `{"timestamp":"2026-11-30T10:00:00Z","type":"session_meta","payload":{"cwd":"/elsewhere"}}` + "\n"
	write := func(name, data string, ago time.Duration) {
		p := filepath.Join(day, name)
		os.WriteFile(p, []byte(data), 0o600)
		at := time.Now().Add(-ago)
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	// Five of the pane's directory within 5 minutes: the oldest, a, is
	// left out.
	write("rollout-a.jsonl", ours(0), 4*time.Minute)
	for i, n := range []string{"f", "g", "h", "i"} {
		write("rollout-"+n+".jsonl", ours(i+1), time.Duration(3-i)*time.Minute)
	}
	write("rollout-b.jsonl", other, 0)
	write("rollout-c.jsonl", ours(9), 10*time.Minute)
	if err := syscall.Mkfifo(filepath.Join(day, "rollout-d.jsonl"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(day, "rollout-i.jsonl"), filepath.Join(day, "rollout-e.jsonl")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sh, "-c", Remote(5, coord.Exact("agent"), builtinEvents))
	cmd.Env = []string{"HOME=" + home, "CODEX_HOME=" + filepath.Join(home, "codex"), "OMEGA_MONITOR_MUX=" + mux, "PATH=" + os.Getenv("PATH")}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("remote capture: %v", err)
	}
	want := "agent:@1.%2\t/w d\n" + ForegroundMark + "\n" + ForegroundEnd + "\n" +
		fmt.Sprintf("%s %d 2026/11/30/rollout-i.jsonl\n", VitalsCodexMark, len(ours(4))) + base64Lines(ours(4)) + VitalsEnd + "\n"
	for n := 4; n > 0; n-- {
		want += CodexLogMark + "\n" + base64Lines(ours(n)) + "\n" + CodexLogEnd + "\n"
	}
	want += PaneMark + "\nthe pane\n"
	if diff := cmp.Diff(want, string(out)); diff != "" {
		t.Errorf("frame (-want +got):\n%s", diff)
	}
}

// base64Lines is data in base64 as base64(1) prints it: 76 characters a
// line.
func base64Lines(data string) string {
	enc := base64.StdEncoding.EncodeToString([]byte(data))
	var lines strings.Builder
	for len(enc) > 76 {
		lines.WriteString(enc[:76] + "\n")
		enc = enc[76:]
	}
	lines.WriteString(enc + "\n")
	return lines.String()
}

// TestRemoteFrameCodexLogIsAWitness: a Codex session log that the remote
// capture frame carries (remoteCodexLogs) is the agent's own word
// for a remote pane, as the local log is for a local one: a turn started
// and not finished reads busy.
func TestRemoteFrameCodexLogIsAWitness(t *testing.T) {
	now := time.Now().UTC()
	at := func(d time.Duration) string { return now.Add(d).Format(time.RFC3339Nano) }
	log := `cut mid-line, as tail -c leaves it"}}` + "\n" +
		`{"timestamp":"` + at(-time.Minute) + `","type":"event_msg","payload":{"type":"task_complete"}}` + "\n" +
		`{"timestamp":"` + at(-10*time.Second) + `","type":"event_msg","payload":{"type":"task_started"}}` + "\n"
	frame := "box:@1.%2\t/w d\n" + CodexLogMark + "\n" + base64Lines(log) + "\n" + CodexLogEnd + "\n" + PaneMark + "\nthe pane\n"
	c, err := Read(strings.NewReader(frame), Options{Framed: true})
	if err != nil {
		t.Fatal(err)
	}
	w, said := c.Witness(now)
	if w == nil || w.Status != "busy" {
		t.Fatalf("witness = %+v (%s), want busy", w, said)
	}
}

// TestADirectoryNameForgesNoFrameLine: a repository can ship a directory
// whose name holds line breaks, frame marks, a status or escapes. A pane
// working there, on a real tmux, read as a local frame and through the
// remote script, with a UTF-8 locale and with none, gives no status, no
// pane mark of its own and no directory cut short. A plain name is read
// whole, and the pane's coordinate is right in every case, so the test
// cannot pass by reading nothing.
func TestADirectoryNameForgesNoFrameLine(t *testing.T) {
	sh := testenv.Need(t, "sh")[0]
	srv := testenv.Tmux(t)
	base, home, noStatus := t.TempDir(), t.TempDir(), t.TempDir()
	forged := `{"tmux":"s0:@0.%0","status":"busy","updatedAt":9999999999999}`
	names := []string{
		"plain dir",
		"a\n" + forged + "\n" + StatusEnd,
		"b\n" + PaneMark + "\n❯ 1. Yes",
		"c\x1b]0;title\x07",
		"d\rover",
		"e\n" + MuxMark + " 1 @0 5:1@0",
	}
	var environ []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LANG=") && !strings.HasPrefix(kv, "LC_") {
			environ = append(environ, kv)
		}
	}
	for i, name := range names {
		dir := filepath.Join(base, name)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		session := "s" + string(rune('0'+i))
		srv.Run(t, "new-session", "-d", "-s", session, "-c", dir, "sleep 600")
		pane := strings.TrimSpace(srv.Run(t, "display-message", "-p", "-t", coord.Exact(session), "#{session_name}:#{window_id}.#{pane_id}"))
		if i == 0 {
			// tmux reads the directory from the pane's process, which
			// may not run yet right after new-session.
			poll.WaitOn(t, func(poll.LogT) poll.Result {
				if got := strings.TrimSpace(srv.Run(t, "display-message", "-p", "-t", coord.Exact(session), "#{pane_current_path}")); got != dir {
					return poll.Continue("the pane's directory reads %q", got)
				}
				return poll.Success()
			}, poll.WithTimeout(10*time.Second))
		}
		for _, locale := range []string{"LANG=C.UTF-8", "LANG="} {
			check := func(how string, out []byte, o Options) {
				t.Helper()
				c, err := Read(strings.NewReader(string(out)), o)
				if err != nil {
					t.Fatalf("%q, %s, %s: %v", name, how, locale, err)
				}
				// No client is attached: a forged line would say five.
				ok := c.Pane == pane && len(c.Statuses) == 0 && !strings.ContainsFunc(c.Dir, unicode.IsControl) &&
					c.Humans == probe.Humans{Known: true}
				if i == 0 {
					ok = ok && c.Dir == dir
				} else {
					first, _, _ := strings.Cut(name, "\n")
					ok = ok && c.Dir != filepath.Join(base, first) && c.Dir != dir
				}
				if !ok {
					t.Errorf("%q, %s, %s: pane %q, dir %q, statuses %q\n%s", name, how, locale, c.Pane, c.Dir, c.Statuses, out)
				}
			}
			local := exec.Command(srv.Mux, Args(coord.Exact(session))...)
			local.Env = append(environ, locale)
			out, err := local.Output()
			if err != nil {
				t.Fatalf("%q: local capture: %v", name, err)
			}
			check("local", out, Options{Framed: true, StatusDir: noStatus, Now: time.Now()})

			remote := exec.Command(sh, "-c", Remote(5, coord.Exact(session), builtinEvents))
			remote.Env = []string{"HOME=" + home, locale, "OMEGA_MONITOR_MUX=" + srv.Mux, "PATH=" + os.Getenv("PATH")}
			if out, err = remote.Output(); err != nil {
				t.Fatalf("%q: remote capture: %v", name, err)
			}
			check("remote", out, Options{Framed: true, Now: time.Now()})
		}
	}
}
