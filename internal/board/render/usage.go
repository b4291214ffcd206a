package render

// StatusUsage is omega-monitor status's help: the board's forms, what
// they show, and the exit statuses of the one-line form.
const StatusUsage = `usage: omega-monitor status [--live | --once | --json | --tmux] [--interval DUR]
                            [--hosts ALIAS,...] [--ssh-config FILE] [--hosts-timeout DUR]

The fleet board: every watcher under $OMEGA_MONITOR_HOME (default
~/.omega/monitor) at a glance, read from the watchers' own state; it changes
nothing. Four forms of one census:

  --live        (the default on a terminal) full-screen, redrawn every
                --interval; ↑/↓ or j/k select a watcher and open its last
                transition, last alert, the explanation of its last verdict
                and what a narrow screen leaves out; Enter jumps to the
                watched session (switch-client inside tmux, attach outside);
                q or Ctrl-C restores the terminal
  --once        the header, one line a watcher and the legend, no escape
                sequences, as wide as the terminal (whenever standard output
                is not a terminal: no width limit)
  --json        the same data as one JSON object: watchers, fleet, degraded,
                errors (each field in docs/board.md)
  --tmux        a short segment for tmux's status-right, cheap enough to run
                every few seconds:
                  set -g status-right '#(omega-monitor status --tmux)'

Other machines: --hosts (or the state home's hosts file, one ssh alias a
line, # comments) puts their boards on this one. Each refresh runs each
host's own omega-monitor status --json over ssh (read-only; BatchMode; one
connection a host kept 60s), all at once, each within 5s (--hosts-timeout,
1s to 60s) and 4 MiB; its
watchers show as HOST/TARGET, and a row a host says how many, how long its
read took and its clock where it is off, or why it was not read. A host that cannot be read or sends
what is not a board costs its row alone.

Pages for many panes: a line for each cause that stopped many panes at once
(a usage limit, a host gone) while its page gathers or waits to be
delivered ("group: usage limit · Claude Code · 12 panes · 1 page pending");
--tmux counts them as 📟N.

A narrow board keeps the target, state, nudges and what needs you first. A
stopped watcher stays, its time frozen at the stop, until omega-monitor
forget TARGET; Δ fleet sums running watchers' diffs, each worktree once.

Liveness: [live] the loop's pid runs with its recorded start token and polled
within two intervals; [quiet] it runs but has not polled in two intervals (a
hung call); [stale] its pid is dead or another process now, and it was not
stopped; [gone] it was stopped, or never recorded a loop.

Exit status: 0; 3 from the one-line form when no watcher is live or quiet
and the whole fleet was read (it then ends with "no live watchers", so a
scheduled caller can stop itself); 4 when no watcher is live or quiet but
some state could not be read (an unreadable state directory, a corrupt
loop.json; it then ends with "no live watcher found, but the census is
degraded"): a degraded census is not an empty fleet, and a caller must not
stop on it; 1 when the state home cannot be listed; 2 for a usage error.

flags:
`
