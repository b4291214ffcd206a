package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

// mcpServer is the binary that serves omega-monitor mcp. The server is a
// binary of its own so that this one does not link the MCP SDK, whose
// package initialisation would cost every start, each poll's tick among
// them, about 6 ms of CPU.
const mcpServer = "omega-monitor-mcp"

// installAll is how a user installs all of omega-monitor's binaries, from
// a checkout.
const installAll = "CGO_ENABLED=0 go install -trimpath -ldflags='-s -w' ./cmd/..."

// runMCP runs the MCP server in this process's place, with the same
// arguments and environment: its e.Stdin and e.Stdout are the client's.
func runMCP(e *Env, args []string) int {
	path, err := findMCPServer()
	if err == nil {
		err = syscall.Exec(path, append([]string{path}, args...), e.Environ())
		err = fmt.Errorf("cannot run %s: %w", path, err)
	}
	fmt.Fprintf(e.Stderr, "omega-monitor: mcp: %v\n", err)
	return 1
}

// findMCPServer returns the path of omega-monitor-mcp (see findCompanion).
func findMCPServer() (string, error) { return findCompanion(mcpServer, "the MCP server") }

// findCompanion returns the path of the binary name, which is what: beside
// this binary, symlinks resolved, where one install puts them all; else on
// PATH.
func findCompanion(name, what string) (string, error) {
	beside := "beside this binary"
	self, err := os.Executable()
	if err == nil {
		self, err = filepath.EvalSymlinks(self)
	}
	if err == nil {
		path := filepath.Join(filepath.Dir(self), name)
		if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return path, nil
		}
		beside = path
	}
	if path, err := exec.LookPath(name); err == nil {
		return path, nil
	}
	return "", fmt.Errorf("%s %s is not installed: not at %s nor on PATH; install omega-monitor's binaries from a checkout with %s", what, name, beside, installAll)
}
