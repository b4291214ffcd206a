package tick

import (
	"time"

	"github.com/omega-monitor/omega-monitor/probe"
)

// Who is at the agent is a reading (package probe), which holds pages and
// nudges here.
type Humans = probe.Humans

const (
	// DefaultHumanIdle is how long after a human's last input at the agent
	// the watcher still counts them there, unless configured.
	DefaultHumanIdle = time.Minute
	// KeyboardQuiet is how long after a human's input at the agent no key
	// of ours is typed, whatever the setting.
	KeyboardQuiet = probe.KeyboardQuiet
	// HumanQuestionWait is how long a question may wait with a human at
	// the agent before it is paged anyway: whoever is there has not
	// answered it.
	HumanQuestionWait = 10 * time.Minute
)

// humans reads who is at the agent, before anything is paged or typed:
// the reason nothing is (p.human) or no key is (p.typing). A multiplexer
// that cannot say is said once, until it can, or says another reason.
func (p *poll) humans() {
	h := p.in.Humans
	switch {
	case h.Unknown != "":
		if p.next.HumansUnknown != h.Unknown {
			p.next.HumansUnknown = h.Unknown
			p.notes = append(p.notes, "who is at the agent is unknown ("+oneLine(h.Unknown)+"): pages and nudges are not held for a human")
		}
		return
	case h.Known:
		p.next.HumansUnknown = ""
	}
	if h.At(p.cfg.HumanIdle) {
		p.human = "a human is at the agent (input " + h.Ago() + ")"
		// The next look: when they would no longer count as there, a
		// second past it (the multiplexer keeps whole seconds).
		p.humanUntil = p.in.Now.Add(p.cfg.HumanIdle - h.Idle + time.Second)
	}
	p.typing = h.TypingReason()
}
