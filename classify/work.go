package classify

import (
	"strconv"
	"strings"
)

// A WorkReading is the work probe's output as the classifier reads it.
type WorkReading struct {
	Raw     string
	Present bool  // a probe ran
	Count   int64 // the count, when Known
	Known   bool  // the output was exactly one integer, zero or more
}

// ReadWork reads a work probe's raw output strictly: one integer, zero or
// more, after trimming surrounding white space. Anything else is unknown.
func ReadWork(raw string, present bool) WorkReading {
	w := WorkReading{Raw: raw, Present: present}
	if !present {
		return w
	}
	n, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 64)
	if err == nil && n >= 0 {
		w.Count, w.Known = n, true
	}
	return w
}

// Remains reports whether work remains. Unknown means yes: a wrong nudge
// costs one turn and is bounded by the budget, a wrong silence costs the
// whole build.
func (w WorkReading) Remains() bool { return !w.Known || w.Count > 0 }

// String is the reading as the MONITOR line prints it: the count, or ?.
func (w WorkReading) String() string {
	if !w.Known {
		return "?"
	}
	return strconv.FormatInt(w.Count, 10)
}
