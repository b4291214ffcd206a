package main

import (
	"fmt"
	"io"
	"syscall"

	"github.com/omega-monitor/omega-monitor/internal/cmdline"
	"github.com/omega-monitor/omega-monitor/internal/companion"
)

// runMCP runs the MCP server in this process's place, with the same
// arguments and environment: its e.Stdin and e.Stdout are the client's. The
// server is a binary of its own so that this one does not link the MCP SDK,
// whose package initialisation would cost every start about 6 ms of CPU.
func runMCP(e *Env, args []string) int {
	if cmdline.WantsHelp(args) {
		io.WriteString(e.Stdout, companion.MCPUsage)
		return 0
	}
	return execCompanion(e, companion.MCPServer, "mcp", args)
}

// runChannels runs omega-monitor-notify, which links the notification
// library, for channels check FILE.
func runChannels(e *Env, args []string) int {
	const usage = "usage: omega-monitor channels check [--test] FILE\n\nChecks a channels file (one shoutrrr URL a line) as the deliverer reads it,\nthrough omega-monitor-notify, reaching no service and sending no credential\n(a malformed line is named with its number, never its secrets). --test sends\na test message to each good channel and says which are unreachable."
	if cmdline.WantsHelp(args) {
		fmt.Fprintln(e.Stdout, usage)
		return 0
	}
	if !(len(args) == 2 || len(args) == 3 && args[1] == "--test") || args[0] != "check" {
		return e.exitf(2, "%v", usage)
	}
	return execCompanion(e, companion.Notify, "channels", args)
}

// execCompanion runs the companion name in this process's place, with args.
func execCompanion(e *Env, name, cmd string, args []string) int {
	path, err := companion.Find(name)
	if err == nil {
		err = syscall.Exec(path, append([]string{path}, args...), e.Environ())
		err = fmt.Errorf("cannot run %s: %w", path, err)
	}
	return e.exitf(1, "omega-monitor: %s: %v", cmd, err)
}
