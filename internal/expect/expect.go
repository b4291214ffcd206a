// Package expect reads and writes the expectation files of the golden
// corpus: NAME.want beside NAME.pane, one "key: value" a line, saying what
// the pane must classify as and why. It knows the file format only; what a
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
	Hold    string   // why nothing may be typed, for a stopped pane
	Ledger  []string // texts the watcher typed into the session earlier
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
			return Want{}, fmt.Errorf("expect: line %d: %q is not key: value", n, line)
		}
		value = strings.TrimPrefix(value, " ")
		switch key {
		case "state":
			w.State = strings.TrimSpace(value)
		case "work":
			w.Work, w.HasWork = value, true
		case "hold":
			w.Hold = strings.TrimSpace(value)
		case "ledger":
			w.Ledger = append(w.Ledger, value)
		case "status":
			w.Status = strings.TrimSpace(value)
		case "version":
			w.Version = strings.TrimSpace(value)
		case "why":
			w.Why = value
		default:
			return Want{}, fmt.Errorf("expect: line %d: unknown key %q", n, key)
		}
	}
	if err := sc.Err(); err != nil {
		return Want{}, fmt.Errorf("expect: %v", err)
	}
	if w.State == "" {
		return Want{}, fmt.Errorf("expect: no state: line")
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
		fmt.Fprintf(&b, "work: %s\n", w.Work)
	}
	if w.Hold != "" {
		fmt.Fprintf(&b, "hold: %s\n", w.Hold)
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
