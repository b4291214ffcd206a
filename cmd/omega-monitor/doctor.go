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
		fmt.Fprintf(e.Stderr, "omega-monitor doctor: unexpected argument %q\n", positional[0])
		return 2
	}
	state, err := statedir.Home(e.Getenv)
	if err != nil {
		return e.fail(1, err)
	}
	bad := 0
	for _, c := range setup.Doctor(e.Ctx, setup.Env{Home: e.Home(), State: state, Getenv: e.Getenv}) {
		fmt.Fprintln(e.Stdout, c)
		if !c.OK {
			bad++
		}
	}
	if bad > 0 {
		fmt.Fprintf(e.Stdout, "%d to fix\n", bad)
		return 1
	}
	fmt.Fprintln(e.Stdout, "nothing to fix")
	return 0
}
