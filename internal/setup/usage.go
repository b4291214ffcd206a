package setup

// InstallUsage is the usage of omega-monitor install.
const InstallUsage = `usage: omega-monitor install [--test-alert] [--claude] [--codex]
       omega-monitor install --claude|--codex --uninstall
       omega-monitor install --hooks [--claude] [--codex] [--gemini] [--opencode] [--agent NAME] [--uninstall]
       omega-monitor install --telegram

Puts what a watcher needs beside the binary: the alert funnel (embedded in
this binary; run as omega-alert-send.sh --stdin, the message on its standard
input) as ~/.omega/bin/omega-alert-send.sh, mode 0700, in directories
of mode 0700 (~/.omega, ~/.omega/bin, and the state home ~/.omega/monitor or
$OMEGA_MONITOR_HOME). Run again, it changes only what differs. The loop
needs no install: the binary carries it and writes it for each watcher.

--telegram is a guided set-up: it asks for your bot's token (from
@BotFather) on standard input and checks it with Telegram, asks you to send
the bot a message and takes the chat from it, writes ~/.omega/telegram.conf
(mode 0600; one already there is kept, and nothing is done), then installs
the funnel and sends a test alert, saying which chat it reached. Stop the
answer receiver first (omega-monitor relay stop): it takes the updates.

The funnel reads ~/.omega/telegram.conf ($OMEGA_TELEGRAM_CONF), mode 0600:

  bot_token=123456789:AAH-your-token-from-BotFather
  chat_id=987654321   (your private chat with the bot; a group's is negative)

--claude also installs /monitor into Claude Code for this user: the command
file ~/.claude/commands/monitor.md and the read-only MCP server omega-monitor
in ~/.claude.json (the entry claude mcp add --scope user writes). The server
is the binary omega-monitor-mcp, beside this one or on PATH; without it,
--claude installs nothing.
--claude --uninstall removes those two, and nothing of the user's own.

--codex does the same for Codex ($CODEX_HOME, else ~/.codex): the skill
$CODEX_HOME/skills/monitor/SKILL.md (type $monitor in Codex: it launches one
read-only monitor agent that reports the fleet) and the table
[mcp_servers.omega-monitor] in $CODEX_HOME/config.toml (what codex mcp add
writes). The file is edited as text: every other line and comment stays as
it was, the file before is kept beside it (config.toml.omega-monitor-mcp.bak),
and a line install cannot be sure of is refused, naming it. With codex on
PATH, Codex then reads the file (codex mcp get omega-monitor); what it cannot
read, or reads otherwise, is put back as it was. Run again, it changes
nothing. --codex --uninstall removes the skill and the table, and
what install made to hold them, and nothing of the user's own.

--hooks adds our hook, omega-monitor wake, to the agents' USER settings
(never a project's): Claude Code's ~/.claude/settings.json (Notification,
PermissionRequest, Stop, StopFailure), Codex's $CODEX_HOME/hooks.json
(PermissionRequest, Stop, Interrupt; trust them once in Codex's /hooks) and
notify in its config.toml (unless it runs a program of yours), Gemini CLI's
~/.gemini/settings.json (Notification, AfterAgent), and for OpenCode a plugin
of ours, ~/.config/opencode/plugin/omega-monitor-wake.js ($XDG_CONFIG_HOME),
that runs omega-monitor wake, without a shell and never waiting for it, at
permission.asked, question.asked, session.idle and session.error. An agent
the watchers' rules file describes with hooks (its settings file, in the
format the first three share: docs/rules.md) is named by its first program,
--agent NAME, and its hook written where its description says. With
--claude, --codex, --gemini, --opencode or --agent, only those agents; with
none, those on this machine (their user directory, or their program on
PATH). It shows each line it adds or
removes, keeps a file of yours as it was beside it (FILE.omega-monitor.bak)
and records what it made in $OMEGA_MONITOR_HOME/hooks-created.json. Every
hook that is not ours stays; run again, it changes nothing; --uninstall
removes ours alone, and the files and directories install made once they
hold nothing else. A hook only makes the
watcher of its pane look now: the screen decides, and the poll goes on
(docs/hooks.md). Sessions started after the install load it.

flags:
`

// DoctorUsage is the usage of omega-monitor doctor.
const DoctorUsage = `usage: omega-monitor doctor

Looks at what watchers need on this machine and what makes their alerts and
answers reach you, and says of each what it found, and how to fix what is
wrong: the multiplexer, the state home (yours alone), the alert funnel and
its Telegram config (omega-monitor install --test-alert proves the chat),
the other channels, the hooks of each agent found here, Codex's $monitor
skill when install --codex wrote one (is it this release's?), and the
answer receiver when answers are on. It changes nothing.

Exit status: 0 when nothing needs fixing, 1 when something does, 2 for a
usage error.
`
