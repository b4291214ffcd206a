package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/cmdline"
	"github.com/omega-monitor/omega-monitor/internal/companion"
	"github.com/omega-monitor/omega-monitor/internal/pkgerr"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/watcher"
)

// An Env is all a command reads of the world beyond its arguments: its
// standard streams, its environment, its clock and the context that bounds
// it. main hands each command the process's own; a test hands it one of its
// own. No command reads the environment or the clock from a global, so that
// command tests run in parallel, each with its own state home.
type Env struct {
	Ctx    context.Context
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Now is the clock.
	Now func() time.Time

	vars []string          // KEY=VALUE, as a child inherits them
	get  map[string]string // vars, the last of a key winning
}

// newEnv returns an Env over vars (KEY=VALUE) and the real clock.
func newEnv(vars []string, stdin io.Reader, stdout, stderr io.Writer) *Env {
	e := &Env{Ctx: context.Background(), Stdin: stdin, Stdout: stdout, Stderr: stderr, Now: time.Now,
		vars: slices.Clone(vars), get: make(map[string]string, len(vars))}
	for _, kv := range vars {
		if k, v, ok := strings.Cut(kv, "="); ok {
			e.get[k] = v
		}
	}
	return e
}

// processEnv is the Env of this process.
func processEnv(stdin io.Reader, stdout, stderr io.Writer) *Env {
	return newEnv(os.Environ(), stdin, stdout, stderr)
}

// Getenv is e.Getenv over e's environment; pass it where a package takes
// a getenv.
func (e *Env) Getenv(key string) string { return e.get[key] }

// Environ is e's environment as a child process inherits it.
func (e *Env) Environ() []string { return slices.Clone(e.vars) }

// Home is the user's home directory, $HOME, for the files kept under it
// (the funnel, its configuration); "" when it is not set.
func (e *Env) Home() string { return e.get["HOME"] }

// withDeadline runs f, and returns 124, as a clock ending the process
// would, once d has passed without its answer; its context is done then
// too. The loop calls tick, confirm and ack without a clock of its own: a
// call that hangs (a lock never freed, a pipe never closed) must still end.
// What f was doing is abandoned with the process, which exits on return:
// every file it writes is replaced atomically, so none is left half written.
func withDeadline(e *Env, d time.Duration, f func(e *Env) int) int {
	ctx, cancel := context.WithTimeout(e.Ctx, d)
	defer cancel()
	inner := *e
	inner.Ctx = ctx
	done := make(chan int, 1)
	go func() { done <- f(&inner) }()
	select {
	case code := <-done:
		return code
	case <-ctx.Done():
		io.WriteString(e.Stderr, "omega-monitor: no answer within "+d.String()+"\n")
		return 124
	}
}

// LookPath is exec.LookPath over e's PATH.
func (e *Env) LookPath(name string) (string, error) {
	return companion.LookPath(name, e.Getenv("PATH"))
}

// usageError says why a command line is wrong, in one line that says where
// its usage is, and returns 2: the usage itself would bury the line.
func (e *Env) usageError(command, why string) int {
	return e.exitf(2, "omega-monitor %s: %s; %s", command, why, cmdline.HelpHint(command))
}

// fail says err on e's standard error, as every command says its errors,
// and returns code.
func (e *Env) fail(code int, err error) int {
	// A package's name is for a programmer, not in an operator's line.
	fmt.Fprintf(e.Stderr, "omega-monitor: %s\n", pkgerr.Why(err))
	return code
}

// said prints what a command did, one line on standard output, or says
// its error and returns 1.
func (e *Env) said(said string, err error) int {
	if err != nil {
		return e.fail(1, err)
	}
	fmt.Fprintln(e.Stdout, said)
	return 0
}

// watcherOf reads the one positional argument of a command about one
// watcher (stop, logs, reset): its target, or the watcher's own name. When
// code is not 0 it was said, and the command returns it.
func (e *Env) watcherOf(command string, positional []string) (home string, t coord.Target, code int) {
	if len(positional) != 1 {
		fmt.Fprintf(e.Stderr, "omega-monitor: %s takes one target, got %d; %s\n", command, len(positional), cmdline.HelpHint(command))
		return "", t, 2
	}
	home, err := statedir.Home(e.Getenv)
	if err != nil {
		return "", t, e.fail(1, err)
	}
	if t, err = watcher.ResolveTarget(home, positional[0]); err != nil {
		return "", t, e.fail(2, err)
	}
	return home, t, 0
}

// exitf says one line on e's standard error and returns code: how a
// command ends that words its own error (2 for a usage error, 1 for a
// failure).
func (e *Env) exitf(code int, format string, a ...any) int {
	fmt.Fprintln(e.Stderr, fmt.Sprintf(format, a...))
	return code
}
