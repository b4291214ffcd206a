package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gotest.tools/v3/icmd"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/remotewake"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// A remoteWorld is a watcher of an ssh target on the real sshd: a private
// tmux server that the host's side reaches through the alias "box", with
// two sessions running a plain shell, "agent" (watched) and "other"; the
// host's HOME, where its omega-monitor is (or is not), with a state home of
// its own; and the loop watching box:agent.
type remoteWorld struct {
	s            *testenv.TmuxServer
	cfg          *testenv.SSHConfig
	r            *loopRun
	bin          string
	remoteHome   string // the host's $HOME
	agent, other string // pane ids
	flags        []string
}

// hostBinary is what the host has for omega-monitor: none, ours (the real
// binary under test), or a script of the test's.
type hostBinary struct {
	real   bool
	script string
}

func newRemoteWorld(t *testing.T, host hostBinary, flags ...string) *remoteWorld {
	t.Helper()
	s := testenv.Tmux(t)
	shell := "exec env PS1='$ ' " + coord.ShellQuote(bashPath(t)) + " --norc --noprofile"
	s.NewSession(t, "agent", shell)
	s.NewSession(t, "other", shell)
	w := &remoteWorld{s: s, cfg: testenv.NewSSHConfig(t), bin: omegaMonitor(t), remoteHome: t.TempDir()}
	w.agent = strings.TrimSpace(s.Run(t, "display-message", "-p", "-t", "agent", "#{pane_id}"))
	w.other = strings.TrimSpace(s.Run(t, "display-message", "-p", "-t", "other", "#{pane_id}"))
	if host.real || host.script != "" {
		dir := filepath.Join(w.remoteHome, ".local", "bin")
		os.MkdirAll(dir, 0o700)
		var err error
		if host.real {
			err = os.Symlink(w.bin, filepath.Join(dir, "omega-monitor"))
		} else {
			err = os.WriteFile(filepath.Join(dir, "omega-monitor"), []byte(host.script), 0o700)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	testenv.SSHD(t, w.cfg, "box", "HOME="+w.remoteHome, "OMEGA_MONITOR_MUX="+s.Mux, "LANG=C.UTF-8")
	w.flags = append([]string{"--ssh-config", w.cfg.Path}, flags...)
	w.start(t)
	return w
}

func (w *remoteWorld) start(t *testing.T) {
	t.Helper()
	w.r = startLoop(t, loopOptions{target: "box:agent", flags: w.flags})
	w.r.waitLines(1, 60*time.Second)
}

// remoteState is the host's state home, where its hooks post their wakes.
func (w *remoteWorld) remoteState() string {
	return filepath.Join(w.remoteHome, ".omega", "monitor")
}

// hook types into pane the command line of an agent's hook on the host
// (the pane's shell runs on the host's tmux server: $TMUX names it), with
// the host's state home.
func (w *remoteWorld) hook(t *testing.T, pane, line string) {
	t.Helper()
	w.s.Run(t, "send-keys", "-t", pane, "-l", line)
	w.s.Run(t, "send-keys", "-t", pane, "Enter")
}

func (w *remoteWorld) wakeLine() string {
	return "OMEGA_MONITOR_HOME=" + coord.ShellQuote(w.remoteState()) + " " + coord.ShellQuote(w.bin) + " wake"
}

func (w *remoteWorld) polls() int { return len(w.r.waitLines(0, time.Second)) }

// waitStatus waits for the wake relay of the loop to stand at status
// (wake.json), recorded after since.
func (w *remoteWorld) waitStatus(t *testing.T, status string, since time.Time, within time.Duration) {
	t.Helper()
	waitRelay(t, w.r.state, status, since, within)
}

// waitRelay waits for the wake relay of the watcher whose state directory
// is state to stand at status, recorded after since.
func waitRelay(t *testing.T, state, status string, since time.Time, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		var rec statedir.RemoteWakeRecord
		statedir.Dir(state).ReadRecord(statedir.RemoteWake, &rec)
		if rec.Status == status && !rec.At.Before(since.Truncate(time.Second)) {
			return
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(state, "watcher.log"))
			t.Fatalf("the wake relay stands at %+v after %v, want %s; watcher.log:\n%s", rec, within, status, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// listenerFIFOs lists the listeners' FIFOs in the host's wake channel.
func (w *remoteWorld) listenerFIFOs() []string {
	entries, _ := os.ReadDir(remotewake.ChannelDir(w.remoteState()))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// linesWith counts the loop's lines holding s.
func (w *remoteWorld) linesWith(s string) int {
	n := 0
	for _, l := range w.r.waitLines(0, time.Second) {
		if strings.Contains(l, s) {
			n++
		}
	}
	return n
}

// TestRemoteWakeFromTheHost: an agent's hook run on the host (its own state
// home, its own omega-monitor) wakes the watcher on this side within
// seconds at a minute's interval, through the listener the watcher keeps
// over its ssh connection; a hook in another pane of the host's server
// wakes nothing; a burst of twenty hooks is at most two polls; the line
// says once that the host's hooks can wake the watcher.
func TestRemoteWakeFromTheHost(t *testing.T) {
	t.Parallel()
	w := newRemoteWorld(t, hostBinary{real: true}, "--interval", "60")
	w.waitStatus(t, statedir.WakeListening, time.Time{}, 60*time.Second)
	time.Sleep(time.Second) // into the pause

	before := w.polls()
	w.hook(t, w.other, "echo '{}' | "+w.wakeLine()+"; echo other-done")
	time.Sleep(5 * time.Second)
	if got := w.polls(); got != before {
		t.Errorf("a hook in another pane of the host made %d polls, want none", got-before)
	}

	start := time.Now()
	w.hook(t, w.agent, "echo '{\"hook_event_name\":\"Stop\"}' | "+w.wakeLine())
	// Well within the interval: the wake brought the poll.
	lines := w.r.waitLines(before+1, 30*time.Second)
	t.Logf("a hook on the host: a poll %.1fs after it was typed", time.Since(start).Seconds())
	if !strings.Contains(lines[before], "listening on box for its agents' hooks") {
		t.Errorf("the woken poll's line %q does not say that the host's hooks wake the watcher", lines[before])
	}

	time.Sleep(3 * time.Second)
	before = w.polls()
	w.hook(t, w.agent, "for i in $(seq 20); do echo '{}' | "+w.wakeLine()+"; done")
	w.r.waitLines(before+1, 30*time.Second)
	time.Sleep(6 * time.Second)
	if got := w.polls() - before; got > 2 {
		t.Errorf("a burst of 20 hooks on the host made %d polls, want at most 2", got)
	}
	if n := w.linesWith("listening on box for its agents"); n != 1 {
		t.Errorf("said %d times that the host's hooks wake the watcher, want once", n)
	}
	if got := w.listenerFIFOs(); len(got) != 1 {
		t.Errorf("the host's wake channel holds %q, want one listener", got)
	}
	// What the relay cost, from its start (Linux's process table).
	for _, p := range marked(t, "wake --relay --state "+w.r.state) {
		pid, _, _ := strings.Cut(p, " ")
		if stat, err := os.ReadFile("/proc/" + pid + "/stat"); err == nil {
			f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
			utime, _ := strconv.Atoi(f[11])
			stime, _ := strconv.Atoi(f[12])
			t.Logf("the relay (pid %s): %d ms of CPU (user and system, in ticks of 10 ms) over the test, its twenty-two wakes included", pid, (utime+stime)*10)
		}
	}
}

// TestRemoteWakeHostWithoutOmegaMonitor: a host without omega-monitor: the
// watcher polls at its interval as before and says once why the host's
// hooks cannot wake it.
func TestRemoteWakeHostWithoutOmegaMonitor(t *testing.T) {
	t.Parallel()
	w := newRemoteWorld(t, hostBinary{}, "--interval", "2")
	w.waitStatus(t, statedir.WakeAbsent, time.Time{}, 60*time.Second)
	n := w.polls()
	lines := w.r.waitLines(n+4, 60*time.Second)
	said := 0
	for _, l := range lines {
		if strings.Contains(l, "no omega-monitor on box: its hooks cannot wake this watcher, which polls every 2s") {
			said++
		}
		if !strings.Contains(l, "MONITOR · box:agent · ") || strings.Contains(l, "capture failed") {
			t.Errorf("line %q: want an ordinary poll", l)
		}
	}
	if said != 1 {
		t.Errorf("said %d times that the host cannot wake the watcher, want once:\n%s", said, strings.Join(lines, "\n"))
	}
	log, _ := os.ReadFile(filepath.Join(w.r.state, "watcher.log"))
	if c := strings.Count(string(log), "no omega-monitor on the host"); c != 1 {
		t.Errorf("watcher.log says it %d times, want once:\n%s", c, log)
	}
}

// TestRemoteWakeHostileHost: an "omega-monitor" on the host that greets and
// then prints everything but an exact wake of the watched pane (another
// pane, spaces, carriage returns, escape sequences, commands, a megabyte
// line, binary): none of it wakes the watcher, and none of it reaches the
// line or the logs; an exact wake printed after it still does.
func TestRemoteWakeHostileHost(t *testing.T) {
	t.Parallel()
	// The watched pane's id is known only once the world exists; the
	// script reads it from a file the test writes.
	dir := t.TempDir()
	paneFile, trigger := filepath.Join(dir, "pane"), filepath.Join(dir, "go")
	script := `#!/bin/sh
p=$(cat ` + coord.ShellQuote(paneFile) + `)
echo 'omega-monitor wake: listening'
printf 'wake %s \n' "$p"
printf 'wake %s\r\n' "$p"
printf 'WAKE %s\n' "$p"
printf ' wake %s\n' "$p"
printf '\033]0;PWNED\007wake %s\n' "$p"
printf 'wake %s; touch /tmp/PWNED\n' "$p"
printf 'wake %%99\n'
head -c 1048576 /dev/zero | tr '\0' 'A'; echo
printf '\000\377\033[2J PWNED\n'
echo 'omega-monitor wake: listening'
while [ ! -e ` + coord.ShellQuote(trigger) + ` ]; do sleep 0.2; done
printf 'wake %s\n' "$p"
exec cat >/dev/null
`
	s := testenv.Tmux(t)
	s.NewSession(t, "agent", "exec sleep 3600")
	pane := strings.TrimSpace(s.Run(t, "display-message", "-p", "-t", "agent", "#{pane_id}"))
	if err := os.WriteFile(paneFile, []byte(pane), 0o600); err != nil {
		t.Fatal(err)
	}
	w := &remoteWorld{s: s, cfg: testenv.NewSSHConfig(t), bin: omegaMonitor(t), remoteHome: t.TempDir(), agent: pane}
	os.MkdirAll(filepath.Join(w.remoteHome, ".local", "bin"), 0o700)
	os.WriteFile(filepath.Join(w.remoteHome, ".local", "bin", "omega-monitor"), []byte(script), 0o700)
	testenv.SSHD(t, w.cfg, "box", "HOME="+w.remoteHome, "OMEGA_MONITOR_MUX="+s.Mux, "LANG=C.UTF-8")
	w.flags = []string{"--ssh-config", w.cfg.Path, "--interval", "60"}
	w.start(t)
	w.waitStatus(t, statedir.WakeListening, time.Time{}, 60*time.Second)
	time.Sleep(6 * time.Second) // all of it read, and nothing woke the loop
	before := w.polls()
	if before != 1 {
		t.Errorf("%d polls, want the first one only: hostile output woke the watcher", before)
	}
	os.WriteFile(trigger, nil, 0o600)
	w.r.waitLines(before+1, 30*time.Second)
	w.r.stop()
	for _, f := range []string{filepath.Join(w.r.state, "watcher.log"), filepath.Join(w.r.state, statedir.Log)} {
		b, _ := os.ReadFile(f)
		if strings.Contains(string(b), "PWNED") || strings.Contains(string(b), "\x1b") || strings.Contains(string(b), "AAAA") {
			t.Errorf("%s carries what the host printed:\n%.2000s", f, b)
		}
	}
	if strings.Contains(strings.Join(w.r.waitLines(0, time.Second), "\n"), "PWNED") {
		t.Error("a line carries what the host printed")
	}
	if _, err := os.Stat("/tmp/PWNED"); err == nil {
		t.Error("/tmp/PWNED exists")
	}
	log, _ := os.ReadFile(filepath.Join(w.r.state, "watcher.log"))
	if !strings.Contains(string(log), "dropped a line from the host that is not a wake") {
		t.Errorf("watcher.log does not say that lines were dropped:\n%s", log)
	}
}

// TestRemoteWakeLifecycle: the ssh master killed under the listener, the
// relay starts it again and the host's hooks wake the watcher again; a
// stopped loop leaves no relay, no listener and no FIFO behind, and one
// started again listens again, once; and so with the operator's own watch
// and stop, whose stop ends the watcher's session.
func TestRemoteWakeLifecycle(t *testing.T) {
	t.Parallel()
	w := newRemoteWorld(t, hostBinary{real: true}, "--interval", "60")
	w.waitStatus(t, statedir.WakeListening, time.Time{}, 60*time.Second)

	// The master, as ssh names it.
	control := coord.ControlPath(w.r.state, os.Getuid())
	out, _ := exec.Command("ssh", "-F", w.cfg.Path, "-o", "ControlPath="+control, "-O", "check", "box").CombinedOutput()
	m := regexp.MustCompile(`pid=(\d+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no ssh master: %s", out)
	}
	pid, _ := strconv.Atoi(string(m[1]))
	killed := time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	w.waitStatus(t, statedir.WakeListening, killed.Add(time.Second), 60*time.Second)
	time.Sleep(time.Second)
	before := w.polls()
	w.hook(t, w.agent, w.wakeLine()+" </dev/null")
	w.r.waitLines(before+1, 30*time.Second)
	// The listener of the killed connection saw it end and went.
	deadline := time.Now().Add(20 * time.Second)
	for len(w.listenerFIFOs()) != 1 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if got := w.listenerFIFOs(); len(got) != 1 {
		t.Errorf("the host's wake channel holds %q, want one listener", got)
	}
	log, _ := os.ReadFile(filepath.Join(w.r.state, "watcher.log"))
	for l := range strings.SplitSeq(string(log), "\n") {
		if strings.Contains(l, "wake relay:") {
			t.Logf("watcher.log: %s", l)
		}
	}

	listener := filepath.Join(w.remoteHome, ".local", "bin", "omega-monitor") + " wake --listen"
	for round := range 2 {
		relay := "wake --relay --state " + w.r.state
		if len(marked(t, listener)) != 1 || len(marked(t, relay)) != 1 {
			t.Errorf("round %d: listeners %q, relays %q; want one each", round, marked(t, listener), marked(t, relay))
		}
		w.r.stop()
		waitUnmarked(t, relay, 20*time.Second)
		waitUnmarked(t, listener, 20*time.Second)
		if got := w.listenerFIFOs(); len(got) != 0 {
			t.Errorf("round %d: a stopped watcher left %q in the host's wake channel", round, got)
		}
		if round == 0 {
			started := time.Now()
			w.start(t)
			w.waitStatus(t, statedir.WakeListening, started, 60*time.Second)
		}
	}

	stateHome := filepath.Join(t.TempDir(), "st")
	run := func(args ...string) *icmd.Result {
		cmd := icmd.Command(w.bin, args...)
		cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "OMEGA_MONITOR_HOME=" + stateHome, "OMEGA_MONITOR_MUX=" + w.s.Mux}
		return icmd.RunCmd(cmd)
	}
	run("watch", "box:agent", "--ssh-config", w.cfg.Path, "--interval", "60", "--mux-wake", "0").Assert(t, icmd.Success) // the hooks' relay alone
	state := filepath.Join(stateHome, "monitor-box-agent")
	waitRelay(t, state, statedir.WakeListening, time.Time{}, 60*time.Second)
	relay := "wake --relay --state " + state
	if len(marked(t, listener)) != 1 || len(marked(t, relay)) != 1 {
		t.Errorf("watch: listeners %q, relays %q; want one each", marked(t, listener), marked(t, relay))
	}
	run("stop", "box:agent").Assert(t, icmd.Success)
	waitUnmarked(t, relay, 20*time.Second)
	waitUnmarked(t, listener, 20*time.Second)
	if got := w.listenerFIFOs(); len(got) != 0 {
		t.Errorf("a stopped watcher left %q in the host's wake channel", got)
	}
}
