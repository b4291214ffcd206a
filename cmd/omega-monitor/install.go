package main

import (
	"errors"
	"flag"
	"fmt"

	"github.com/omega-monitor/omega-monitor/internal/companion"
	"github.com/omega-monitor/omega-monitor/internal/setup"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

func runInstall(e *Env, args []string) int {
	fset := flag.NewFlagSet("install", flag.ContinueOnError)
	testAlert := fset.Bool("test-alert", false, "then send a test alert through the funnel and say whether it was delivered")
	claude := fset.Bool("claude", false, "also install /monitor and the MCP server into Claude Code")
	uninstall := fset.Bool("uninstall", false, "with --claude or --codex: remove what they installed; with --hooks: remove our hooks")
	hooks := fset.Bool("hooks", false, "add the wake hook to the agents' user settings (with --claude, --codex, --gemini: only theirs)")
	codex := fset.Bool("codex", false, "also install $monitor (a skill) and the MCP server into Codex; with --hooks: Codex's")
	gemini := fset.Bool("gemini", false, "with --hooks: Gemini CLI's")
	opencode := fset.Bool("opencode", false, "with --hooks: OpenCode's (a plugin of ours in its plugin directory)")
	agent := fset.String("agent", "", "with --hooks: the hooks of the agent the watchers' rules file describes whose first program is `NAME`, where its description says")
	telegram := fset.Bool("telegram", false, "a guided set-up: your bot's token (asked for, and checked), the chat from a message you send the bot, the config written, then a test alert")
	positional, code, ok := e.parse(fset, args, setup.InstallUsage)
	if !ok {
		return code
	}
	if len(positional) > 0 {
		return e.usageError("install", fmt.Sprintf("unexpected argument %q", positional[0]))
	}
	switch {
	case (*gemini || *opencode || *agent != "") && !*hooks:
		return e.usageError("install", "--gemini, --opencode and --agent go with --hooks")
	case *hooks && *testAlert:
		return e.usageError("install", "--hooks goes without --test-alert")
	case *uninstall && !*hooks && (!*claude && !*codex || *testAlert):
		return e.usageError("install", "--uninstall goes with --claude, --codex or --hooks")
	case *telegram && (*hooks || *claude || *codex || *uninstall || *testAlert):
		return e.usageError("install", "--telegram goes alone")
	}
	home := e.Home()
	state, err := statedir.Home(e.Getenv)
	if home == "" || err != nil {
		return e.exitf(1, "omega-monitor install: no home directory: set HOME (%v)", err)
	}
	env := setup.Env{Home: home, State: state, Getenv: e.Getenv, Environ: e.Environ, FindMCPServer: func() (string, error) { return companion.Find(companion.MCPServer) },
		FindNotify: func() (string, error) { return companion.Find(companion.Notify) }}
	opts := setup.Options{TestAlert: *testAlert, Claude: *claude, Codex: *codex, Uninstall: *uninstall}
	if *hooks {
		opts = setup.Options{Hooks: true, Uninstall: *uninstall, HookAgents: setup.HookSelection(*claude, *codex, *gemini, *opencode, *agent),
			HooksFound: !*claude && !*codex && !*gemini && !*opencode && *agent == ""}
	}
	if relay, ferr := companion.Find(companion.Relay); *telegram && ferr != nil {
		err = ferr
	} else if *telegram {
		err = setup.Telegram(e.Ctx, env, relay, e.Stdin, e.Stdout, e.Stderr)
	} else {
		err = setup.Install(e.Ctx, env, opts, e.Stdout)
	}
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
