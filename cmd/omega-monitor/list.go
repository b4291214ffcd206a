package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/cmdline"
	"github.com/omega-monitor/omega-monitor/watcher"
)

const listUsage = `usage: omega-monitor list [--json] [--ssh-config PATH] [--timeout DUR] [--mux PATH]

Lists what is watchable, everywhere: the local sessions and the sessions of
every concrete alias in the ssh config, each host probed in parallel under
its own wall clock. Marks the watchers (monitor-*) and the sessions a watcher
watches. A host that cannot be reached is one line saying so.

flags:
`

// listTimeout is the default wall clock of each host's probe: list is asked
// for by a person waiting at a prompt.
const listTimeout = 5 * time.Second

func runList(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print one JSON document")
	sshConfig := fs.String("ssh-config", "", "ssh config `path` (default ~/.ssh/config)")
	timeout := fs.Duration("timeout", listTimeout, "wall clock of each host's probe")
	muxFlag := fs.String("mux", "", "multiplexer binary `path` (default $OMEGA_MONITOR_MUX, ~/.local/bin/rmux, tmux)")
	positional, code, ok := cmdline.ParseInterspersed(fs, args, listUsage, stdout, stderr)
	if !ok {
		return code
	}
	if len(positional) != 0 {
		fmt.Fprintf(stderr, "omega-monitor: list takes no arguments (to watch a session named %q: omega-monitor watch %s)\n", positional[0], positional[0])
		return 2
	}
	if *timeout <= 0 {
		fmt.Fprintf(stderr, "omega-monitor: --timeout must be positive\n")
		return 2
	}
	cfg, err := coord.LoadSSHConfig(*sshConfig)
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor: %v\n", err)
		return 1
	}
	bin, muxErr := coord.MuxBinary(*muxFlag, os.Getenv)
	m := coord.Mux{Bin: bin, SSH: coord.SSH{Config: *sshConfig, Timeout: *timeout}}
	l := watcher.List(context.Background(), m, muxErr, cfg)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(l); err != nil {
			fmt.Fprintf(stderr, "omega-monitor: %v\n", err)
			return 1
		}
		return 0
	}
	l.Write(stdout)
	return 0
}
