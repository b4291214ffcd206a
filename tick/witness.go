package tick

import (
	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/probe"
)

// The agent's own account of its state is a reading (package probe), which
// the tick weighs against the screen.
type (
	Witness = probe.Witness
)

// WitnessMaxAge is how old a witness may be and still count.
const WitnessMaxAge = probe.WitnessMaxAge

// agrees reports whether the witness w says what the screen says.
func agrees(w Witness, s classify.State) bool {
	switch w.Status {
	case "busy":
		return s == classify.Working
	case "waiting":
		return s == classify.Question
	}
	return s == classify.Stalled || s == classify.Blocked
}
