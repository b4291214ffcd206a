package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/icmd"
	"gotest.tools/v3/poll"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// muxAgentScript is an agent without hooks, drawing Claude Code's screens
// as the demo's agent does. AGENT_MODE=ask (the default) works under a
// spinner redrawn every 0.2 s for a time between AGENT_WORK_MIN and
// AGENT_WORK_MAX seconds (a random one each turn), then asks question N
// (its command names N), writes when it drew it to $AGENT_ASKED.N, and
// waits for a key, which starts the next turn. AGENT_MODE=spin works
// forever; idle draws the stopped screen once and waits; burst works 1 s
// and stops for 2 to 5 s (a random one each time), again and again: a
// storm of quiet spells, none in step with a poll's interval; redraw
// draws the stopped screen again, unchanged, every 2 to 5 s: as many quiet
// spells, and the same screen at every look.
const muxAgentScript = `
rule=''
for i in 1 2 3 4 5 6 7 8 9 10; do rule=$rule'──────────'; done
min=${AGENT_WORK_MIN:-5} max=${AGENT_WORK_MAX:-5} n=0
screen() { printf '\033[H\033[2J'; printf '%s\n' "$@"; }
work() {
	local end=$((SECONDS + $1)) i=0
	while [ "$1" = forever ] || ((SECONDS < end)); do
		screen '⏺ Read 3 files (ctrl+o to expand)' '' "✻ Crunching… ($((i / 5))s · ↑ 1.2k tokens)" '' "$rule" '❯ ' "$rule" \
			'  ⏵⏵ accept edits on (shift+tab to cycle) · esc to interrupt'
		i=$((i + 1))
		sleep 0.2
	done
}
stopped() { screen '⏺ Done: step 1 of the plan is in place.' '' '✻ Brewed for 12s' '' "$rule" '❯ ' "$rule" '  ⏵⏵ accept edits on (shift+tab to cycle)'; }
case ${AGENT_MODE:-ask} in
spin) work forever ;;
burst)
	while :; do
		work 1
		screen '⏺ Done.' '' '✻ Brewed for 1s' '' "$rule" '❯ ' "$rule" '  ⏵⏵ accept edits on (shift+tab to cycle)'
		sleep $((2 + RANDOM % 4))
	done
	;;
redraw)
	while :; do
		stopped
		sleep $((2 + RANDOM % 4))
	done
	;;
idle)
	stopped
	while :; do read -r -s _; done
	;;
esac
while :; do
	n=$((n + 1))
	work $((min + RANDOM % (max - min + 1)))
	screen '⏺ The parser is fixed; next, the tests for the ledger.' '' "$rule" ' Bash command' '' "   rm -rf build-$n/" \
		"   Remove build directory $n" '' ' Do you want to proceed?' ' ❯ 1. Yes' " 2. Yes, and don't ask again for rm commands" \
		' 3. No' '' ' Esc to cancel · Tab to amend'
	date +%s.%N >"$AGENT_ASKED.tmp" && mv "$AGENT_ASKED.tmp" "$AGENT_ASKED.$n"
	IFS= read -r -s -n 1 _
done
`

// startMuxAgent runs muxAgentScript in session name of s, with env, and
// returns its pane and the prefix of its question files.
func startMuxAgent(t *testing.T, s *testenv.TmuxServer, name string, env ...string) (pane, asked string) {
	t.Helper()
	dir := t.TempDir()
	script := filepath.Join(dir, "claude")
	if err := os.WriteFile(script, []byte(muxAgentScript), 0o600); err != nil {
		t.Fatal(err)
	}
	asked = filepath.Join(dir, "asked")
	words := append([]string{"env", "LANG=C.UTF-8", "AGENT_ASKED=" + asked}, env...)
	s.NewSession(t, name, "exec "+coord.ShellJoin(append(words, bashPath(t), script)...))
	return strings.TrimSpace(s.Run(t, "display-message", "-p", "-t", name, "#{pane_id}")), asked
}

// muxOptions is what a user sees of the options and hooks the mux wakes
// touch on session's window.
func muxOptions(t *testing.T, s *testenv.TmuxServer, session string) []string {
	var got []string
	for _, o := range []string{"monitor-silence", "monitor-activity"} {
		got = append(got, s.Run(t, "show-options", "-w", "-t", session+":", o), s.Run(t, "show-options", "-A", "-w", "-t", session+":", o))
	}
	for _, o := range []string{"silence-action", "activity-action"} {
		got = append(got, s.Run(t, "show-options", "-t", session, o), s.Run(t, "show-options", "-A", "-t", session, o))
	}
	for _, h := range []string{"alert-silence", "alert-activity", "client-attached", "client-detached", "client-session-changed"} {
		got = append(got, s.Run(t, "show-hooks", "-t", session, h))
	}
	return got
}

// waitOptions waits for the options of session to be want again.
func waitOptions(t *testing.T, s *testenv.TmuxServer, session string, want []string, what string) {
	t.Helper()
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if diff := cmp.Diff(want, muxOptions(t, s, session)); diff != "" {
			return poll.Continue("%s: the options are not as they were (-want +got):\n%s", what, diff)
		}
		return poll.Success()
	}, poll.WithTimeout(90*time.Second), poll.WithDelay(100*time.Millisecond))
}

// askedAt reads when the agent drew question n.
func askedAt(t *testing.T, asked string, n int) time.Time {
	t.Helper()
	data, err := os.ReadFile(asked + "." + strconv.Itoa(n))
	if err != nil {
		t.Fatalf("question %d: %v", n, err)
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(string(data)), 64)
	if err != nil {
		t.Fatalf("question %d: %v", n, err)
	}
	return time.Unix(0, int64(f*1e9))
}

// TestMuxWakePagesAQuestionWithoutHooks: an agent with no hooks at all,
// watched at --interval 60 with --mux-wake at its default (auto), asks a question while the
// loop pauses: the multiplexer's silence alert wakes the watcher, and the
// question is paged long before the interval would have looked. Stopped,
// the watcher leaves the session's options and hooks as they were.
func TestMuxWakePagesAQuestionWithoutHooks(t *testing.T) {
	t.Parallel()
	s := testenv.Tmux(t)
	pane, asked := startMuxAgent(t, s, "agent", "AGENT_WORK_MIN=8", "AGENT_WORK_MAX=8")
	before := muxOptions(t, s, "agent")
	r := startLoop(t, loopOptions{target: "agent", flags: []string{"--mux", s.Mux, "--interval", "60", "--pane", pane}, muxWakeDefault: true})
	r.waitLines(1, 30*time.Second)
	drawn := waitAsked(t, asked, 1)
	paged := waitPaged(t, r, 1)
	t.Logf("question drawn to its page: %.1fs, at --interval 60 without the agent's hooks", paged.Sub(drawn).Seconds())
	var loop statedir.LoopRecord
	statedir.Dir(r.state).ReadRecord(statedir.Loop, &loop)
	if paged.Sub(loop.StartedAt) > 55*time.Second {
		t.Errorf("the page came %v after the loop started: the interval's poll, not a wake", paged.Sub(loop.StartedAt))
	}
	if diff := cmp.Diff(before, muxOptions(t, s, "agent")); diff == "" {
		t.Errorf("the watched window's options are unchanged while it watches: nothing armed")
	}
	r.stop()
	waitOptions(t, s, "agent", before, "after the watcher's stop")
	if _, err := os.Stat(filepath.Join(r.state, statedir.MuxWake)); err == nil {
		t.Errorf("%s left behind", statedir.MuxWake)
	}
}

// TestMuxWakeUndoneWhenTheWatcherIsKilled: a loop killed outright leaves
// its listener, which sees the loop gone (within 30 s) and puts the
// options back; a
// listener killed as well leaves its record, which the next watcher's
// start undoes, with --mux-wake or without; and a watcher's stop leaves
// everything as the user had it (a window option and a session hook of
// their own).
func TestMuxWakeUndoneWhenTheWatcherIsKilled(t *testing.T) {
	t.Parallel()
	s := testenv.Tmux(t)
	pane, _ := startMuxAgent(t, s, "agent", "AGENT_MODE=idle")
	s.Run(t, "set-option", "-w", "-t", "agent:", "monitor-silence", "45")
	s.Run(t, "set-hook", "-t", "agent", "alert-silence[0]", "display-message quiet")
	before := muxOptions(t, s, "agent")
	home := t.TempDir()
	flags := []string{"--mux", s.Mux, "--interval", "60", "--pane", pane, "--mux-wake", "2"}

	r := startLoop(t, loopOptions{target: "agent", home: home, flags: flags})
	r.waitLines(1, 30*time.Second)
	armed := waitArmed(t, r.state, 0)
	syscall.Kill(r.cmd.Process.Pid, syscall.SIGKILL)
	waitOptions(t, s, "agent", before, "after the loop was killed")

	r = startLoop(t, loopOptions{target: "agent", home: home, flags: flags})
	r.waitLines(1, 30*time.Second)
	armed = waitArmed(t, r.state, armed)
	for _, p := range marked(t, "wake --mux --state "+r.state) {
		pid, _ := strconv.Atoi(strings.Fields(p)[0])
		syscall.Kill(pid, syscall.SIGKILL)
	}
	syscall.Kill(r.cmd.Process.Pid, syscall.SIGKILL)
	time.Sleep(3 * time.Second) // nothing left to notice the loop gone
	if diff := cmp.Diff(before, muxOptions(t, s, "agent")); diff == "" {
		t.Fatalf("the options were put back, with nobody left to do it")
	}

	// Started again without --mux-wake, the watcher undoes them first.
	r = startLoop(t, loopOptions{target: "agent", home: home, flags: flags[:len(flags)-2]})
	r.waitLines(1, 30*time.Second)
	waitOptions(t, s, "agent", before, "at the next start")
	r.stop()

	r = startLoop(t, loopOptions{target: "agent", home: home, flags: flags})
	r.waitLines(1, 30*time.Second)
	waitArmed(t, r.state, armed)
	r.stop()
	waitOptions(t, s, "agent", before, "after the next watcher's stop")
}

// waitArmed waits for the mux wakes of the watcher of state to be armed
// once more than its log said before, and returns how often they were.
func waitArmed(t *testing.T, state string, before int) int {
	t.Helper()
	n := 0
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		data, _ := os.ReadFile(filepath.Join(state, "watcher.log"))
		if n = strings.Count(string(data), "mux wake: armed"); n > before {
			return poll.Success()
		}
		return poll.Continue("not armed yet:\n%s", data)
	}, poll.WithTimeout(30*time.Second), poll.WithDelay(100*time.Millisecond))
	return n
}

// TestMuxWakeWatchAndStop: watch --mux-wake arms the watched window;
// once stop has returned, every option is as it was.
func TestMuxWakeWatchAndStop(t *testing.T) {
	t.Parallel()
	f := newFleet(t)
	f.tmux.NewSession(t, "agent", "sleep 300")
	before := muxOptions(t, f.tmux, "agent")
	f.run(t, "agent", "--mux-wake", "2").Assert(t, icmd.Success)
	waitArmed(t, filepath.Join(f.state, "monitor-agent"), 0)
	if diff := cmp.Diff(before, muxOptions(t, f.tmux, "agent")); diff == "" {
		t.Errorf("armed, and the options are unchanged")
	}
	f.run(t, "stop", "agent").Assert(t, icmd.Success)
	if diff := cmp.Diff(before, muxOptions(t, f.tmux, "agent")); diff != "" {
		t.Errorf("after stop returned, the options (-before +after):\n%s", diff)
	}
}

// waitAsked waits for the scripted agent to draw its question n, and
// returns when it did.
func waitAsked(t *testing.T, asked string, n int) time.Time {
	t.Helper()
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if _, err := os.Stat(fmt.Sprintf("%s.%d", asked, n)); err != nil {
			return poll.Continue("the agent has not asked question %d yet", n)
		}
		return poll.Success()
	}, poll.WithTimeout(60*time.Second), poll.WithDelay(50*time.Millisecond))
	return askedAt(t, asked, n)
}

// waitPaged waits for the page of the scripted agent's question n, and
// returns when it was seen.
func waitPaged(t *testing.T, r *loopRun, n int) time.Time {
	t.Helper()
	mark := fmt.Sprintf("build-%d/", n)
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		for _, a := range r.alertsNow() {
			if strings.Contains(a, mark) {
				return poll.Success()
			}
		}
		return poll.Continue("question %d not paged yet; lines:\n%s", n, strings.Join(r.waitLines(0, time.Second), "\n"))
	}, poll.WithTimeout(50*time.Second), poll.WithDelay(50*time.Millisecond))
	return time.Now()
}

// TestMuxWakeAutoWhereNoHooks: a watcher started with --mux-wake auto
// arms the multiplexer's wakes for an agent with no hooks of ours, and
// not for one whose hooks are installed (said once in its log); stop
// leaves every option as it was.
func TestMuxWakeAutoWhereNoHooks(t *testing.T) {
	t.Parallel()
	testenv.EndToEnd(t)
	f := newFleet(t)
	watch := func(session string) {
		t.Helper()
		cmd := icmd.Command(omegaMonitor(t), session, "--interval", "60", "--mux-wake", "auto") // not f.run, which says 0
		cmd.Env = []string{"HOME=" + f.home, "PATH=" + os.Getenv("PATH"), "OMEGA_MONITOR_HOME=" + f.state, "OMEGA_MONITOR_MUX=" + f.tmux.Mux}
		icmd.RunCmd(cmd).Assert(t, icmd.Success)
	}
	startMuxAgent(t, f.tmux, "bare", "AGENT_MODE=idle")
	startMuxAgent(t, f.tmux, "hooked", "AGENT_MODE=idle")
	before := map[string][]string{"bare": muxOptions(t, f.tmux, "bare"), "hooked": muxOptions(t, f.tmux, "hooked")}

	watch("bare")
	waitArmed(t, filepath.Join(f.state, "monitor-bare"), 0)
	if diff := cmp.Diff(before["bare"], muxOptions(t, f.tmux, "bare")); diff == "" {
		t.Errorf("armed, and the options are unchanged")
	}

	installIn(t, f.home, f.state, "--hooks", "--claude").Assert(t, icmd.Success)
	watch("hooked")
	log := filepath.Join(f.state, "monitor-hooked", "watcher.log")
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		data, _ := os.ReadFile(log)
		if strings.Contains(string(data), "mux wake: not armed (--mux-wake auto): Claude Code's hooks of ours are installed") {
			return poll.Success()
		}
		return poll.Continue("not said yet:\n%s", data)
	}, poll.WithTimeout(60*time.Second), poll.WithDelay(100*time.Millisecond))
	if diff := cmp.Diff(before["hooked"], muxOptions(t, f.tmux, "hooked")); diff != "" {
		t.Errorf("an agent with hooks: its options changed (-before +after):\n%s", diff)
	}

	for _, s := range []string{"bare", "hooked"} {
		f.run(t, "stop", s).Assert(t, icmd.Success)
		if diff := cmp.Diff(before[s], muxOptions(t, f.tmux, s)); diff != "" {
			t.Errorf("%s: after stop returned, the options (-before +after):\n%s", s, diff)
		}
	}
}

// TestMuxWakeBudgetSpentSaidOnce: an agent that stops every few seconds
// spends the wakes' budget (three an hour at --interval 60) at once; the
// log says so once, and the loop looks no more than those wakes and their
// second looks bring, the poll going on at its interval.
func TestMuxWakeBudgetSpentSaidOnce(t *testing.T) {
	t.Parallel()
	testenv.EndToEnd(t)
	s := testenv.Tmux(t)
	pane, _ := startMuxAgent(t, s, "agent", "AGENT_MODE=burst")
	r := startLoop(t, loopOptions{target: "agent", flags: []string{"--mux", s.Mux, "--interval", "60", "--pane", pane, "--mux-wake", "2", "--nudge-budget", "0"}})
	r.waitLines(1, 30*time.Second)
	log := filepath.Join(r.state, "watcher.log")
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		data, _ := os.ReadFile(log)
		if strings.Contains(string(data), "mux wake: the wakes' budget is spent (3 in 60 min)") {
			return poll.Success()
		}
		return poll.Continue("not spent yet:\n%s", data)
	}, poll.WithTimeout(60*time.Second), poll.WithDelay(100*time.Millisecond))
	time.Sleep(15 * time.Second) // a few more quiet spells, each refused
	data, _ := os.ReadFile(log)
	if n := strings.Count(string(data), "budget is spent"); n != 1 {
		t.Errorf("the budget's end said %d times, want once:\n%s", n, data)
	}
	// The first poll, three wakes, and at most a second look each.
	if lines := r.waitLines(0, time.Second); len(lines) > 1+3*2 {
		t.Errorf("%d looks, want at most 7:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	r.stop()
}

// attachTerminal attaches a real client to session of s in a terminal of
// its own (script(1)), and returns the file of everything tmux wrote to
// that terminal; the client ends with the test.
func attachTerminal(t *testing.T, s *testenv.TmuxServer, session string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "terminal")
	cmd := exec.Command("script", "-qfec", coord.ShellJoin(s.Mux, "attach-session", "-t", coord.Exact(session)), out)
	cmd.Env = append(os.Environ(), "TERM=xterm-256color", "COLUMNS=100", "LINES=30")
	stdin, err := cmd.StdinPipe() // held open: a terminal nobody types at
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Skipf("no script(1) to attach a client with: %v", err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if slices.Contains(strings.Fields(s.Run(t, "list-clients", "-F", "#{client_session}")), session) {
			return poll.Success()
		}
		return poll.Continue("no client on %s", session)
	}, poll.WithTimeout(30*time.Second), poll.WithDelay(50*time.Millisecond))
	return out
}

// oscRE matches an operating system command (a title, a colour), which
// ends with a BEL byte of its own.
var oscRE = regexp.MustCompile("\x1b\\][^\x07\x1b]*(\x07|\x1b\\\\)")

// heardAlerts says what of an alert's a terminal showed: its bells
// (outside the operating system commands) and tmux's messages.
func heardAlerts(t *testing.T, terminal string) []string {
	t.Helper()
	data, err := os.ReadFile(terminal)
	if err != nil {
		t.Fatal(err)
	}
	bare := oscRE.ReplaceAllString(string(data), "")
	var heard []string
	if n := strings.Count(bare, "\a"); n > 0 {
		heard = append(heard, fmt.Sprintf("%d bells", n))
	}
	for _, m := range []string{"Silence in", "Activity in"} {
		if strings.Contains(bare, m) {
			heard = append(heard, m)
		}
	}
	return heard
}

// waitLogged waits for the watcher of state to have said what in its log.
func waitLogged(t *testing.T, state, what string) {
	t.Helper()
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		data, _ := os.ReadFile(filepath.Join(state, "watcher.log"))
		if strings.Contains(string(data), what) {
			return poll.Success()
		}
		return poll.Continue("not said yet (%q):\n%s", what, data)
	}, poll.WithTimeout(60*time.Second), poll.WithDelay(100*time.Millisecond))
}

// TestMuxWakeQuietForAnAttachedClient: a real client attached to the
// agent's session (a terminal of its own) hears no bell and sees no
// "Silence"/"Activity" message while the agent falls silent and draws
// again, question after question: the alerts are held from its arrival.
// The terminal does hear a bell of another window's, as tmux rings it. Once
// it detached, the next question is paged within seconds again; stopped,
// the watcher leaves every option and hook as it was. Locally, and on an
// ssh host (the host's tmux, over the watcher's connection).
func TestMuxWakeQuietForAnAttachedClient(t *testing.T) {
	t.Parallel()
	testenv.EndToEnd(t)
	for _, remote := range []bool{false, true} {
		t.Run(map[bool]string{false: "local", true: "ssh host"}[remote], func(t *testing.T) {
			s := testenv.Tmux(t)
			pane, asked := startMuxAgent(t, s, "agent", "AGENT_WORK_MIN=3", "AGENT_WORK_MAX=3")
			before := muxOptions(t, s, "agent")
			target, flags := "agent", []string{"--mux", s.Mux}
			if remote {
				target, flags = "box:agent", []string{"--ssh-config", muxHost(t, s, "")}
			}
			r := startLoop(t, loopOptions{target: target, flags: append(flags, "--interval", "60", "--pane", pane), muxWakeDefault: true})
			r.waitLines(1, 60*time.Second)
			waitArmed(t, r.state, 0)
			waitAsked(t, asked, 1)
			waitPaged(t, r, 1)

			terminal := attachTerminal(t, s, "agent")
			waitLogged(t, r.state, "mux wake: held: a client attached")
			// Three turns, each drawing for 3 s, then silent for 4.
			for n := 1; n <= 3; n++ {
				s.Run(t, "send-keys", "-t", pane, "3")
				waitAsked(t, asked, n+1)
				time.Sleep(4 * time.Second)
			}
			if heard := heardAlerts(t, terminal); len(heard) > 0 {
				t.Errorf("the attached client heard the alerts: %q", heard)
			}
			// The terminal would show a bell: another window's rings it.
			s.Run(t, "new-window", "-d", "-t", "agent:", "printf '\\a'; exec sleep 300")
			poll.WaitOn(t, func(poll.LogT) poll.Result {
				if heard := heardAlerts(t, terminal); len(heard) > 0 {
					return poll.Success()
				}
				return poll.Continue("the terminal shows no bell of another window's")
			}, poll.WithTimeout(30*time.Second), poll.WithDelay(100*time.Millisecond))
			s.Run(t, "kill-window", "-t", "agent:1")

			s.Run(t, "detach-client", "-s", "agent")
			waitLogged(t, r.state, "mux wake: armed again")
			s.Run(t, "send-keys", "-t", pane, "3")
			drawn := waitAsked(t, asked, 5)
			paged := waitPaged(t, r, 5)
			t.Logf("after the client detached, question drawn to its page: %.1fs", paged.Sub(drawn).Seconds())
			if paged.Sub(drawn) > 30*time.Second {
				t.Errorf("question paged %v after it was drawn: the interval's poll, not a wake", paged.Sub(drawn))
			}
			r.stop()
			waitOptions(t, s, "agent", before, "after the watcher's stop")
		})
	}
}
