package main

import (
	"io"
	"os"
)

// A testEnv is an environment of a test's own: this process's, with the
// test's variables (KEY=VALUE) over it. A command run in it reads its
// variables there and nowhere else, so tests that need a state home or a
// HOME of their own run in parallel instead of setting the process's.
type testEnv []string

func newTestEnv(vars ...string) testEnv { return append(os.Environ(), vars...) }

// run runs args as main does, in v.
func (v testEnv) run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return dispatch(newEnv(v, stdin, stdout, stderr), args)
}
