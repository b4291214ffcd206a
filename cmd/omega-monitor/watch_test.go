package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/rogpeppe/go-internal/testscript"
	"gotest.tools/v3/assert"
	"gotest.tools/v3/icmd"
	"gotest.tools/v3/poll"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
	"github.com/omega-monitor/omega-monitor/internal/watcher"
)

// TestMain runs the tests, or, when a command script (script_test.go)
// runs omega-monitor, the command itself, in this test binary.
func TestMain(m *testing.M) {
	code := testscript.RunMain(m, map[string]func() int{
		"omega-monitor": func() int { return run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr) },
	})
	testenv.RemoveBuilds()
	os.Exit(code)
}

// omegaMonitor is omega-monitor built for the tests that run it as a user
// would, so that a watcher's OMEGA_MONITOR_BIN is the real binary, with its
// companions (the MCP server, the sandbox's helper, the answer receiver)
// beside it, as an install puts them.
func omegaMonitor(t *testing.T) string {
	t.Helper()
	dir := testenv.Build(t, ".", "../omega-monitor-mcp", "../omega-monitor-sandbox", "../omega-monitor-relay", "../omega-monitor-notify")
	return filepath.Join(dir, "omega-monitor")
}

// fleet is a test's world: a private tmux server, a state home, a home
// directory without an ssh config or an rmux, and a test ssh config.
type fleet struct {
	tmux  *testenv.TmuxServer
	ssh   *testenv.SSHConfig
	home  string
	state string
}

func newFleet(t *testing.T) *fleet {
	t.Helper()
	f := &fleet{tmux: testenv.Tmux(t), ssh: testenv.NewSSHConfig(t), home: t.TempDir()}
	f.state = filepath.Join(f.home, "state")
	return f
}

// run runs the built binary in the fleet's environment.
func (f *fleet) run(t *testing.T, args ...string) *icmd.Result {
	t.Helper()
	return f.runEnv(t, nil, args...)
}

// runEnv runs the binary as run does, with env added to its environment.
func (f *fleet) runEnv(t *testing.T, env []string, args ...string) *icmd.Result {
	t.Helper()
	cmd := icmd.Command(omegaMonitor(t), noMuxWake(args)...)
	cmd.Env = append([]string{
		"HOME=" + f.home,
		"PATH=" + os.Getenv("PATH"),
		"OMEGA_MONITOR_HOME=" + f.state,
		"OMEGA_MONITOR_MUX=" + f.tmux.Mux,
	}, env...)
	return icmd.RunCmd(cmd)
}

// noMuxWake gives a watch without --mux-wake (watch, or a bare target)
// the flag's 0 (its default is auto): these tests count polls and
// processes, which the multiplexer's wakes would add to. A test of the
// wakes says --mux-wake.
func noMuxWake(args []string) []string {
	if len(args) == 0 || args[0] != "watch" && slices.Contains(commandNames(), args[0]) ||
		slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--mux-wake") || a == "--" }) {
		return args
	}
	return append(slices.Clip(args), "--mux-wake", "0")
}

func (f *fleet) has(t *testing.T, session string) bool {
	t.Helper()
	return f.tmux.Cmd("has-session", "-t", coord.Exact(session)).Run() == nil
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func TestWatchLocalStartStop(t *testing.T) {
	t.Parallel()
	f := newFleet(t)
	f.tmux.NewSession(t, "agent", "sleep 300")

	f.run(t, "agent", "--interval", "5").Assert(t, icmd.Expected{
		Out: "watching agent in monitor-agent",
	})
	if !f.has(t, "monitor-agent") {
		t.Fatal("no watcher session monitor-agent")
	}
	loop := filepath.Join(f.state, "bin", "omega-monitor.sh")
	got, err := os.ReadFile(loop)
	if err != nil || !bytes.Equal(got, watcher.StampedLoop()) {
		t.Errorf("loop script at %s is not scripts.Loop stamped (err %v)", loop, err)
	}
	if err := watcher.CheckLoopVersion(loop); err != nil {
		t.Error(err)
	}
	for path, want := range map[string]os.FileMode{
		f.state:                                 0o700,
		filepath.Join(f.state, "bin"):           0o700,
		loop:                                    0o700,
		filepath.Join(f.state, "monitor-agent"): 0o700,
		filepath.Join(f.state, "monitor-agent", "target"): 0o600,
	} {
		if got := mode(t, path); got != want {
			t.Errorf("mode of %s = %v, want %v", path, got, want)
		}
	}
	start := f.tmux.Run(t, "display-message", "-p", "-t", coord.Exact("monitor-agent"), "#{pane_start_command}")
	for _, want := range []string{"OMEGA_MONITOR_BIN=" + omegaMonitor(t), "'agent' '--interval' '5'"} {
		if !strings.Contains(start, want) {
			t.Errorf("watcher command %q lacks %q", start, want)
		}
	}

	f.run(t, "watch", "agent").Assert(t, icmd.Expected{
		ExitCode: 1,
		Err:      "agent is already watched by monitor-agent",
	})

	f.run(t, "stop", "agent").Assert(t, icmd.Expected{Out: "stopped monitor-agent"})
	if f.has(t, "monitor-agent") {
		t.Error("monitor-agent still runs after stop")
	}
	if !f.has(t, "agent") {
		t.Error("stop ended the watched session too")
	}
	f.run(t, "stop", "agent").Assert(t, icmd.Expected{ExitCode: 1, Err: "agent is not watched: its watcher monitor-agent was stopped at "})
	f.run(t, "stop", "other").Assert(t, icmd.Expected{ExitCode: 1, Err: "other is not watched: no watcher of it runs"})
}

// TestStopCleansUpAStaleWatcher: a watcher whose loop died without a stop
// (killed: no session, no ended.json) is what the board calls stale; stop
// marks it stopped and says so, and a second stop says it was.
func TestStopCleansUpAStaleWatcher(t *testing.T) {
	f := newFleet(t)
	dir := filepath.Join(f.state, "monitor-shop")
	assert.NilError(t, os.MkdirAll(dir, 0o700))
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "target"), []byte("shop\n"), 0o600))
	f.run(t, "stop", "shop").Assert(t, icmd.Expected{Out: "monitor-shop was not running: its loop had ended without a stop; marked stopped (omega-monitor forget shop removes its state)"})
	_, err := os.Stat(filepath.Join(dir, statedir.Ended))
	assert.NilError(t, err)
	f.run(t, "stop", "shop").Assert(t, icmd.Expected{ExitCode: 1, Err: "shop is not watched: its watcher monitor-shop was stopped at "})
	f.run(t, "forget", "shop").Assert(t, icmd.Success)
}

// TestStopAndLogsByTheWatchersName: the name the start message and the
// board show (monitor-agent, or a fingerprint's) is accepted by logs and
// stop, as the target is; a name no watcher has is read as a target.
func TestStopAndLogsByTheWatchersName(t *testing.T) {
	t.Parallel()
	f := newFleet(t)
	f.tmux.NewSession(t, "agent", "sleep 300")
	f.tmux.NewSession(t, "agent-2", "sleep 300")
	f.run(t, "agent", "--interval", "1").Assert(t, icmd.Expected{Out: "watching agent in monitor-agent"})
	res := f.run(t, "agent-2", "--interval", "1")
	res.Assert(t, icmd.Success)
	fingerprint := coord.WatcherName(coord.Target{Session: "agent-2"})
	for _, name := range []string{"monitor-agent", fingerprint} {
		poll.WaitOn(t, func(poll.LogT) poll.Result {
			if r := f.run(t, "logs", name); r.ExitCode != 0 || !strings.Contains(r.Stdout(), "MONITOR") {
				return poll.Continue("logs %s: %s%s", name, r.Stdout(), r.Stderr())
			}
			return poll.Success()
		}, poll.WithTimeout(30*time.Second))
	}
	// A running watcher is woken for a reset, and its poll takes it.
	f.run(t, "reset", "monitor-agent").Assert(t, icmd.Expected{Out: "re-armed the nudge budget of agent: its watcher's poll took it"})
	f.run(t, "stop", "monitor-agent").Assert(t, icmd.Expected{Out: "stopped monitor-agent, the watcher of agent"})
	f.run(t, "stop", fingerprint).Assert(t, icmd.Expected{Out: "the watcher of agent-2"})
	r := f.run(t, "stop", "monitor-nobody")
	r.Assert(t, icmd.Expected{ExitCode: 1, Err: "monitor-nobody is not watched"})
	if strings.Contains(r.Stderr(), coord.WatcherName(coord.Target{Session: "monitor-nobody"})) {
		t.Errorf("stop said a fingerprint: %s", r.Stderr())
	}
}

// TestWatchTriesItsProbesWhereTheAgentWorks: at start, each probe runs once
// in the pane's working directory (not where watch was typed) and what it
// read is said there; a failing probe is said with its reason, a missing
// one with what it means.
func TestWatchTriesItsProbesWhereTheAgentWorks(t *testing.T) {
	t.Parallel()
	f := newFleet(t)
	shop := t.TempDir()
	assert.NilError(t, os.WriteFile(filepath.Join(shop, "TODO.md"), []byte("- [ ] one\n- [ ] two\n- [x] three\n"), 0o600))
	f.tmux.Run(t, "new-session", "-d", "-s", "shop", "-c", shop, "sleep 300")
	f.tmux.Run(t, "new-session", "-d", "-s", "other", "-c", shop, "sleep 300")
	for _, s := range []string{"shop", "other"} {
		poll.WaitOn(t, func(poll.LogT) poll.Result {
			if strings.TrimSpace(f.tmux.Run(t, "display-message", "-p", "-t", s, "#{pane_current_path}")) != shop {
				return poll.Continue("the pane's directory is not known yet")
			}
			return poll.Success()
		})
	}
	res := f.run(t, "shop", "--work-probe", `grep -c "^- \[ \]" TODO.md || true`)
	res.Assert(t, icmd.Success)
	assert.Assert(t, strings.Contains(res.Stdout(), "work probe in "+shop+": 2\n"), res.Stdout())
	assert.Assert(t, strings.Contains(res.Stdout(), "warning: no progress probe"), res.Stdout())

	res = f.run(t, "other", "--work-probe", "grep -c x NOTES.md", "--progress-probe", "echo many")
	res.Assert(t, icmd.Success)
	for _, want := range []string{
		"work probe in " + shop + ": FAILED: exit 2: grep: NOTES.md: No such file or directory",
		`progress probe in ` + shop + `: NO COUNT: printed "many", not one whole number`,
	} {
		assert.Assert(t, strings.Contains(res.Stdout(), want), res.Stdout())
	}
	f.run(t, "stop", "shop").Assert(t, icmd.Success)
	f.run(t, "stop", "other").Assert(t, icmd.Success)
}

// TestCtrlCInTheWatchersPaneDoesNotStopIt: an operator attached to the
// watcher's session reads what it is and how to leave; Ctrl-C there is
// answered with a notice, the watcher goes on polling, and stop stops it.
func TestCtrlCInTheWatchersPaneDoesNotStopIt(t *testing.T) {
	t.Parallel()
	f := newFleet(t)
	f.tmux.NewSession(t, "agent", "sleep 300")
	f.run(t, "agent", "--interval", "1").Assert(t, icmd.Success)
	pane := func() string { return f.tmux.Run(t, "capture-pane", "-p", "-t", coord.Exact("monitor-agent")) }
	waitPane := func(want string) {
		poll.WaitOn(t, func(poll.LogT) poll.Result {
			if strings.Contains(pane(), want) {
				return poll.Success()
			}
			return poll.Continue("the watcher's pane lacks %q:\n%s", want, pane())
		}, poll.WithTimeout(30*time.Second))
	}
	waitPane("This is the watcher of agent")
	waitPane("MONITOR · agent")
	f.tmux.Run(t, "send-keys", "-t", coord.Exact("monitor-agent"), "C-c")
	waitPane("Ctrl-C does not stop this watcher of agent")
	// What the pane says of itself fits an 80-column terminal unbroken.
	joined := f.tmux.Run(t, "capture-pane", "-p", "-J", "-t", coord.Exact("monitor-agent"))
	for l := range strings.Lines(joined) {
		if !strings.Contains(l, "MONITOR") && utf8.RuneCountInString(strings.TrimRight(l, " \n")) > 80 {
			t.Errorf("a line of the watcher's own wider than 80 columns: %q", l)
		}
	}
	// Still polling: a line more after the Ctrl-C.
	before := strings.Count(pane(), "MONITOR · agent")
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if strings.Count(pane(), "MONITOR · agent") > before {
			return poll.Success()
		}
		return poll.Continue("no poll since Ctrl-C:\n%s", pane())
	}, poll.WithTimeout(30*time.Second))
	f.run(t, "stop", "agent").Assert(t, icmd.Success)
	log, err := os.ReadFile(filepath.Join(f.state, "monitor-agent", "monitor.log"))
	assert.NilError(t, err)
	for _, mark := range []string{"MONITOR · agent · started (pid ", "MONITOR · agent · stopped (SIGHUP)"} {
		assert.Assert(t, strings.Contains(string(log), mark), "monitor.log lacks %q:\n%s", mark, log)
	}
}

func TestWatchSessionNamedLikeACommand(t *testing.T) {
	t.Parallel()
	f := newFleet(t)
	f.tmux.NewSession(t, "list", "sleep 300")
	f.run(t, "watch", "list").Assert(t, icmd.Expected{Out: "watching list in monitor-list"})
	f.run(t, "stop", "list").Assert(t, icmd.Success)
}

func TestWatchRefusesAMissingTarget(t *testing.T) {
	f := newFleet(t)
	f.tmux.NewSession(t, "agent", "sleep 300")
	f.run(t, "ag").Assert(t, icmd.Expected{ExitCode: 1, Err: "no session ag here"})
	if f.has(t, "monitor-ag") {
		t.Error("a watcher started for a missing target")
	}
}

func TestWatchRemoteStartStop(t *testing.T) {
	t.Parallel()
	f := newFleet(t)
	f.tmux.NewSession(t, "agent", "sleep 300")
	testenv.SSHD(t, f.ssh, "testbox", "OMEGA_MONITOR_MUX="+f.tmux.Mux)

	f.run(t, "testbox:agent", "--ssh-config", f.ssh.Path).Assert(t, icmd.Expected{
		Out: "watching testbox:agent in monitor-testbox-agent",
	})
	if !f.has(t, "monitor-testbox-agent") {
		t.Fatal("no watcher session monitor-testbox-agent")
	}
	f.run(t, "watch", "testbox:agent", "--ssh-config", f.ssh.Path).Assert(t, icmd.Expected{
		ExitCode: 1,
		Err:      "testbox:agent is already watched by monitor-testbox-agent",
	})
	f.run(t, "testbox:nosuch", "--ssh-config", f.ssh.Path).Assert(t, icmd.Expected{
		ExitCode: 1,
		Err:      "no session nosuch on testbox",
	})
	f.run(t, "stop", "testbox:agent").Assert(t, icmd.Expected{Out: "stopped monitor-testbox-agent"})
	if f.has(t, "monitor-testbox-agent") {
		t.Error("the remote target's watcher still runs after stop")
	}
}

func TestWatchUnreachableHostRefused(t *testing.T) {
	f := newFleet(t)
	testenv.ClosedHost(t, f.ssh, "closed")
	f.run(t, "closed:agent", "--ssh-config", f.ssh.Path).Assert(t, icmd.Expected{
		ExitCode: 1,
		Err:      "cannot check closed:agent",
	})
}

func TestWatchUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		out  string
		err  string
	}{
		{"no target", []string{"watch"}, 2, "", "watch takes one target"},
		{"two targets", []string{"watch", "a", "b"}, 2, "", "watch takes one target"},
		{"help", []string{"watch", "--help"}, 0, "usage: omega-monitor <target>", ""},
		{"bad interval", []string{"agent", "--interval", "0"}, 2, "", "--interval"},
		{"huge interval", []string{"agent", "--interval", "99999999999"}, 2, "", "--interval must be a whole number of seconds from 1 to 86400; got 99999999999"},
		{"bad budget", []string{"agent", "--nudge-budget", "-1"}, 2, "", "--nudge-budget"},
		{"huge budget", []string{"agent", "--nudge-budget", "99999999999"}, 2, "", "--nudge-budget must be a whole number from 0 to 1000"},
		{"negative human idle", []string{"agent", "--human-idle", "-1"}, 2, "", "--human-idle must be a whole number of seconds from 0 (off) to 3600; got -1"},
		{"empty nudge", []string{"agent", "--nudge-text", ""}, 2, "", "--nudge-text: the text of a nudge must not be empty"},
		{"blank nudge", []string{"agent", "--nudge-text", "  "}, 2, "", "must not be empty"},
		{"nudge with newline", []string{"agent", "--nudge-text", "go on\nnow"}, 2, "", "must be one line"},
		{"nudge with CR", []string{"agent", "--nudge-text", "go on\r"}, 2, "", "must be one line"},
		{"nudge with Ctrl-C", []string{"agent", "--nudge-text", "go on\x03"}, 2, "", "control characters"},
		{"nudge with ESC", []string{"agent", "--nudge-text", "\x1b[2Jgo on"}, 2, "", "control characters"},
		{"nudge with DEL", []string{"agent", "--nudge-text", "go on\x7f"}, 2, "", "control characters"},
		{"nudge with paste end", []string{"agent", "--nudge-text", "go on\x1b[201~rm -rf x"}, 2, "", "control characters"},
		{"nudge with tab", []string{"agent", "--nudge-text", "go\ton"}, 2, "", "control characters"},
		{"nudge with C1", []string{"agent", "--nudge-text", "go\u009bon"}, 2, "", "control characters"},
		{"nudge not UTF-8", []string{"agent", "--nudge-text", "go\xffon"}, 2, "", "valid UTF-8"},
		{"nudge too long", []string{"agent", "--nudge-text", strings.Repeat("x", 1001)}, 2, "", "at most 1000 bytes"},
		{"no probe dir", []string{"agent", "--probe-dir", "/nonexistent/dir"}, 2, "", "--probe-dir /nonexistent/dir is not a directory"},
		{"unknown flag", []string{"watch", "agent", "--nope"}, 2, "", "unknown flag --nope"},
		{"help shows flags as typed", []string{"watch", "--help"}, 0, "--mux PATH", ""},
		{"help names the settings", []string{"watch", "--help"}, 0, "OMEGA_MONITOR_TIMEOUT", ""},
		{"help names the log", []string{"watch", "--help"}, 0, "monitor.log", ""},
		{"stop help", []string{"stop", "-h"}, 0, "usage: omega-monitor stop", ""},
		{"stop nothing", []string{"stop"}, 2, "", "stop takes one target"},
		{"misspelt flag", []string{"watch", "agent", "--intervall", "5"}, 2, "", "unknown flag --intervall: did you mean --interval?"},
		{"single-dash flag said as typed", []string{"agent", "-nudge-budgett", "5"}, 2, "", "unknown flag --nudge-budgett: did you mean --nudge-budget?"},
		{"flags before the target", []string{"--interval", "5", "--nudge-budget", "-1", "agent"}, 2, "", "--nudge-budget must be"},
		{"interval as a duration", []string{"agent", "--interval", "2m", "--nudge-budget", "-1"}, 2, "", "--nudge-budget must be"},
		{"interval not whole", []string{"agent", "--interval", "1.5"}, 2, "", `--interval "1.5": not a whole number of seconds`},
		{"help names the nudge text", []string{"watch", "--help"}, 0, "continue with the next step", ""},
		{"help command", []string{"help", "stop"}, 0, "usage: omega-monitor stop", ""},
		{"version says its build", []string{"version"}, 0, "built with go", ""},
		{"version says where it runs from", []string{"version"}, 0, "running from /", ""},
		{"help unknown command", []string{"help", "stpo"}, 2, "", `help: no command "stpo"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, nil, &stdout, &stderr)
			if code != tt.code || !strings.Contains(stdout.String(), tt.out) || !strings.Contains(stderr.String(), tt.err) {
				t.Errorf("run(%q) = %d\nstdout: %s\nstderr: %s\nwant %d, stdout with %q, stderr with %q",
					tt.args, code, &stdout, &stderr, tt.code, tt.out, tt.err)
			}
		})
	}
}

// TestUsageErrorsAreOneLine: a usage error is one line on stderr that says
// where the usage is; thirty lines of usage after it would bury it.
func TestUsageErrorsAreOneLine(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"watch", "agent", "--nope"}, {"agent", "--interval"}, {"watch"}, {"watch", "a", "b"},
		{"stop"}, {"logs"}, {"status", "--interval", "x"}, {"relay"}, {"mirror-plan", "x"},
		{"ledger", "record", "-x", "f", "t"}, {"list", "--timeout", "soon"}, {"--nope"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(args, nil, &stdout, &stderr)
		if code != 2 || stdout.Len() != 0 || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), "--help") {
			t.Errorf("run(%q) = %d\nstdout: %s\nstderr: %s\nwant 2 and one line that says where the usage is", args, code, &stdout, &stderr)
		}
	}
}

// hostileTargets must be refused before anything runs.
var hostileTargets = []string{
	"", ":", ":agent", "host:", "a.b", "a:b:c", "-t", "--help-me",
	"-oProxyCommand=touch pwned:agent", "host:-n", ".h:agent",
	"a b", "a\tb", "a\nb", "a\x00b", "a\x1b[2Jb", "'q'", `"q"`,
	"$(touch pwned)", "${HOME}", "`touch pwned`", "a;touch pwned",
	"a&&touch pwned", "a|touch pwned", "a#S", "#{session_name}",
	`a\b`, "a/b", "a*", "~root", "a>pwned", "h$(x):agent",
	"h;touch pwned:agent", "héllo", strings.Repeat("x", 200),
}

// TestWatchHostileCoordinatesNeverReachAShell runs watch, stop and the bare
// form over hostile targets with a multiplexer and an ssh that only record
// being run: none may run.
func TestWatchHostileCoordinatesNeverReachAShell(t *testing.T) {
	if len(hostileTargets) < 30 {
		t.Fatalf("keep at least 30 hostile targets, have %d", len(hostileTargets))
	}
	dir := t.TempDir()
	tripped := filepath.Join(dir, "tripped")
	tripwire := "#!/bin/sh\necho \"$0 $*\" >> " + coord.ShellQuote(tripped) + "\nexit 0\n"
	for _, name := range []string{"mux", "ssh", "tmux"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(tripwire), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// The process's own PATH and directory: a command reached by any
	// route, the shell's included, finds only the tripwire. So this test
	// alone does not run in parallel.
	t.Setenv("PATH", dir)
	t.Setenv("HOME", dir)
	t.Setenv("OMEGA_MONITOR_HOME", filepath.Join(dir, "state"))
	t.Setenv("OMEGA_MONITOR_MUX", filepath.Join(dir, "mux"))
	t.Chdir(dir)

	for _, target := range hostileTargets {
		for _, args := range [][]string{
			{"watch", target},
			{"watch", target, "--interval", "5"},
			{"stop", target},
		} {
			var stdout, stderr bytes.Buffer
			if code := run(args, nil, &stdout, &stderr); code != 2 {
				t.Errorf("run(%q) = %d, want 2 (usage error)\nstderr: %s", args, code, &stderr)
			}
		}
		var stdout, stderr bytes.Buffer
		if code := run([]string{target}, nil, &stdout, &stderr); code != 2 {
			t.Errorf("run(%q) = %d, want 2", target, code)
		}
	}
	if log, err := os.ReadFile(tripped); err == nil {
		t.Errorf("a hostile target reached a command:\n%s", log)
	}
	for _, name := range []string{"pwned", filepath.Join("state", "pwned")} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s exists: a hostile target ran", name)
		}
	}
}

// TestWatchRefusesBadSettings: a setting of the environment that the watcher
// could not use is refused before anything starts, as a flag is.
func TestWatchRefusesBadSettings(t *testing.T) {
	for _, tt := range []struct{ name, value, err string }{
		{"OMEGA_MONITOR_TIMEOUT", "abc", "OMEGA_MONITOR_TIMEOUT: want a whole number from 1 to 3600"},
		{"OMEGA_MONITOR_TIMEOUT", "99999999999", "OMEGA_MONITOR_TIMEOUT"},
		{"OMEGA_TELEGRAM_API", "file:///etc/passwd", "OMEGA_TELEGRAM_API: want an http(s) address"},
		{"OMEGA_TELEGRAM_API", "https://", "OMEGA_TELEGRAM_API: want an http(s) address"},
		{"OMEGA_TELEGRAM_API", "https:///path", "OMEGA_TELEGRAM_API: want an http(s) address"},
		{"OMEGA_TELEGRAM_API", "http://:8080/", "OMEGA_TELEGRAM_API: want an http(s) address"},
		{"OMEGA_TELEGRAM_API", "http://127.0.0.1:9/x y", "OMEGA_TELEGRAM_API: want an http(s) address"},
		{"OMEGA_TELEGRAM_API", "http://api\n.example", "OMEGA_TELEGRAM_API: want an http(s) address"},
		{"OMEGA_TELEGRAM_API", "api.telegram.org", "OMEGA_TELEGRAM_API: want an http(s) address"},
		{"OMEGA_ALERT_DEADLINE", "-5", "OMEGA_ALERT_DEADLINE"},
	} {
		t.Run(tt.name+"="+tt.value, func(t *testing.T) {
			env := newTestEnv(tt.name+"="+tt.value, "OMEGA_MONITOR_MUX=/nonexistent/mux") // never reached
			var stdout, stderr bytes.Buffer
			if code := env.run([]string{"agent"}, nil, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tt.err) {
				t.Errorf("code %d, stderr %q; want 2 and %q", code, &stderr, tt.err)
			}
		})
	}
}

// TestWatchRefusesItsOwnFence: watch refuses, with exit 2 and the reason,
// the session it is typed in (by $TMUX_PANE, as a shell in that pane has
// it), and sessions of this tool's own; another session in the same server
// is watched.
func TestWatchRefusesItsOwnFence(t *testing.T) {
	testenv.Need(t, "bash")
	t.Parallel()
	f := newFleet(t)
	f.tmux.NewSession(t, "mine", "sleep 600")
	f.tmux.NewSession(t, "worker", "sleep 600")
	f.tmux.NewSession(t, "monitor-worker2", "sleep 600")
	f.tmux.NewSession(t, "audit-shop", "sleep 600")
	pane := strings.TrimSpace(f.tmux.Run(t, "display-message", "-p", "-t", "=mine:", "#{pane_id}"))
	assert.Assert(t, strings.HasPrefix(pane, "%"), "pane id %q", pane)
	own := func(args ...string) *icmd.Result {
		cmd := icmd.Command(omegaMonitor(t), args...)
		cmd.Env = []string{"HOME=" + f.home, "PATH=" + os.Getenv("PATH"), "OMEGA_MONITOR_HOME=" + f.state,
			"OMEGA_MONITOR_MUX=" + f.tmux.Mux, "TMUX_PANE=" + pane}
		return icmd.RunCmd(cmd)
	}
	for _, tt := range []struct{ target, why string }{
		{"mine", "mine is your own session (you run in its pane " + pane + ")"},
		{"monitor-worker2", "monitor-worker2 is a watcher's own session"},
		{"audit-shop", "audit-shop is a scheduled audit's session"},
	} {
		res := own("watch", tt.target)
		assert.Equal(t, res.ExitCode, 2, res.Combined())
		assert.Assert(t, strings.HasPrefix(res.Stderr(), "omega-monitor: refusing target "+tt.target+": "+tt.why), res.Stderr())
		assert.Assert(t, !f.has(t, "monitor-"+tt.target))
	}
	res := own("watch", "worker", "--interval", "60")
	assert.Equal(t, res.ExitCode, 0, res.Combined())
	// The worker's active pane is pinned, and named.
	workerPane := strings.TrimSpace(f.tmux.Run(t, "display-message", "-p", "-t", "=worker:", "#{pane_id}"))
	assert.Assert(t, strings.Contains(res.Stdout(), "watching worker in monitor-worker, pane "+workerPane+" (stop it with"), res.Stdout())
	t.Cleanup(func() { f.run(t, "stop", "worker") })
	// The worker is a sleep, no agent: the start says so.
	assert.Assert(t, strings.Contains(res.Stderr(), "omega-monitor: warning: no agent recognised in its pane"), res.Stderr())
	// No funnel is installed in this home: the start says alerts have
	// nowhere to go, and why.
	assert.Assert(t, strings.Contains(res.Stderr(), "omega-monitor: warning: alerts cannot be delivered: no alert funnel at "+filepath.Join(f.home, ".omega", "bin", "omega-alert-send.sh")), res.Stderr())
}

// TestWatchSaysOnceWhenTitlesAreOff: a tmux that keeps programs from
// setting their pane's title (allow-set-title off, tmux 3.4 and later) is
// said once at start, with the setting that turns titles on; the tmux here
// (3.3a, titles always allowed, no such option) draws no warning. This
// machine's tmux has no allow-set-title, so a wrapper answers that one
// format as tmux 3.4 does with the option off, and runs the real tmux for
// everything else.
func TestWatchSaysOnceWhenTitlesAreOff(t *testing.T) {
	t.Parallel()
	f := newFleet(t)
	f.tmux.NewSession(t, "agent", "sleep 300")
	res := f.run(t, "agent", "--interval", "60")
	assert.Equal(t, res.ExitCode, 0, res.Combined())
	assert.Assert(t, !strings.Contains(res.Stderr(), "allow-set-title"), res.Stderr())
	f.run(t, "stop", "agent").Assert(t, icmd.Success)

	wrapper := filepath.Join(t.TempDir(), "tmux34")
	script := "#!/bin/sh\nfor a; do [ \"$a\" = '#{allow-set-title}' ] && { echo 0; exit 0; }; done\nexec " + coord.ShellQuote(f.tmux.Mux) + " \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	res = f.runEnv(t, []string{"OMEGA_MONITOR_MUX=" + wrapper}, "agent", "--interval", "60")
	assert.Equal(t, res.ExitCode, 0, res.Combined())
	t.Cleanup(func() { f.run(t, "stop", "agent") })
	want := "omega-monitor: warning: " + watcher.TitlesOffWarning + "\n"
	assert.Equal(t, strings.Count(res.Stderr(), want), 1, res.Stderr())
	assert.Assert(t, strings.Contains(res.Stderr(), "omega-monitor: warning: no agent recognised in its pane"), res.Stderr())
}

// TestWatchSessionWindowTarget: agent:1 names window 1 of the local session
// agent when no ssh alias is called agent (it was read as a host before);
// its pane is pinned. A target whose host part is an alias stays remote.
func TestWatchSessionWindowTarget(t *testing.T) {
	testenv.Need(t, "bash")
	t.Parallel()
	f := newFleet(t)
	f.tmux.NewSession(t, "agent", "sleep 600")
	f.tmux.Run(t, "new-window", "-t", "=agent:", "sleep 600")
	pane := strings.TrimSpace(f.tmux.Run(t, "display-message", "-p", "-t", "=agent:1", "#{pane_id}"))
	f.tmux.Run(t, "select-window", "-t", "=agent:0")
	res := f.run(t, "watch", "agent:1", "--interval", "60")
	assert.Equal(t, res.ExitCode, 0, res.Combined())
	t.Cleanup(func() { f.run(t, "stop", "agent") })
	assert.Assert(t, strings.Contains(res.Stdout(), "watching agent in monitor-agent, pane "+pane+" "), res.Stdout())
	res = f.run(t, "watch", "nosuch:3")
	assert.Equal(t, res.ExitCode, 1, res.Combined())
	assert.Assert(t, strings.Contains(res.Stderr(), "no pane nosuch:3 here (and no ssh alias nosuch)"), res.Stderr())
}

// TestWatchSaysWhoReadsItsAlerts: alerts sent to a group or a channel are
// read by all of it, so the start says so; a Bot API reached by plain http
// on another machine would carry the bot token in clear, so the start
// refuses it before anything runs.
func TestWatchSaysWhoReadsItsAlerts(t *testing.T) {
	testenv.Need(t, "bash")
	t.Parallel()
	f := newFleet(t)
	f.tmux.NewSession(t, "worker", "sleep 600")
	bin := filepath.Join(f.home, ".omega", "bin")
	assert.NilError(t, os.MkdirAll(bin, 0o700))
	assert.NilError(t, os.WriteFile(filepath.Join(bin, "omega-alert-send.sh"), []byte("#!/bin/sh\n[ \"$1\" = --stdin ] && cat >/dev/null\n"), 0o700))
	conf := filepath.Join(f.home, ".omega", "telegram.conf")
	assert.NilError(t, os.WriteFile(conf, []byte("bot_token=1:x\nchat_id=-1001234567890\n"), 0o600))
	watch := func(extra ...string) *icmd.Result {
		cmd := icmd.Command(omegaMonitor(t), "watch", "worker", "--interval", "60")
		cmd.Env = append([]string{"HOME=" + f.home, "PATH=" + os.Getenv("PATH"), "OMEGA_MONITOR_HOME=" + f.state,
			"OMEGA_MONITOR_MUX=" + f.tmux.Mux}, extra...)
		return icmd.RunCmd(cmd)
	}

	res := watch("OMEGA_TELEGRAM_API=http://api.telegram.org")
	assert.Equal(t, res.ExitCode, 2, res.Combined())
	assert.Assert(t, strings.Contains(res.Stderr(), "plain http to another machine"), res.Stderr())
	assert.Assert(t, !f.has(t, "monitor-worker"), "a refused start left a watcher")

	res = watch()
	assert.Equal(t, res.ExitCode, 0, res.Combined())
	t.Cleanup(func() { f.run(t, "stop", "worker") })
	assert.Assert(t, strings.Contains(res.Stderr(), "omega-monitor: warning: alerts reach more than you: the chat_id in "+conf+" is not a private chat"), res.Stderr())
	f.run(t, "stop", "worker").Assert(t, icmd.Success)

	assert.NilError(t, os.WriteFile(conf, []byte("bot_token=1:x\nchat_id=42\n"), 0o600))
	res = watch()
	assert.Equal(t, res.ExitCode, 0, res.Combined())
	assert.Assert(t, !strings.Contains(res.Stderr(), "alerts reach more than you"), res.Stderr())
}

// TestTypoOfACommand: a word near a command's name is a typo (exit 2, the
// command named), unless a session of exactly that name is here: then it
// is watched, and the command named too. Far from every command, a word is
// a target as before.
func TestTypoOfACommand(t *testing.T) {
	t.Parallel()
	f := newFleet(t)
	f.run(t, "stauts").Assert(t, icmd.Expected{ExitCode: 2, Err: "omega-monitor: no command stauts: did you mean status? (no session stauts here either"})
	f.run(t, "lsit").Assert(t, icmd.Expected{ExitCode: 2, Err: "did you mean list?"})
	if f.has(t, "monitor-stauts") || f.has(t, "monitor-lsit") {
		t.Error("a watcher started for a typo")
	}
	f.tmux.NewSession(t, "shop", "sleep 300")
	res := f.run(t, "shop")
	res.Assert(t, icmd.Expected{Out: "watching shop in monitor-shop", Err: "omega-monitor: shop is a session here: watching it (the command is stop)"})
	f.run(t, "stop", "shop").Assert(t, icmd.Success)
	f.run(t, "nosuchthing").Assert(t, icmd.Expected{ExitCode: 1, Err: "no session nosuchthing here"})
}

// TestWatchOnceIsADryRun: watch --once looks at the target once, as the
// watcher's next poll would, and says the verdict, its explanation, the
// probes' readings and what it would type or page; it starts no watcher,
// writes no state, types nothing.
func TestWatchOnceIsADryRun(t *testing.T) {
	f := newFleet(t)
	stalled := filepath.Join("..", "..", "golden", "panes", "GOLDEN-stalled-real.pane")
	question := filepath.Join("..", "..", "golden", "panes", "GOLDEN-question-real.pane")
	abs := func(p string) string { a, _ := filepath.Abs(p); return a }
	f.tmux.NewSession(t, "agent", "cat "+abs(stalled)+"; sleep 300")
	f.tmux.NewSession(t, "asking", "cat "+abs(question)+"; sleep 300")
	for _, s := range []string{"agent", "asking"} {
		poll.WaitOn(t, func(poll.LogT) poll.Result {
			if strings.Contains(f.tmux.Run(t, "capture-pane", "-p", "-t", coord.Exact(s)), "────") {
				return poll.Success()
			}
			return poll.Continue("%s not drawn yet", s)
		}, poll.WithTimeout(10*time.Second))
	}
	res := f.run(t, "agent", "--once", "--work-probe", "echo 3", "--nudge-text", "go on")
	res.Assert(t, icmd.Success)
	for _, want := range []string{
		"agent, pane %", "STALLED: no live activity", "work:     the work probe printed 3: work remains", "probes:   work 3, progress none",
		"MONITOR · agent · STALLED · work=3 · progress=? · would be nudged (1/5)",
		`would type: "go on", then Enter`, "a dry run: nothing was typed, paged or written",
	} {
		assert.Assert(t, strings.Contains(res.Stdout(), want), "lacks %q:\n%s", want, res.Stdout())
	}
	res = f.run(t, "watch", "asking", "--once")
	res.Assert(t, icmd.Success)
	assert.Assert(t, strings.Contains(res.Stdout(), "MONITOR · asking · QUESTION · NOT answered") &&
		strings.Contains(res.Stdout(), "would look again in 2s"), res.Stdout())
	if f.has(t, "monitor-agent") || f.has(t, "monitor-asking") {
		t.Error("a dry run started a watcher")
	}
	if _, err := os.Stat(f.state); err == nil {
		t.Errorf("a dry run wrote %s", f.state)
	}
	if screen := f.tmux.Run(t, "capture-pane", "-p", "-t", coord.Exact("agent")); strings.Contains(screen, "go on") {
		t.Errorf("a dry run typed:\n%s", screen)
	}
	f.run(t, "nosuch", "--once").Assert(t, icmd.Expected{ExitCode: 1, Err: "no session nosuch"})
}

// TestWatchWarnsOfTheFunnelItUses: a funnel of the operator's own
// (OMEGA_MONITOR_ALERT_SEND) needs no Telegram config: its start draws no
// "cannot be delivered" warning for the default funnel's missing config
// (issue 41); a missing funnel of theirs still does.
func TestWatchWarnsOfTheFunnelItUses(t *testing.T) {
	t.Parallel()
	f := newFleet(t)
	f.tmux.NewSession(t, "agent", "sleep 300")
	funnel := filepath.Join(t.TempDir(), "my-funnel")
	assert.NilError(t, os.WriteFile(funnel, []byte("#!/bin/sh\ncat >/dev/null\n"), 0o700))
	res := f.runEnv(t, []string{"OMEGA_MONITOR_ALERT_SEND=" + funnel}, "agent", "--interval", "60")
	res.Assert(t, icmd.Success)
	assert.Assert(t, !strings.Contains(res.Stderr(), "alerts cannot be delivered"), res.Stderr())
	f.run(t, "stop", "agent").Assert(t, icmd.Success)
	res = f.runEnv(t, []string{"OMEGA_MONITOR_ALERT_SEND=" + funnel + ".gone"}, "agent", "--interval", "60")
	res.Assert(t, icmd.Success)
	assert.Assert(t, strings.Contains(res.Stderr(), "alerts cannot be delivered: no alert funnel at "+funnel+".gone"), res.Stderr())
	f.run(t, "stop", "agent").Assert(t, icmd.Success)
}
