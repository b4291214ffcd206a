package main

import (
	"fmt"
	"io"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/cmdline"
	"github.com/omega-monitor/omega-monitor/internal/poll"
)

const classifyUsage = `usage: omega-monitor classify [--work RAW] [--ledger FILE] [--explain] < pane

Reads a captured pane on standard input (tmux capture-pane -p -J, with or
without -e) and prints what it means, one word: QUESTION, STALLED, BLOCKED
or WORKING.

  --work RAW     the work probe's raw output; an integer above 0 means work
                 remains (STALLED), exactly 0 means none (BLOCKED), anything
                 else means unknown, read as work remains. Absent: no probe.
  --ledger FILE  an echo ledger: text the watcher typed into the session is
                 masked before anything is read
  --explain      say on standard error which rule decided, the region it
                 read and the line it found
`

func runClassify(e *Env, args []string) int {
	fs := newFlagSet("classify")
	var work cmdline.Optional
	fs.Var(&work, "work", "the work probe's raw output")
	ledgerPath := fs.String("ledger", "", "echo ledger file")
	explain := fs.Bool("explain", false, "explain the verdict on standard error")
	positional, code, ok := e.parse(fs, args, classifyUsage)
	if !ok {
		return code
	}
	if len(positional) > 0 {
		return e.exitf(2, "omega-monitor classify: unexpected argument %q (the pane comes on standard input)", positional[0])
	}
	opt := poll.ClassifyOptions(work.Value, work.Given, nil)
	local, err := poll.WatcherRules(e.Getenv)
	if err != nil {
		fmt.Fprintf(e.Stderr, "omega-monitor classify: rules: %v; the built-in rules apply\n", err)
	}
	opt.Local = local
	if *ledgerPath != "" {
		m, err := poll.LoadLedger(*ledgerPath)
		if err != nil {
			// A damaged ledger still masks what could be read; say so
			// and go on, since a verdict is worth more than none.
			fmt.Fprintf(e.Stderr, "omega-monitor classify: %v\n", err)
		}
		opt.Ledger = m
	}
	in := e.Stdin
	if *explain {
		// Counting every line costs a pass over the scrollback; only an
		// explanation needs the exact line numbers.
		in = struct{ io.Reader }{e.Stdin}
	}
	screen, err := classify.ReadScreen(in)
	if err != nil {
		return e.exitf(1, "omega-monitor classify: reading the pane: %v", err)
	}
	r := classify.Classify(screen, opt)
	fmt.Fprintln(e.Stdout, r.State)
	if *explain {
		io.WriteString(e.Stderr, r.Explain())
	}
	return 0
}
