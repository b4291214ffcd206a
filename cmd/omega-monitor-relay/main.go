// Command omega-monitor-relay is the answer receiver: it long-polls the
// Telegram Bot API for taps on the buttons under the questions the
// watchers relayed, and hands an allowed tap to its watcher, which types
// the answer after its own checks. omega-monitor relay start runs it in a
// detached multiplexer session; serve runs it in the foreground.
//
// It is a binary of its own so that omega-monitor does not link the
// Telegram client (net/http, TLS): the poll loop starts omega-monitor
// several times a poll, and every start pays for what it links.
package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/omega-monitor/omega-monitor/alert"
	"github.com/omega-monitor/omega-monitor/internal/pkgerr"
	"github.com/omega-monitor/omega-monitor/internal/relay/guide"
	"github.com/omega-monitor/omega-monitor/internal/relay/receiver"
)

const usage = `usage: omega-monitor-relay serve
       omega-monitor-relay setup   (what omega-monitor install --telegram runs)
       (omega-monitor relay start|stop|status runs and reports it,
       omega-monitor relay logs [-n N] [-f] prints its log)

serve receives, in the foreground, the operator's answers to the questions
the watchers relayed to Telegram: a tap on a question's button, by a user
allowed to answer, is written as an answer request into its watcher's state
directory, and the watcher is woken to type it, after its own checks; the
message is then edited to say who answered what, or why it was not typed.
In the same chat the same allowed users may ask for the board, read-only:
  /status       the fleet, counts first, then the watchers that need you,
                a line each, in lines a phone shows whole
  /status NAME  one watcher, by its target as the board shows it or by
                its watcher's name: its state, why it reads so, and its
                last log lines
(/status@BOT in a group.) Anyone else gets no answer; the refusal is logged.
It long-polls the Bot API (no webhook), one receiver a state home, and ends
on SIGTERM or SIGINT. Every line it says, on standard error, goes with its
date to relay/relay.log in the state home too (mode 0600; past 1 MiB it
moves to relay.log.1, replacing the one before).

Config: the funnel's $OMEGA_TELEGRAM_CONF (default ~/.omega/telegram.conf,
yours, mode 0600): bot_token=, chat_id=, and
  answers=on              required: answers are off by default
  allow_users=ID[,ID...]  the Telegram user ids that may answer; required
                          for a group chat (in a private chat, its user)
  free_text=on            a reply to a question's message is typed as the
                          words of its free-text option ("Type something."):
                          one line, at most 500 characters; off by default
Environment: OMEGA_MONITOR_HOME (the state home; the receiver keeps its
files in relay/ there), OMEGA_TELEGRAM_CONF, OMEGA_TELEGRAM_API.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		io.WriteString(stderr, usage)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		io.WriteString(stdout, usage)
		return 0
	case "serve":
	case "setup":
		// The guided Telegram set-up of omega-monitor install --telegram:
		// the token comes on standard input, never on a command line.
		if len(args) > 1 {
			fmt.Fprintf(stderr, "omega-monitor-relay: setup takes no arguments, got %q\n", args[1])
			return 2
		}
		api := cmp.Or(os.Getenv("OMEGA_TELEGRAM_API"), "https://api.telegram.org")
		if err := guide.Run(context.Background(), api, alert.ConfPath(os.Getenv, os.Getenv("HOME")), stdin, stdout, guide.Wait); err != nil {
			fmt.Fprintf(stderr, "omega-monitor-relay: %s\n", pkgerr.Why(err))
			return 1
		}
		return 0
	default:
		fmt.Fprintf(stderr, "omega-monitor-relay: unknown command %q\n%s", args[0], usage)
		return 2
	}
	if len(args) > 1 {
		if args[1] == "-h" || args[1] == "--help" {
			io.WriteString(stdout, usage)
			return 0
		}
		fmt.Fprintf(stderr, "omega-monitor-relay: serve takes no arguments, got %q\n", args[1])
		return 2
	}
	// SIGHUP too: it is what ending the multiplexer session sends.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer stop()
	if err := receiver.Serve(ctx, os.Getenv, stderr); err != nil {
		fmt.Fprintf(stderr, "omega-monitor-relay: %v\n", err)
		return 1
	}
	return 0
}
