package main

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// The mux wakes' figures (issue 39 §4), a bench and not a test: nothing
// here asserts a time.
//
//		OMEGA_MUXWAKE_BENCH=1 go test ./cmd/omega-monitor -run TestMuxWakeFigures -v -timeout 2h
//
//	  - latency: an agent without hooks (muxAgentScript) asks a question
//	    after working a random 5 to 30 s; a watcher started for it at
//	    --interval 60, with --mux-wake as by default (auto), its budget
//	    whole: the first question of a quiet stretch; from the question
//	    drawn to its alert handed to the funnel, OMEGA_MUXWAKE_BENCH_EVENTS
//	    (20) times, a fresh watcher each (a budget spent by the ones before
//	    would leave the question to the interval's poll);
//	  - cpu: four watchers side by side, each on a tmux server of its own,
//	    for OMEGA_MUXWAKE_BENCH_MINUTES (10) from their start (the first
//	    wakes, which spend the budget, counted): an agent drawing a spinner
//	    without end, and an idle one, each watched with --mux-wake 2 and
//	    without, at --interval 60. The CPU of the loop and all its children
//	    (the listener and its tmux clients too), per agent-hour: from a
//	    cpuacct group of its own where the machine lets the test make one
//	    (to the nanosecond), its parts from /proc (in clock ticks); the
//	    tmux server's apart, from its schedstat.
//
// OMEGA_MUXWAKE_BENCH_PARTS (latency,cpu) says which parts run, and
// OMEGA_MUXWAKE_BENCH_MODES which agents cpu runs, side by side
// (muxAgentScript's modes: spin, idle, burst, redraw), at
// OMEGA_MUXWAKE_BENCH_INTERVAL (60) seconds; remote, the latency of a
// target on an ssh host (sshd on 127.0.0.1, tmux only there), and burst,
// the same as cpu for an agent that works 1 s and stops for 2 to 5 s
// again and again (each stop a quiet spell: the budget's worst case), run
// only when named (burst with cpu too: the three side by side). A budget
// is an hour's, so a row means most over 60 minutes. Each run with the
// wakes says how many multiplexer calls its listener made (its waits
// apart), from its log once it is stopped. Each run says its readings and
// the alerts it sent: what a poll costs depends on what it reads (a stop
// after a work is told again), so two runs compare only where those are
// alike; the redraw agent's screen is the same at every look.
func TestMuxWakeFigures(t *testing.T) {
	if os.Getenv("OMEGA_MUXWAKE_BENCH") == "" {
		t.Skip("the mux wakes' figures, a bench of about 20 minutes: OMEGA_MUXWAKE_BENCH=1")
	}
	parts := os.Getenv("OMEGA_MUXWAKE_BENCH_PARTS")
	if parts == "" {
		parts = "latency,cpu"
	}
	on := func(p string) bool { return slices.Contains(strings.Split(parts, ","), p) }
	figure(t, "mux wakes bench: load average at start %s, %d CPUs", loadAverage(), numCPU())
	if on("latency") {
		t.Run("latency", func(t *testing.T) { benchMuxLatency(t, benchEnvInt(t, "OMEGA_MUXWAKE_BENCH_EVENTS", 20), false) })
	}
	if on("remote") {
		t.Run("remote", func(t *testing.T) { benchMuxLatency(t, benchEnvInt(t, "OMEGA_MUXWAKE_BENCH_EVENTS", 20), true) })
	}
	switch minutes := benchEnvInt(t, "OMEGA_MUXWAKE_BENCH_MINUTES", 10); {
	case os.Getenv("OMEGA_MUXWAKE_BENCH_MODES") != "": // the agents named, side by side
		t.Run("cpu", func(t *testing.T) {
			benchMuxCPU(t, minutes, strings.Split(os.Getenv("OMEGA_MUXWAKE_BENCH_MODES"), ",")...)
		})
	case on("cpu") && on("burst"): // the three side by side, under the same load
		t.Run("cpu", func(t *testing.T) { benchMuxCPU(t, minutes, "spin", "idle", "burst") })
	case on("cpu"):
		t.Run("cpu", func(t *testing.T) { benchMuxCPU(t, minutes, "spin", "idle") })
	case on("burst"):
		t.Run("burst", func(t *testing.T) { benchMuxCPU(t, minutes, "burst") })
	}
}

func numCPU() int {
	data, _ := os.ReadFile("/proc/cpuinfo")
	return strings.Count(string(data), "\nprocessor") + 1
}

func benchMuxLatency(t *testing.T, n int, remote bool) {
	s := testenv.Tmux(t)
	pane, asked := startMuxAgent(t, s, "agent", "AGENT_WORK_MIN=5", "AGENT_WORK_MAX=30")
	target, flags, where := "agent", []string{"--mux", s.Mux}, ""
	if remote {
		target, flags, where = "box:agent", []string{"--ssh-config", muxHost(t, s, "")}, " on an ssh host (tmux only)"
	}
	flags = append(flags, "--interval", "60", "--pane", pane, "--mux-wake", "auto")
	waitAsked(t, asked, 1)
	var lat []time.Duration
	for i := 2; i <= n+1; i++ {
		r := startLoop(t, loopOptions{target: target, flags: flags})
		r.waitLines(1, 60*time.Second)
		s.Run(t, "send-keys", "-t", pane, "3") // the last question answered: the next turn
		for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
			if _, err := os.Stat(asked + "." + strconv.Itoa(i)); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("question %d never asked", i)
			}
		}
		drawn := askedAt(t, asked, i)
		mark := "build-" + strconv.Itoa(i) + "/"
		for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
			if slices.ContainsFunc(r.alertsNow(), func(a string) bool { return strings.Contains(a, mark) }) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("question %d never paged", i)
			}
		}
		d := time.Since(drawn)
		lat = append(lat, d)
		figure(t, "latency: question %d drawn → paged %.1fs", i-1, d.Seconds())
		r.stop()
		// Its listener puts the options back after the loop's end: the
		// next watcher arms once it has, not before (two watchers of one
		// window at once would undo each other's).
		waitUnmarked(t, "wake --mux --state "+r.state, 60*time.Second)
	}
	slices.Sort(lat)
	figure(t, "latency without the agent's hooks%s, --interval 60, --mux-wake auto, %d events: median %.1fs, min %.1fs, max %.1fs",
		where, len(lat), median(lat).Seconds(), lat[0].Seconds(), lat[len(lat)-1].Seconds())
}

func median(d []time.Duration) time.Duration {
	if len(d)%2 == 1 {
		return d[len(d)/2]
	}
	return (d[len(d)/2-1] + d[len(d)/2]) / 2
}

// procCPU is the CPU a process and its reaped children used, in seconds,
// from /proc (clock ticks of 1/100 s).
func procCPU(pid int, children bool) float64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	// Fields from the state on: utime is the 12th after it, then stime,
	// cutime, cstime.
	sum := 0.0
	n := 2
	if children {
		n = 4
	}
	for _, v := range f[11 : 11+n] {
		x, _ := strconv.ParseFloat(v, 64)
		sum += x
	}
	return sum / 100
}

type cpuRun struct {
	name   string
	r      *loopRun
	s      *testenv.TmuxServer
	server int
	group  string  // the loop's cpuacct group, where there is one (cpuGroup)
	loop   float64 // the loop and its children, seconds
	srv    float64 // the tmux server
	polls  int
	// The same from the end of the first settle, the listener's start
	// and arming left out: once a watcher, not a cost of the hour.
	loopLater, srvLater float64
	pollsLater          int
	partsLater          map[string]float64 // by part: loop, reaped, judge, listener, other
}

// sample reads the CPU of the loop and every process under it, the judge
// and the listener live (a live child's CPU is not yet its parent's), and
// of the tmux server. Where the loop has a cpuacct group, its whole is the
// group's, in nanoseconds: what /proc's ticks left out is a part of its own.
func (c *cpuRun) sample(t *testing.T) (parts map[string]float64, srv float64, polls int) {
	parts, srv = procTree(c.r.cmd.Process.Pid), procCPU(c.server, false)
	if ns, err := readNumber(filepath.Join(c.group, "cpuacct.usage")); c.group != "" && err == nil {
		parts["rounding"] = ns/1e9 - sum(parts) // what the ticks of /proc left out
	}
	if ns, err := readNumber(fmt.Sprintf("/proc/%d/schedstat", c.server)); err == nil {
		srv = ns / 1e9
	}
	return parts, srv, len(c.r.waitLines(0, time.Second))
}

// readNumber reads the first number of a file.
func readNumber(name string) (float64, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return 0, fmt.Errorf("%s: empty", name)
	}
	return strconv.ParseFloat(f[0], 64)
}

// cpuGroup makes a cpuacct group (cgroup v1) for run n, removed at the
// test's end, where this machine lets the test make one: the CPU of
// every process the loop ever started, to the nanosecond, where /proc
// counts in clock ticks, each truncated. "" where it cannot.
func cpuGroup(t *testing.T, n int) string {
	dir := fmt.Sprintf("/sys/fs/cgroup/cpuacct/omega-monitor-bench-%d-%d", os.Getpid(), n)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return ""
	}
	t.Cleanup(func() {
		// Its processes are gone once the loops are stopped.
		for deadline := time.Now().Add(10 * time.Second); os.Remove(dir) != nil && time.Now().Before(deadline); {
			time.Sleep(100 * time.Millisecond)
		}
	})
	return dir
}

// readings counts a loop's lines by their reading, as "STALLED 12,
// WORKING 40".
func readings(lines []string) string {
	n := map[string]int{}
	for _, l := range lines {
		if f := strings.Split(l, " · "); len(f) > 2 {
			n[f[2]]++
		}
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(n)) {
		out = append(out, fmt.Sprintf("%s %d", k, n[k]))
	}
	return strings.Join(out, ", ")
}

func sum(parts map[string]float64) float64 {
	var s float64
	for _, v := range parts {
		s += v
	}
	return s
}

// procTree is the CPU of a process and all its descendants, live and
// reaped, in seconds by part: the loop itself with what it reaped, and each
// live descendant named by its part (judge, listener, other). A live
// process's children are counted with it, so nothing is counted twice.
func procTree(root int) map[string]float64 {
	parent := map[int]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(data)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		parent[pid], _ = strconv.Atoi(f[1])
	}
	part := func(pid int) string {
		if pid == root {
			return "loop"
		}
		args, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		switch a := strings.ReplaceAll(string(args), "\x00", " "); {
		case strings.Contains(a, " judge --binary"):
			return "judge"
		case strings.Contains(a, " wake --mux"):
			return "listener"
		}
		return "other"
	}
	cpu := map[string]float64{}
	var walk func(pid int, name string)
	walk = func(pid int, name string) {
		if pid == root {
			// The loop's shell apart from the calls it reaped.
			cpu["loop"] += procCPU(pid, false)
			cpu["reaped"] += procCPU(pid, true) - procCPU(pid, false)
		} else {
			cpu[name] += procCPU(pid, true) // its own and what it reaped
		}
		for child, p := range parent {
			if p != pid {
				continue
			}
			n := name
			if n == "loop" {
				n = part(child)
			}
			walk(child, n)
		}
	}
	walk(root, "loop")
	return cpu
}

// benchSettle is how long after its start a watcher's CPU is counted
// again, apart: its start and the listener's arming left out.
const benchSettle = 30 * time.Second

func benchMuxCPU(t *testing.T, minutes int, modes ...string) {
	var runs []*cpuRun
	for _, mode := range modes {
		for _, mux := range []bool{false, true} {
			s := testenv.Tmux(t)
			pane, _ := startMuxAgent(t, s, "agent", "AGENT_MODE="+mode)
			// Never nudged: each stop is told once, and the loop's own
			// work is the same with the wakes and without.
			flags := []string{"--mux", s.Mux, "--interval", strconv.Itoa(benchEnvInt(t, "OMEGA_MUXWAKE_BENCH_INTERVAL", 60)), "--pane", pane, "--nudge-budget", "0"}
			name := mode + ", polls only"
			if mux {
				flags = append(flags, "--mux-wake", "2")
				name = mode + ", --mux-wake 2"
			}
			home := t.TempDir()
			group := cpuGroup(t, len(runs))
			var prefix []string
			if group != "" {
				prefix = []string{"sh", "-c", `echo $$ >"$0" && exec "$@"`, filepath.Join(group, "cgroup.procs")}
			}
			r := startLoop(t, loopOptions{target: "agent", flags: flags, home: home, prefix: prefix})
			server, _ := strconv.Atoi(strings.TrimSpace(s.Run(t, "display-message", "-p", "#{pid}")))
			runs = append(runs, &cpuRun{name: name, r: r, s: s, server: server, group: group})
		}
	}
	// From the start: the first wakes, which spend the budget, count.
	var wg sync.WaitGroup
	for _, c := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l0, s0, p0 := c.sample(t)
			end := time.Now().Add(time.Duration(minutes) * time.Minute)
			c.r.waitLines(1, 60*time.Second)
			time.Sleep(time.Until(end.Add(-time.Duration(minutes)*time.Minute + benchSettle)))
			lm, sm, pm := c.sample(t)
			time.Sleep(time.Until(end))
			l1, s1, p1 := c.sample(t)
			c.loop, c.srv, c.polls = sum(l1)-sum(l0), s1-s0, p1-p0
			c.loopLater, c.srvLater, c.pollsLater = sum(l1)-sum(lm), s1-sm, p1-pm
			c.partsLater = map[string]float64{}
			for k, v := range l1 {
				c.partsLater[k] = v - lm[k]
			}
		}()
	}
	wg.Wait()
	for _, c := range runs {
		c.r.stop()
	}
	per := 60 / float64(minutes)
	later := 60 / (float64(minutes) - benchSettle.Minutes())
	for i, c := range runs {
		figure(t, "cpu: %-22s from the start: %d polls in %d min; the loop and its children %.2f s per agent-hour, the tmux server %.2f s",
			c.name, c.polls, minutes, c.loop*per, c.srv*per)
		figure(t, "cpu: %-22s after %v: %d polls; the loop and its children %.2f s per agent-hour, the tmux server %.2f s",
			c.name, benchSettle, c.pollsLater, c.loopLater*later, c.srvLater*later)
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(c.partsLater)) {
			parts = append(parts, fmt.Sprintf("%s %.2f s", k, c.partsLater[k]*later))
		}
		figure(t, "cpu: %-22s after %v, by part per agent-hour: %s", c.name, benchSettle, strings.Join(parts, ", "))
		figure(t, "cpu: %-22s readings: %s; alerts sent: %d", c.name, readings(c.r.waitLines(0, time.Second)), len(c.r.alertsNow()))
		if i%2 == 1 {
			var log []byte
			for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
				if log, _ = os.ReadFile(filepath.Join(c.r.state, "watcher.log")); strings.Contains(string(log), "multiplexer calls") {
					break
				}
			}
			if m := regexp.MustCompile(`\((\d+) multiplexer calls`).FindSubmatch(log); m != nil {
				figure(t, "cpu: %-22s the listener's multiplexer calls in %d min, its waits apart: %s", c.name, minutes, m[1])
			}
			base := runs[i-1]
			figure(t, "cpu: %s: with the mux wakes ×%.2f the loop's without from the start, ×%.2f after %v (the server's ×%.2f, ×%.2f)",
				strings.Split(c.name, ",")[0], c.loop/base.loop, c.loopLater/base.loopLater, benchSettle,
				c.srv/max(base.srv, 0.01), c.srvLater/max(base.srvLater, 0.01))
		}
	}
}
