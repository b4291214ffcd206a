// Package expect reads and writes the expectation files of the golden
// corpus: NAME.want beside NAME.pane, one "key: value" a line, saying what
// the pane must classify as and why, and the pane itself, masked of what
// looks like a secret before it is written. It knows the files only; what a
// pane means is the classifier's business.
package expect

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
)

// A Want is one expectation file.
type Want struct {
	State string // WORKING, QUESTION, STALLED or BLOCKED
	// Work is the work probe's raw output for the pane; HasWork says a
	// probe ran. The value keeps its spaces: " 3 " is a reading too.
	Work    string
	HasWork bool
	Hold    string // why nothing may be typed, for a stopped pane
	// Agent names the agent the pane must be read as ("unknown" for a
	// pane that shows none); Rule the rule that must decide, and
	// HoldRule the rule that must hold, as the classifier names them.
	Agent    string
	Rule     string
	HoldRule string
	// Unsettled names the rule that must say, of a stopped pane, that
	// the stop may not be one (look again): a reason, never a verdict.
	Unsettled string
	// Question and Options are, for a QUESTION pane, the question
	// sentence and each option's label, which the relayed alert must
	// carry verbatim.
	Question string
	Options  []string
	Ledger   []string // texts the watcher typed into the session earlier
	// Status and Version are what the agent itself wrote in its status
	// file when a real capture was taken.
	Status  string
	Version string
	Why     string // what the case proves, for a person
}

// Parse reads an expectation file. Blank lines and lines starting with #
// are skipped.
func Parse(data []byte) (Want, error) {
	var w Want
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			return Want{}, errorf("line %d: %q is not key: value", n, line)
		}
		value = strings.TrimPrefix(value, " ")
		switch key {
		case "state":
			w.State = strings.TrimSpace(value)
		case "work":
			w.Work, w.HasWork = value, true
		case "hold":
			w.Hold = strings.TrimSpace(value)
		case "agent":
			w.Agent = strings.TrimSpace(value)
		case "rule":
			w.Rule = strings.TrimSpace(value)
		case "unsettled":
			w.Unsettled = strings.TrimSpace(value)
		case "hold-rule":
			w.HoldRule = strings.TrimSpace(value)
		case "question":
			w.Question = strings.TrimSpace(value)
		case "option":
			w.Options = append(w.Options, strings.TrimSpace(value))
		case "ledger":
			w.Ledger = append(w.Ledger, value)
		case "status":
			w.Status = strings.TrimSpace(value)
		case "version":
			w.Version = strings.TrimSpace(value)
		case "why":
			w.Why = value
		default:
			return Want{}, errorf("line %d: unknown key %q", n, key)
		}
	}
	if err := sc.Err(); err != nil {
		return Want{}, errorf("%v", err)
	}
	if w.State == "" {
		return Want{}, errorf("no state: line")
	}
	return w, nil
}

// Read reads the expectation file at path.
func Read(path string) (Want, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Want{}, err
	}
	w, err := Parse(data)
	if err != nil {
		return Want{}, fmt.Errorf("%s: %w", path, err)
	}
	return w, nil
}

// Format writes w as Parse reads it.
func (w Want) Format() string {
	var b strings.Builder
	fmt.Fprintf(&b, "state: %s\n", w.State)
	if w.HasWork {
		if w.Work == "" {
			b.WriteString("work:\n")
		} else {
			fmt.Fprintf(&b, "work: %s\n", w.Work)
		}
	}
	if w.Hold != "" {
		fmt.Fprintf(&b, "hold: %s\n", w.Hold)
	}
	if w.Agent != "" {
		fmt.Fprintf(&b, "agent: %s\n", w.Agent)
	}
	if w.Rule != "" {
		fmt.Fprintf(&b, "rule: %s\n", w.Rule)
	}
	if w.HoldRule != "" {
		fmt.Fprintf(&b, "hold-rule: %s\n", w.HoldRule)
	}
	if w.Unsettled != "" {
		fmt.Fprintf(&b, "unsettled: %s\n", w.Unsettled)
	}
	if w.Question != "" {
		fmt.Fprintf(&b, "question: %s\n", w.Question)
	}
	for _, o := range w.Options {
		fmt.Fprintf(&b, "option: %s\n", o)
	}
	for _, l := range w.Ledger {
		fmt.Fprintf(&b, "ledger: %s\n", l)
	}
	if w.Status != "" {
		fmt.Fprintf(&b, "status: %s\n", w.Status)
	}
	if w.Version != "" {
		fmt.Fprintf(&b, "version: %s\n", w.Version)
	}
	if w.Why != "" {
		fmt.Fprintf(&b, "why: %s\n", w.Why)
	}
	return b.String()
}
