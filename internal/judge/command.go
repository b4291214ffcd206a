package judge

import (
	"flag"
	"fmt"
	"io"

	"github.com/omega-monitor/omega-monitor/internal/cmdline"
)

// Usage is the judge command's help.
const Usage = `usage: omega-monitor judge --binary PATH [--requests N]

The poll loop's judge: scripts/omega-monitor.sh starts it as a coprocess
and sends it its calls of this binary (tick, confirm, ack), which it runs
one after another in this one process, each as the binary would run it
started anew: the same command line, standard input from the file the
call names, output into the files it names, the exit status as the reply.
Not for an operator to run. It ends at the end of its standard input,
after --requests calls, after a call past its deadline (124), when the
binary at PATH changes, or when a call left a goroutine or a descriptor
open; the loop then starts another. Exit 0 at its end, 1 after a malformed
request, 2 for a usage error.

flags:
`

// Command is the judge command: it serves the requests on stdin with run.
func Command(args []string, stdin io.Reader, stdout, stderr io.Writer, run Run) int {
	fs := flag.NewFlagSet("judge", flag.ContinueOnError)
	self := fs.String("binary", "", "the `path` the loop calls this binary by, the first word of each call")
	requests := fs.Int("requests", 1000, "the most `calls` this judge runs before it ends")
	positional, code, ok := cmdline.ParseInterspersed(fs, args, Usage, stdout, stderr)
	if !ok {
		return code
	}
	if *self == "" || *requests < 1 || len(positional) > 0 {
		fmt.Fprintf(stderr, "omega-monitor judge: --binary and a --requests of 1 or more are needed, and nothing else; %s\n", cmdline.HelpHint("judge"))
		return 2
	}
	if err := Serve(stdin, stdout, Options{Self: *self, Requests: *requests, Run: run}); err != nil {
		fmt.Fprintf(stderr, "omega-monitor: %v\n", err)
		return 1
	}
	return 0
}
