package main

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestScripts runs the command contracts in testdata/script, one txtar
// file each, in parallel, as cmd/go tests its verbs: omega-monitor is this
// test binary (TestMain), in a world of its own per script: a home, a
// state home and a tmux socket directory under the script's $WORK, and
// none of the environment of the machine that runs the tests.
//
// Besides testscript's commands, `exits CODE PROGRAM [ARGS...]` runs a
// program and checks its exit status, for the contracts that tell a usage
// error (2) from a failure (1).
func TestScripts(t *testing.T) {
	t.Parallel()
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("testdata", "script"),
		Setup: func(e *testscript.Env) error {
			e.Setenv("HOME", filepath.Join(e.WorkDir, "home"))
			e.Setenv("OMEGA_MONITOR_HOME", filepath.Join(e.WorkDir, "state"))
			e.Setenv("TMUX_TMPDIR", filepath.Join(e.WorkDir, "tmux"))
			e.Setenv("TZ", "UTC")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits": exits,
		},
		RequireExplicitExec: true,
	})
}

// exits is the script command `exits CODE PROGRAM [ARGS...]`.
func exits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE PROGRAM [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: %q is not an exit status", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			ts.Fatalf("exits: %v", err)
		}
		got = exit.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}
