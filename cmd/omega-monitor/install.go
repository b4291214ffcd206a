package main

import (
	"flag"
	"fmt"
	"io"
)

const installUsage = `usage: omega-monitor install [--claude] [--uninstall]

--claude installs /monitor into Claude Code for this user: the command file
~/.claude/commands/monitor.md and the read-only MCP server omega-monitor in
~/.claude.json. Running it again changes nothing; --uninstall removes both.

flags:
`

func runInstall(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("install", flag.ContinueOnError)
	claude := fs.Bool("claude", false, "install /monitor and the MCP server into Claude Code")
	uninstall := fs.Bool("uninstall", false, "remove what the same install put in place")
	positional, code, ok := parseInterspersed(fs, args, installUsage, stdout, stderr)
	if !ok {
		return code
	}
	if len(positional) > 0 {
		fmt.Fprintf(stderr, "omega-monitor: install takes no arguments, got %q\n", positional[0])
		writeCommandUsage(stderr, fs, installUsage)
		return 2
	}
	if *claude {
		return installClaude(*uninstall, stdout, stderr)
	}
	// TODO(merge): the alert funnel's install (helper h3-ops) goes here.
	fmt.Fprintln(stderr, "omega-monitor: install without --claude is not built yet")
	return 1
}
