package main

import (
	"flag"
	"fmt"

	"github.com/omega-monitor/omega-monitor/internal/setup"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

func runDoctor(e *Env, args []string) int {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	positional, code, ok := e.parse(fs, args, setup.DoctorUsage)
	if !ok {
		return code
	}
	if len(positional) > 0 {
		return e.usageError("doctor", fmt.Sprintf("unexpected argument %q", positional[0]))
	}
	state, err := statedir.Home(e.Getenv)
	if err != nil {
		return e.fail(1, err)
	}
	if setup.Report(e.Ctx, setup.Env{Home: e.Home(), State: state, Getenv: e.Getenv}, e.Stdout) > 0 {
		return 1
	}
	return 0
}
