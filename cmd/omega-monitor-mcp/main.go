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

	"github.com/omega-monitor/omega-monitor/internal/board/hosts"
	"github.com/omega-monitor/omega-monitor/internal/cmdline"
	"github.com/omega-monitor/omega-monitor/internal/companion"
	"github.com/omega-monitor/omega-monitor/internal/pkgerr"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	hostFlags := hosts.BindFlags(fs)
	positional, code, ok := cmdline.ParseInterspersed(fs, args, companion.MCPUsage, stdout, stderr)
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
	b, err := hostFlags.Open(home, os.Getenv)
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor: mcp: %s\n", pkgerr.Why(err))
		return 2
	}
	server := newServer(b, time.Now)
	t := &mcp.IOTransport{Reader: io.NopCloser(stdin), Writer: nopWriteCloser{stdout}}
	if err := server.Run(context.Background(), t); err != nil && !errors.Is(err, io.EOF) {
		fmt.Fprintf(stderr, "omega-monitor: mcp: %v\n", err)
		return 1
	}
	return 0
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
