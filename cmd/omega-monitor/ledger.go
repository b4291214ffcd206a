package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/omega-monitor/omega-monitor/internal/cmdline"
	"github.com/omega-monitor/omega-monitor/ledger"
)

const ledgerUsage = `usage: omega-monitor ledger record [--max N] FILE TEXT
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
func runLedger(e *Env, args []string) int {
	if len(args) == 0 {
		writeLedgerUsage(e.Stderr)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		writeLedgerUsage(e.Stdout)
		return 0
	case "record":
		return ledgerRecord(e, args[1:])
	case "list":
		return ledgerList(e, args[1:])
	}
	fmt.Fprintf(e.Stderr, "omega-monitor ledger: unknown subcommand %q\n", args[0])
	writeLedgerUsage(e.Stderr)
	return 2
}

// ledgerFlags parses the flags of a ledger subcommand. It returns a nonzero
// exit code when the command is done: 0 after --help, 2 after a bad flag or
// the wrong number of arguments.
func ledgerFlags(fs *flag.FlagSet, args []string, nargs int, e *Env) int {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		writeLedgerUsage(e.Stdout)
		cmdline.NoteHelp(fs)
		return -1
	case err != nil:
		fmt.Fprintf(e.Stderr, "omega-monitor %s: %s\n", fs.Name(), cmdline.WithHint(cmdline.FlagError(fs, err), cmdline.HelpHint("ledger")))
	case fs.NArg() != nargs:
		fmt.Fprintf(e.Stderr, "omega-monitor %s: want %d arguments, have %d; %s\n", fs.Name(), nargs, fs.NArg(), cmdline.HelpHint("ledger"))
	default:
		return 0
	}
	return 2
}

func ledgerRecord(e *Env, args []string) int {
	fs := flag.NewFlagSet("ledger record", flag.ContinueOnError)
	max := fs.Int("max", ledger.DefaultMax, "keep at most `N` records")
	switch code := ledgerFlags(fs, args, 2, e); code {
	case -1:
		return 0
	case 0:
	default:
		return code
	}
	if *max < 1 {
		return e.exitf(2, "omega-monitor ledger record: --max %d: want 1 or more", *max)
	}
	file, text := fs.Arg(0), fs.Arg(1)
	if err := ledger.CheckFile(file); err != nil {
		return e.exitf(1, "omega-monitor ledger record: %v", err)
	}
	if text == "-" {
		b, err := io.ReadAll(io.LimitReader(e.Stdin, maxLedgerText))
		if err != nil {
			return e.exitf(1, "omega-monitor ledger record: reading standard input: %v", err)
		}
		text = string(b)
	}
	if err := ledger.RecordOptions(file, text, ledger.Options{Max: *max}); err != nil {
		return e.fail(1, err)
	}
	if t := strings.Join(strings.Fields(text), " "); t != "" && utf8.RuneCountInString(t) < ledger.SliceLen {
		fmt.Fprintf(e.Stderr, "omega-monitor: ledger: note: %q is shorter than %d characters and can never be matched in a pane\n",
			t, ledger.SliceLen)
	}
	return 0
}

// maxLedgerText caps the text of one ledger record call.
const maxLedgerText = 1 << 20

func ledgerList(e *Env, args []string) int {
	fs := flag.NewFlagSet("ledger list", flag.ContinueOnError)
	switch code := ledgerFlags(fs, args, 1, e); code {
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
	io.WriteString(e.Stdout, b.String())
	if err != nil {
		return e.fail(1, err)
	}
	return 0
}
