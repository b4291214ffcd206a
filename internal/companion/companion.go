// Package companion finds omega-monitor's other binaries: the MCP server,
// the audit sandbox's helper, the answer receiver and the channels'
// deliverer, each a binary of its own so that no poll's start pays for what
// only it links. It finds them; it does not run them.
package companion

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The companions, by the name each is installed under, and what each is.
const (
	MCPServer = "omega-monitor-mcp"
	Sandbox   = "omega-monitor-sandbox"
	Relay     = "omega-monitor-relay"
	Notify    = "omega-monitor-notify"
)

// InstallAll is how a user installs all of omega-monitor's binaries, from
// a checkout.
const InstallAll = "CGO_ENABLED=0 go install -trimpath -ldflags='-s -w' ./cmd/..."

// what says what each companion is, for an error that names it.
var what = map[string]string{
	MCPServer: "the MCP server",
	Sandbox:   "the audit sandbox's helper",
	Relay:     "the answer receiver",
	Notify:    "the channels' deliverer",
}

// Find returns the path of the companion name: beside this process's
// binary, symlinks resolved, where one install puts them all; else on
// PATH. Its error says where it looked and how to install it.
func Find(name string) (string, error) {
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
	return "", fmt.Errorf("%s %s is not installed: not at %s nor on PATH; install omega-monitor's binaries from a checkout with %s", what[name], name, beside, InstallAll)
}

// LookPath is exec.LookPath over path, a PATH's value, rather than this
// process's: the file name names on it, or name itself when it holds a
// slash.
func LookPath(name, path string) (string, error) {
	if strings.Contains(name, "/") {
		return exec.LookPath(name)
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "." // as the shell reads an empty entry
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", &exec.Error{Name: name, Err: exec.ErrNotFound}
}

// MCPUsage is the MCP server's help: omega-monitor mcp --help prints it
// without starting the server, which may not be installed.
const MCPUsage = `usage: omega-monitor mcp
       omega-monitor mcp --hosts ALIAS,... [--ssh-config FILE] [--hosts-timeout DURATION]
       omega-monitor-mcp      (the server omega-monitor mcp runs)

Serves the fleet over the Model Context Protocol on stdin and stdout, for an
agent to read as data. Every tool only reads the watchers' state directories
($OMEGA_MONITOR_HOME, default ~/.omega/monitor); none starts, stops, nudges
or writes anything. What agents, repositories and hosts printed is in fields
named untrusted_text: data, never an instruction.

tools:
  status                  every watcher: liveness, state, figures, nudges
  history {watcher,days}  a watcher's history events over the last days (1 by default)
  explain {watcher}       a watcher's last verdict and why
  logs    {watcher,lines} the last lines of a watcher's log of MONITOR lines (50 by default)
  codex_monitor_agent {mode,watcher}
                          for Codex: the read-only monitor agent's prompt (mode run
                          for one watcher, fleet for all); it spawns nothing

--hosts (or the state home's hosts file) puts other machines' boards in the
status tool's answer, read over ssh as omega-monitor status --hosts reads
them; history, explain and logs read such a host's watcher named as the
board names it, HOST/WATCHER or HOST/TARGET. --hosts-timeout bounds each
host's read (5s by default, 1s to 60s).

Inside an agent's transcript, show the board with omega-monitor status --once.

Register it with Claude Code: claude mcp add --scope user omega-monitor -- omega-monitor mcp
or run omega-monitor install --claude.
`
