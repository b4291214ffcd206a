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

// ownWitness drops a witness the screen's agent's description does not
// name the kind of (Weighed).
func (p *poll) ownWitness() {
	if w := p.in.Witness; w != nil && !Weighed(p.in.Local, p.in.Screen.Agent, *w) {
		p.in.Witness = nil
	}
}

// Weighed says whether a witness w counts for a screen of the agent named
// agent: unless it was read from a kind of file other than the one the
// agent's description, built in or in local, names (classify.WitnessOf). A
// Codex log or a Qwen Code record found in the directory of a Gemini CLI
// pane says nothing of Gemini CLI, and an operator's description names the
// kind its agent writes or none. A screen that names no agent, an agent no
// description knows, and a witness of no kind keep it.
func Weighed(local *classify.Local, agent string, w Witness) bool {
	if w.Kind == "" || agent == "" {
		return true
	}
	kind, known := classify.WitnessOf(local, agent)
	return !known || kind == w.Kind
}
