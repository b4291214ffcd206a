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

// ownWitness drops a witness read from a kind of file other than the one
// the screen's agent's description names (classify.WitnessOf): a Codex log
// or a Qwen Code record found in the directory of a Gemini CLI pane says
// nothing of Gemini CLI, and an operator's description names the kind its
// agent writes or none. A screen that names no agent, an agent no
// description knows, or a witness of no kind keep it.
func (p *poll) ownWitness() {
	w, agent := p.in.Witness, p.in.Screen.Agent
	if w == nil || w.Kind == "" || agent == "" {
		return
	}
	if kind, known := classify.WitnessOf(p.in.Local, agent); known && kind != w.Kind {
		p.in.Witness = nil
	}
}
