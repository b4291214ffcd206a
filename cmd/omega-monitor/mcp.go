package main

import (
	"fmt"
	"syscall"

	"github.com/omega-monitor/omega-monitor/internal/companion"
)

// runMCP runs the MCP server in this process's place, with the same
// arguments and environment: its e.Stdin and e.Stdout are the client's. The
// server is a binary of its own so that this one does not link the MCP SDK,
// whose package initialisation would cost every start about 6 ms of CPU.
func runMCP(e *Env, args []string) int {
	path, err := companion.Find(companion.MCPServer)
	if err == nil {
		err = syscall.Exec(path, append([]string{path}, args...), e.Environ())
		err = fmt.Errorf("cannot run %s: %w", path, err)
	}
	fmt.Fprintf(e.Stderr, "omega-monitor: mcp: %v\n", err)
	return 1
}
