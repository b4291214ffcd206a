package main

import (
	"errors"
	"flag"
	"fmt"

	"github.com/omega-monitor/omega-monitor/internal/companion"
	"github.com/omega-monitor/omega-monitor/internal/setup"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

const installUsage = `usage: omega-monitor install [--test-alert] [--claude [--uninstall]]
       omega-monitor install --hooks [--claude] [--codex] [--gemini] [--uninstall]

Puts what a watcher needs beside the binary: the alert funnel (embedded in
this binary; run as omega-alert-send.sh --stdin, the message on its standard
input) as ~/.omega/bin/omega-alert-send.sh, mode 0700, in directories
of mode 0700 (~/.omega, ~/.omega/bin, and the state home ~/.omega/monitor or
$OMEGA_MONITOR_HOME). Run again, it changes only what differs. The loop
needs no install: the binary carries it and writes it for each watcher.

The funnel reads ~/.omega/telegram.conf ($OMEGA_TELEGRAM_CONF), mode 0600:

  bot_token=123456789:AAH-your-token-from-BotFather
  chat_id=987654321   (your private chat with the bot; a group's is negative)

--claude also installs /monitor into Claude Code for this user: the command
file ~/.claude/commands/monitor.md and the read-only MCP server omega-monitor
in ~/.claude.json (the entry claude mcp add --scope user writes). The server
is the binary omega-monitor-mcp, beside this one or on PATH; without it,
--claude installs nothing.
--claude --uninstall removes those two, and nothing of the user's own.

--hooks adds our hook, omega-monitor wake, to the agents' USER settings
(never a project's): Claude Code's ~/.claude/settings.json (Notification,
PermissionRequest, Stop, StopFailure), Codex's $CODEX_HOME/hooks.json
(PermissionRequest, Stop, Interrupt; trust them once in Codex's /hooks) and
notify in its config.toml (unless it runs a program of yours), Gemini CLI's
~/.gemini/settings.json (Notification, AfterAgent). With --claude, --codex or --gemini, only those
agents; with none, all three. Every hook that is not ours stays; run again,
it changes nothing; --uninstall removes ours alone. A hook only makes the
watcher of its pane look now: the screen decides, and the poll goes on
(docs/hooks.md). Sessions started after the install load it.

flags:
`

func runInstall(e *Env, args []string) int {
	fset := flag.NewFlagSet("install", flag.ContinueOnError)
	testAlert := fset.Bool("test-alert", false, "then send a test alert through the funnel and say whether it was delivered")
	claude := fset.Bool("claude", false, "also install /monitor and the MCP server into Claude Code")
	uninstall := fset.Bool("uninstall", false, "with --claude: remove what --claude installed; with --hooks: remove our hooks")
	hooks := fset.Bool("hooks", false, "add the wake hook to the agents' user settings (with --claude, --codex, --gemini: only theirs)")
	codex := fset.Bool("codex", false, "with --hooks: Codex's")
	gemini := fset.Bool("gemini", false, "with --hooks: Gemini CLI's")
	positional, code, ok := e.parse(fset, args, installUsage)
	if !ok {
		return code
	}
	if len(positional) > 0 {
		fmt.Fprintf(e.Stderr, "omega-monitor install: unexpected argument %q\n", positional[0])
		return 2
	}
	if (*codex || *gemini) && !*hooks {
		fmt.Fprintln(e.Stderr, "omega-monitor install: --codex and --gemini go with --hooks")
		return 2
	}
	if *hooks && *testAlert {
		fmt.Fprintln(e.Stderr, "omega-monitor install: --hooks goes without --test-alert")
		return 2
	}
	if *uninstall && !*hooks && (!*claude || *testAlert) {
		fmt.Fprintln(e.Stderr, "omega-monitor install: --uninstall goes with --claude alone")
		return 2
	}
	home := e.Home()
	if home == "" {
		fmt.Fprintln(e.Stderr, "omega-monitor install: no home directory: set HOME")
		return 1
	}
	state, err := statedir.Home(e.Getenv)
	if err != nil {
		fmt.Fprintf(e.Stderr, "omega-monitor install: %v\n", err)
		return 1
	}
	env := setup.Env{Home: home, State: state, Getenv: e.Getenv, Environ: e.Environ, FindMCPServer: func() (string, error) { return companion.Find(companion.MCPServer) },
		FindNotify: func() (string, error) { return companion.Find(companion.Notify) }}
	opts := setup.Options{TestAlert: *testAlert, Claude: *claude, Uninstall: *uninstall}
	if *hooks {
		opts = setup.Options{Hooks: true, Uninstall: *uninstall, HookAgents: setup.HookSelection(*claude, *codex, *gemini)}
	}
	err = setup.Install(e.Ctx, env, opts, e.Stdout)
	var step *setup.StepError
	var alert *setup.AlertError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &alert):
		fmt.Fprintf(e.Stderr, "test alert NOT delivered (%v)", alert.Err)
		if alert.Output != "" {
			fmt.Fprintf(e.Stderr, ":\n%s", alert.Output)
		}
		fmt.Fprintln(e.Stderr)
	case errors.As(err, &step):
		fmt.Fprintf(e.Stderr, "omega-monitor install: %s: %v\n", step.Step, step.Err)
	default:
		fmt.Fprintf(e.Stderr, "omega-monitor install: %v\n", err)
	}
	return 1
}
