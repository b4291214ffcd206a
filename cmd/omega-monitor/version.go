package main

import (
	"fmt"
	"io"
	"runtime/debug"
)

// version is this binary's version as its build info records it: the module
// version ("(devel)" for a build from a checkout) and the VCS revision, with
// "+dirty" for a build from a modified tree. A loop script and the binary
// that wrote it carry the same string.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev == "" {
		return v + " (no VCS revision)"
	}
	return v + " " + rev + dirty
}

func runVersion(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "omega-monitor version: takes no arguments\n")
		return 2
	}
	fmt.Fprintf(stdout, "omega-monitor %s\n", version())
	return 0
}
