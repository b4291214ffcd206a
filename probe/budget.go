package probe

import "fmt"

// A Budget counts the nudges sent since progress last advanced. It bounds the
// absence of progress, not the work: a build that keeps advancing can be
// nudged any number of times, while Limit nudges in a row that produced
// nothing exhaust it and the session goes to a human.
//
// Progress is measured against a high-water mark, the highest figure the
// progress probe has printed. Only a figure above the mark is progress. A
// figure below the previous one is reported ([Regressed]) and never resets
// the budget, and climbing back afterwards does not count either until the
// old mark is passed: otherwise a figure that wobbles 41, 40, 41 would
// reset the budget for ever while nothing moved.
//
// A Budget is a value: methods return a new one and never read a clock. The
// zero Budget has a limit of zero and so allows no nudge; use [NewBudget].
// Its fields are exported, with JSON names, so that the tick can store it.
type Budget struct {
	// Limit is how many nudges without progress are allowed.
	Limit int `json:"limit"`
	// Used is how many nudges were sent since progress last advanced.
	Used int `json:"used"`
	// Seen reports whether any known progress figure has been observed;
	// Last and High mean nothing until one has.
	Seen bool `json:"progress_seen"`
	// Last is the last known progress figure.
	Last int64 `json:"progress_last"`
	// High is the high-water mark: the highest known progress figure.
	High int64 `json:"progress_high"`
}

// NewBudget returns a fresh budget allowing limit nudges without progress.
// A negative limit is taken as zero.
func NewBudget(limit int) Budget {
	return Budget{Limit: max(limit, 0)}
}

// normal repairs what a hand-edited or corrupt state file could hold.
func (b Budget) normal() Budget {
	b.Limit = max(b.Limit, 0)
	b.Used = max(b.Used, 0)
	return b
}

// CanNudge reports whether another nudge is within the budget.
func (b Budget) CanNudge() bool {
	b = b.normal()
	return b.Used < b.Limit
}

// Exhausted reports whether the budget is spent: Used has reached Limit.
func (b Budget) Exhausted() bool {
	return !b.CanNudge()
}

// Spend returns the budget after one nudge. Once the budget is exhausted it
// returns it unchanged: a caller that does not check CanNudge first cannot
// push Used past Limit.
func (b Budget) Spend() Budget {
	b = b.normal()
	if b.Used < b.Limit {
		b.Used++
	}
	return b
}

// Observe returns the budget after this tick's progress reading, and what
// the reading changed. An unknown reading changes nothing. The first known
// figure becomes the baseline without resetting anything, since nothing
// shows what happened before it. A figure above the high-water mark is
// progress: Used goes back to zero and the mark rises. A figure below the
// last one is a regression, reported once, with the mark kept.
func (b Budget) Observe(progress Reading) (Budget, Change) {
	b = b.normal()
	if !progress.Known {
		return b, Change{Kind: Unknown}
	}
	n := progress.N
	switch {
	case !b.Seen:
		b.Seen, b.Last, b.High = true, n, n
		return b, Change{Kind: Baseline, To: n}
	case n > b.High:
		c := Change{Kind: Advanced, From: b.High, To: n, Forgiven: b.Used}
		b.Used, b.Last, b.High = 0, n, n
		return b, c
	case n < b.Last:
		c := Change{Kind: Regressed, From: b.Last, To: n}
		b.Last = n
		return b, c
	default:
		c := Change{Kind: Unchanged, From: b.Last, To: n}
		b.Last = n
		return b, c
	}
}

// String returns the nudges used over the limit, "1/5", as the MONITOR line
// prints them ("nudges 0/5", "nudged (1/5)").
func (b Budget) String() string {
	return fmt.Sprintf("%d/%d", b.Used, b.Limit)
}

// Reason says, in one line for the operator, why an exhausted budget hands
// the session to a human.
func (b Budget) Reason() string {
	if !b.Seen {
		return fmt.Sprintf("nudge budget exhausted: %d nudges sent and no progress figure to show that any of them helped; this needs a human", b.Used)
	}
	if b.Last < b.High {
		return fmt.Sprintf("nudge budget exhausted: %d nudges produced no progress (progress %d, best %d); this needs a human", b.Used, b.Last, b.High)
	}
	return fmt.Sprintf("nudge budget exhausted: %d nudges produced no progress (progress still %d); this needs a human", b.Used, b.High)
}

// NoProgressNotice is the line to say once, at start, when no progress probe
// is supplied: the budget can then never reset, so limit nudges in total
// are all the session gets before it goes to a human.
func NoProgressNotice(limit int) string {
	return fmt.Sprintf("no progress probe: the nudge budget cannot reset, so after %d nudges in all this session goes to a human", max(limit, 0))
}

// A ChangeKind says what one progress reading did to a Budget.
type ChangeKind int

const (
	// Unchanged: a known figure, not above the high-water mark and not
	// below the last figure.
	Unchanged ChangeKind = iota
	// Unknown: no known figure this tick; nothing changed.
	Unknown
	// Baseline: the first known figure, which becomes the mark.
	Baseline
	// Advanced: the figure passed the high-water mark; the budget reset.
	Advanced
	// Regressed: the figure fell below the last one; not progress.
	Regressed
)

var kindNames = [...]string{
	Unchanged: "unchanged",
	Unknown:   "unknown",
	Baseline:  "baseline",
	Advanced:  "advanced",
	Regressed: "regressed",
}

// String returns the kind's name, as history records it.
func (k ChangeKind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return fmt.Sprintf("ChangeKind(%d)", int(k))
	}
	return kindNames[k]
}

// A Change is what one progress reading did to a Budget.
type Change struct {
	Kind ChangeKind
	// From and To are the figures compared: for Advanced the old
	// high-water mark and the new figure, for Regressed and Unchanged the
	// last figure and the new one, for Baseline only To.
	From, To int64
	// Forgiven is how many nudges an advance cleared.
	Forgiven int
}

// String returns the change as the MONITOR line says it, or "" when there
// is nothing to say: "nudge budget reset (progress 41 → 42)" for an
// advance, "progress went down (42 → 40)" for a regression.
func (c Change) String() string {
	switch c.Kind {
	case Advanced:
		return fmt.Sprintf("nudge budget reset (progress %d → %d)", c.From, c.To)
	case Regressed:
		return fmt.Sprintf("progress went down (%d → %d)", c.From, c.To)
	}
	return ""
}
