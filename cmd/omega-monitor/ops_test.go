package main

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	"gotest.tools/v3/icmd"
	"gotest.tools/v3/poll"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/cmdline"
	"github.com/omega-monitor/omega-monitor/internal/setup"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
	"github.com/omega-monitor/omega-monitor/internal/watcher"
	"github.com/omega-monitor/omega-monitor/scripts"
)

func TestVersion(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var out, errb bytes.Buffer
		assert.Equal(t, run(args, nil, &out, &errb), 0, errb.String())
		first, rest, _ := strings.Cut(out.String(), "\n")
		assert.Equal(t, first, "omega-monitor "+cmdline.Version())
		assert.Assert(t, strings.Contains(rest, "  built with go") && strings.Contains(rest, "  running from /"), out.String())
	}
	assert.Assert(t, cmdline.Version() != "" && cmdline.Version() != "unknown", cmdline.Version())
	var out, errb bytes.Buffer
	assert.Equal(t, run([]string{"version", "extra"}, nil, &out, &errb), 2)
}

// TestLoopVersion: the loop script is stamped with the binary's version,
// and a loop of another version, or of none, is refused.
func TestLoopVersion(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	loop, err := watcher.InstallLoop(home)
	assert.NilError(t, err)
	assert.NilError(t, watcher.CheckLoopVersion(loop))
	data, err := os.ReadFile(loop)
	assert.NilError(t, err)
	assert.Assert(t, strings.HasPrefix(string(data), "#!/usr/bin/env bash\n"+watcher.LoopVersionMark+cmdline.Version()+"\n"))

	other := strings.Replace(string(data), watcher.LoopVersionMark+cmdline.Version(), watcher.LoopVersionMark+"v9.9.9 0123abc", 1)
	assert.NilError(t, os.WriteFile(loop, []byte(other), 0o700))
	err = watcher.CheckLoopVersion(loop)
	assert.ErrorContains(t, err, "is of version v9.9.9 0123abc, this binary is "+cmdline.Version())

	assert.NilError(t, os.WriteFile(loop, scripts.Loop, 0o700))
	assert.ErrorContains(t, watcher.CheckLoopVersion(loop), "carries no version")
}

func TestHelpNamesSettingsAndFiles(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	assert.Equal(t, run([]string{"--help"}, nil, &out, &errb), 0)
	for _, want := range []string{"OMEGA_MONITOR_TIMEOUT", "OMEGA_MONITOR_ALERT_SEND", "OMEGA_TELEGRAM_CONF",
		"OMEGA_TELEGRAM_API", "monitor.log", "~/.omega/monitor", "alert-failed.log", "logs", "version", "install"} {
		assert.Assert(t, strings.Contains(out.String(), want), "--help does not name %s:\n%s", want, out.String())
	}
}

// TestLogs: logs prints the last N MONITOR lines a watcher's ticks wrote,
// and -f keeps printing what comes, across a rotation.
func TestLogs(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	env := newTestEnv("OMEGA_MONITOR_HOME=" + home)
	state := filepath.Join(home, "monitor-agent")
	for i := range 3 {
		tickOnce(t, readPane(t, "GOLDEN-stalled-real"), "--state", state, "--target", "agent", "--work", "7", "--nudge-budget", "1")
		_ = i
	}
	var out, errb bytes.Buffer
	assert.Equal(t, env.run([]string{"logs", "agent", "-n", "2"}, nil, &out, &errb), 0, errb.String())
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	assert.Equal(t, len(lines), 2, out.String())
	for _, l := range lines {
		// Each line says when: the tick's clock, in this machine's zone.
		when := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC).Local().Format(statedir.LogTime)
		assert.Assert(t, strings.HasPrefix(l, when+" MONITOR · agent · STALLED"), l)
	}
	out.Reset()
	assert.Equal(t, env.run([]string{"logs", "agent", "-n", "0"}, nil, &out, &errb), 0)
	assert.Equal(t, strings.Count(out.String(), "\n"), 3)

	errb.Reset()
	assert.Equal(t, env.run([]string{"logs", "other"}, nil, &out, &errb), 1)
	assert.Assert(t, strings.Contains(errb.String(), "no log for other: it was never watched here"), errb.String())
	for _, args := range [][]string{{"logs"}, {"logs", "a", "b"}, {"logs", "a:b:c"}, {"logs", "agent", "-n", "-1"}} {
		assert.Equal(t, env.run(args, nil, &out, &errb), 2, "%q", args)
	}

	// -f, as a user runs it: lines that come later are printed, and so are
	// those of a log that rotated.
	cmd := exec.Command(omegaMonitor(t), "logs", "agent", "-f", "-n", "1")
	cmd.Env = append(os.Environ(), "OMEGA_MONITOR_HOME="+home)
	var followed syncBuffer
	cmd.Stdout, cmd.Stderr = &followed, &followed
	assert.NilError(t, cmd.Start())
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	waitFor := func(n int) {
		poll.WaitOn(t, func(poll.LogT) poll.Result {
			if c := strings.Count(followed.String(), "MONITOR"); c >= n {
				return poll.Success()
			}
			return poll.Continue("followed:\n%s", followed.String())
		}, poll.WithTimeout(20*time.Second))
	}
	waitFor(1)
	tickOnce(t, readPane(t, "GOLDEN-question-real"), "--state", state, "--target", "agent")
	waitFor(2)
	log := filepath.Join(state, "monitor.log")
	assert.NilError(t, os.Rename(log, log+".1"))
	tickOnce(t, readPane(t, "GOLDEN-stalled-real"), "--state", state, "--target", "agent", "--work", "7", "--nudge-budget", "1")
	waitFor(3)
	assert.Assert(t, strings.Contains(followed.String(), " · QUESTION · "), followed.String())
	// No loop runs here: said once, not waited on in silence.
	assert.Equal(t, strings.Count(followed.String(), "the watcher of agent is stopped; its next lines come when it starts again"), 1, followed.String())
}

// TestInstall: install puts the embedded funnel in ~/.omega/bin with mode
// 0700 in directories of mode 0700, and a second run changes nothing.
func TestInstall(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	env := newTestEnv("HOME="+home, "OMEGA_MONITOR_HOME=", "OMEGA_TELEGRAM_CONF=")
	var out, errb bytes.Buffer
	assert.Equal(t, env.run([]string{"install"}, nil, &out, &errb), 0, errb.String())
	funnel := filepath.Join(home, ".omega", "bin", "omega-alert-send.sh")
	assert.Assert(t, strings.Contains(out.String(), "alert funnel: installed "+funnel), out.String())
	assert.Assert(t, strings.Contains(out.String(), "no Telegram config at "+filepath.Join(home, ".omega", "telegram.conf")), out.String())
	got, err := os.ReadFile(funnel)
	assert.NilError(t, err)
	assert.Assert(t, bytes.Equal(got, scripts.AlertSend))
	for path, want := range map[string]os.FileMode{
		filepath.Join(home, ".omega"): 0o700, filepath.Join(home, ".omega", "bin"): 0o700,
		filepath.Join(home, ".omega", "monitor"): 0o700, funnel: 0o700,
	} {
		assert.Equal(t, mode(t, path), want, path)
	}
	out.Reset()
	assert.Equal(t, env.run([]string{"install"}, nil, &out, &errb), 0, errb.String())
	assert.Equal(t, out.String(), "directories: up to date\nalert funnel: up to date\nno Telegram config at "+
		filepath.Join(home, ".omega", "telegram.conf")+" yet: create it (omega-monitor install --help shows how), mode 0600\n"+
		setup.ChatIDHelp(filepath.Join(home, ".omega", "telegram.conf"))+"\n")
	// A funnel someone loosened is put right.
	assert.NilError(t, os.Chmod(funnel, 0o777))
	out.Reset()
	assert.Equal(t, env.run([]string{"install"}, nil, &out, &errb), 0, errb.String())
	assert.Assert(t, strings.Contains(out.String(), "was mode 0777, now 0700"), out.String())
	assert.Equal(t, env.run([]string{"install", "extra"}, nil, &out, &errb), 2)
}

// TestInstallTestAlert: the README's setup, word for word against a fake
// Telegram: the example config passes the funnel's own check, and the test
// alert says it was delivered, or that it was not.
func TestInstallTestAlert(t *testing.T) {
	t.Parallel()
	testenv.Need(t, "bash", "curl")
	tg := &telegram{}
	srv := newTelegramServer(t, tg)
	home := t.TempDir()
	conf := filepath.Join(home, ".omega", "telegram.conf")
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "OMEGA_TELEGRAM_API=" + srv}
	res := icmd.RunCmd(icmd.Command(omegaMonitor(t), "install"), icmd.WithEnv(env...))
	res.Assert(t, icmd.Success)
	// Word for word, the placeholder token is refused: said at once,
	// nothing sent, and nothing kept as an alert lost.
	assert.NilError(t, os.WriteFile(conf, []byte(readmeTelegramExample(t)), 0o600))
	res = icmd.RunCmd(icmd.Command(omegaMonitor(t), "install", "--test-alert"), icmd.WithEnv(env...))
	res.Assert(t, icmd.Expected{ExitCode: 1, Out: "sending a test alert through", Err: "bot_token is the example's placeholder"})
	assert.Equal(t, len(tg.messages()), 0)
	_, err := os.Stat(filepath.Join(home, ".omega", "monitor", "alert-failed.log"))
	assert.Assert(t, errors.Is(err, fs.ErrNotExist), "a test alert's failure was logged as an alert lost")

	assert.NilError(t, os.WriteFile(conf, []byte(readmeTelegramConf(t)), 0o600))
	res = icmd.RunCmd(icmd.Command(omegaMonitor(t), "install", "--test-alert"), icmd.WithEnv(env...))
	res.Assert(t, icmd.Expected{Out: "test alert delivered through " + filepath.Join(home, ".omega", "bin", "omega-alert-send.sh")})
	assert.Equal(t, len(tg.messages()), 1)
	assert.Assert(t, strings.Contains(tg.messages()[0], "test alert from"), tg.messages()[0])

	tg.fail(500, `{"ok":false,"description":"Internal Server Error"}`)
	// Each try is said as it comes, not after the last.
	res = icmd.RunCmd(icmd.Command(omegaMonitor(t), "install", "--test-alert"),
		icmd.WithEnv(append(env, "OMEGA_ALERT_TRIES=2", "OMEGA_ALERT_BACKOFF=0")...))
	res.Assert(t, icmd.Expected{ExitCode: 1, Out: "try 1: HTTP 500", Err: "test alert NOT delivered"})
}

// TestLoopEnvRefusesALoopOfAnotherVersion: a loop script stamped by another
// build is refused at its start; one without a stamp (a checkout's) runs.
func TestLoopEnvRefusesALoopOfAnotherVersion(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := newTestEnv("OMEGA_MONITOR_HOME=" + dir)
	other := filepath.Join(dir, "other.sh")
	assert.NilError(t, os.WriteFile(other, []byte("#!/usr/bin/env bash\n"+watcher.LoopVersionMark+"v0.0.1 deadbeef\n"), 0o700))
	var out, errb bytes.Buffer
	code := env.run([]string{"loop-env", "agent", "--pid", strconv.Itoa(os.Getpid()), "--loop-script", other}, nil, &out, &errb)
	assert.Equal(t, code, 2)
	assert.Assert(t, strings.Contains(errb.String(), "is of version v0.0.1 deadbeef, this binary is "+cmdline.Version()), errb.String())
	assert.Equal(t, out.String(), "")

	plain := filepath.Join(dir, "plain.sh")
	assert.NilError(t, os.WriteFile(plain, scripts.Loop, 0o700))
	out.Reset()
	errb.Reset()
	code = env.run([]string{"loop-env", "agent", "--pid", strconv.Itoa(os.Getpid()), "--loop-script", plain}, nil, &out, &errb)
	assert.Equal(t, code, 0, errb.String())
}

// TestLogsAll: logs --all prints every watcher's last lines, each after its
// target, and -f follows them all, whole lines each, until interrupted.
func TestLogsAll(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	env := newTestEnv("OMEGA_MONITOR_HOME=" + home)
	var out, errb bytes.Buffer
	assert.Equal(t, env.run([]string{"logs", "--all"}, nil, &out, &errb), 1)
	assert.Assert(t, strings.Contains(errb.String(), "no watcher has a log under "+home), errb.String())
	for _, target := range []string{"shop", "box:web"} {
		tk, _ := coord.ParseTarget(target)
		state := filepath.Join(home, coord.WatcherName(tk))
		tickOnce(t, readPane(t, "GOLDEN-question-real"), "--state", state, "--target", target)
		assert.NilError(t, os.WriteFile(filepath.Join(state, "target"), []byte(target+"\n"), 0o600))
	}
	out.Reset()
	assert.Equal(t, env.run([]string{"logs", "--all", "-n", "1"}, nil, &out, &errb), 0, errb.String())
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	assert.Equal(t, len(lines), 2, out.String())
	for _, prefix := range []string{"[box:web] ", "[shop] "} {
		assert.Assert(t, strings.Contains(out.String(), prefix), out.String())
	}
	assert.Equal(t, env.run([]string{"logs", "--all", "shop"}, nil, &out, &errb), 2)

	cmd := exec.Command(omegaMonitor(t), "logs", "--all", "-f", "-n", "0")
	cmd.Env = append(os.Environ(), "OMEGA_MONITOR_HOME="+home)
	var followed syncBuffer
	cmd.Stdout, cmd.Stderr = &followed, &followed
	assert.NilError(t, cmd.Start())
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	tickOnce(t, readPane(t, "GOLDEN-stalled-real"), "--state", filepath.Join(home, "monitor-shop"), "--target", "shop", "--work", "7", "--nudge-budget", "0")
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if strings.Contains(followed.String(), "[shop] ") && strings.Contains(followed.String(), "STALLED") {
			return poll.Success()
		}
		return poll.Continue("followed:\n%s", followed.String())
	}, poll.WithTimeout(20*time.Second))
}
