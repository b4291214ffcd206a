// Command omega-monitor watches AI coding agents in tmux or rmux sessions and
// decides what each screen means: WORKING, QUESTION, STALLED or BLOCKED.
//
// It is one binary with subcommands over the packages of this module. The
// poll loop (scripts/omega-monitor.sh) does every effect and calls this binary
// for every judgement, through its judge (internal/judge, one process it keeps,
// which runs each call as run does): the verbs it calls are in loop_*.go (loop-env,
// hold, tick, confirm, ack, deliver, sweep), its contract apart from the operator's
// verbs. Each command gets an Env (streams, environment, clock); no globals.
package main

import (
	_ "embed"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/omega-monitor/omega-monitor/internal/cmdline"
	"github.com/omega-monitor/omega-monitor/internal/watcher"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run runs the command args name with this process's environment and clock.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return dispatch(processEnv(stdin, stdout, stderr), args)
}

// A command is one subcommand: it gets the arguments after its own name.
type command struct {
	name    string
	summary string
	run     func(e *Env, args []string) int
}

// A group is commands listed together in the usage, under a heading.
type group struct {
	heading  string
	commands []command
}

// groups lists every subcommand, by what an operator uses it for. A first
// argument that names none of them is a target, as in "omega-monitor
// host:session".
func groups() []group {
	return []group{
		{"watching", []command{
			{"watch", "start a watcher for a target (the explicit form of omega-monitor TARGET)", runWatch},
			{"stop", "stop the watcher of a target", runStop},
			{"forget", "remove a stopped watcher's state, and with it its line on the board", runForget},
			{"status", "the fleet board: every watcher at a glance (--live, --once, --json, --tmux)", runStatus},
			{"logs", "print a watcher's MONITOR lines (logs TARGET [-f] [-n N])", runLogs},
			{"reset", "re-arm a watcher's nudge budget (only progress does otherwise)", runReset},
			{"list", "what is watchable, everywhere: local sessions and each ssh alias's", runList},
			{"demo", "watch a scripted agent in a private tmux server, for a first look", runDemo},
		}},
		{"setup", []command{
			{"install", "the alert funnel, a test alert, the agents' hooks and /monitor (install --help)", runInstall},
			{"relay", "start, stop or report the receiver of answers from Telegram (relay start|stop|status|logs)", runRelay},
			{"rules", "check or list an operator's own rules (rules check FILE, rules list)", runRules},
			{"agents", "the agents screens are read against, and those the rules file describes (agents list)", runAgents},
			{"channels", "check a channels file, the other channels than Telegram (channels check FILE)", runChannels},
			{"doctor", "what watchers, alerts and answers need here, each with its fix", runDoctor},
			{"version", "print the version and build of this binary", runVersion},
		}},
		{"for agents", []command{
			{"mcp", "serve the fleet read-only over MCP on stdio, for an agent (runs omega-monitor-mcp)", runMCP},
			{"mirror-plan", "the task-mirror call plan for an agent's task list (--runner claude|codex|headless|bare)", runMirrorPlan},
			{"read-watcher", "what another machine's board reads of a watcher here: history, verdict or log, as JSON", runReadWatcher},
			{"wake", "what an agent's hook runs: the watcher of the pane it runs in polls now (silent, exit 0)", runWake},
			{"audit", "the deep audit: plan, check or run read-only auditors over a project", runAudit},
		}},
		{"corpus", []command{
			{"classify", "print what a captured pane means: QUESTION, STALLED, BLOCKED or WORKING", runClassify},
			{"replay", "run the tick logic over a recorded session, offline", runReplay},
			{"golden", "add a captured pane to the golden corpus (golden add NAME --want STATE)", runGolden},
		}},
		{"called by the loop", []command{
			{"loop-env", "the poll loop's settings, checked and resolved once at its start", runLoopEnv},
			{"hold", "take the lock of a watcher's state directory for the loop", runHold},
			{"tick", "one poll's judgement over a captured pane; prints the MONITOR line", runTick},
			{"confirm", "check a fresh capture before the loop types a nudge, or presses its Enter", runConfirm},
			{"ack", "record what the loop did with an action", runAck},
			{"judge", "run the loop's calls of tick, confirm and ack in one resident process", runJudge},
			{"ledger", "record text sent into a watched session (ledger record FILE TEXT)", runLedger},
			{"deliver", "deliver the alerts waiting in a watcher's outbox", runDeliver},
			{"on-change", "run the operator's command for a change of state (started by tick, not waited for)", runOnChange},
			{"sweep", "keep the last 10,000 lines of a watcher's history (run at the loop's start)", runSweep},
		}},
	}
}

// find is the command named name, if any.
func find(name string) (command, bool) {
	for _, g := range groups() {
		for _, c := range g.commands {
			if c.name == name {
				return c, true
			}
		}
	}
	return command{}, false
}

const usage = `usage: omega-monitor <target> [flags]      start watching a session (host:session for ssh)
       omega-monitor <command> [args]
       omega-monitor help <command>         a command's usage and flags

A target is a session name, or host:session where host is an ssh config alias.
`

const usageFooter = `
Files: each watcher keeps its state in $OMEGA_MONITOR_HOME/<watcher>/
(default ~/.omega/monitor/<watcher>/, where <watcher> is monitor-<session>
or monitor-<host>-<session>): monitor.log (every MONITOR line; read it with
omega-monitor logs TARGET), watcher.log (the loop's own log), state.json,
history.jsonl, outbox/. Undelivered alerts:
$OMEGA_MONITOR_HOME/alert-failed.log.

` + watcher.EnvHelp

func writeUsage(w io.Writer) {
	var b strings.Builder
	b.WriteString(usage)
	for _, g := range groups() {
		fmt.Fprintf(&b, "\n%s:\n", g.heading)
		for _, c := range g.commands {
			fmt.Fprintf(&b, "  %-11s %s\n", c.name, c.summary)
		}
	}
	b.WriteString(usageFooter)
	b.WriteString(cmdline.Examples(examples, "omega-monitor"))
	io.WriteString(w, b.String())
}

// dispatch runs the command args names, in e.
func dispatch(e *Env, args []string) int {
	if len(args) == 0 {
		writeUsage(e.Stderr)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help":
		writeUsage(e.Stdout)
		return 0
	case "help":
		return runHelp(e, args[1:])
	case "--version", "-version":
		return runVersion(e, args[1:])
	}
	if c, ok := find(args[0]); ok {
		code := c.run(e, args[1:])
		if name, ok := cmdline.HelpAsked(args); ok && code == 0 {
			io.WriteString(e.Stdout, cmdline.Examples(examples, name))
		}
		return code
	}
	// Anything else is a target, its flags before or after it: watch's.
	return watchTarget(e, args, true)
}

// commandNames are the names of every command.
func commandNames() (names []string) {
	for _, g := range groups() {
		for _, c := range g.commands {
			names = append(names, c.name)
		}
	}
	return names
}

// runHelp is "help [COMMAND]": the usage, or a command's, as its --help.
func runHelp(e *Env, args []string) int {
	switch {
	case len(args) == 0:
		writeUsage(e.Stdout)
		return 0
	case len(args) > 1:
		return e.exitf(2, "omega-monitor: help takes one command, got %d", len(args))
	}
	c, ok := find(args[0])
	if !ok {
		return e.exitf(2, "omega-monitor: help: no command %q; %s", args[0], cmdline.HelpHint(""))
	}
	return dispatch(e, []string{c.name, "--help"})
}

// examples ends each command's help (help_test.go holds each to the flags
// its command parses).
//
//go:embed examples.txt
var examples string
