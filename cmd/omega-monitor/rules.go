package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/omega-monitor/omega-monitor/internal/cmdline"
	"github.com/omega-monitor/omega-monitor/internal/poll"
)

func runRules(e *Env, args []string) int  { return rulesFile(e, "rules", poll.RulesUsage, args) }
func runAgents(e *Env, args []string) int { return rulesFile(e, "agents", poll.AgentsUsage, args) }

// rulesFile is rules, and agents: both check and list the operator's rules
// file, which holds the rules and the agents it describes.
func rulesFile(e *Env, cmd, usage string, args []string) int {
	if len(args) == 0 || (args[0] != "check" && args[0] != "list") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			io.WriteString(e.Stdout, usage)
			return 0
		}
		return e.usageError(cmd, cmd+" check FILE, or "+cmd+" list [FILE]")
	}
	verb, rest := args[0], args[1:]
	switch {
	case cmdline.WantsHelp(rest):
		io.WriteString(e.Stdout, usage)
		return 0
	case verb == "check" && len(rest) != 1, verb == "list" && len(rest) > 1:
		return e.usageError(cmd, cmd+" check FILE, or "+cmd+" list [FILE]")
	}
	path := ""
	if len(rest) == 1 {
		path = rest[0]
	} else {
		var err error
		if path, err = poll.RulesPath(e.Getenv); err != nil {
			return e.exitf(1, "omega-monitor %s: %v", cmd, err)
		}
	}
	local, err := poll.ReadRules(path)
	if verb == "check" {
		if err == nil && local == nil {
			err = fmt.Errorf("%s: no such file", path)
		}
		if err != nil {
			return e.exitf(1, "omega-monitor %s: %v", cmd, err)
		}
		fmt.Fprintf(e.Stdout, "%s: ok\n", path)
		return 0
	}
	if err != nil {
		fmt.Fprintf(e.Stderr, "omega-monitor %s: %v; the built-in rules apply\n", cmd, err)
		local = nil
	}
	tw := tabwriter.NewWriter(e.Stdout, 0, 0, 2, ' ', 0)
	if cmd == "agents" {
		fmt.Fprintln(tw, "AGENT\tFROM")
		for _, a := range local.Agents() {
			fmt.Fprintf(tw, "%s\t%s\n", a.Name, a.From)
		}
	} else {
		fmt.Fprintln(tw, "AGENT\tVERDICT\tREGION\tRULE\tFROM")
		for _, e := range local.Effective() {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.Agent, e.Verdict, e.Region, e.Name, e.From)
		}
	}
	tw.Flush()
	return 0
}
