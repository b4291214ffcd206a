package watcher

// WatchUsage is the usage of omega-monitor watch (and omega-monitor TARGET).
const WatchUsage = `usage: omega-monitor <target> [flags]
       omega-monitor watch <target> [flags]

Starts a watcher: a detached multiplexer session on this machine, named
monitor-<session> or monitor-<host>-<session> (a fingerprint where that
could be misread), running the poll loop over the target. A target is a
session name, host:session where host is an ssh config alias, or
session:window[.pane] (a local session's window, when no alias has the
session's name). The watcher pins one pane by its id when it starts (the
session's active pane, that window's, or --pane %N) and follows only it:
switching windows never moves its nudges. Use the watch form for a session
named like a command (watch list).

The probes run on this machine (not on the target's host), in --probe-dir:
by default the pane's working directory (for an ssh target, the current
one). Each runs once at start, and what it read there is said.
The watcher's files are in $OMEGA_MONITOR_HOME/<watcher>/ (default
~/.omega/monitor/<watcher>/): monitor.log holds every MONITOR line
(omega-monitor logs TARGET prints it), watcher.log the loop's own log,
state.json and history.jsonl what it decided.

` + EnvHelp + `
flags:
`

// LogsUsage is the usage of omega-monitor logs.
const LogsUsage = `usage: omega-monitor logs <target | watcher> [-f] [-n N] [--raw]
       omega-monitor logs --all [-f] [-n N] [--raw]

Prints the MONITOR lines of the watcher of a target (or of the watcher
named as the board shows it, monitor-agent), oldest first, from
$OMEGA_MONITOR_HOME/<watcher>/monitor.log (default ~/.omega/monitor/), the
log its every poll appends to. The watcher need not run. With --all, every
watcher's, each line after its target in brackets ([shop] MONITOR ...).

flags:
`
