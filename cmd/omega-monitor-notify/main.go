// Command omega-monitor-notify delivers an alert to the operator's
// channels other than the Telegram funnel, listed in the channels file of
// the state home (docs/alerts.md, "Other channels"), and checks that file.
//
// It is a binary of its own so that omega-monitor does not link the
// notification library (net/http, TLS, every service's client): the poll
// loop starts omega-monitor several times a poll, and every start pays for
// what it links. A poll runs this one only when an alert waits and the
// channels file exists.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/omega-monitor/omega-monitor/internal/fsutil"
	"github.com/omega-monitor/omega-monitor/internal/notify"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

const usage = `usage: omega-monitor-notify send --home DIR [--record FILE] [--test] < alert
       omega-monitor-notify send --home DIR --channel ID < alert
       omega-monitor-notify list --home DIR
       omega-monitor-notify check [--test] FILE

send delivers the alert on standard input (Telegram HTML, as a watcher's
outbox holds it) to each channel of DIR/channels not named in the record
FILE, and appends each that has it or gave up there; one that gave up has
the alert kept in DIR/alert-failed.log. It prints one line a channel
(delivered:, had it already:, not delivered:) and one for each fault of the
channels file not reported before (bad:). --test: every channel is sent
to, every fault printed, and nothing kept in alert-failed.log.
Exit 0: every channel has the alert or gave up; 3: cut short (the record
says which have it); 2: usage.

send --channel sends the alert once to the one channel of DIR/channels
whose ID is given, within OMEGA_NOTIFY_TIMEOUT, and keeps nothing: the
watcher's deliverer keeps the record and tries again. Exit 0: delivered;
1: not delivered (the line says why); 4: no such channel (the file changed).

list prints the channels of DIR/channels, one "ID<TAB>NAME" line each, and
the faults of the file not reported before as bad: lines; a file refused
whole (not the user's own, mode 0600) is a refused: line, every time.

check validates a channels file, one URL a line in shoutrrr's syntax
(# starts a comment): each line that names no usable channel is printed as
FILE:LINE: why, naming nothing of its secrets. It reaches no service and
sends no credential (a Matrix line is read, not logged in with). --test
sends a test message to each good channel and says which are unreachable,
apart from the malformed. Exit 0: all lines good (and, with --test, every
channel reached).

Environment: OMEGA_NOTIFY_TRIES (3), OMEGA_NOTIFY_TIMEOUT (10 s a try),
OMEGA_NOTIFY_BACKOFF (2 s, times the try's number).
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) == 0 {
		io.WriteString(stderr, usage)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		io.WriteString(stdout, usage)
		return 0
	case "check":
		test := len(args) == 3 && args[1] == "--test"
		if test {
			args = append(args[:1], args[2])
		}
		if len(args) != 2 || strings.HasPrefix(args[1], "-") {
			io.WriteString(stderr, "usage: omega-monitor-notify check [--test] FILE\n")
			return 2
		}
		code := check(args[1], stdout, stderr)
		if test {
			if c := reach(args[1], stdout, getenv); c != 0 {
				code = c
			}
		} else if code != 2 {
			fmt.Fprintln(stdout, "nothing was sent (check --test sends a test message to each channel)")
		}
		return code
	case "list":
		if len(args) != 3 || args[1] != "--home" || args[2] == "" {
			io.WriteString(stderr, "usage: omega-monitor-notify list --home DIR\n")
			return 2
		}
		return list(args[2], stdout, stderr)
	case "send":
		return send(args[1:], stdin, stdout, stderr, getenv)
	}
	fmt.Fprintf(stderr, "omega-monitor-notify: unknown command %q\n%s", args[0], usage)
	return 2
}

func check(path string, stdout, stderr io.Writer) int {
	chans, bad, err := notify.Read(path)
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor-notify: %v\n", err)
		return 1
	}
	for _, e := range bad {
		fmt.Fprintln(stdout, e.Error())
	}
	var names []string
	for _, c := range chans {
		names = append(names, c.Name())
	}
	switch {
	case len(chans) == 0 && len(bad) == 0:
		fmt.Fprintf(stdout, "%s: no channel (one URL a line, as ntfy://ntfy.sh/TOPIC)\n", path)
	case len(chans) > 0:
		fmt.Fprintf(stdout, "%s: %d channel(s) good: %s\n", path, len(chans), strings.Join(names, "; "))
	}
	if len(bad) > 0 {
		fmt.Fprintf(stdout, "%s: %d line(s) bad; the good ones still deliver\n", path, len(bad))
		return 1
	}
	return 0
}

func send(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := flag.NewFlagSet("send", flag.ContinueOnError)
	fs.SetOutput(stderr)
	home := fs.String("home", "", "the state home")
	record := fs.String("record", "", "the alert's record of the channels that have it")
	test := fs.Bool("test", false, "a test alert: send to every channel, print every fault, keep nothing")
	channel := fs.String("channel", "", "send to this channel only, once, keeping nothing")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *home == "" || fs.NArg() > 0 || *channel != "" && (*record != "" || *test) {
		io.WriteString(stderr, "usage: omega-monitor-notify send --home DIR [--record FILE] [--test] < alert\n       omega-monitor-notify send --home DIR --channel ID < alert\n")
		return 2
	}
	o, err := notify.OptionsFrom(getenv)
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor-notify: %v\n", err)
		return 2
	}
	msg, err := io.ReadAll(io.LimitReader(stdin, 1<<20))
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor-notify: the alert: %v\n", err)
		return 3
	}
	if *channel != "" {
		return sendChannel(*home, *channel, string(msg), o, stdout, stderr)
	}
	path := notify.Path(*home)
	chans, bad, err := notify.Read(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0 // no channels: nothing to do
	}
	refused := err
	faults := report(*home, bad, refused, *test, stderr)
	for _, f := range faults {
		fmt.Fprintln(stdout, "bad: "+f)
	}
	if refused != nil && *test {
		return 0 // said above, as a bad: line
	}
	if refused != nil {
		// No channel can be read: the alert is kept for them, as one that
		// gave up is, and leaves the outbox (the funnel has its own say).
		if err := statedir.KeepFailed(*home, "not delivered to the channels: "+refused.Error(), msg); err != nil {
			fmt.Fprintf(stderr, "omega-monitor-notify: alert-failed.log: %v\n", err)
			return 3
		}
		return 0
	}
	keep := *home
	if *test {
		*record, keep = "", ""
	}
	results, err := notify.Deliver(context.Background(), chans, string(msg), *record, keep, o)
	for _, r := range results {
		fmt.Fprintln(stdout, r.Line())
	}
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor-notify: %v\n", err)
		return 3
	}
	return 0
}

// report is the faults of the channels file to print: the new ones, or all.
func report(home string, bad []notify.LineError, refused error, all bool, stderr io.Writer) []string {
	if all {
		var out []string
		if refused != nil {
			out = append(out, refused.Error())
		}
		for _, e := range bad {
			out = append(out, e.Error())
		}
		return out
	}
	fresh, err := notify.FirstReports(home, bad, refused)
	if err != nil && !errors.Is(err, fsutil.ErrLocked) {
		fmt.Fprintf(stderr, "omega-monitor-notify: %v\n", err)
	}
	return fresh
}

// sendChannel sends msg once to the channel of home's channels file whose
// ID is id.
func sendChannel(home, id, msg string, o notify.Options, stdout, stderr io.Writer) int {
	chans, _, err := notify.Read(notify.Path(home))
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor-notify: %v\n", err)
		return 4
	}
	for _, c := range chans {
		if c.ID() != id {
			continue
		}
		if err := notify.SendOnce(context.Background(), c, msg, o.Timeout); err != nil {
			fmt.Fprintf(stdout, "not delivered: %s: %v\n", c.Name(), err)
			return 1
		}
		fmt.Fprintf(stdout, "delivered: %s\n", c.Name())
		return 0
	}
	fmt.Fprintf(stderr, "omega-monitor-notify: no channel %s in %s (the file changed?)\n", id, notify.Path(home))
	return 4
}

// list prints home's channels, "ID<TAB>NAME" a line, and the faults of the
// file not reported before.
func list(home string, stdout, stderr io.Writer) int {
	chans, bad, err := notify.Read(notify.Path(home))
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	for _, f := range report(home, bad, err, false, stderr) {
		fmt.Fprintln(stdout, "bad: "+f)
	}
	if err != nil {
		// Every time: the deliverer keeps each alert for the channels.
		fmt.Fprintln(stdout, "refused: "+err.Error())
		return 1
	}
	for _, c := range chans {
		fmt.Fprintf(stdout, "%s\t%s\n", c.ID(), c.Name())
	}
	return 0
}

// reach sends a test message to each good channel of the file, and says
// which could not be reached: the network's failure, apart from a line
// that is malformed.
func reach(path string, stdout io.Writer, getenv func(string) string) int {
	chans, _, err := notify.Read(path)
	if err != nil {
		return 1
	}
	o, err := notify.OptionsFrom(getenv)
	if err != nil {
		fmt.Fprintf(stdout, "%v\n", err)
		return 2
	}
	code := 0
	for _, c := range chans {
		if err := notify.SendOnce(context.Background(), c, "omega-monitor: a test message from channels check --test", o.Timeout); err != nil {
			fmt.Fprintf(stdout, "unreachable: %s: %v\n", c.Name(), err)
			code = 1
			continue
		}
		fmt.Fprintf(stdout, "delivered: %s\n", c.Name())
	}
	return code
}
