package main

import (
	"fmt"
	"io"

	"github.com/omega-monitor/omega-monitor/internal/cmdline"
)

func runVersion(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "omega-monitor version: takes no arguments\n")
		return 2
	}
	fmt.Fprintf(stdout, "omega-monitor %s\n", cmdline.Version())
	return 0
}
