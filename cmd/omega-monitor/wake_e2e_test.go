package main

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// A hookWorld is a private tmux server with two sessions running a plain
// shell, "agent" (watched, its pane pinned) and "other", and a loop
// watching agent at a minute's interval.
type hookWorld struct {
	s            *testenv.TmuxServer
	r            *loopRun
	bin, home    string
	agent, other string // pane ids
}

func newHookWorld(t *testing.T) *hookWorld {
	t.Helper()
	s := testenv.Tmux(t)
	shell := "exec env PS1='$ ' " + coord.ShellQuote(bashPath(t)) + " --norc --noprofile"
	s.NewSession(t, "agent", shell)
	s.NewSession(t, "other", shell)
	w := &hookWorld{s: s, bin: omegaMonitor(t)}
	w.agent = strings.TrimSpace(s.Run(t, "display-message", "-p", "-t", "agent", "#{pane_id}"))
	w.other = strings.TrimSpace(s.Run(t, "display-message", "-p", "-t", "other", "#{pane_id}"))
	w.r = startLoop(t, loopOptions{target: "agent", flags: []string{"--mux", s.Mux, "--interval", "60", "--pane", w.agent}})
	w.home = filepath.Dir(w.r.state)
	w.r.waitLines(1, 30*time.Second)
	return w
}

// hook types into pane the command line an agent's hook would run there.
func (w *hookWorld) hook(t *testing.T, pane, line string) {
	t.Helper()
	w.s.Run(t, "send-keys", "-t", pane, "-l", line)
	w.s.Run(t, "send-keys", "-t", pane, "Enter")
}

// wakeLine is the hook's command line, with the loop's state home.
func (w *hookWorld) wakeLine() string {
	return "OMEGA_MONITOR_HOME=" + coord.ShellQuote(w.home) + " " + coord.ShellQuote(w.bin) + " wake"
}

// polls counts the loop's lines.
func (w *hookWorld) polls() int { return len(w.r.waitLines(0, time.Second)) }

// TestWakeFromTheWatchedPane: a hook run in the watched pane brings a poll
// within seconds, at a minute's interval; one run in another pane of the
// same server brings none; a burst of twenty is at most two polls.
func TestWakeFromTheWatchedPane(t *testing.T) {
	w := newHookWorld(t)
	time.Sleep(time.Second) // into the pause

	before := w.polls()
	w.hook(t, w.other, "echo '{}' | "+w.wakeLine()+"; echo other-done")
	time.Sleep(4 * time.Second)
	if got := w.polls(); got != before {
		t.Errorf("a hook in another pane made %d polls, want none", got-before)
	}

	start := time.Now()
	w.hook(t, w.agent, "echo '{\"hook_event_name\":\"Stop\"}' | "+w.wakeLine())
	w.r.waitLines(before+1, 10*time.Second)
	t.Logf("a wake from the watched pane: a poll %.1fs after the hook was typed", time.Since(start).Seconds())
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the poll came %v after the hook, want within a couple of seconds", d)
	}

	time.Sleep(2 * time.Second)
	before = w.polls()
	w.hook(t, w.agent, "for i in $(seq 20); do echo '{}' | "+w.wakeLine()+"; done")
	w.r.waitLines(before+1, 10*time.Second)
	time.Sleep(5 * time.Second)
	if got := w.polls() - before; got > 2 {
		t.Errorf("a burst of 20 hooks made %d polls, want at most 2", got)
	}
}

// TestWakeHostilePayloads: whatever the payload (garbage, 5 MiB, none, a
// terminal's, Codex's argument), wake prints nothing, exits 0, and still
// wakes the watcher of its pane; and it wakes nothing outside one.
func TestWakeHostilePayloads(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t)
	socket := strings.TrimSpace(w.s.Run(t, "display-message", "-p", "#{socket_path}"))
	inPane := []string{"TMUX=" + socket + ",1,0", "TMUX_PANE=" + w.agent, "OMEGA_MONITOR_HOME=" + w.home, "PATH=" + os.Getenv("PATH")}
	huge := make([]byte, 5<<20)
	rand.Read(huge)
	for _, tc := range []struct {
		name  string
		env   []string
		args  []string
		stdin []byte
		wakes bool
	}{
		{"garbage", inPane, nil, []byte("\x00\xff{{{\"\n$(rm -rf /)`id`"), true},
		{"5 MiB", inPane, nil, huge, true},
		{"codex notify", inPane, []string{`{"type":"agent-turn-complete","cwd":"/etc/passwd"}`}, nil, true},
		{"flags it does not know", inPane, []string{"--bogus", "-x"}, []byte("{}"), true},
		{"no pane", []string{"OMEGA_MONITOR_HOME=" + w.home}, nil, []byte("{}"), false},
		{"another server", []string{"TMUX=/elsewhere/s,1,0", "TMUX_PANE=" + w.agent, "OMEGA_MONITOR_HOME=" + w.home}, nil, []byte("{}"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			time.Sleep(time.Second)
			before := w.polls()
			cmd := exec.Command(w.bin, append([]string{"wake"}, tc.args...)...)
			cmd.Env = tc.env
			cmd.Stdin = bytes.NewReader(tc.stdin)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			if err != nil || out.Len() != 0 {
				t.Errorf("wake: %v, said %q; want exit 0 and nothing", err, out.String())
			}
			if tc.wakes {
				w.r.waitLines(before+1, 10*time.Second)
				return
			}
			time.Sleep(3 * time.Second)
			if got := w.polls(); got != before {
				t.Errorf("%d polls, want none", got-before)
			}
		})
	}
}

// TestWakeCPU measures wake as the hook runs it, a whole process, against
// version, alternating, with a watcher of the pane in the home and twenty
// records of other watchers beside it: the CPU each uses (user and system)
// and the wall time.
func TestWakeCPU(t *testing.T) {
	w := newHookWorld(t)
	for i := range 20 {
		dir := filepath.Join(w.home, fmt.Sprintf("monitor-x%d", i))
		os.Mkdir(dir, 0o700)
		os.WriteFile(filepath.Join(dir, "loop.json"), []byte(`{"pid":1,"start_token":"x","socket":"/elsewhere","settings":{"pane":"%99"}}`), 0o600)
	}
	socket := strings.TrimSpace(w.s.Run(t, "display-message", "-p", "#{socket_path}"))
	// Another pane of the same server: the whole search, and no signal,
	// so that the loop is not kept busy by the measure.
	env := []string{"TMUX=" + socket + ",1,0", "TMUX_PANE=" + w.other, "OMEGA_MONITOR_HOME=" + w.home}
	const n = 100
	var cpu, wall [2]time.Duration
	for i := range 2 * n {
		which := i % 2
		args := []string{"version"}
		if which == 1 {
			args = []string{"wake"}
		}
		cmd := exec.Command(w.bin, args...)
		cmd.Env = env
		cmd.Stdin = strings.NewReader(`{"hook_event_name":"Stop"}`)
		start := time.Now()
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
		wall[which] += time.Since(start)
		u := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		cpu[which] += time.Duration(u.Utime.Nano() + u.Stime.Nano())
	}
	t.Logf("per run over %d runs each, alternating: version cpu %.2fms wall %.2fms; wake cpu %.2fms wall %.2fms",
		n, ms(cpu[0]/n), ms(wall[0]/n), ms(cpu[1]/n), ms(wall[1]/n))
	if cpu[1]/n > cpu[0]/n+2*time.Millisecond {
		t.Errorf("wake costs %v of CPU a run, version %v: more than 2ms over a bare start", cpu[1]/n, cpu[0]/n)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// TestHeardHooksSlowTheNetInTheLoop: the demo agent runs a Stop hook at
// each turn's end, as Claude Code does. Once a stop is first seen on the
// look its hook brought, the loop looks at the running turn after the
// nudge every five intervals, not every interval; when the hook stops
// firing, the next stop is found by the net, the line says so, and the
// turn after it is looked at every interval again.
func TestHeardHooksSlowTheNetInTheLoop(t *testing.T) {
	s := testenv.Tmux(t)
	bin := omegaMonitor(t)
	home, off := t.TempDir(), filepath.Join(t.TempDir(), "hook-off")
	hook := "[ -e " + coord.ShellQuote(off) + " ] || echo '{\"hook_event_name\":\"Stop\"}' | OMEGA_MONITOR_HOME=" +
		coord.ShellQuote(home) + " " + coord.ShellQuote(bin) + " wake"
	startAgent(t, s, "agent", "AGENT_WORK=10", "AGENT_STOP_HOOK="+hook)
	pane := strings.TrimSpace(s.Run(t, "display-message", "-p", "-t", "agent", "#{pane_id}"))
	r := startLoop(t, loopOptions{target: "agent", home: home, flags: []string{
		"--mux", s.Mux, "--interval", "2", "--pane", pane, "--nudge-budget", "5", "--work-probe", "echo 5"}})

	working := func(lines []string) int {
		n := 0
		for _, l := range lines {
			if strings.Contains(l, " · WORKING · ") {
				n++
			}
		}
		return n
	}
	// next waits for a line holding want after line from, and says which.
	next := func(want string, from int) int {
		deadline := time.Now().Add(90 * time.Second)
		for {
			lines := r.waitLines(1, time.Minute)
			for i := from + 1; i < len(lines); i++ {
				if strings.Contains(lines[i], want) {
					return i
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("no line with %q after line %d:\n%s", want, from, strings.Join(lines, "\n"))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	heard := next("the agent's hooks are heard", -1)
	// The turn the first nudge started ends with its hook: the loop
	// looked at it once or twice (10 s at a 2 s interval: five times).
	second := next("a stop seen once since a wake", heard)
	lines := r.waitLines(second+1, time.Second)
	if n := working(lines[heard:second]); n > 2 {
		t.Errorf("a 10 s turn after a heard stop was looked at %d times, want at most 2:\n%s", n, strings.Join(lines[heard:second+1], "\n"))
	}
	if err := os.WriteFile(off, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// The next turn's end is found by the net, which nudges: the turn
	// after it runs 10 s at the interval's pace again.
	unheard := next("no hook announced", second)
	end := next(" · STALLED · ", unheard)
	lines = r.waitLines(end+1, time.Second)
	if n := working(lines[unheard:end]); n < 3 {
		t.Errorf("a 10 s turn after an unannounced stop was looked at %d times, want the interval's pace (4 or 5):\n%s", n, strings.Join(lines[unheard:end+1], "\n"))
	}
	r.stop()
}
