package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/omega-monitor/omega-monitor/ledger"
)

const ledgerUsage = `usage: omega-monitor ledger record [-max N] FILE TEXT
       omega-monitor ledger list FILE

record: records TEXT (or, if TEXT is -, standard input) as sent into a
watched session, so the watcher never reads its echo as a signal. Each line
of the text is one record; the file keeps the newest N (default %d).
list: prints the records of FILE, oldest first, one a line.

A text shorter than %d characters is recorded but can never be matched in a
pane: it is too short to tell from ordinary text.
`

func writeLedgerUsage(w io.Writer) {
	fmt.Fprintf(w, ledgerUsage, ledger.DefaultMax, ledger.SliceLen)
}

// runLedger is "omega-monitor ledger": record and list the echo ledger.
func runLedger(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		writeLedgerUsage(stderr)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		writeLedgerUsage(stdout)
		return 0
	case "record":
		return ledgerRecord(args[1:], stdin, stdout, stderr)
	case "list":
		return ledgerList(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "omega-monitor ledger: unknown subcommand %q\n", args[0])
	writeLedgerUsage(stderr)
	return 2
}

// ledgerFlags parses the flags of a ledger subcommand. It returns a nonzero
// exit code when the command is done: 0 after --help, 2 after a bad flag or
// the wrong number of arguments.
func ledgerFlags(fs *flag.FlagSet, args []string, nargs int, stdout, stderr io.Writer) int {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		writeLedgerUsage(stdout)
		return -1
	case err != nil:
		fmt.Fprintf(stderr, "omega-monitor %s: %v\n", fs.Name(), err)
	case fs.NArg() != nargs:
		fmt.Fprintf(stderr, "omega-monitor %s: want %d arguments, have %d\n", fs.Name(), nargs, fs.NArg())
	default:
		return 0
	}
	writeLedgerUsage(stderr)
	return 2
}

func ledgerRecord(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ledger record", flag.ContinueOnError)
	max := fs.Int("max", ledger.DefaultMax, "keep at most `N` records")
	switch code := ledgerFlags(fs, args, 2, stdout, stderr); code {
	case -1:
		return 0
	case 0:
	default:
		return code
	}
	if *max < 1 {
		fmt.Fprintf(stderr, "omega-monitor ledger record: -max %d: want 1 or more\n", *max)
		return 2
	}
	file, text := fs.Arg(0), fs.Arg(1)
	if err := ledger.CheckFile(file); err != nil {
		fmt.Fprintf(stderr, "omega-monitor ledger record: %v\n", err)
		return 1
	}
	if text == "-" {
		b, err := io.ReadAll(io.LimitReader(stdin, maxLedgerText))
		if err != nil {
			fmt.Fprintf(stderr, "omega-monitor ledger record: reading standard input: %v\n", err)
			return 1
		}
		text = string(b)
	}
	if err := ledger.RecordOptions(file, text, ledger.Options{Max: *max}); err != nil {
		fmt.Fprintf(stderr, "omega-monitor: %v\n", err)
		return 1
	}
	if t := strings.Join(strings.Fields(text), " "); t != "" && utf8.RuneCountInString(t) < ledger.SliceLen {
		fmt.Fprintf(stderr, "omega-monitor: ledger: note: %q is shorter than %d characters and can never be matched in a pane\n",
			t, ledger.SliceLen)
	}
	return 0
}

// maxLedgerText caps the text of one ledger record call.
const maxLedgerText = 1 << 20

func ledgerList(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ledger list", flag.ContinueOnError)
	switch code := ledgerFlags(fs, args, 1, stdout, stderr); code {
	case -1:
		return 0
	case 0:
	default:
		return code
	}
	texts, err := ledger.Texts(fs.Arg(0))
	var b strings.Builder
	for _, t := range texts {
		b.WriteString(t)
		b.WriteByte('\n')
	}
	io.WriteString(stdout, b.String())
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor: %v\n", err)
		return 1
	}
	return 0
}
