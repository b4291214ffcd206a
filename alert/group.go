package alert

import (
	"strconv"
	"time"
)

// A GroupEvent is what happened to a pane that shares its cause with other
// panes: one account's usage limit stopped it or it resumed past the reset;
// its host went away or came back.
type GroupEvent string

// The events a group page tells of.
const (
	GroupStopped GroupEvent = "stopped" // a usage limit stopped the pane
	GroupResumed GroupEvent = "resumed" // nudged once past the limit's reset
	GroupGone    GroupEvent = "gone"    // no capture from the pane's host
	GroupBack    GroupEvent = "back"    // captures from the host work again
)

// The kinds of cause a group pages for.
const (
	CauseUsageLimit = "usage-limit" // one account's usage limit
	CauseHost       = "host"        // one ssh host
)

// A Cause is what stopped the panes of a group, as the page names it: an
// account's usage limit (the agent, its host, the limit's words and its
// reset as a pane gives them), or a host gone.
type Cause struct {
	Kind  string `json:"kind"` // CauseUsageLimit or CauseHost
	Agent string `json:"agent,omitempty"`
	Host  string `json:"host,omitempty"` // "" for this machine, or for an account
	// Account says the panes are those of one account, known from the
	// agent's own file, on whichever machines they run (each named by
	// its target).
	Account bool   `json:"account,omitempty"`
	Limit   string `json:"limit,omitempty"`
	Reset   string `json:"reset,omitempty"`
}

// A GroupMember is one pane a group page names, with its own words (its
// limit line, or its last capture error).
type GroupMember struct {
	Target string
	Detail string
}

// A GroupPage is one page for many panes with one cause: the panes one
// usage limit stopped, or the watchers of one host gone. Follow says an
// earlier page of the same event named other panes already: these joined
// since.
type GroupPage struct {
	Cause   Cause
	Event   GroupEvent
	Follow  bool
	Time    time.Time
	Members []GroupMember
}

// maxGroupDetail is how much of a member's own words a page shows.
const maxGroupDetail = 160

// HTML renders the page as messages for Telegram's HTML parse mode, as
// Alert.HTML does: every pane is named, each on a line of its own, with
// its own words when they differ from the cause's.
func (g GroupPage) HTML() []string {
	var blocks []block
	add := func(b block) {
		if len(b.lines) > 0 {
			blocks = append(blocks, b)
		}
	}
	head := g.headline()
	n := strconv.Itoa(len(g.Members)) + " pane"
	if len(g.Members) != 1 {
		n += "s"
	}
	title := join(bold(head), plain(" · "+n))
	if h := cutRunes(oneLine(g.Cause.Host), 80); h != "" {
		title = join(title, plain(" · "), code(h))
	}
	var when span
	if !g.Time.IsZero() {
		when = plain(g.Time.Format("2006-01-02 15:04:05 MST"))
	}
	add(plainBlock(title, when))
	add(plainBlock(plain(g.sentence())))
	if g.Cause.Kind == CauseUsageLimit && g.Event == GroupStopped {
		add(preBlock(g.Cause.Limit))
	}
	var lines []span
	for _, m := range g.Members {
		l := join(plain("• "), code(cutRunes(oneLine(m.Target), 120)))
		if d := cutRunes(oneLine(m.Detail), maxGroupDetail); d != "" && d != oneLine(g.Cause.Limit) {
			l = join(l, plain(" · "+d))
		}
		lines = append(lines, l)
	}
	add(plainBlock(lines...))
	return paginate(join(bold(head), plain(" · "), italic("continued")), blocks)
}

func (g GroupPage) headline() string {
	switch g.Event {
	case GroupStopped:
		return "USAGE LIMIT"
	case GroupResumed:
		return "LIMIT RESET"
	case GroupGone:
		return "HOST GONE"
	case GroupBack:
		return "HOST BACK"
	}
	return "NOTICE"
}

// sentence says what happened to the panes listed, and what the watchers do.
func (g GroupPage) sentence() string {
	who := cutRunes(oneLine(g.Cause.Agent), 40)
	if who == "" {
		who = "the agent"
	}
	host := cutRunes(oneLine(g.Cause.Host), 80)
	where := "on this machine"
	switch {
	case g.Cause.Account:
		where = "on one account"
	case host != "":
		where = "on " + host
	}
	reset := cutRunes(oneLine(g.Cause.Reset), 40)
	switch g.Event {
	case GroupStopped:
		s := "One usage limit of " + who + " " + where + " stopped the panes below"
		if g.Follow {
			s = "The same usage limit of " + who + " " + where + " has stopped these panes too, since the last page"
		}
		if reset != "" {
			return s + ". It resets " + reset + ", as the panes give it. The watchers type nothing until the minute shown is over, then nudge each pane once, and tell you once."
		}
		return s + ". No reset time is shown: the watchers type nothing and look again each interval; resuming them is yours."
	case GroupResumed:
		s := "The usage limit of " + who + " " + where + " has reset: the watchers nudged each pane below once to resume."
		if g.Follow {
			s = "The usage limit of " + who + " " + where + " has reset for these panes too: each was nudged once to resume."
		}
		return s
	case GroupGone:
		s := "Captures from " + host + " have kept failing: the watched sessions below are gone, or the host cannot be reached. Their watchers poll slower and say when it is back."
		if g.Follow {
			s = "These watched sessions on " + host + " are gone too, since the last page."
		}
		return s
	case GroupBack:
		return "Captures from " + host + " work again for the watched sessions below."
	}
	return ""
}
