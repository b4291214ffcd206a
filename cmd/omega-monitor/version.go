package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/cmdline"
)

func runVersion(e *Env, args []string) int {
	if cmdline.WantsHelp(args) {
		fmt.Fprintln(e.Stdout, "usage: omega-monitor version\n\nPrints the version this binary is stamped with, where it is and when it was written.")
		return 0
	}
	if len(args) > 0 {
		return e.exitf(2, "omega-monitor version: takes no arguments")
	}
	exe, _ := os.Executable()
	var written time.Time
	if fi, err := os.Stat(exe); err == nil {
		written = fi.ModTime()
	}
	about := cmdline.About(exe, written)
	fmt.Fprintf(e.Stdout, "omega-monitor %s\n", strings.Join(about, "\n  "))
	return 0
}
