package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	"gotest.tools/v3/icmd"
	"gotest.tools/v3/poll"
)

// TestForgetARealWatcher: a running watcher is not forgotten (the reason,
// and how to stop it); a name that is a path, and a watcher's directory
// that is a link, are refused and nothing is removed; once stopped, the
// watcher is forgotten by its own name, and leaves the board.
func TestForgetARealWatcher(t *testing.T) {
	t.Parallel()
	f := newFleet(t)
	f.tmux.NewSession(t, "agent", "sleep 600")
	f.tmux.NewSession(t, "other", "sleep 600")
	for _, s := range []string{"agent", "other"} {
		f.run(t, s, "--interval", "1").Assert(t, icmd.Success)
	}
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		for _, s := range []string{"agent", "other"} {
			if _, err := os.Stat(filepath.Join(f.state, "monitor-"+s, "state.json")); err != nil {
				return poll.Continue("%s has not polled", s)
			}
		}
		return poll.Success()
	}, poll.WithTimeout(60*time.Second), poll.WithDelay(100*time.Millisecond))

	res := f.run(t, "forget", "agent")
	res.Assert(t, icmd.Expected{ExitCode: 1, Err: "monitor-agent is running (live: pid "})
	assert.Assert(t, strings.Contains(res.Stderr(), "; stop it first: omega-monitor stop agent\n"), res.Stderr())

	outside := t.TempDir()
	assert.NilError(t, os.WriteFile(filepath.Join(outside, "state.json"), []byte("{}"), 0o600))
	assert.NilError(t, os.Symlink(outside, filepath.Join(f.state, "monitor-evil")))
	f.run(t, "forget", "monitor-evil").Assert(t, icmd.Expected{ExitCode: 1, Err: "is a symbolic link, not a watcher's directory"})
	for _, arg := range []string{"../agent", "monitor-../../etc", "monitor-agent/../other"} {
		res := f.run(t, "forget", arg)
		assert.Equal(t, res.ExitCode, 2, "forget %s: %s", arg, res.Combined())
		assert.Equal(t, strings.Count(res.Stderr(), "\n"), 1, res.Stderr())
	}
	f.run(t, "forget").Assert(t, icmd.Expected{ExitCode: 2, Err: "forget takes one target, got 0"})
	for _, kept := range []string{filepath.Join(outside, "state.json"), filepath.Join(f.state, "monitor-agent", "state.json"), filepath.Join(f.state, "monitor-other", "state.json")} {
		_, err := os.Stat(kept)
		assert.NilError(t, err)
	}

	f.run(t, "stop", "agent").Assert(t, icmd.Success)
	f.run(t, "forget", "monitor-agent").Assert(t, icmd.Expected{Out: "forgot monitor-agent, the watcher of agent (gone: stopped "})
	_, err := os.Lstat(filepath.Join(f.state, "monitor-agent"))
	assert.Assert(t, os.IsNotExist(err), "%v", err)
	f.run(t, "forget", "agent").Assert(t, icmd.Expected{ExitCode: 1, Err: "no watcher monitor-agent under "})
	for _, w := range f.census(t).Watchers {
		assert.Assert(t, w.Name != "monitor-agent", "the forgotten watcher is still on the board")
	}
	assert.Assert(t, f.has(t, "monitor-other"))
	f.run(t, "stop", "other").Assert(t, icmd.Success)
}

// TestStatusLiveNeedsATerminal: --live is the live form's own spelling; on
// a pipe it is refused in one line that says what prints the board.
func TestStatusLiveNeedsATerminal(t *testing.T) {
	t.Parallel()
	env := newTestEnv("OMEGA_MONITOR_HOME=" + t.TempDir())
	for _, args := range [][]string{{"status", "--live"}, {"status", "--live", "--once"}, {"status", "--live", "--json"}} {
		var out, errb bytes.Buffer
		code := env.run(args, nil, &out, &errb)
		if code != 2 || out.Len() != 0 || strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("%q: exit %d\nstdout %q\nstderr %q", args, code, out.String(), errb.String())
		}
	}
	var out, errb bytes.Buffer
	env.run([]string{"status", "--live"}, nil, &out, &errb)
	assert.Assert(t, strings.Contains(errb.String(), "--live draws on a terminal, and standard output is not one (--once prints the board once)"), errb.String())
}
