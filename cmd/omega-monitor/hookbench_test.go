package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
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

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/claudecode"
	"github.com/omega-monitor/omega-monitor/internal/codex"
	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
	"github.com/omega-monitor/omega-monitor/probe"
)

// The hooks' figures (issue 25), a bench and not a test: nothing here
// asserts a time. scripts/bench-hooks.sh runs it and prints its FIGURE
// lines:
//
//	OMEGA_HOOK_BENCH=1 go test ./cmd/omega-monitor -run TestHookFigures -v -timeout 3h
//
// With the real Claude Code and Codex against the fake APIs, each watched
// by the real loop at --interval 60 with our hooks installed (Codex's
// trusted, as its review asks at start):
//   - a permission dialog drawn (the screen sampled every 100 ms) → its
//     alert handed to the funnel, which the poll that queued it in the
//     outbox delivers;
//   - a turn ending with work left (the work probe says 3) → the nudge's
//     text at the model (the fake API's receipt, which follows the Enter);
//   - the same for Claude Code without hooks, at --interval 10 (the poll's
//     net: every event caught within the interval);
//   - CPU per agent-hour of the loop and its children at --interval 60, with
//     hooks and without, over the same scripted activity, side by side.
//
// OMEGA_HOOK_BENCH_EVENTS (20) is the events of each figure;
// OMEGA_HOOK_BENCH_CPU_MINUTES (10) the length of the CPU run, and
// OMEGA_HOOK_BENCH_CPU_CYCLE (1) the minutes of each of its cycles;
// OMEGA_HOOK_BENCH_PARTS (dialogs,dialogs-nohooks,nudges,nudges-nohooks,cpu)
// which parts run.

// benchAgent is one real agent as the bench drives it.
type benchAgent struct {
	name, version string
	newAPI        func(t *testing.T, rules ...fakeapi.Rule) *fakeapi.Server
	// dialogRule makes the fake API ask to run command when a prompt
	// holds match, in a way the agent asks the human about.
	dialogRule func(match, command string) fakeapi.Rule
	// dialog is what the screen shows while the dialog is up.
	dialog string
	// start starts the agent, with our hooks installed in its HOME or
	// not; then, when set, prepare runs on that HOME before the agent.
	start func(t *testing.T, bin, home string, api *fakeapi.Server, hooks bool, prepare func(agentHome string)) *benchSession
}

// benchSession is a running agent's pane.
type benchSession struct {
	target, pane, mux string
	typeText          func(string)
	keys              func(...string)
	capture           func() string
	// home is the agent's HOME, where its hooks are installed.
	home string
}

var benchAgents = []benchAgent{
	{
		name: "claude", version: "Claude Code " + claudecode.Version,
		newAPI: func(t *testing.T, rules ...fakeapi.Rule) *fakeapi.Server {
			return fakeapi.New(t, append(rules, fakeapi.DefaultRules()...)...)
		},
		dialogRule: func(match, command string) fakeapi.Rule {
			return fakeapi.Rule{Match: match, Reply: fakeapi.Bash(command, "Leave a marker file")}
		},
		dialog: "Do you want to proceed?",
		start: func(t *testing.T, bin, home string, api *fakeapi.Server, hooks bool, prepare func(string)) *benchSession {
			cfg := claudecode.Config{Binary: claudecode.Binary(t), API: api.URL, Mode: claudecode.Manual,
				Prepare: func(agentHome string) error {
					if hooks {
						if err := installHooksIn(t, bin, "claude", home, "HOME="+agentHome); err != nil {
							return err
						}
					}
					if prepare != nil {
						prepare(agentHome)
					}
					return nil
				}}
			s := claudecode.Start(t, testenv.Tmux(t), cfg)
			return &benchSession{target: s.Name, pane: s.Pane, mux: s.Tmux.Mux, home: s.Home,
				typeText: func(text string) { s.Type(t, text) },
				keys:     func(keys ...string) { s.Keys(t, keys...) },
				capture:  func() string { return string(s.Capture(t)) }}
		},
	},
	{
		name: "codex", version: "Codex " + codex.Version,
		newAPI: func(t *testing.T, rules ...fakeapi.Rule) *fakeapi.Server {
			return fakeapi.NewResponses(t, append(rules, fakeapi.DefaultRules()...)...)
		},
		dialogRule: codexApproval,
		dialog:     "Would you like to run the following command?",
		start: func(t *testing.T, bin, home string, api *fakeapi.Server, hooks bool, _ func(string)) *benchSession {
			var s interface {
				Type(testing.TB, string)
				Keys(testing.TB, ...string)
				Capture(testing.TB) string
			}
			var target, pane, mux, agentHome string
			if hooks {
				cs := startCodexWithHooks(t, bin, home, api, true)
				s, target, pane, mux, agentHome = cs, cs.Launch.Name, cs.Pane, cs.Tmux.Mux, cs.Launch.Home
			} else {
				cs := codex.Start(t, testenv.Tmux(t), codex.Config{Binary: codex.Pin.Binary(t), API: api.URL})
				cs.WaitFor(t, realTimeout, "the composer", codex.Idle)
				s, target, pane, mux, agentHome = cs, cs.Launch.Name, cs.Pane, cs.Tmux.Mux, cs.Launch.Home
			}
			return &benchSession{target: target, pane: pane, mux: mux, home: agentHome,
				typeText: func(text string) { s.Type(t, text) },
				keys:     func(keys ...string) { s.Keys(t, keys...) },
				capture:  func() string { return s.Capture(t) }}
		},
	},
}

func TestHookFigures(t *testing.T) {
	if os.Getenv("OMEGA_HOOK_BENCH") == "" {
		t.Skip("the hooks' figures, a bench of about an hour: OMEGA_HOOK_BENCH=1 (scripts/bench-hooks.sh)")
	}
	n := benchEnvInt(t, "OMEGA_HOOK_BENCH_EVENTS", 20)
	cpuMinutes := benchEnvInt(t, "OMEGA_HOOK_BENCH_CPU_MINUTES", 10)
	cpuCycle := benchEnvInt(t, "OMEGA_HOOK_BENCH_CPU_CYCLE", 1)
	parts := os.Getenv("OMEGA_HOOK_BENCH_PARTS")
	if parts == "" {
		parts = "dialogs,dialogs-nohooks,nudges,nudges-nohooks,cpu"
	}
	bin := omegaMonitor(t)
	claudecode.Binary(t)
	codex.Pin.Binary(t)
	figure(t, "hooks bench: %s and %s against the fake APIs, %d events a figure, the loop at --interval 60 unless said; load average at start %s",
		benchAgents[0].version, benchAgents[1].version, n, loadAverage())
	claude, cdx := benchAgents[0], benchAgents[1]
	on := func(part string) bool { return slices.Contains(strings.Split(parts, ","), part) }
	if on("dialogs") {
		t.Run("dialogs", func(t *testing.T) {
			for _, a := range []benchAgent{claude, cdx} {
				benchDialogs(t, bin, a, true, "", 60, n)
			}
		})
	}
	if on("dialogs-nohooks") {
		t.Run("dialogs-nohooks", func(t *testing.T) { benchDialogs(t, bin, claude, false, "", 10, n) })
	}
	// The chains wait a minute an event, mostly idle: side by side.
	for _, part := range []string{"nudges", "nudges-nohooks"} {
		if !on(part) {
			continue
		}
		t.Run(part, func(t *testing.T) {
			for _, c := range []struct {
				a        benchAgent
				hooks    bool
				interval int
			}{{claude, true, 60}, {cdx, true, 60}, {claude, false, 10}} {
				if c.hooks != (part == "nudges") {
					continue
				}
				t.Run(c.a.name, func(t *testing.T) {
					t.Parallel()
					benchNudges(t, bin, c.a, c.hooks, c.interval, n)
				})
			}
		})
	}
	if on("cpu") {
		t.Run("cpu", func(t *testing.T) {
			benchCPU(t, bin, claude, time.Duration(cpuMinutes)*time.Minute, time.Duration(cpuCycle)*time.Minute)
		})
	}
	figure(t, "load average at the end %s", loadAverage())
}

// benchDialogs: n permission dialogs, each a command of its own (so that
// each is a question of its own, paged once), drawn → paged; each refused
// (Esc) once paged. Without hooks, the first poll that saw it is said too.
// drop names an event whose hook of ours is taken out (Claude Code).
func benchDialogs(t *testing.T, bin string, a benchAgent, hooks bool, drop string, interval, n int) {
	t.Helper()
	var rules []fakeapi.Rule
	for i := 1; i <= n; i++ {
		rules = append(rules, a.dialogRule(fmt.Sprintf("bench dialog %02d", i), fmt.Sprintf("touch omega-bench-%02d", i)))
	}
	api := a.newAPI(t, rules...)
	home := t.TempDir()
	var prepare func(string)
	if drop != "" {
		prepare = func(agentHome string) { dropHook(t, filepath.Join(agentHome, ".claude", "settings.json"), drop) }
	}
	s := a.start(t, bin, home, api, hooks, prepare)
	r := startLoop(t, loopOptions{target: s.target, home: home, flags: []string{
		"--mux", s.mux, "--interval", strconv.Itoa(interval), "--pane", s.pane, "--work-probe", "echo 3", "--nudge-budget", "0"}})
	lw := watchLines(t, r)
	r.waitLines(1, realTimeout)
	time.Sleep(3 * time.Second)
	var paged, seen []time.Duration
	for i := 1; i <= n; i++ {
		// Each event at a moment of its own in the loop's pause: the
		// events would otherwise keep one phase with the polls, each
		// starting a fixed time after the last page.
		jitter := 5 * time.Second
		if !hooks {
			jitter = time.Duration(interval) * time.Second
		}
		time.Sleep(rand.N(jitter))
		questions := countQuestions(r.alerts())
		from := lw.count()
		s.typeText(fmt.Sprintf("bench dialog %02d", i))
		mark := fmt.Sprintf("omega-bench-%02d", i)
		drawn := sampleUntil(t, s.capture, "dialog "+mark, func(screen string) bool {
			return strings.Contains(screen, a.dialog) && strings.Contains(screen, mark)
		})
		at := benchWait(t, time.Duration(interval+30)*time.Second, "the page of dialog "+mark, func() bool {
			return countQuestions(r.alerts()) > questions
		})
		paged = append(paged, at.Sub(drawn))
		if l, ok := lw.first(from, " · QUESTION · "); ok {
			seen = append(seen, l.Sub(drawn))
		}
		s.keys("Escape")
		sampleUntil(t, s.capture, "the dialog refused", func(screen string) bool { return !strings.Contains(screen, a.dialog) })
		// Past the looks after a wake, and past the second look 2 s
		// after a dialog: the next event meets a loop at its interval.
		time.Sleep(5 * time.Second)
	}
	how := "hooks"
	if drop != "" {
		how += " but " + drop
	}
	if !hooks {
		how = "no hooks"
		figure(t, "%s, %s, --interval %d: dialog drawn → the first poll that saw it: %s; all within the interval: %v",
			a.name, how, interval, spread(seen), len(seen) == n && slices.Max(seen) <= time.Duration(interval)*time.Second)
	}
	figure(t, "%s, %s, --interval %d: dialog drawn → its alert to the funnel: %s", a.name, how, interval, spread(paged))
}

// benchNudges: a chain of turns, each ending with work left: the nudge
// asks for a slow answer that lasts longer than the interval (no nudge is
// typed within an interval of the last), whose end is the next event. The
// loop's first nudge, at its start, begins the chain. Without hooks, the
// chain keeps one phase with the polls: each end comes just after a poll,
// and waits nearly the whole interval for the next (the worst case).
func benchNudges(t *testing.T, bin string, a benchAgent, hooks bool, interval, n int) {
	t.Helper()
	slow := time.Duration(interval+1) * time.Second
	const nudge = "bench: keep going slowly"
	last := fmt.Sprintf("step%d.", int(slow/time.Second))
	api := a.newAPI(t, fakeapi.Rule{Match: "keep going slowly", Reply: fakeapi.Slow(slow)})
	home := t.TempDir()
	s := a.start(t, bin, home, api, hooks, nil)
	r := startLoop(t, loopOptions{target: s.target, home: home, flags: []string{
		"--mux", s.mux, "--interval", strconv.Itoa(interval), "--pane", s.pane, "--work-probe", "echo 3",
		"--nudge-budget", "100", "--nudge-text", nudge}})
	lw := watchLines(t, r)
	opt := classify.Options{Work: classify.WorkReading(probe.Read("3", true)), WorkPresent: true}
	var lat, polled []time.Duration
	sent := nudgeAt(t, api, nudge, 1, realTimeout)
	for k := 1; k <= n; k++ {
		from := lw.count()
		// The answer streams for slow: look from a little before its end.
		time.Sleep(time.Until(sent.Add(slow - 3*time.Second)))
		ended := sampleUntil(t, s.capture, fmt.Sprintf("the end of turn %d", k), func(screen string) bool {
			return strings.Contains(screen, last) &&
				classify.Classify(classify.ParseScreen([]byte(screen)), opt).State == classify.Stalled
		})
		sent = nudgeAt(t, api, nudge, k+1, time.Duration(interval+30)*time.Second)
		lat = append(lat, sent.Sub(ended))
		if l, ok := lw.first(from, " · nudged ("); ok {
			polled = append(polled, l.Sub(ended))
		}
	}
	how := "hooks"
	if !hooks {
		how = "no hooks"
	}
	figure(t, "%s, %s, --interval %d: a turn's end with work left → the poll that nudged: %s; all within the interval: %v",
		a.name, how, interval, spread(polled), len(polled) == n && slices.Max(polled) <= time.Duration(interval)*time.Second)
	figure(t, "%s, %s, --interval %d: a turn's end with work left → the nudge's text at the model: %s", a.name, how, interval, spread(lat))
}

// nudgeAt waits for the k-th request carrying the nudge and returns when
// the fake API received it.
func nudgeAt(t *testing.T, api *fakeapi.Server, nudge string, k int, within time.Duration) time.Time {
	t.Helper()
	var at time.Time
	benchWait(t, within, fmt.Sprintf("nudge %d at the model", k), func() bool {
		seen := 0
		for _, r := range api.Requests() {
			if r.HasText && r.Tools > 0 && r.Text == nudge {
				if seen++; seen == k {
					at = r.Time
					return true
				}
			}
		}
		return false
	})
	return at
}

// benchCPU: Claude Codes side by side, one with our hooks, one without,
// each watched by a loop at --interval 60 (budget 0: the loops
// never type, so the sessions live the same turns), driven through the same
// cycles: a prompt whose answer streams until 40 s before the cycle's end
// (20 s in a one-minute cycle), then a permission dialog, refused 10 s
// later. The CPU of each loop's process group (the loop, and its children
// once done) is read from /proc at the end; the hooks' own cost is their
// wakes, counted by a wrapper, times the CPU of one wake measured here.
func benchCPU(t *testing.T, bin string, a benchAgent, length, cycle time.Duration) {
	t.Helper()
	var rules []fakeapi.Rule
	cycles := int(length / cycle)
	for i := 1; i <= cycles; i++ {
		rules = append(rules, a.dialogRule(fmt.Sprintf("bench dialog %02d", i), fmt.Sprintf("touch omega-bench-%02d", i)))
	}
	rules = append(rules, fakeapi.Rule{Match: "bench work", Reply: fakeapi.Slow(cycle - 40*time.Second)})
	type side struct {
		name  string
		hooks bool
		s     *benchSession
		r     *loopRun
		count string // the wrapper's count of wakes
	}
	sides := []*side{{name: "hooks", hooks: true}, {name: "no hooks"}}
	for _, sd := range sides {
		api := a.newAPI(t, rules...)
		home := t.TempDir()
		var prepare func(string)
		if sd.hooks {
			dir := t.TempDir()
			sd.count = filepath.Join(dir, "wakes")
			prepare = func(agentHome string) {
				countWakes(t, filepath.Join(agentHome, ".claude", "settings.json"), bin, dir, sd.count)
			}
		}
		sd.s = a.start(t, bin, home, api, sd.hooks, prepare)
		sd.r = startLoop(t, loopOptions{target: sd.s.target, home: home, flags: []string{
			"--mux", sd.s.mux, "--interval", "60", "--pane", sd.s.pane, "--work-probe", "echo 3", "--nudge-budget", "0"}})
	}
	wake := wakeCost(t, bin)
	start := time.Now()
	each := func(f func(*side)) {
		for _, sd := range sides {
			f(sd)
		}
	}
	for c := 1; c <= cycles; c++ {
		at := start.Add(time.Duration(c-1) * cycle)
		time.Sleep(time.Until(at))
		each(func(sd *side) { sd.s.typeText("bench work " + strconv.Itoa(c)) })
		time.Sleep(time.Until(at.Add(cycle - 30*time.Second)))
		each(func(sd *side) { sd.s.typeText(fmt.Sprintf("bench dialog %02d", c)) })
		time.Sleep(time.Until(at.Add(cycle - 20*time.Second)))
		each(func(sd *side) { sd.s.keys("Escape") })
	}
	time.Sleep(time.Until(start.Add(time.Duration(cycles) * cycle)))
	hour := float64(time.Hour) / float64(time.Since(start))
	var said []string
	var base float64
	for i := len(sides) - 1; i >= 0; i-- {
		sd := sides[i]
		loop := float64(groupCPU(t, sd.r.cmd.Process.Pid)) * hour
		polls := len(sd.r.waitLines(1, time.Second))
		text := fmt.Sprintf("%s %.1f s (%d polls", sd.name, loop/1e9, polls)
		if sd.hooks {
			b, _ := os.ReadFile(sd.count)
			wakes := strings.Count(string(b), "\n")
			hooks := float64(wakes) * hour * float64(wake)
			text += fmt.Sprintf(", and %d wakes × %.2f ms: %.1f s", wakes, ms(wake), hooks/1e9)
			loop += hooks
			text += fmt.Sprintf("; ×%.2f", loop/base)
		} else {
			base = loop
		}
		said = append([]string{text + ")"}, said...)
	}
	figure(t, "cpu per agent-hour, loop and children, --interval 60, %d cycles of %s (a %s turn, a dialog refused after 10 s), side by side: %s (goal ≤ ×1.10)",
		cycles, cycle, cycle-40*time.Second, strings.Join(said, "; "))
}

// dropHook takes the hooks of event out of a Claude Code settings file.
func dropHook(t *testing.T, settings, event string) {
	t.Helper()
	b, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	hooks, _ := m["hooks"].(map[string]any)
	if _, ok := hooks[event]; !ok {
		t.Fatalf("no %s hook in %s", event, settings)
	}
	delete(hooks, event)
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// countWakes points our hooks in a Claude Code settings file at a wrapper
// named omega-monitor that counts each run in count, then runs the binary.
func countWakes(t *testing.T, settings, bin, dir, count string) {
	t.Helper()
	wrapper := filepath.Join(dir, "omega-monitor")
	script := "#!/bin/sh\necho >>'" + count + "'\nexec '" + bin + "' \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	out := strings.ReplaceAll(string(b), "'"+bin+"' wake", "'"+wrapper+"' wake")
	if out == string(b) {
		t.Fatalf("no hook of ours in %s", settings)
	}
	if err := os.WriteFile(settings, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
}

// wakeCost is the CPU of one wake as a hook runs it (a whole process, a
// payload on standard input), for a pane nobody watches, so that no loop
// is woken by the measure: the median of 50 runs.
func wakeCost(t *testing.T, bin string) time.Duration {
	t.Helper()
	home := t.TempDir()
	var runs []time.Duration
	for range 50 {
		cmd := exec.Command(bin, "wake")
		cmd.Env = []string{"TMUX=/nowhere,1,0", "TMUX_PANE=%999", "OMEGA_MONITOR_HOME=" + home}
		cmd.Stdin = strings.NewReader(`{"hook_event_name":"Stop"}`)
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
		u := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		runs = append(runs, time.Duration(u.Utime.Nano()+u.Stime.Nano()))
	}
	slices.Sort(runs)
	return runs[len(runs)/2]
}

// groupCPU is the CPU the processes of a process group used: their own,
// and that of their children they waited for (/proc, in clock ticks of
// 10 ms).
func groupCPU(t *testing.T, pgid int) time.Duration {
	t.Helper()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var ticks int64
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		// After the name: state ppid pgrp session tty tpgid flags minflt
		// cminflt majflt cmajflt utime stime cutime cstime.
		if len(f) < 15 || f[2] != strconv.Itoa(pgid) {
			continue
		}
		for _, x := range f[11:15] {
			v, _ := strconv.ParseInt(x, 10, 64)
			ticks += v
		}
	}
	if ticks == 0 {
		t.Fatalf("no CPU read for the process group %d", pgid)
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

// lineWatch records when each of a loop's lines arrived.
type lineWatch struct {
	mu    sync.Mutex
	lines []string
	at    []time.Time
}

func watchLines(t *testing.T, r *loopRun) *lineWatch {
	w := &lineWatch{}
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
			r.mu.Lock()
			lines := append([]string(nil), r.lines...)
			r.mu.Unlock()
			w.mu.Lock()
			for _, l := range lines[len(w.lines):] {
				w.lines = append(w.lines, l)
				w.at = append(w.at, time.Now())
			}
			w.mu.Unlock()
		}
	}()
	return w
}

func (w *lineWatch) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.lines)
}

// first is when the first line from index from holding sub arrived.
func (w *lineWatch) first(from int, sub string) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := from; i < len(w.lines); i++ {
		if strings.Contains(w.lines[i], sub) {
			return w.at[i], true
		}
	}
	return time.Time{}, false
}

func countQuestions(alerts []string) int {
	n := 0
	for _, a := range alerts {
		if strings.Contains(a, "QUESTION") {
			n++
		}
	}
	return n
}

// sampleUntil captures every 100 ms until ok holds, and returns when it
// first did.
func sampleUntil(t *testing.T, capture func() string, what string, ok func(string) bool) time.Time {
	t.Helper()
	for deadline := time.Now().Add(realTimeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if ok(capture()) {
			return time.Now()
		}
	}
	t.Fatalf("%s never showed:\n%s", what, capture())
	return time.Time{}
}

// benchWait checks ok every 20 ms and returns when it first held.
func benchWait(t *testing.T, within time.Duration, what string, ok func() bool) time.Time {
	t.Helper()
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if ok() {
			return time.Now()
		}
	}
	t.Fatalf("%s: not within %v", what, within)
	return time.Time{}
}

// spread says a sample's median and worst, and how many.
func spread(d []time.Duration) string {
	if len(d) == 0 {
		return "no events"
	}
	s := slices.Clone(d)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return fmt.Sprintf("median %.1f s, worst %.1f s, best %.1f s (%d events)", med.Seconds(), s[len(s)-1].Seconds(), s[0].Seconds(), len(s))
}

// figure prints one figure line, which scripts/bench-hooks.sh keeps.
func figure(t *testing.T, format string, args ...any) {
	t.Helper()
	t.Logf("FIGURE "+format, args...)
}

func loadAverage() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func benchEnvInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a whole number above 0", name, v)
	}
	return n
}
