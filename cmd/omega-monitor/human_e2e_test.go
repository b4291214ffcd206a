package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/poll"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/capture"
	"github.com/omega-monitor/omega-monitor/internal/claudecode"
	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// End-to-end tests of a human at the agent: a real tmux client attached to
// the watched session (a tmux attach running in a pane of a viewer session
// of the same server), whose keys a test sends to that pane, so that they
// reach the agent as a human's do, through a client.

// attach attaches a client to session from a new session named viewer, and
// waits until the server lists it.
func attach(t *testing.T, s *testenv.TmuxServer, viewer, session string) {
	t.Helper()
	s.NewSession(t, viewer, s.Mux+" attach-session -t "+coord.Exact(session))
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if slices.Contains(strings.Fields(s.Run(t, "list-clients", "-F", "#{client_session}")), session) {
			return poll.Success()
		}
		return poll.Continue("no client on %s", session)
	}, poll.WithTimeout(30*time.Second), poll.WithDelay(50*time.Millisecond))
}

// typist is a human typing at the client in viewer's pane, a key and its
// erasure every 300 ms (the box stays as it was), until stop.
type typist struct {
	stopped chan struct{}
	once    sync.Once
	wg      sync.WaitGroup
}

func startTyping(t *testing.T, s *testenv.TmuxServer, viewer string) *typist {
	ty := &typist{stopped: make(chan struct{})}
	ty.wg.Add(1)
	go func() {
		defer ty.wg.Done()
		for {
			select {
			case <-ty.stopped:
				return
			case <-time.After(300 * time.Millisecond):
			}
			s.Cmd("send-keys", "-t", coord.Exact(viewer), "a", "BSpace").Run()
		}
	}()
	t.Cleanup(ty.stop)
	return ty
}

func (ty *typist) stop() {
	ty.once.Do(func() { close(ty.stopped) })
	ty.wg.Wait()
}

// linesSince returns the loop's lines from the n-th on.
func (r *loopRun) linesSince(n int) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.lines[min(n, len(r.lines)):])
}

// TestLoopHoldsForAHumanAtTheAgent: while a human types at a client
// attached to the agent's session, locally and over ssh, poll after poll
// says so and nothing is typed; once they have been quiet for --human-idle
// (3 s here; the keyboard's own 5 s apply too), the nudge goes.
func TestLoopHoldsForAHumanAtTheAgent(t *testing.T) {
	t.Parallel()
	for _, remote := range []bool{false, true} {
		name := map[bool]string{false: "local", true: "ssh"}[remote]
		t.Run(name, func(t *testing.T) {
			s := testenv.Tmux(t)
			log := startAgent(t, s, "agent", "AGENT_MODE=idle", "AGENT_WORK=1")
			target, flags := "agent", []string{"--mux", s.Mux}
			if remote {
				cfg := testenv.NewSSHConfig(t)
				testenv.SSHD(t, cfg, "box", "OMEGA_MONITOR_MUX="+s.Mux, "LANG=C.UTF-8")
				target, flags = "box:agent", []string{"--ssh-config", cfg.Path}
			}
			attach(t, s, "viewer", "agent")
			ty := startTyping(t, s, "viewer")
			r := startLoop(t, loopOptions{target: target, flags: append(flags,
				"--interval", "1", "--nudge-budget", "1", "--work-probe", "echo 5", "--human-idle", "3")})
			lines := r.waitLines(5, 90*time.Second)
			ty.stop()
			held := len(lines)
			for _, l := range lines {
				if !strings.Contains(l, "STALLED · work=5 · progress=? · not nudged: a human is at the agent (input ") {
					t.Errorf("line %q: want the nudge held for the human at the agent", l)
				}
			}
			if got := received(t, log); len(got) != 0 {
				t.Errorf("the agent received %q while a human typed at it", got)
			}
			lines = r.waitNudged("1/1", 90*time.Second)
			deadline := time.Now().Add(30 * time.Second)
			for len(received(t, log)) == 0 && time.Now().Before(deadline) {
				time.Sleep(100 * time.Millisecond)
			}
			r.stop()
			text := "continue with the next step; if you are waiting on something, say what"
			if got := received(t, log); !slices.Equal(got, []string{text}) {
				t.Errorf("the agent received %q, want the one nudge once the human was quiet", got)
			}
			for _, l := range lines[held:] {
				if !strings.Contains(l, "a human is at the agent") && len(nudgedLines([]string{l})) == 0 &&
					!strings.Contains(l, "nudge typed, Enter withheld: ") && !strings.Contains(l, "a human typed at the agent") {
					t.Errorf("line %q after the human stopped: want the hold, then the nudge", l)
				}
			}
		})
	}
}

// TestLoopQuestionWaitsForTheHumanAtTheAgent: a question on the screen of
// an agent a human is typing at is not paged while they type, the line
// says why, and it is paged once when they have gone quiet.
func TestLoopQuestionWaitsForTheHumanAtTheAgent(t *testing.T) {
	t.Parallel()
	s := testenv.Tmux(t)
	startAgent(t, s, "agent", "AGENT_MODE=question")
	attach(t, s, "viewer", "agent")
	ty := startTyping(t, s, "viewer")
	r := startLoop(t, loopOptions{target: "agent", flags: []string{"--mux", s.Mux, "--interval", "1", "--work-probe", "echo 5", "--human-idle", "3"}})
	lines := r.waitLine("not paged: a human is at the agent", 60*time.Second)
	lines = r.waitLines(len(lines)+3, 60*time.Second)
	ty.stop()
	for _, l := range lines {
		if strings.Contains(l, "escalated to the operator") {
			t.Errorf("line %q: paged while a human typed at the agent", l)
		}
	}
	if a := r.alerts(); len(a) != 0 {
		t.Errorf("alerts while a human typed at the agent: %q", a)
	}
	r.waitLine("QUESTION · escalated to the operator, NOT answered", 60*time.Second)
	n := len(r.waitLines(1, time.Second))
	r.waitLines(n+2, 30*time.Second)
	r.stop()
	if a := r.alerts(); len(a) != 1 || !strings.Contains(a[0], "QUESTION") {
		t.Errorf("alerts = %q, want the question paged once the human was quiet", a)
	}
}

// TestQuestionPagedAfterTenMinutesWithAHuman: a real frame of a question
// with a human at the agent (their key at the attached client just now),
// judged by the tick at times it is given: not paged 2 s on, nor 9 minutes
// on; paged 10 minutes on, once; the multiplexer's clock in the frame, not
// the tick's, says how long ago the human typed.
func TestQuestionPagedAfterTenMinutesWithAHuman(t *testing.T) {
	t.Parallel()
	s := testenv.Tmux(t)
	startAgent(t, s, "agent", "AGENT_MODE=question")
	attach(t, s, "viewer", "agent")
	var frame []byte
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		s.Run(t, "send-keys", "-t", "=viewer:", "x")
		out, err := exec.Command(s.Mux, capture.Args(coord.Exact("agent"))...).Output()
		if err != nil {
			return poll.Error(err)
		}
		frame = out
		if strings.Contains(string(out), "Do you want to proceed?") {
			return poll.Success()
		}
		return poll.Continue("no dialog yet")
	}, poll.WithTimeout(30*time.Second), poll.WithDelay(100*time.Millisecond))
	state := filepath.Join(t.TempDir(), "w")
	var alerts int
	for _, c := range []struct{ now, want string }{
		{"2026-01-05T09:00:00Z", "NOT answered, escalated if still up at 09:00:02"},
		{"2026-01-05T09:00:02Z", "NOT answered, not paged: a human is at the agent (input "},
		{"2026-01-05T09:09:00Z", "NOT answered, not paged: a human is at the agent (input "},
		{"2026-01-05T09:10:00Z", "escalated to the operator, NOT answered: it has waited 10m with a human at the agent"},
		{"2026-01-05T09:11:00Z", "waiting for the operator, NOT answered (escalated 09:10:00)"},
	} {
		out, errs, code := tickOnce(t, string(frame), "--now", c.now, "--state", state, "--target", "agent", "--work", "5", "--frame", "--human-idle", "60")
		if code != 0 || !strings.Contains(out, "QUESTION · "+c.want) {
			t.Errorf("at %s: %q (%s), want %q", c.now, out, errs, c.want)
		}
		entries, _ := os.ReadDir(filepath.Join(state, "outbox"))
		alerts = len(entries)
	}
	if alerts != 1 {
		t.Errorf("%d alerts in the outbox, want the question once", alerts)
	}
}

// TestRealClaudeNudgeCollidesWithAnOperator: against the real Claude Code,
// an operator's keys arrive at their attached client just after the
// watcher pasted its nudge (a wrapper of the multiplexer sends them once,
// right after the command that pastes it). The box holds their text and ours: the
// Enter is withheld, nothing reaches the model, and the collision is said
// once, in a line, the history and the log, never again on the polls after,
// which hold for the human and then for their draft.
func TestRealClaudeNudgeCollidesWithAnOperator(t *testing.T) {
	api := fakeapi.New(t)
	s := startClaude(t, api, claudecode.Manual)
	setup := "start on the first step"
	turn(t, s, setup, shows("nothing more to do"))
	attach(t, s.Tmux, "viewer", s.Name)

	dir := t.TempDir()
	sent := filepath.Join(dir, "operator-typed")
	mux := filepath.Join(dir, "mux")
	const operator = "wait, wrong branch"
	wrapper := "#!/bin/sh\n" + coord.ShellQuote(s.Tmux.Mux) + ` "$@"; rc=$?
case "$*" in if-shell*paste-buffer*) if [ ! -e ` + coord.ShellQuote(sent) + ` ]; then : >` + coord.ShellQuote(sent) + `
	` + coord.ShellQuote(s.Tmux.Mux) + ` send-keys -t =viewer: -l ` + coord.ShellQuote(operator) + `; fi ;; esac
exit $rc
`
	if err := os.WriteFile(mux, []byte(wrapper), 0o700); err != nil {
		t.Fatal(err)
	}
	r := startLoop(t, loopOptions{target: s.Name, env: []string{"HOME=" + s.Home}, flags: []string{
		"--mux", mux, "--pane", s.Pane, "--interval", "1", "--work-probe", "echo 3", "--nudge-budget", "3",
		"--nudge-text", realNudge, "--human-idle", "3"}})
	lines := r.waitLine("nudge collided with a human's typing", realTimeout)
	lines = r.waitLines(len(lines)+8, realTimeout)
	r.stop()
	screen := string(s.Capture(t))
	t.Logf("the screen after:\n%s", screen)

	var collided []string
	for _, l := range lines {
		if strings.Contains(l, "nudge collided") {
			collided = append(collided, l)
		}
	}
	if len(collided) != 1 || !strings.Contains(collided[0], "Enter withheld") || !strings.Contains(collided[0], "our text and a human's") {
		t.Errorf("want the collision said once, Enter withheld; got %q", collided)
	}
	// The one nudge typed is said in its poll's line, as the collision
	// (issue 42: never "nudged" of a nudge whose Enter was withheld).
	if got := nudgedLines(lines); len(got) != 0 || !strings.Contains(collided[0], "MONITOR · claude · STALLED") {
		t.Errorf("the lines say nudged %d times, want the collision in its poll's line:\n%s", len(got), strings.Join(lines, "\n"))
	}
	if got := api.Texts(); !slices.Equal(got, []string{setup}) {
		t.Errorf("the fake API saw %q: a box holding an operator's text was sent", got)
	}
	if !strings.Contains(screen, operator) {
		t.Errorf("the operator's text is not in the box")
	}
	history, _ := os.ReadFile(filepath.Join(r.state, "history.jsonl"))
	if n := strings.Count(string(history), `"event":"nudge_collided"`); n != 1 || strings.Contains(string(history), `"event":"enter_withheld"`) {
		t.Errorf("the history holds %d nudge_collided (want 1), or an enter_withheld:\n%s", n, history)
	}
	logged, _ := os.ReadFile(filepath.Join(r.state, "monitor.log"))
	if n := strings.Count(string(logged), "nudge collided"); n != 1 {
		t.Errorf("monitor.log says the collision %d times, want once:\n%s", n, logged)
	}
	if a := r.alerts(); len(a) != 0 {
		t.Errorf("alerts = %q: a collision with a human at the agent pages no one", a)
	}
}

// TestLoopSaysWhenTheMultiplexerCannotSay: a multiplexer of tmux's command
// line that does not expand the session loop (#{S:...}), as an rmux might
// not: who is at the agent is unknown, said once, and nothing is held for
// a human (a client attached and quiet here); the nudge goes.
func TestLoopSaysWhenTheMultiplexerCannotSay(t *testing.T) {
	t.Parallel()
	s := testenv.Tmux(t)
	log := startAgent(t, s, "agent", "AGENT_MODE=idle", "AGENT_WORK=1")
	attach(t, s, "viewer", "agent")
	mux := filepath.Join(t.TempDir(), "rmux")
	wrapper := `#!/bin/sh
n=$#; i=0
while [ $i -lt $n ]; do
	a=$1; shift; i=$((i + 1))
	case $a in '` + capture.MuxMark + `'*) a='` + capture.MuxMark + ` %s #{window_id}' ;; esac
	set -- "$@" "$a"
done
exec ` + coord.ShellQuote(s.Mux) + ` "$@"
`
	if err := os.WriteFile(mux, []byte(wrapper), 0o700); err != nil {
		t.Fatal(err)
	}
	r := startLoop(t, loopOptions{target: "agent", flags: []string{
		"--mux", mux, "--interval", "1", "--nudge-budget", "1", "--work-probe", "echo 5", "--human-idle", "600"}})
	lines := r.waitNudged("1/1", 60*time.Second)
	lines = r.waitLines(len(lines)+2, 30*time.Second)
	r.stop()
	said := 0
	for _, l := range lines {
		if strings.Contains(l, "who is at the agent is unknown (the multiplexer does not list its sessions' clients") {
			said++
		}
	}
	if said != 1 {
		t.Errorf("the unknown was said %d times, want once:\n%s", said, strings.Join(lines, "\n"))
	}
	if got := received(t, log); len(got) != 1 {
		t.Errorf("the agent received %q, want the nudge", got)
	}
}
