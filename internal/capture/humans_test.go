package capture

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/poll"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
	"github.com/omega-monitor/omega-monitor/probe"
)

// TestReadHumans: the clients of the sessions that show the pane's window
// count, their latest activity is the last input; every line the format
// does not produce (a multiplexer that leaves a format as it is, or empty,
// a hostile host's) reads as unknown, never as nobody.
func TestReadHumans(t *testing.T) {
	s := time.Second
	for _, c := range []struct {
		name string
		line string
		full bool
		want probe.Humans
	}{
		{"nobody attached", "[omega-monitor:mux] 1000 @1 0:990@1 0:100@2", true, probe.Humans{Known: true}},
		{"one client on the window", "[omega-monitor:mux] 1000 @1 1:990@1 0:999@2", true, probe.Humans{Known: true, Clients: 1, Idle: 10 * s}},
		{"a client on another window does not count", "[omega-monitor:mux] 1000 @1 0:900@1 2:999@2", true, probe.Humans{Known: true}},
		{"grouped sessions on the window add up; the latest input counts", "[omega-monitor:mux] 1000 @1 1:900@1 2:970@1 1:999@2", true, probe.Humans{Known: true, Clients: 3, Idle: 30 * s}},
		{"an activity after now is input now", "[omega-monitor:mux] 1000 @1 1:1005@1", true, probe.Humans{Known: true, Clients: 1}},
		{"strftime not done", "[omega-monitor:mux] %s @1 1:990@1", true, probe.Humans{Unknown: "the multiplexer does not say its time (display-message %s)"}},
		{"the session loop not done", "[omega-monitor:mux] 1000 @1", true, probe.Humans{Unknown: "the multiplexer does not list its sessions' clients (#{S:...}, #{session_attached})"}},
		{"the session loop left as it is", "[omega-monitor:mux] 1000 @1#{S: #{session_attached}:#{session_activity}#{window_id}}", true, probe.Humans{Unknown: "the multiplexer leaves its formats unexpanded (#{...})"}},
		{"nothing expanded", "[omega-monitor:mux] %s #{window_id}#{S: #{session_attached}:#{session_activity}#{window_id}}", true, probe.Humans{Unknown: "the multiplexer leaves its formats unexpanded (#{...})"}},
		{"empty", "[omega-monitor:mux]", true, probe.Humans{Unknown: "the multiplexer does not say its time (display-message %s)"}},
		{"no window id", "[omega-monitor:mux] 1000  1:990@1", true, probe.Humans{Unknown: "the multiplexer does not say the pane's window (#{window_id})"}},
		{"session_attached empty", "[omega-monitor:mux] 1000 @1 :990@1", true, probe.Humans{Unknown: `the multiplexer's line does not read as its format: ":990@1"`}},
		{"a forged token", "[omega-monitor:mux] 1000 @1 1:990@1 -1:999@1", true, probe.Humans{Unknown: `the multiplexer's line does not read as its format: "-1:999@1"`}},
		{"a huge count", "[omega-monitor:mux] 1000 @1 99999999999:990@1", true, probe.Humans{Unknown: `the multiplexer's line does not read as its format: "99999999999:990@1"`}},
		{"cut at its cap", "[omega-monitor:mux] 1000 @1 1:990@1", false, probe.Humans{Unknown: "the multiplexer's line passes 65536 bytes"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, ReadHumans(c.line, c.full)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestFrameHumans: the multiplexer's line is read only as a frame's first
// line; a frame without it (a bare pane, an older frame) says nothing of
// the humans, and one that a directory name would carry later is no line
// of the multiplexer's.
func TestFrameHumans(t *testing.T) {
	for _, c := range []struct {
		name, frame string
		want        probe.Humans
	}{
		{"first", "[omega-monitor:mux] 1000 @1 1:998@1\nagent:@1.%2\t/w\n" + PaneMark + "\nthe pane\n", probe.Humans{Known: true, Clients: 1, Idle: 2 * time.Second}},
		{"none", "agent:@1.%2\t/w\n" + PaneMark + "\nthe pane\n", probe.Humans{}},
		{"after the header", "agent:@1.%2\t/w\n[omega-monitor:mux] 1000 @1 0:998@1\n" + PaneMark + "\nthe pane\n", probe.Humans{}},
	} {
		c2, err := Read(strings.NewReader(c.frame), Options{Framed: true})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if diff := cmp.Diff(c.want, c2.Humans); diff != "" || c2.Pane != "agent:@1.%2" {
			t.Errorf("%s: pane %q, humans (-want +got):\n%s", c.name, c2.Pane, diff)
		}
	}
}

// times are what tmux says of a session's activity, read at once.
type times struct {
	now, client, session, window, attached int64
}

// TestMultiplexerTimesOnTmux measures, on the real tmux, which of its
// times a human's keystrokes move and which our own typing does: a key
// typed at an attached client moves #{client_activity} and the session's
// #{session_activity}; our send-keys and paste-buffer move neither, and
// nor does the agent's output; #{window_activity} moves with any output,
// our typing's echo among it, so it says nothing of a human. Then the
// capture frame, locally and through the remote script, counts the clients
// that show the pane's window (a grouped session's too, not another
// window's) and their last input, never ours.
func TestMultiplexerTimesOnTmux(t *testing.T) {
	sh := testenv.Need(t, "sh")[0]
	srv := testenv.Tmux(t)
	srv.NewSession(t, "agent", "cat")
	srv.NewSession(t, "other", "cat")
	read := func() times {
		t.Helper()
		out := srv.Run(t, "display-message", "-p", "-t", "=agent:", "%s #{session_activity} #{window_activity} #{session_attached}")
		f := strings.Fields(out)
		var v [4]int64
		for i := range v {
			v[i], _ = strconv.ParseInt(f[i], 10, 64)
		}
		tm := times{now: v[0], session: v[1], window: v[2], attached: v[3]}
		// display-message's own client is any client: list-clients
		// names the agent session's.
		for l := range strings.SplitSeq(srv.Run(t, "list-clients", "-F", "#{client_session} #{client_activity}"), "\n") {
			if name, act, ok := strings.Cut(l, " "); ok && name == "agent" {
				tm.client, _ = strconv.ParseInt(act, 10, 64)
			}
		}
		return tm
	}
	// nextSecond waits until tmux's clock passes every time it reported,
	// so that a time that moves is seen to move (tmux keeps seconds).
	nextSecond := func() times {
		t.Helper()
		var tm times
		poll.WaitOn(t, func(poll.LogT) poll.Result {
			tm = read()
			if tm.now > max(tm.client, tm.session, tm.window) {
				return poll.Success()
			}
			return poll.Continue("tmux's clock at %d", tm.now)
		}, poll.WithTimeout(10*time.Second), poll.WithDelay(100*time.Millisecond))
		return tm
	}
	shows := func(text string) {
		t.Helper()
		poll.WaitOn(t, func(poll.LogT) poll.Result {
			if strings.Contains(srv.Run(t, "capture-pane", "-p", "-t", "=agent:"), text) {
				return poll.Success()
			}
			return poll.Continue("the pane does not show %q", text)
		}, poll.WithTimeout(10*time.Second), poll.WithDelay(50*time.Millisecond))
	}
	attached := func(session string, n int) {
		t.Helper()
		poll.WaitOn(t, func(poll.LogT) poll.Result {
			got := 0
			for l := range strings.SplitSeq(srv.Run(t, "list-clients", "-F", "#{client_session}"), "\n") {
				if l == session {
					got++
				}
			}
			if got == n {
				return poll.Success()
			}
			return poll.Continue("%d clients on %s, want %d", got, session, n)
		}, poll.WithTimeout(10*time.Second), poll.WithDelay(50*time.Millisecond))
	}
	frames := func() []Capture {
		t.Helper()
		out, err := exec.Command(srv.Mux, Args(coord.Exact("agent"))...).Output()
		if err != nil {
			t.Fatalf("local capture: %v", err)
		}
		local, err := Read(strings.NewReader(string(out)), Options{Framed: true, StatusDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(sh, "-c", Remote(5, coord.Exact("agent"), builtinEvents))
		cmd.Env = []string{"HOME=" + t.TempDir(), "OMEGA_MONITOR_MUX=" + srv.Mux, "PATH=" + os.Getenv("PATH")}
		if out, err = cmd.Output(); err != nil {
			t.Fatalf("remote capture: %v", err)
		}
		remote, err := Read(strings.NewReader(string(out)), Options{Framed: true})
		if err != nil {
			t.Fatal(err)
		}
		return []Capture{local, remote}
	}

	if tm := read(); tm.attached != 0 {
		t.Fatalf("session_attached = %d before any client", tm.attached)
	}
	for i, c := range frames() {
		if want := (probe.Humans{Known: true}); c.Humans != want {
			t.Errorf("frame %d with no client: humans %+v, want %+v", i, c.Humans, want)
		}
	}

	srv.NewSession(t, "viewer", srv.Mux+" attach-session -t =agent:")
	attached("agent", 1)
	before := nextSecond()
	if before.attached != 1 || before.client == 0 {
		t.Fatalf("after an attach: %+v", before)
	}

	// Our typing, both ways the loop types, and its echo.
	srv.Run(t, "send-keys", "-t", "=agent:", "-l", "ours typed")
	srv.Run(t, "set-buffer", "-b", "t", "ours pasted")
	srv.Run(t, "paste-buffer", "-d", "-r", "-b", "t", "-t", "=agent:")
	srv.Run(t, "send-keys", "-t", "=agent:", "Enter")
	shows("ours typedours pasted\nours typedours pasted")
	ours := read()
	if ours.client != before.client || ours.session != before.session {
		t.Errorf("our typing moved a human's times: before %+v, after %+v", before, ours)
	}
	if ours.window <= before.window {
		t.Errorf("the echo did not move window_activity (%d, before %d): the measure is void", ours.window, before.window)
	}
	for i, c := range frames() {
		h := c.Humans
		if !h.Known || h.Clients != 1 || h.Idle < time.Second {
			t.Errorf("frame %d after our typing: humans %+v, want one client whose last input is a second old or more (the attach)", i, h)
		}
	}

	// A human's keys at the attached client.
	nextSecond()
	sent := time.Now()
	srv.Run(t, "send-keys", "-t", "=viewer:", "-l", "a human")
	shows("a human")
	human := read()
	if human.client <= ours.client || human.session != human.client {
		t.Errorf("a human's keys: client_activity %d (before %d), session_activity %d; want both moved, equal", human.client, ours.client, human.session)
	}
	for i, c := range frames() {
		h := c.Humans
		if bound := time.Since(sent) + time.Second; !h.Known || h.Clients != 1 || h.Idle > bound {
			t.Errorf("frame %d after a human's keys: humans %+v, want one client with input within %v", i, h, bound)
		}
	}

	// A client on another session's window is not at this agent; one on
	// a session grouped with it, showing its window, is.
	srv.NewSession(t, "viewer2", srv.Mux+" attach-session -t =other:")
	attached("other", 1)
	srv.Run(t, "new-session", "-d", "-t", "=agent", "-s", "agent-grouped")
	srv.NewSession(t, "viewer3", srv.Mux+" attach-session -t =agent-grouped:")
	attached("agent-grouped", 1)
	for i, c := range frames() {
		if h := c.Humans; !h.Known || h.Clients != 2 {
			t.Errorf("frame %d with a client on another window and one on a grouped session: humans %+v, want 2 clients", i, h)
		}
	}
}
