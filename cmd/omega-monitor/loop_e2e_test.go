package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	"gotest.tools/v3/icmd"
	"gotest.tools/v3/poll"

	"github.com/google/go-cmp/cmp"
	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
	"github.com/omega-monitor/omega-monitor/internal/watcher"
	"github.com/omega-monitor/omega-monitor/scripts"
)

// End-to-end tests of the poll loop: the real scripts/omega-monitor.sh, the
// real omega-monitor binary, a real tmux server on a private socket running
// the demo's scripted agent, and a real sshd on loopback. Bounds are
// generous, since the machines that run them are often loaded; what is
// asserted is what arrives, never how fast.

// A loopRun is one loop script running in the foreground, as a watcher
// session would run it, with its lines collected.
type loopRun struct {
	t     *testing.T
	cmd   *exec.Cmd
	state string
	sent  string // the alert funnel's record of messages

	mu    sync.Mutex
	lines []string
	done  chan struct{}
}

type loopOptions struct {
	target  string
	flags   []string
	env     []string // added to the environment
	path    string   // PATH, when not the test's own
	timeout int      // OMEGA_MONITOR_TIMEOUT, seconds
	outbox  []string // alerts a stopped watcher left undelivered
	// home is the state home, when the test needs to know it before the
	// loop starts (a hook names it); the watcher's directory is in it,
	// named name ("state" when empty: several loops in one home need
	// names of their own).
	home, name string
	// userHome is the loop's HOME, where it reads the agents' own status
	// files (an agent started with AGENT_STATUS_DIR in it keeps one).
	userHome string
	// muxWakeDefault leaves --mux-wake at its default (auto), where
	// flags do not set it.
	muxWakeDefault bool
	// prefix is a command the loop is run by, which ends by running the
	// words after its own (a bench's measure), where not empty.
	prefix []string
}

// startLoop runs the embedded loop script on opt.target. It is stopped by
// SIGTERM when the test ends, and the test fails if it leaves a process of
// its process group behind.
func startLoop(t *testing.T, opt loopOptions) *loopRun {
	t.Helper()
	bin := omegaMonitor(t)
	dir := t.TempDir()
	loop := filepath.Join(dir, "omega-monitor.sh")
	if err := os.WriteFile(loop, scripts.Loop, 0o700); err != nil {
		t.Fatal(err)
	}
	home := dir
	if opt.home != "" {
		home = opt.home
	}
	if opt.name == "" {
		opt.name = "state"
	}
	r := &loopRun{t: t, state: filepath.Join(home, opt.name), sent: filepath.Join(dir, "sent"), done: make(chan struct{})}
	funnel := filepath.Join(dir, "funnel")
	// The funnel's contract: the message on stdin, buttons (a question's
	// options) in the file --reply-markup names, kept beside what was sent.
	script := "#!/bin/sh\nif [ \"$1\" = --reply-markup ]; then cp \"$2\" " + coord.ShellQuote(r.sent+".markup") + "; shift 2; fi\n" +
		"[ \"$*\" = --stdin ] || exit 2\n{ cat; printf '\\n\\036\\n'; } >>" + coord.ShellQuote(r.sent) + "\n"
	if err := os.WriteFile(funnel, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	if opt.timeout == 0 {
		opt.timeout = 10
	}
	if err := statedir.Dir(r.state).QueueAlerts(time.Now(), opt.outbox); err != nil {
		t.Fatal(err)
	}
	path := opt.path
	if path == "" {
		path = os.Getenv("PATH")
	}
	// --mux-wake 0 unless the test says otherwise (a later one wins):
	// these tests count polls, and the multiplexer's wakes, armed by
	// default for an agent without hooks, would add some.
	args := []string{loop, opt.target, "--mux-wake", "0"}
	if opt.muxWakeDefault {
		args = args[:2]
	}
	words := append(append(slices.Clone(opt.prefix), bashPath(t)), append(args, opt.flags...)...)
	r.cmd = exec.Command(words[0], words[1:]...)
	userHome := dir
	if opt.userHome != "" {
		userHome = opt.userHome
	}
	r.cmd.Env = append([]string{
		"HOME=" + userHome,
		"PATH=" + path,
		"LANG=C.UTF-8",
		"OMEGA_MONITOR_BIN=" + bin,
		"OMEGA_MONITOR_HOME=" + home,
		"OMEGA_MONITOR_STATE=" + r.state,
		"OMEGA_MONITOR_ALERT_SEND=" + funnel,
		"OMEGA_MONITOR_TIMEOUT=" + strconv.Itoa(opt.timeout),
	}, opt.env...)
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := r.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	r.cmd.Stderr = &stderr
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			r.mu.Lock()
			r.lines = append(r.lines, sc.Text())
			r.mu.Unlock()
			t.Logf("loop: %s", sc.Text())
		}
		r.cmd.Wait()
		close(r.done)
	}()
	t.Cleanup(func() {
		r.stop()
		if s := stderr.String(); s != "" {
			t.Logf("loop stderr:\n%s", s)
		}
	})
	return r
}

// stop ends the loop as a stopped watcher session would, with SIGTERM, and
// checks that nothing of its process group outlives it.
func (r *loopRun) stop() {
	pgid := r.cmd.Process.Pid
	syscall.Kill(pgid, syscall.SIGTERM)
	select {
	case <-r.done:
	case <-time.After(20 * time.Second):
		r.t.Errorf("the loop did not stop within 20s of SIGTERM")
		syscall.Kill(-pgid, syscall.SIGKILL)
		<-r.done
	}
	syscall.Kill(-pgid, syscall.SIGKILL)
}

// waitLines waits until the loop has printed n lines, or more, and returns
// them.
func (r *loopRun) waitLines(n int, within time.Duration) []string {
	r.t.Helper()
	deadline := time.Now().Add(within)
	for {
		r.mu.Lock()
		lines := append([]string(nil), r.lines...)
		r.mu.Unlock()
		if len(lines) >= n {
			return lines
		}
		select {
		case <-r.done:
			r.t.Fatalf("the loop exited after %d lines; it must never exit by itself", len(lines))
		default:
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("the loop printed %d lines in %v, want %d:\n%s", len(lines), within, n, strings.Join(lines, "\n"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitLine waits for a line containing want and returns every line so far.
func (r *loopRun) waitLine(want string, within time.Duration) []string {
	r.t.Helper()
	deadline := time.Now().Add(within)
	for {
		lines := r.waitLines(1, within)
		for _, l := range lines {
			if strings.Contains(l, want) {
				return lines
			}
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("no line with %q within %v:\n%s", want, within, strings.Join(lines, "\n"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitNudged waits for the line of the nudge that spends budget ("1/3"),
// delivered in one poll or, when the box was slow to show the text, by a
// later poll's Enter, and returns every line so far.
func (r *loopRun) waitNudged(budget string, within time.Duration) []string {
	r.t.Helper()
	deadline := time.Now().Add(within)
	for {
		lines := r.waitLines(1, within)
		if len(linesWith(nudgedLines(lines), "("+budget+")")) > 0 {
			return lines
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("no nudge (%s) within %v:\n%s", budget, within, strings.Join(lines, "\n"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// alerts returns the messages the alert funnel was given, once the
// watcher's deliverer, which runs apart from the loop, has emptied the
// outbox and the pages of its groups are made and delivered (or after
// 20 s: a test of a failing channel reads it as it is).
func (r *loopRun) alerts() []string {
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		waiting, _ := filepath.Glob(filepath.Join(r.state, statedir.Outbox, "*.alert"))
		if len(waiting) == 0 && groupsSettled(filepath.Dir(r.state)) {
			break
		}
	}
	return r.alertsNow()
}

// groupsSettled says every pane that joined a group in the state home is
// on a page of it, and no page waits: the group's window is over, a poll
// made its page, a deliverer sent it.
func groupsSettled(home string) bool {
	members, _ := filepath.Glob(filepath.Join(home, statedir.Groups, "*", "members", "*.json"))
	for _, m := range members {
		name := strings.TrimSuffix(filepath.Base(m), ".json")
		watcher, ev, _ := strings.Cut(name, ".")
		group := filepath.Dir(filepath.Dir(m))
		pages, _ := filepath.Glob(filepath.Join(group, "pages", "[0-9]*", "page.json"))
		named := false
		for _, p := range pages {
			var plan struct {
				Event    string   `json:"event"`
				Watchers []string `json:"watchers"`
			}
			b, _ := os.ReadFile(p)
			if json.Unmarshal(b, &plan) == nil && plan.Event == ev && slices.Contains(plan.Watchers, watcher) {
				named = true
			}
			if waiting, _ := filepath.Glob(filepath.Join(filepath.Dir(p), statedir.Outbox, "*.alert")); len(waiting) > 0 {
				return false
			}
		}
		if !named {
			return false
		}
	}
	return true
}

// alertsNow returns the messages the alert funnel was given so far.
func (r *loopRun) alertsNow() []string {
	data, _ := os.ReadFile(r.sent)
	var msgs []string
	for m := range strings.SplitSeq(string(data), "\n\036\n") {
		if m != "" {
			msgs = append(msgs, m)
		}
	}
	return msgs
}

func bashPath(t *testing.T) string {
	return testenv.Need(t, "bash")[0]
}

// startAgent runs the demo's scripted agent in session name of s, its
// received lines logged to the returned file. Its file is named claude, as
// Claude Code's program is: the process a watcher finds in the pane's
// foreground is the agent's.
func startAgent(t *testing.T, s *testenv.TmuxServer, name string, env ...string) (log string) {
	t.Helper()
	dir := t.TempDir()
	script := filepath.Join(dir, "claude")
	if err := os.WriteFile(script, []byte(agentScript), 0o600); err != nil {
		t.Fatal(err)
	}
	log = filepath.Join(dir, "received")
	words := append([]string{"env", "LANG=C.UTF-8", "AGENT_LOG=" + log}, env...)
	words = append(words, bashPath(t), script)
	s.NewSession(t, name, "exec "+coord.ShellJoin(words...))
	return log
}

// agentHome is a HOME for a loop and the demo's agent to share: the agent
// keeps its own status in it (the env to start it with), as Claude Code
// does, and the loop reads it there.
func agentHome(t *testing.T) (home, env string) {
	home = t.TempDir()
	return home, "AGENT_STATUS_DIR=" + filepath.Join(home, ".claude", "sessions")
}

// received returns the lines the agent read.
func received(t *testing.T, log string) []string {
	t.Helper()
	data, err := os.ReadFile(log)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

// marked lists the processes whose command line holds mark.
func marked(t *testing.T, mark string) []string {
	t.Helper()
	out, err := exec.Command("ps", "-eo", "pid=,args=").Output()
	if err != nil {
		t.Fatalf("ps: %v", err)
	}
	var found []string
	for line := range strings.SplitSeq(string(out), "\n") {
		if strings.Contains(line, mark) && !strings.Contains(line, "ps -eo") {
			found = append(found, strings.TrimSpace(line))
		}
	}
	return found
}

// waitUnmarked waits for the processes holding mark to be gone.
func waitUnmarked(t *testing.T, mark string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		left := marked(t, mark)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("processes left behind:\n%s", strings.Join(left, "\n"))
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// uniqueSeconds is a sleep duration no other process on the machine uses,
// so that a test can find the sleeps it started.
func uniqueSeconds() string {
	return fmt.Sprintf("%d.%06d", 3000+os.Getpid()%1000, time.Now().Nanosecond()/1000)
}

func TestLoopStalledAgentGetsExactlyTheBudget(t *testing.T) {
	t.Parallel()
	s := testenv.Tmux(t)
	log := startAgent(t, s, "agent", "AGENT_MODE=idle", "AGENT_WORK=1")
	r := startLoop(t, loopOptions{target: "agent", flags: []string{
		"--mux", s.Mux, "--interval", "1", "--nudge-budget", "2", "--work-probe", "echo 5"}})
	lines := r.waitLine("nudge budget spent", 90*time.Second)
	// Some more polls of the same stop: nothing more may be typed.
	r.waitLines(len(lines)+4, 60*time.Second)
	r.stop()
	text := "continue with the next step; if you are waiting on something, say what"
	if got, want := received(t, log), []string{text, text}; strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the agent received %q, want exactly the budget of 2 nudges %q", got, want)
	}
	if a := r.alerts(); len(a) != 1 || !strings.Contains(a[0], "NUDGE BUDGET") {
		t.Errorf("alerts = %q, want one budget escalation", a)
	}
	if entries, _ := os.ReadDir(filepath.Join(r.state, "actions")); len(entries) != 0 {
		t.Errorf("action files left: %v", entries)
	}
}

func TestLoopQuestionGetsNothing(t *testing.T) {
	t.Parallel()
	s := testenv.Tmux(t)
	log := startAgent(t, s, "agent", "AGENT_MODE=question")
	r := startLoop(t, loopOptions{target: "agent", flags: []string{"--mux", s.Mux, "--interval", "1", "--work-probe", "echo 5"}})
	questionGetsNothing(t, r, log, "QUESTION")
}

// questionGetsNothing watches r's loop for four polls of a question on the
// screen: each reads QUESTION, nothing reaches the agent whose input is
// logged in log, and one alert holding said relays it.
func questionGetsNothing(t *testing.T, r *loopRun, log, said string) {
	t.Helper()
	lines := r.waitLines(4, 60*time.Second)
	r.stop()
	for _, l := range lines {
		if !strings.Contains(l, " · QUESTION · ") {
			t.Errorf("line %q: want QUESTION on every poll", l)
		}
	}
	if got := received(t, log); len(got) != 0 {
		t.Errorf("the question dialog received %q; nothing may be typed into a dialog", got)
	}
	// The deliverer runs apart from the poll that said the escalation:
	// its page is waited for, then counted.
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if len(r.alertsNow()) > 0 {
			return poll.Success()
		}
		return poll.Continue("no alert delivered yet")
	}, poll.WithTimeout(30*time.Second), poll.WithDelay(50*time.Millisecond))
	if a := r.alerts(); len(a) != 1 || !strings.Contains(a[0], said) {
		t.Errorf("alerts = %q, want the question escalated once, with %q", a, said)
	}
}

// TestLoopTypesAnAnswerIntoItsDialog: with answers on, a question the
// watcher relays carries its options as buttons; an answer for one of them,
// as the relay writes it, wakes the loop, which moves the dialog's cursor to
// that option and presses Enter, then records it typed; the agent got that
// answer and no other key.
func TestLoopTypesAnAnswerIntoItsDialog(t *testing.T) {
	t.Parallel()
	s := testenv.Tmux(t)
	home, status := agentHome(t)
	log := startAgent(t, s, "agent", "AGENT_MODE=question", "AGENT_DIALOG=menu", status)
	conf := filepath.Join(t.TempDir(), "telegram.conf")
	if err := os.WriteFile(conf, []byte("bot_token=1:x\nchat_id=42\nanswers=on\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := startLoop(t, loopOptions{target: "agent", env: []string{"OMEGA_TELEGRAM_CONF=" + conf}, userHome: home,
		flags: []string{"--mux", s.Mux, "--interval", "60", "--work-probe", "echo 5"}})
	r.waitLine("escalated to the operator", 30*time.Second)
	d := statedir.Dir(r.state)
	offers, err := d.ReadOffers()
	// The three options, and the dialog's Esc.
	if err != nil || len(offers.Offers) != 4 || !offers.Offers[3].Esc {
		t.Fatalf("offers: %+v, %v", offers, err)
	}
	var markup []byte
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if markup, err = os.ReadFile(r.sent + ".markup"); err == nil {
			return poll.Success()
		}
		return poll.Continue("no buttons delivered yet")
	}, poll.WithTimeout(20*time.Second))
	if !strings.Contains(string(markup), offers.Offers[2].Nonce) || !strings.Contains(string(markup), `"3. No"`) {
		t.Errorf("the alert's buttons: %s", markup)
	}
	no := offers.Offers[2]
	if err := d.WriteRequest(statedir.AnswerRequest{Nonce: no.Nonce, From: "op", FromID: 42, ChatID: 42, At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := watcher.Wake(r.state); err != nil {
		t.Fatal(err)
	}
	r.waitLine("answer typed: No", 30*time.Second)
	res, err := d.ReadResult(no.Nonce)
	if err != nil || res.Outcome != statedir.AnswerTyped {
		t.Errorf("result: %+v, %v", res, err)
	}
	if diff := cmp.Diff([]string{"ANSWER 3 No"}, received(t, log)); diff != "" {
		t.Errorf("what the agent got (-want +got):\n%s", diff)
	}
}

// TestLoopTypesAnAnswerOverSSH: an answer from the chat reaches an agent on
// an ssh host as it reaches a local one: through the watcher's connection,
// with the same looks before each key; the Esc button is offered there too.
func TestLoopTypesAnAnswerOverSSH(t *testing.T) {
	testenv.Need(t, "ssh")
	t.Parallel()
	s := testenv.Tmux(t)
	cfg := testenv.NewSSHConfig(t)
	// The host's HOME holds the agent's own status, as Claude Code keeps
	// it there: the remote frame carries it.
	remoteHome, status := agentHome(t)
	testenv.SSHD(t, cfg, "box", "OMEGA_MONITOR_MUX="+s.Mux, "LANG=C.UTF-8", "HOME="+remoteHome)
	log := startAgent(t, s, "agent", "AGENT_MODE=question", "AGENT_DIALOG=menu", status)
	conf := filepath.Join(t.TempDir(), "telegram.conf")
	if err := os.WriteFile(conf, []byte("bot_token=1:x\nchat_id=42\nanswers=on\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := startLoop(t, loopOptions{target: "box:agent", env: []string{"OMEGA_TELEGRAM_CONF=" + conf},
		flags: []string{"--ssh-config", cfg.Path, "--interval", "60", "--work-probe", "echo 5"}})
	r.waitLine("escalated to the operator", 60*time.Second)
	d := statedir.Dir(r.state)
	offers, err := d.ReadOffers()
	if err != nil || len(offers.Offers) != 4 || !offers.Offers[3].Esc || offers.Offers[2].Label != "No" {
		t.Fatalf("offers: %+v, %v", offers, err)
	}
	if err := d.WriteRequest(statedir.AnswerRequest{Nonce: offers.Offers[2].Nonce, From: "op", FromID: 42, ChatID: 42, At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := watcher.Wake(r.state); err != nil {
		t.Fatal(err)
	}
	r.waitLine("answer typed: No", 60*time.Second)
	if diff := cmp.Diff([]string{"ANSWER 3 No"}, received(t, log)); diff != "" {
		t.Errorf("what the remote agent got (-want +got):\n%s", diff)
	}
}

// TestLoopWakesAtOnce: a loop pausing a minute between polls polls again
// within seconds of a wake, and once for a burst of wakes; a wake for a
// watcher whose loop is gone is refused, and signals nothing.
func TestLoopWakesAtOnce(t *testing.T) {
	t.Parallel()
	s := testenv.Tmux(t)
	startAgent(t, s, "agent", "AGENT_MODE=question")
	r := startLoop(t, loopOptions{target: "agent", flags: []string{"--mux", s.Mux, "--interval", "60", "--work-probe", "echo 5"}})
	// The question is seen, then paged when seen again 2s later.
	n := len(r.waitLine("QUESTION · escalated to the operator", 30*time.Second))
	time.Sleep(time.Second) // into the pause
	for range 3 {
		if err := watcher.Wake(r.state); err != nil {
			t.Fatal(err)
		}
	}
	lines := r.waitLines(n+1, 10*time.Second)
	time.Sleep(3 * time.Second)
	if got := r.waitLines(n+1, time.Second); len(got) != n+1 {
		t.Errorf("three wakes together made %d polls, want one:\n%s", len(got)-n, strings.Join(got, "\n"))
	}
	r.stop()
	if !strings.Contains(lines[n], " · QUESTION · waiting for the operator") {
		t.Errorf("the poll after the wake: %q", lines[n])
	}
	if err := watcher.Wake(r.state); !errors.Is(err, watcher.ErrNotRunning) {
		t.Errorf("waking a stopped loop: %v, want ErrNotRunning", err)
	}
}

func TestLoopDraftGetsNothing(t *testing.T) {
	t.Parallel()
	s := testenv.Tmux(t)
	log := startAgent(t, s, "agent", "AGENT_MODE=draft")
	r := startLoop(t, loopOptions{target: "agent", flags: []string{"--mux", s.Mux, "--interval", "1", "--work-probe", "echo 5"}})
	lines := r.waitLines(4, 60*time.Second)
	r.stop()
	for _, l := range lines {
		if !strings.Contains(l, "not nudged") {
			t.Errorf("line %q: a draft in the input box must hold the nudge", l)
		}
	}
	if got := received(t, log); len(got) != 0 {
		t.Errorf("the agent with a draft received %q; nothing may be typed over a human", got)
	}
}

// TestLoopHungHost: a host that sends its ssh banner and then says nothing
// more, which ConnectTimeout never ends; each capture ends at its wall clock
// and the loop goes on polling.
func TestLoopHungHost(t *testing.T) {
	testenv.EndToEnd(t)
	testenv.Need(t, "ssh")
	t.Parallel()
	cfg := testenv.NewSSHConfig(t)
	testenv.HungHost(t, cfg, "stalled", true)
	r := startLoop(t, loopOptions{target: "stalled:agent", timeout: 3,
		flags: []string{"--ssh-config", cfg.Path, "--interval", "1"}})
	start := time.Now()
	lines := r.waitLines(3, 90*time.Second)
	for _, l := range lines[:3] {
		// Either the wall clock ended the capture or ssh gave up by
		// itself first (recent OpenSSH bounds the key exchange by
		// ConnectTimeout too); either way within the bound.
		if !strings.Contains(l, "capture failed: no answer within 3s; still watching") &&
			!strings.Contains(l, "capture failed: ssh stalled: ") {
			t.Errorf("line %q: want the capture's failure", l)
		}
	}
	// Three polls at a 3 s clock (and its 2 s grace) and a 1 s interval.
	if d := time.Since(start); d > 60*time.Second {
		t.Errorf("three polls took %v: the wall clock did not end the captures", d)
	}
}

// TestLoopThroughSSHD watches a session on a real sshd, reached by its
// alias: the nudge arrives on the remote side with every character intact.
func TestLoopThroughSSHD(t *testing.T) {
	t.Parallel()
	s := testenv.Tmux(t)
	cfg := testenv.NewSSHConfig(t)
	testenv.SSHD(t, cfg, "box", "OMEGA_MONITOR_MUX="+s.Mux, "LANG=C.UTF-8")
	log := startAgent(t, s, "agent", "AGENT_MODE=idle", "AGENT_WORK=1")
	text := `-don't stop: "run" it; cost $HOME \n ünïcödé ✓;`
	r := startLoop(t, loopOptions{target: "box:agent", flags: []string{
		"--ssh-config", cfg.Path, "--interval", "1", "--nudge-budget", "1",
		"--work-probe", "echo 5", "--nudge-text", text}})
	r.waitNudged("1/1", 90*time.Second)
	deadline := time.Now().Add(30 * time.Second)
	for len(received(t, log)) == 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if got := received(t, log); len(got) != 1 || got[0] != text {
		t.Errorf("the remote agent received %q, want exactly %q", got, text)
	}
	control := filepath.Join(r.state, "ssh-control")
	if _, err := os.Stat(control); err != nil {
		t.Errorf("no ControlMaster socket for the watcher: %v", err)
	}
	r.stop()
	// Stopping the watcher closes its ssh master too.
	waitUnmarked(t, control, 10*time.Second)
}

// TestLoopRefusesUnsafeNamesUnderRmux: rmux does not reject a session name
// with ':' or '.', it rewrites them to '_' and acts on that session. The
// loop, and the watch command, refuse such a name before anything runs.
func TestLoopRefusesUnsafeNamesUnderRmux(t *testing.T) {
	t.Parallel()
	s := testenv.Tmux(t)
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	rmux := filepath.Join(dir, "rmux")
	// A fake rmux over the test's tmux: it exports RMUX, as rmux does, and
	// rewrites ':' and '.' in session names, keeping tmux's own '=' prefix
	// and ':' suffix of an exact target.
	wrapper := `#!/bin/sh
export RMUX=` + coord.ShellQuote(dir) + `
printf '%s\n' "$*" >>` + coord.ShellQuote(calls) + `
n=$#; i=0; prev=
while [ $i -lt $n ]; do
	a=$1; shift; i=$((i + 1))
	case $prev in
	-s) a=$(printf '%s' "$a" | tr ':.' '__') ;;
	-t) case $a in
		=*:) b=${a#=}; b=${b%:}; a="=$(printf '%s' "$b" | tr ':.' '__'):" ;;
		*) a=$(printf '%s' "$a" | tr ':.' '__') ;;
		esac ;;
	esac
	set -- "$@" "$a"; prev=$a
done
exec ` + coord.ShellQuote(s.Mux) + ` "$@"
`
	if err := os.WriteFile(rmux, []byte(wrapper), 0o700); err != nil {
		t.Fatal(err)
	}
	// The fake does what rmux does: my.agent becomes my_agent.
	if out, err := exec.Command(rmux, "new-session", "-d", "-s", "my.agent", "sleep 300").CombinedOutput(); err != nil {
		t.Fatalf("fake rmux: %v\n%s", err, out)
	}
	if got := s.Sessions(t); len(got) != 1 || got[0] != "my_agent" {
		t.Fatalf("fake rmux made sessions %q, want [my_agent]", got)
	}
	before, _ := os.ReadFile(calls)

	bin := omegaMonitor(t)
	loop := filepath.Join(dir, "omega-monitor.sh")
	if err := os.WriteFile(loop, scripts.Loop, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"my.agent", "box:my.agent", "box:a:b", "-t", "my agent", "box.:x;y"} {
		cmd := exec.Command(bashPath(t), loop, "--mux", rmux, "--interval", "1", "--", target)
		cmd.Env = append(os.Environ(), "OMEGA_MONITOR_BIN="+bin, "OMEGA_MONITOR_HOME="+filepath.Join(dir, "home"))
		cmd.WaitDelay = 10 * time.Second
		done := make(chan error, 1)
		var out []byte
		go func() {
			var err error
			out, err = cmd.CombinedOutput()
			done <- err
		}()
		select {
		case err := <-done:
			if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(string(out), "refusing target") {
				t.Errorf("loop on %q: exit %d (%v), output %q; want exit 2 refusing the target", target, code, err, out)
			}
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Errorf("loop on %q did not refuse it: it was still running after 30s", target)
		}
	}
	for _, target := range []string{"my.agent", "box:my.agent"} {
		f := &fleet{tmux: s, home: dir, state: filepath.Join(dir, "home")}
		res := f.run(t, "watch", target, "--mux", rmux)
		if res.ExitCode != 2 || !strings.Contains(res.Stderr(), "unsafe") {
			t.Errorf("watch %q: exit %d, stderr %q; want exit 2, unsafe", target, res.ExitCode, res.Stderr())
		}
	}
	if after, _ := os.ReadFile(calls); string(after) != string(before) {
		t.Errorf("the fake rmux was called with unsafe names:\n%s", strings.TrimPrefix(string(after), string(before)))
	}
	if got := s.Sessions(t); len(got) != 1 {
		t.Errorf("sessions now %q: something was created", got)
	}
}

// TestLoopCaptureGrandchildHoldsPipe: a capture whose command leaves a
// grandchild holding its output and then hangs still ends at its wall
// clock, poll after poll, and nothing it started is left. The clock is the
// loop's own (bash builtins), so it is the same where coreutils timeout is
// missing (stock macOS): the test hides it.
func TestLoopCaptureGrandchildHoldsPipe(t *testing.T) {
	testenv.EndToEnd(t)
	t.Parallel()
	dir := t.TempDir()
	mark := uniqueSeconds()
	mux := filepath.Join(dir, "mux")
	script := "#!/bin/sh\nsleep " + mark + " &\nsleep " + mark + "\n"
	if err := os.WriteFile(mux, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	opt := loopOptions{target: "agent", timeout: 2, flags: []string{"--mux", mux, "--interval", "1"},
		path: pathWithout(t, "timeout", "gtimeout")}
	r := startLoop(t, opt)
	start := time.Now()
	lines := r.waitLines(3, 90*time.Second)
	for _, l := range lines[:3] {
		if !strings.Contains(l, "capture failed: no answer within 2s") {
			t.Errorf("line %q: want the capture's timeout", l)
		}
	}
	if d := time.Since(start); d > 60*time.Second {
		t.Errorf("three polls took %v: the clock did not end the captures", d)
	}
	r.stop()
	waitUnmarked(t, mark, 10*time.Second)
}

// pathWithout returns a PATH of one directory holding every tool of the
// test's PATH but the named ones.
func pathWithout(t *testing.T, hide ...string) string {
	t.Helper()
	dir := t.TempDir()
	hidden := map[string]bool{}
	for _, h := range hide {
		hidden[h] = true
	}
	for _, p := range filepath.SplitList(os.Getenv("PATH")) {
		entries, err := os.ReadDir(p)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if hidden[e.Name()] {
				continue
			}
			link := filepath.Join(dir, e.Name())
			if _, err := os.Lstat(link); err == nil {
				continue // an earlier PATH entry wins
			}
			os.Symlink(filepath.Join(p, e.Name()), link)
		}
	}
	return dir
}

// TestWatcherStopLeavesNothing: a watcher session stopped in the middle of a
// probe leaves no process behind.
func TestWatcherStopLeavesNothing(t *testing.T) {
	t.Parallel()
	f := newFleet(t)
	f.tmux.NewSession(t, "agent", "sleep 300")
	mark := uniqueSeconds()
	f.run(t, "agent", "--interval", "1", "--work-probe", "sleep "+mark+"; echo 3").Assert(t, icmd.Success)
	// Wait until the probe runs.
	deadline := time.Now().Add(60 * time.Second)
	for len(marked(t, "sleep "+mark)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the work probe never ran")
		}
		time.Sleep(100 * time.Millisecond)
	}
	f.run(t, "stop", "agent").Assert(t, icmd.Success)
	waitUnmarked(t, mark, 20*time.Second)
}

// TestLoopRemoteWitnessVetoesANudge: the agent's own status file is read on
// the host where the agent runs, through the watcher's ssh connection; a
// fresh "busy" for the watched pane stops the nudge an idle screen asks for.
func TestLoopRemoteWitnessVetoesANudge(t *testing.T) {
	t.Parallel()
	s := testenv.Tmux(t)
	cfg := testenv.NewSSHConfig(t)
	home := t.TempDir()
	testenv.SSHD(t, cfg, "box", "HOME="+home, "OMEGA_MONITOR_MUX="+s.Mux, "LANG=C.UTF-8")
	log := startAgent(t, s, "agent", "AGENT_MODE=idle", "AGENT_WORK=1")
	pane := strings.TrimSpace(s.Run(t, "display-message", "-p", "-t", "=agent:", "#{session_name}:#{window_id}.#{pane_id}"))
	sessions := filepath.Join(home, ".claude", "sessions")
	if err := os.MkdirAll(sessions, 0o700); err != nil {
		t.Fatal(err)
	}
	status := fmt.Sprintf(`{"pid":4242,"tmux":%q,"status":"busy","version":"2.1.332","updatedAt":%d}`, pane, time.Now().UnixMilli())
	if err := os.WriteFile(filepath.Join(sessions, "4242.json"), []byte(status), 0o600); err != nil {
		t.Fatal(err)
	}
	r := startLoop(t, loopOptions{target: "box:agent", flags: []string{
		"--ssh-config", cfg.Path, "--interval", "1", "--nudge-budget", "3", "--work-probe", "echo 5"}})
	r.waitLine("not nudged: the agent's own status says busy, though the screen reads STALLED", 90*time.Second)
	r.stop()
	if got := received(t, log); len(got) != 0 {
		t.Errorf("the agent received %q although its own status said busy", got)
	}
}

// TestLoopDeliversWhatAStoppedWatcherLeft: alerts left in the outbox by a
// watcher that stopped before it could deliver them go out from the next
// loop's first poll, once, in order.
func TestLoopDeliversWhatAStoppedWatcherLeft(t *testing.T) {
	t.Parallel()
	s := testenv.Tmux(t)
	startAgent(t, s, "agent", "AGENT_MODE=work")
	r := startLoop(t, loopOptions{target: "agent", flags: []string{"--mux", s.Mux, "--interval", "1"},
		outbox: []string{"<b>QUESTION</b> left behind", "<b>BLOCKED</b> left behind"}})
	r.waitLines(3, 60*time.Second)
	r.stop()
	if got, want := r.alerts(), []string{"<b>QUESTION</b> left behind", "<b>BLOCKED</b> left behind"}; !slices.Equal(got, want) {
		t.Errorf("alerts = %q, want %q, once each", got, want)
	}
	if left, _ := statedir.Dir(r.state).PendingAlerts(); len(left) != 0 {
		t.Errorf("still in the outbox: %q", left)
	}
}

// TestLoopNeverTypesIntoTheVoid: the scripted agent's input box does not
// show the nudge as typed (a box that never echoes, one that collapses the
// text into a placeholder, a 40-column pane that wraps it over three lines).
// Enter is withheld, the typing is spent, the operator is told once, and
// nothing more is typed until the box reads back empty (never, for the
// placeholder and the wrap: at most one typing; within the budget of 2, for
// the box that never echoes), where the unfixed loop typed on every poll.
func TestLoopNeverTypesIntoTheVoid(t *testing.T) {
	t.Parallel()
	long := "continue with the next step of the plan; if you are waiting on something, say what it is and why"
	for _, tt := range []struct {
		name        string
		env         []string
		width       string
		text        string
		maxTypings  int
		wantHolding string // a line that says the box holds it
	}{
		{"never echoes", []string{"AGENT_BOX=noecho"}, "120", "", 2, ""},
		{"placeholder", []string{"AGENT_BOX=placeholder"}, "120", "", 1, "never showed in the input box (escalated)"},
		{"wrapped at 40 columns", nil, "40", long, 1, "never showed in the input box (escalated)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := testenv.Tmux(t)
			dir := t.TempDir()
			script := filepath.Join(dir, "agent.sh")
			assert.NilError(t, os.WriteFile(script, []byte(agentScript), 0o600))
			words := append([]string{"env", "LANG=C.UTF-8", "AGENT_LOG=" + filepath.Join(dir, "received"), "AGENT_MODE=idle"}, tt.env...)
			words = append(words, bashPath(t), script)
			s.Run(t, "new-session", "-d", "-s", "agent", "-x", tt.width, "-y", "30", "exec "+coord.ShellJoin(words...))
			flags := []string{"--mux", s.Mux, "--interval", "1", "--nudge-budget", "2", "--work-probe", "echo 5"}
			if tt.text != "" {
				flags = append(flags, "--nudge-text", tt.text)
			}
			r := startLoop(t, loopOptions{target: "agent", flags: flags})
			lines := r.waitLine("never showed in the input box, escalated", 90*time.Second)
			if tt.wantHolding != "" {
				lines = r.waitLine(tt.wantHolding, 60*time.Second)
			}
			// More polls of the same screen: nothing more may be typed
			// beyond what the rule allows.
			r.waitLines(len(lines)+6, 90*time.Second)
			r.stop()
			events := historyEvents(t, r.state)
			typings, withheld, unseen := 0, 0, 0
			for _, e := range events {
				switch e {
				case "enter_withheld":
					withheld++
				case "nudge_typed":
					t.Errorf("a nudge was entered into a box that never showed it: %q", events)
				}
			}
			for _, e := range historyLines(t, r.state) {
				if e["event"] == "escalate" && e["kind"] == "nudge-unseen" {
					unseen++
				}
			}
			typings = withheld
			assert.Assert(t, typings >= 1 && typings <= tt.maxTypings, "typed %d times, want 1 to %d: %q", typings, tt.maxTypings, events)
			assert.Equal(t, unseen, 1, "the operator was told %d times: %q", unseen, events)
			var told int
			for _, a := range r.alerts() {
				if strings.Contains(a, "cannot see it in the input box") {
					told++
				}
			}
			assert.Equal(t, told, 1, "alerts: %q", r.alerts())
			assert.Assert(t, len(received(t, filepath.Join(dir, "received"))) == 0, "the agent received a line")
		})
	}
}

// historyLines reads a watcher's history as JSON objects.
func historyLines(t *testing.T, state string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(state, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// TestLoopFollowsItsPinnedPane: the session has a shell-like window 0 and
// the agent in window 1. The watcher pins the agent's pane; when the
// operator switches to window 0, every capture and every nudge still goes
// to the agent's pane, and nothing is typed into the other window.
func TestLoopFollowsItsPinnedPane(t *testing.T) {
	t.Parallel()
	s := testenv.Tmux(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "agent.sh")
	assert.NilError(t, os.WriteFile(script, []byte(agentScript), 0o600))
	log := filepath.Join(dir, "received")
	s.NewSession(t, "work", "cat")
	agent := "exec " + coord.ShellJoin("env", "LANG=C.UTF-8", "AGENT_LOG="+log, "AGENT_MODE=idle", "AGENT_WORK=1", bashPath(t), script)
	s.Run(t, "new-window", "-t", "=work:", agent)
	pane := strings.TrimSpace(s.Run(t, "display-message", "-p", "-t", "=work:1", "#{pane_id}"))
	r := startLoop(t, loopOptions{target: "work", flags: []string{
		"--mux", s.Mux, "--interval", "1", "--nudge-budget", "3", "--work-probe", "echo 5", "--pane", pane}})
	r.waitNudged("1/3", 90*time.Second)
	s.Run(t, "select-window", "-t", "=work:0") // the operator looks elsewhere
	lines := r.waitLine("nudge budget spent", 120*time.Second)
	r.waitLines(len(lines)+3, 60*time.Second)
	r.stop()
	text := "continue with the next step; if you are waiting on something, say what"
	if got := received(t, log); len(got) != 3 || got[0] != text {
		t.Errorf("the agent's pane received %q, want the budget of 3 nudges", got)
	}
	other := s.Run(t, "capture-pane", "-p", "-t", "=work:0")
	if strings.Contains(other, "continue with the next step") {
		t.Errorf("a nudge reached window 0:\n%s", other)
	}
}
