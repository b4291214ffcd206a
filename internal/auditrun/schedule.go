package auditrun

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/coord"
)

// ErrScheduled is wrapped by Schedule's error when the audit's session
// already runs: an audit is scheduled once.
var ErrScheduled = errors.New("auditrun: the audit is already scheduled")

// Session is the multiplexer session that repeats the audit name.
func Session(name string) string { return "audit-" + name }

// forwarded are the variables a scheduled session is started with, from the
// caller's environment: the settings that say where things are (the
// multiplexer, the alert funnel, its config, the Bot API). The session
// inherits the multiplexer server's environment, not the caller's, and
// would otherwise look elsewhere. Credentials (an agent's API key) are not
// among them: a command line is readable by every user, and the agent finds
// its own login as it does in any session.
var forwarded = []string{"OMEGA_MONITOR_MUX", "OMEGA_MONITOR_ALERT_SEND", "OMEGA_TELEGRAM_CONF", "OMEGA_TELEGRAM_API"}

// Schedule starts the detached session of the audit name on m, running
// argv (a command that repeats the audit and never exits) with the state
// home home and what of environ says where things are. It returns the
// session's name; when the session already runs, the error wraps
// ErrScheduled.
func Schedule(ctx context.Context, m coord.Mux, name, home string, environ, argv []string) (string, error) {
	session := Session(name)
	words := []string{"env", "OMEGA_MONITOR_HOME=" + home}
	for _, v := range forwarded {
		if val := lookup(environ, v); val != "" {
			words = append(words, v+"="+val)
		}
	}
	words = append(words, argv...)
	if _, err := m.Run(ctx, "", "new-session", "-d", "-s", session, "exec "+coord.ShellJoin(words...)); err != nil {
		if ce, ok := errors.AsType[*coord.CallError](err); ok && strings.Contains(ce.Stderr, "duplicate session") {
			err = fmt.Errorf("%w: %w", ErrScheduled, err)
		}
		return session, &Error{Op: "cannot start " + session, Err: err}
	}
	return session, nil
}

// Stop ends the session of the audit name on m and returns its name.
func Stop(ctx context.Context, m coord.Mux, name string) (string, error) {
	session := Session(name)
	if _, err := m.Run(ctx, "", "kill-session", "-t", coord.Exact(session)); err != nil {
		return session, &Error{Op: "no scheduled audit " + name, Err: err}
	}
	return session, nil
}

// RepeatArgv is the command line of the scheduled session of an audit of
// dir: this binary's audit run with --repeat every, the audit's name and
// agent, and the flags given on fs but those that start the session.
func RepeatArgv(self, dir string, every time.Duration, name, bin string, fs *flag.FlagSet) []string {
	argv := []string{self, "audit", "run", dir, "--repeat", every.String(), "--name", name, "--bin", bin}
	fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "every", "name", "mux", "repeat", "bin":
		case "keep-env", "codex-config":
			// Repeatable, and a value may hold a comma: each whole.
			if many, ok := fl.Value.(interface{ Values() []string }); ok {
				for _, v := range many.Values() {
					argv = append(argv, "--"+fl.Name+"="+v)
				}
			}
		default:
			argv = append(argv, "--"+fl.Name+"="+fl.Value.String())
		}
	})
	return argv
}
