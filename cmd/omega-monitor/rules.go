package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/omega-monitor/omega-monitor/internal/poll"
)

const rulesUsage = `usage: omega-monitor rules check FILE
       omega-monitor rules list [FILE]

An operator's own rules, read with the built-in ones by every watcher:
$OMEGA_MONITOR_HOME/rules.json (default ~/.omega/monitor/rules.json), a JSON
object {"rules": [...]}, each rule
  {"agent": "codex", "name": "...", "region": "above", "pattern": "^...",
   "verdict": "working", "priority": "before"}
agent: claude, codex or gemini. region: above, below, dialog, box, turn or
frame. pattern: a Go regular expression, anchored with ^ unless "free" says
why not; "lines": N reads only the region's last N lines. verdict: working,
question, or hold:NAME (draft, interrupt, keyboard, usage-limit,
no-input-box, turn-open). A rule named as a built-in one replaces it;
"disable": true turns the built-in rule of that name off. A bad file never
stops a watcher: it says so once and the built-in rules apply.

check validates FILE and names the line of each error (exit 1).
list prints the effective rules and where each came from (FILE, or the
watchers' rules file when none is given).
`

func runRules(e *Env, args []string) int {
	if len(args) == 0 || (args[0] != "check" && args[0] != "list") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			io.WriteString(e.Stdout, rulesUsage)
			return 0
		}
		return e.usageError("rules", "rules check FILE, or rules list [FILE]")
	}
	verb, rest := args[0], args[1:]
	switch {
	case verb == "check" && len(rest) != 1, verb == "list" && len(rest) > 1:
		return e.usageError("rules", "rules check FILE, or rules list [FILE]")
	}
	path := ""
	if len(rest) == 1 {
		path = rest[0]
	} else {
		var err error
		if path, err = poll.RulesPath(e.Getenv); err != nil {
			fmt.Fprintf(e.Stderr, "omega-monitor rules: %v\n", err)
			return 1
		}
	}
	local, err := poll.ReadRules(path)
	if verb == "check" {
		if err == nil && local == nil {
			err = fmt.Errorf("%s: no such file", path)
		}
		if err != nil {
			fmt.Fprintf(e.Stderr, "omega-monitor rules: %v\n", err)
			return 1
		}
		fmt.Fprintf(e.Stdout, "%s: ok\n", path)
		return 0
	}
	if err != nil {
		fmt.Fprintf(e.Stderr, "omega-monitor rules: %v; the built-in rules apply\n", err)
		local = nil
	}
	tw := tabwriter.NewWriter(e.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "AGENT\tVERDICT\tREGION\tRULE\tFROM")
	for _, e := range local.Effective() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.Agent, e.Verdict, e.Region, e.Name, e.From)
	}
	tw.Flush()
	return 0
}
