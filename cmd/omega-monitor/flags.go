package main

import (
	"flag"

	"github.com/omega-monitor/omega-monitor/internal/cmdline"
)

// newFlagSet is a command's flag set: parse reports its errors.
func newFlagSet(name string) *flag.FlagSet {
	return flag.NewFlagSet(name, flag.ContinueOnError)
}

// parse parses a command's flags the one way every command does: wherever
// they stand among its arguments, --help answered with the usage on
// standard output (and the flags listed, when the usage ends "flags:"), a
// bad flag said on standard error with the usage. When ok is false the
// command returns code: 0 after --help, 2 after a usage error.
func (e *Env) parse(fs *flag.FlagSet, args []string, usage string) (positional []string, code int, ok bool) {
	return cmdline.ParseInterspersed(fs, args, usage, e.Stdout, e.Stderr)
}
