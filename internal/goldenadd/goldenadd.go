// Package goldenadd adds a captured pane to the golden corpus ("omega-monitor
// golden add"): it checks the case as given, reads what the classifier says
// of the pane today, and writes the case and its expectation (package
// expect). It is apart from expect, which classify's own tests import.
package goldenadd

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/expect"
)

// A Request is a golden case to add, as "omega-monitor golden add" takes it.
type Request struct {
	Name, Want, Hold, Why, Dir string
	Work                       string
	HasWork                    bool
	// Rules is an operator's rules file's compiled rules and its data, kept
	// beside the case; nil when the case needs none.
	Rules     *classify.Local
	RulesData []byte
}

// ErrUsage marks a Request that is wrong as given (exit 2), not a failure:
// every UsageError is one.
var ErrUsage = errorf("usage")

// A UsageError says what is wrong with a Request as given: Why, in words
// for the person who gave it.
type UsageError struct{ Why string }

func (e *UsageError) Error() string { return ErrUsage.Error() + ": " + e.Why }

// Is makes a UsageError an ErrUsage.
func (e *UsageError) Is(target error) bool { return target == ErrUsage }

func usagef(format string, a ...any) error { return &UsageError{Why: fmt.Sprintf(format, a...)} }

// Compiled on first use: a pattern at package init costs every subcommand's start.
var goldenName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,99}$`) })

var holds = map[string]bool{"draft": true, "interrupt": true, "keyboard": true, "usage-limit": true, "no-input-box": true, "turn-open": true}

// Check says what is wrong with r as given, a UsageError; and the
// state it wants.
func (r Request) Check() (classify.State, error) {
	state, ok := classify.ParseState(r.Want)
	switch {
	case !goldenName().MatchString(r.Name):
		return state, usagef("name %q must be lower-case letters, digits and hyphens", r.Name)
	case !ok:
		return state, usagef("--want %q must be WORKING, QUESTION, STALLED or BLOCKED", r.Want)
	case r.Hold != "" && !holds[r.Hold]:
		return state, usagef("--hold %q must be draft, interrupt, keyboard, usage-limit, no-input-box or turn-open", r.Hold)
	case r.Hold != "" && state != classify.Stalled && state != classify.Blocked:
		return state, usagef("--hold is for a stopped pane (STALLED or BLOCKED), not %s", state)
	case strings.ContainsAny(r.Why+r.Work, "\n\r"):
		return state, usagef("--why and --work are one line each")
	}
	return state, nil
}

// Add reads a pane from in, classifies it with opt (the case's rules
// added), and writes it as a case of r.Dir with its expectation: the
// reason too when the classifier agrees today. It returns what to tell
// the operator, and a warning when secrets were masked.
func Add(r Request, in io.Reader, opt classify.Options) (said, warning string, err error) {
	state, err := r.Check()
	if err != nil {
		return "", "", err
	}
	// The corpus lives in a checkout: a missing directory means the command
	// runs somewhere else, and creating ./golden/ there helps nobody.
	if fi, err := os.Stat(r.Dir); err != nil || !fi.IsDir() {
		return "", "", fmt.Errorf("no corpus directory %s here: run it at the root of an omega-monitor checkout, or give --dir", r.Dir)
	}
	pane, masked, err := expect.ReadPane(in)
	if err != nil {
		return "", "", err
	}
	if masked > 0 {
		warning = fmt.Sprintf("masked what looks like a secret on %d line(s); check that the case still shows what it proves", masked)
	}
	spec := expect.Want{State: state.String(), Work: r.Work, HasWork: r.HasWork, Hold: r.Hold, Why: r.Why}
	opt.Local = r.Rules
	got := classify.Classify(classify.ParseScreen(pane), opt)
	if got.State == state && string(got.Hold) == r.Hold {
		// The case asserts the reason too; the person adding it reads
		// the reason printed below.
		spec.Agent, spec.Rule, spec.HoldRule = got.Agent, got.Rule, got.HoldRule
		if spec.Agent == "" {
			spec.Agent = "unknown"
		}
	}
	base := filepath.Join(r.Dir, r.Name)
	if err := expect.AddCase(base, pane, spec, r.RulesData); err != nil {
		return "", warning, err
	}
	return expect.Added(base, spec, expect.Want{State: got.State.String(), Hold: string(got.Hold)}, got.Explain()), warning, nil
}

// Usage is golden add's help.
const Usage = `usage: omega-monitor golden add NAME --want STATE [--work RAW] [--hold HOLD]
                                 [--why TEXT] [--dir DIR] [--rules FILE] < pane

Adds a captured pane to the golden corpus as DIR/NAME.pane, with its
expectation in DIR/NAME.want, so that a misread becomes a regression test
(the examples below).

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
