package main

import (
	"fmt"
	"io"
)

// notYet answers for a subcommand whose work has not landed.
func notYet(name string) func([]string, io.Reader, io.Writer, io.Writer) int {
	return func(_ []string, _ io.Reader, _, stderr io.Writer) int {
		fmt.Fprintf(stderr, "omega-monitor: %s is not built yet\n", name)
		return 1
	}
}
