package classify

import (
	"fmt"
	"strconv"
	"strings"
)

// Explain says in words why the screen got its verdict: the rule that
// decided, the region it read, the line it found, the work reading, and any
// hold on nudging. It is written for an operator, one fact a line.
func (r Result) Explain() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", r.State, r.Rule)
	if r.Source != "" {
		fmt.Fprintf(&b, "  rule from: %s (an operator's rules file)\n", r.Source)
	}
	if r.Agent != "" {
		fmt.Fprintf(&b, "  agent:    %s\n", r.Agent)
	} else {
		fmt.Fprintf(&b, "  agent:    unknown (no agent's input box, marks or dialog frame recognised): only the rules every agent shares were read\n")
	}
	if r.From > 0 {
		fmt.Fprintf(&b, "  region:   %s, %s\n", r.Region, lineRange(r.From, r.To, r.Total))
	} else {
		fmt.Fprintf(&b, "  region:   %s, which is empty\n", r.Region)
	}
	if r.Evidence.N > 0 {
		fmt.Fprintf(&b, "  evidence: line %d: %s\n", r.Evidence.N, quoteLine(r.Evidence.Text))
	}
	if r.State == Stalled || r.State == Blocked {
		fmt.Fprintf(&b, "  work:     %s\n", explainWork(r.Work, r.WorkPresent))
		if r.Hold != HoldNone {
			fmt.Fprintf(&b, "  hold:     %s\n", r.Hold.Reason())
			if r.HoldLine.N > 0 {
				fmt.Fprintf(&b, "            line %d: %s\n", r.HoldLine.N, quoteLine(r.HoldLine.Text))
			}
		}
	}
	return b.String()
}

func explainWork(w WorkReading, present bool) string {
	switch {
	case !present:
		return "no work probe, so work is assumed to remain (fail open)"
	case !w.Known:
		return "the work probe printed " + strconv.Quote(w.Raw) + ", not a count, so work is assumed to remain (fail open)"
	case w.N == 0:
		return "the work probe printed 0: no work remains"
	default:
		return "the work probe printed " + strconv.FormatInt(w.N, 10) + ": work remains"
	}
}

func lineRange(from, to, total int) string {
	of := ""
	if total > 0 {
		of = " of " + strconv.Itoa(total)
	}
	if from == to {
		return "line " + strconv.Itoa(from) + of
	}
	return "lines " + strconv.Itoa(from) + "-" + strconv.Itoa(to) + of
}

// quoteLine shows a screen line as it is, bounded, with nothing that could
// move an operator's cursor.
func quoteLine(s string) string {
	s = strings.TrimSpace(s)
	const max = 200
	if r := []rune(s); len(r) > max {
		s = string(r[:max]) + "…"
	}
	return s
}
