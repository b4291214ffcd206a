package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"time"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/cmdline"
	"github.com/omega-monitor/omega-monitor/internal/setup"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/watcher"
)

const listUsage = `usage: omega-monitor list [--json] [--ssh-config PATH] [--timeout DUR] [--mux PATH]

Lists what is watchable: the local sessions, and the sessions of the ssh
aliases you opted into, each host probed in parallel under its own wall
clock. Marks the watchers (monitor-*) and the sessions a watcher watches. A
host that cannot be reached is one line saying so.

A connection runs the alias's ssh config (its ProxyCommand) and reaches a
machine that may be compromised, so list reaches only the aliases named in
$OMEGA_MONITOR_HOME/hosts (one a line) and the hosts already watched;
--all-hosts reaches every concrete alias of the ssh config.

flags:
`

// listTimeout is the default wall clock of each host's probe: list is asked
// for by a person waiting at a prompt.
const listTimeout = 5 * time.Second

func runList(e *Env, args []string) int {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print one JSON document")
	sshConfig := fs.String("ssh-config", "", "ssh config `path` (default ~/.ssh/config)")
	timeout := new(time.Duration)
	*timeout = listTimeout
	fs.Var((*cmdline.Duration)(timeout), "timeout", "wall clock of each host's probe, a `duration`")
	allHosts := fs.Bool("all-hosts", false, "reach every concrete alias of the ssh config, not only those opted into")
	muxFlag := fs.String("mux", "", "multiplexer binary `path` (default $OMEGA_MONITOR_MUX, ~/.local/bin/rmux, tmux)")
	positional, code, ok := e.parse(fs, args, listUsage)
	if !ok {
		return code
	}
	if len(positional) != 0 {
		return e.exitf(2, "omega-monitor: list takes no arguments (to watch a session named %q: omega-monitor watch %s)", positional[0], positional[0])
	}
	if *timeout <= 0 {
		return e.exitf(2, "omega-monitor: --timeout must be positive")
	}
	cfg, err := coord.LoadSSHConfig(*sshConfig)
	if err != nil {
		return e.fail(1, err)
	}
	bin, muxErr := coord.MuxBinary(*muxFlag, e.Getenv)
	m := coord.Mux{Bin: bin, SSH: coord.SSH{Config: *sshConfig, Timeout: *timeout}}
	home, _ := statedir.Home(e.Getenv)
	l := watcher.List(e.Ctx, m, muxErr, cfg, *allHosts, home)
	if *asJSON {
		enc := json.NewEncoder(e.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(l); err != nil {
			return e.fail(1, err)
		}
		return 0
	}
	l.Write(e.Stdout)
	fmt.Fprintln(e.Stdout, setup.HooksSummary(setup.HooksInstalled(e.Home(), e.Getenv), setup.AllHookAgents(e.Home(), e.Getenv)))
	return 0
}
