package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/omega-monitor/omega-monitor/internal/cmdline"
	"github.com/omega-monitor/omega-monitor/internal/goldenadd"
	"github.com/omega-monitor/omega-monitor/internal/pkgerr"
	"github.com/omega-monitor/omega-monitor/internal/poll"
)

const goldenUsage = `usage: omega-monitor golden add NAME --want STATE [--work RAW] [--hold HOLD]
                                 [--why TEXT] [--dir DIR] [--rules FILE] < pane

Adds a captured pane to the golden corpus as DIR/NAME.pane, with its
expectation in DIR/NAME.want, so that a misread becomes a regression test:

  tmux capture-pane -p -J -t =agent: | omega-monitor golden add agent-misread \
      --want QUESTION --why "the permission prompt was read as STALLED"

  NAME         lower-case letters, digits and hyphens
  --want       what the pane means: WORKING, QUESTION, STALLED or BLOCKED
  --work RAW   the work probe's raw output for this pane (absent: no probe)
  --hold HOLD  for a stopped pane, why nothing may be typed: draft,
               interrupt, keyboard, usage-limit, no-input-box or turn-open
  --why TEXT   one line saying what the case proves
  --dir DIR    the corpus directory (default golden/panes)
  --rules FILE an operator's rules file (rules.json) the case needs: it is
               checked, kept beside the case as NAME.rules.json, and read
               with it, so that a local rule comes with its proving case

It never overwrites a case, and says what the classifier reads today.
What looks like a secret is masked before the case is written (it says
so); a secret wrapped over lines or drawn in a box is refused, to be
masked by hand.
`

func runGolden(e *Env, args []string) int {
	if len(args) == 0 || args[0] != "add" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
			io.WriteString(e.Stdout, goldenUsage)
			return 0
		}
		return e.usageError("golden", "golden add NAME --want STATE < pane")
	}
	fs := newFlagSet("golden add")
	want := fs.String("want", "", "expected state")
	var work cmdline.Optional
	fs.Var(&work, "work", "work probe output")
	hold := fs.String("hold", "", "why nothing may be typed")
	why := fs.String("why", "", "what the case proves")
	dir := fs.String("dir", filepath.Join("golden", "panes"), "corpus directory")
	rulesPath := fs.String("rules", "", "an operator's rules file the case is read with; kept beside it as NAME.rules.json")
	// The name may come before or after the flags.
	rest := args[1:]
	var name string
	if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		name, rest = rest[0], rest[1:]
	}
	positional, code, ok := e.parse(fs, rest, goldenUsage)
	if !ok {
		return code
	}
	if name == "" && len(positional) > 0 {
		name = positional[0]
	} else if len(positional) > 0 {
		fmt.Fprintf(e.Stderr, "omega-monitor golden add: unexpected argument %q\n", positional[0])
		return 2
	}
	req := goldenadd.Request{Name: name, Want: *want, Hold: *hold, Why: *why, Dir: *dir, Work: work.Value, HasWork: work.Given}
	if _, err := req.Check(); err != nil {
		why := err.Error()
		if u := (*goldenadd.UsageError)(nil); errors.As(err, &u) {
			why = u.Why
		}
		fmt.Fprintf(e.Stderr, "omega-monitor golden add: %s\n", why)
		return 2
	}
	if *rulesPath != "" {
		// The rules are checked as a watcher's are: the user's own file.
		var err error
		if req.Rules, req.RulesData, err = poll.ReadRulesData(*rulesPath); err == nil && req.Rules == nil {
			err = fmt.Errorf("%s: no such file", *rulesPath)
		}
		if err != nil {
			fmt.Fprintf(e.Stderr, "omega-monitor golden add: --rules: %v\n", err)
			return 1
		}
	}
	said, warning, err := goldenadd.Add(req, e.Stdin, poll.ClassifyOptions(work.Value, work.Given, nil))
	if warning != "" {
		fmt.Fprintf(e.Stderr, "omega-monitor golden add: %s\n", warning)
	}
	if err != nil {
		fmt.Fprintf(e.Stderr, "omega-monitor golden add: %s\n", pkgerr.Why(err))
		return 1
	}
	io.WriteString(e.Stdout, said)
	return 0
}
