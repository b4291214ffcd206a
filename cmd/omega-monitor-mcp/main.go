// Command omega-monitor-mcp serves omega-monitor's fleet of watchers,
// read-only, over the Model Context Protocol on stdin and stdout: the server
// behind `omega-monitor mcp`, which runs it.
//
// It is a binary of its own so that omega-monitor does not link the MCP SDK:
// the SDK's package initialisation (encoding/gob, JSON schemas, net/http,
// TLS) cost every start of omega-monitor about 6 ms of CPU, and the poll loop
// starts omega-monitor once a poll for every watched agent.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omega-monitor/omega-monitor/internal/cmdline"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

const usage = `usage: omega-monitor mcp
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

Inside an agent's transcript, show the board with omega-monitor status --once.

Register it with Claude Code: claude mcp add --scope user omega-monitor -- omega-monitor mcp
or run omega-monitor install --claude.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	positional, code, ok := cmdline.ParseInterspersed(fs, args, usage, stdout, stderr)
	if !ok {
		return code
	}
	if len(positional) > 0 {
		fmt.Fprintf(stderr, "omega-monitor: mcp takes no arguments, got %q\n", positional[0])
		return 2
	}
	home, err := statedir.Home(os.Getenv)
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor: %v\n", err)
		return 1
	}
	server := newServer(home, time.Now)
	t := &mcp.IOTransport{Reader: io.NopCloser(stdin), Writer: nopWriteCloser{stdout}}
	if err := server.Run(context.Background(), t); err != nil && !errors.Is(err, io.EOF) {
		fmt.Fprintf(stderr, "omega-monitor: mcp: %v\n", err)
		return 1
	}
	return 0
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
