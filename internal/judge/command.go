package judge

import (
	"errors"
	"flag"
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

// Flags are the judge command's settings, which the command parses.
type Flags struct {
	Self     string
	Requests int
}

// FlagSet binds f to a new flag set of the judge command.
func (f *Flags) FlagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("judge", flag.ContinueOnError)
	fs.StringVar(&f.Self, "binary", "", "the `path` the loop calls this binary by, the first word of each call")
	fs.IntVar(&f.Requests, "requests", 1000, "the most `calls` this judge runs before it ends")
	return fs
}

// Check says whether f and the words left after the flags make a judge.
func (f *Flags) Check(positional []string) error {
	if f.Self == "" || f.Requests < 1 || len(positional) > 0 {
		return errors.New("--binary and a --requests of 1 or more are needed, and nothing else")
	}
	return nil
}
