package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/cmdline"
	"github.com/omega-monitor/omega-monitor/internal/expect"
	"github.com/omega-monitor/omega-monitor/poll"
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

// Compiled on first use: a pattern at package init costs every subcommand's start.
var goldenName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,99}$`) })

var holds = map[string]bool{"draft": true, "interrupt": true, "keyboard": true, "usage-limit": true, "no-input-box": true, "turn-open": true}

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
	state, ok := classify.ParseState(*want)
	switch {
	case !goldenName().MatchString(name):
		fmt.Fprintf(e.Stderr, "omega-monitor golden add: name %q must be lower-case letters, digits and hyphens\n", name)
		return 2
	case !ok:
		fmt.Fprintf(e.Stderr, "omega-monitor golden add: --want %q must be WORKING, QUESTION, STALLED or BLOCKED\n", *want)
		return 2
	case *hold != "" && !holds[*hold]:
		fmt.Fprintf(e.Stderr, "omega-monitor golden add: --hold %q must be draft, interrupt, keyboard, usage-limit, no-input-box or turn-open\n", *hold)
		return 2
	case *hold != "" && state != classify.Stalled && state != classify.Blocked:
		fmt.Fprintf(e.Stderr, "omega-monitor golden add: --hold is for a stopped pane (STALLED or BLOCKED), not %s\n", state)
		return 2
	case strings.ContainsAny(*why+work.Value, "\n\r"):
		fmt.Fprintf(e.Stderr, "omega-monitor golden add: --why and --work are one line each\n")
		return 2
	}
	// The corpus lives in a checkout: a missing directory means the command
	// runs somewhere else, and creating ./golden/ there helps nobody.
	if fi, err := os.Stat(*dir); err != nil || !fi.IsDir() {
		fmt.Fprintf(e.Stderr, "omega-monitor golden add: no corpus directory %s here: run it at the root of an omega-monitor checkout, or give --dir\n", *dir)
		return 1
	}
	pane, masked, err := expect.ReadPane(e.Stdin)
	if err != nil {
		fmt.Fprintf(e.Stderr, "omega-monitor golden add: %s\n", strings.TrimPrefix(err.Error(), "expect: "))
		return 1
	}
	if masked > 0 {
		fmt.Fprintf(e.Stderr, "omega-monitor golden add: masked what looks like a secret on %d line(s); check that the case still shows what it proves\n", masked)
	}
	var local *classify.Local
	var rulesData []byte
	if *rulesPath != "" {
		// The rules are checked as a watcher's are: the user's own file.
		if local, rulesData, err = poll.ReadRulesData(*rulesPath); err == nil && local == nil {
			err = fmt.Errorf("%s: no such file", *rulesPath)
		}
	}
	if err != nil {
		fmt.Fprintf(e.Stderr, "omega-monitor golden add: --rules: %v\n", err)
		return 1
	}
	spec := expect.Want{State: state.String(), Work: work.Value, HasWork: work.Given, Hold: *hold, Why: *why}
	opt := poll.ClassifyOptions(work.Value, work.Given, nil)
	opt.Local = local
	r := classify.Classify(classify.ParseScreen(pane), opt)
	agrees := r.State == state && string(r.Hold) == *hold
	if agrees {
		// The case asserts the reason too; the person adding it reads
		// the reason printed below.
		spec.Agent, spec.Rule, spec.HoldRule = r.Agent, r.Rule, r.HoldRule
		if spec.Agent == "" {
			spec.Agent = "unknown"
		}
	}
	base := filepath.Join(*dir, name)
	if err := expect.AddCase(base, pane, spec, rulesData); err != nil {
		fmt.Fprintf(e.Stderr, "omega-monitor golden add: %s\n", strings.TrimPrefix(err.Error(), "expect: "))
		return 1
	}
	io.WriteString(e.Stdout, expect.Added(base, spec, expect.Want{State: r.State.String(), Hold: string(r.Hold)}, r.Explain()))
	return 0
}
