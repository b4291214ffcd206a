package main

import (
	"fmt"

	"github.com/omega-monitor/omega-monitor/internal/cmdline"
)

func runVersion(e *Env, args []string) int {
	if len(args) > 0 {
		fmt.Fprintf(e.Stderr, "omega-monitor version: takes no arguments\n")
		return 2
	}
	fmt.Fprintf(e.Stdout, "omega-monitor %s\n", cmdline.Version())
	return 0
}
