package relay

// Usage is omega-monitor relay's help.
const Usage = `usage: omega-monitor relay start|stop|status [--mux PATH] [--wait D]
       omega-monitor relay logs [-n N] [-f]

The answer receiver carries the operator's taps on a relayed question's
buttons, in Telegram, to the watcher that asked it, which types the answer
after its own checks; from the same chat, /status gives the allowed users
the board, read-only. One runs per state home, in a detached multiplexer
session of its own (omega-monitor-relay serve): omega-relay for the default
state home, omega-relay-DIGEST for any other.

  start   start it, once its config is checked (answers=on, and for a group
          allow_users=ID[,ID...], in the funnel's telegram.conf)
  stop    end it, and wait until it has let go of its lock
  status  whether it runs, since when, its last update, and the config's
          answer settings (exit 3 when it does not run)
  logs    the last lines it said (why a tap was refused, what was sent to
          whom), from relay/relay.log in the state home; -f follows them
          (omega-monitor relay logs --help)

flags:
`

// LogsUsage is omega-monitor relay logs' help.
const LogsUsage = `usage: omega-monitor relay logs [-n N] [-f]

Prints the last lines the answer receiver said, oldest first, from
$OMEGA_MONITOR_HOME/relay/relay.log (default ~/.omega/monitor/), and
relay.log.1 before it: every line it says in its pane goes there too, with
the date (why a tap was refused, what was sent to which watcher, what came
of it). The log moves to relay.log.1 past 1 MiB, so it keeps the last one
to two. The receiver need not run; no log yet is said, and exits 0.

flags:
`
