// Package tick decides what one poll of a watched session does: given the
// classified screen, the probes' readings and what earlier polls left
// behind, it returns the next state, the MONITOR line and the actions
// (nudge, alert) for the shell to carry out.
//
// It is pure and deterministic: the clock is an input, and it reads and
// writes no files. Persisting the state, recording nudges in the echo
// ledger before they are typed, and running the probes belong to the
// caller (cmd/omega-monitor tick, and replay).
//
// Each signal has its own latch and no two share one (the seed's defect 2):
// the question latch, the blocked latch, the budget latch and the failure
// latch are separate fields, set and cleared by their own rules.
package tick

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/printable"

	"github.com/omega-monitor/omega-monitor/internal/statedir/event"

	"github.com/omega-monitor/omega-monitor/alert"
	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/probe"
)

// DefaultNudgeText is what a nudge types when no text is configured.
const DefaultNudgeText = "continue with the next step; if you are waiting on something, say what"

// QuestionWindow is how long a question may leave the screen and come back
// without paging again: a question that flaps (QUESTION, WORKING, the same
// QUESTION) is one question.
const QuestionWindow = 15 * time.Minute

// TargetGoneAfter is how long captures may keep failing before the watcher
// says, once, that the watched session is gone; GoneInterval is the pace
// of its polls from then on, until a capture works again.
const (
	TargetGoneAfter = 10 * time.Minute
	GoneInterval    = 5 * time.Minute
)

// Config is what the watcher was started with.
type Config struct {
	Target      string
	NudgeBudget int
	NudgeText   string
	// HasProgress says a progress probe is configured; without one the
	// budget can never reset, and the first line says so.
	HasProgress bool
	// Interval is the watcher's pace between polls (0: not known). No
	// short wait the tick asks for is as long: the next poll comes at the
	// interval anyway.
	Interval time.Duration
	// HumanIdle is how long after a human's last input at the agent they
	// count as there: nothing is paged and nothing is nudged (a question
	// waiting HumanQuestionWait is paged anyway). 0 turns the rule off;
	// no key is typed within KeyboardQuiet of a human's input either way.
	HumanIdle time.Duration
}

// Input is one poll.
type Input struct {
	Now time.Time
	// Screen is the classified pane, read with the echo ledger.
	Screen classify.Result
	// Ledger masks our own text in the lines that changed since the last
	// poll, before they are read for failures and transitions.
	Ledger classify.Masker
	// Work and Progress are the probes' readings; the Present flags say
	// a probe ran, and the Error fields why a reading is missing.
	Work, Progress               probe.Reading
	WorkPresent, ProgressPresent bool
	WorkError, ProgressError     string
	// CaptureError says the pane could not be captured; Screen is then
	// ignored.
	CaptureError string
	// Witness is the agent's own status, when a fresh one for this pane
	// exists.
	Witness *Witness
	// OwnTextInBox says the input box holds exactly the nudge text, left
	// there by a nudge whose Enter never came: a STALLED screen then gets
	// only the Enter, never the text again.
	OwnTextInBox bool
	// Woken says a wake brought this poll (an agent's hook said something
	// is about to change): the screen is looked at again at SettlePace
	// until it settles. It carries no verdict: the screen decides.
	Woken bool
	// MuxWoken says the multiplexer woke the watcher instead: the pane
	// had drawn nothing for seconds, so the screen has settled and no
	// look at SettlePace follows; a question is seen again QuestionSettle
	// later and paged, a stop is judged at once, as on any poll. It says
	// nothing of the agent's hooks (State.HooksHeard).
	MuxWoken bool
	// HostWake is where the wake relay of a remote target stands: whether
	// the hooks on the host can wake this watcher ("" for a local target,
	// or while the relay has not said).
	HostWake HostWake
	// Humans is what the multiplexer says of the humans at the pane.
	Humans Humans
	// Title is the pane's title, as the program in it set it: the agent's
	// own word, for agents whose title says their state (TitleSays).
	Title string
	// Account is the account the agent of the pane is signed in with, as a
	// digest (probe.AccountKey), read when a usage limit is about to be
	// paged; "" where it is not known. Two panes of one account are one
	// page, on one machine or several, two accounts two, however their
	// limits line up.
	Account string
	// AccountPending says the account is being read on the pane's ssh
	// host (the loop reads it after this poll): the limit's page waits for
	// the next look, half a second away, which has it.
	AccountPending bool
	// Local is the operator's rules file, or nil: the agents it describes
	// may give title marks.
	Local *classify.Local
	// FirstLook says this is the watcher's first look (a fresh watcher's,
	// or one started again): a stop it sees is looked at once more,
	// UnsettledLook later, before anything is typed or paged, so that a
	// watcher started on an idle agent types nothing in its first second,
	// before the operator has read its start message.
	FirstLook bool
}

// HostWake is where the wake relay of a remote target stands, as the tick
// says it: once each time it changes.
type HostWake string

const (
	HostWakeListening HostWake = "listening" // a listener runs on the host
	HostWakeAbsent    HostWake = "absent"    // no omega-monitor on the host
	HostWakeOld       HostWake = "old"       // one that does not listen
)

// State is what one poll leaves for the next. It is stored as JSON.
type State struct {
	Version int `json:"version"`
	// Polls counts the polls judged so far.
	Polls int `json:"polls"`
	// Last is the last state, as its name.
	Last string `json:"last,omitempty"`

	Budget probe.Budget `json:"budget"`
	// BudgetLatch is set when an exhausted budget was escalated; only a
	// reset of the budget (progress) clears it.
	BudgetLatch bool `json:"budget_latch,omitempty"`
	// QuestionLatch holds the question escalated last: its key, when it
	// was escalated, and when it was last on screen.
	QuestionLatch *QuestionLatch `json:"question_latch,omitempty"`
	// QuestionSeen is a question on screen not yet escalated: its key and
	// when it was first seen. It is escalated once a capture at least
	// QuestionSettle later still shows it.
	QuestionSeen *QuestionSeen `json:"question_seen,omitempty"`
	// Settling counts the looks taken at SettlePace since the last wake;
	// nil when the pace is the interval's.
	Settling *int `json:"settling,omitempty"`
	// BlockedLatch is set when a blocked spell was escalated; a poll that
	// shows work again ends the spell.
	BlockedLatch *time.Time `json:"blocked_latch,omitempty"`
	// FailureLatch lists the failure texts already alerted. It is never
	// cleared: the scrollback keeps old failures, and a redraw must not
	// fire them again. New failure text differs and gets through.
	FailureLatch []string `json:"failure_latch,omitempty"`

	// ProbeComplaint is what the probes last complained of, as the line
	// said it: said again only when it changes.
	ProbeComplaint string `json:"probe_complaint,omitempty"`

	// Seen holds the screen lines of the last poll, for the diff that
	// finds what changed; Transition is the last line that did.
	Seen       []string `json:"seen,omitempty"`
	Transition string   `json:"transition,omitempty"`

	// WitnessAgreed and WitnessDisagreed count the polls where the agent's
	// own status agreed with the screen, and where it did not;
	// TitleAgreed and TitleDisagreed the same of its title.
	WitnessAgreed    int `json:"witness_agreed,omitempty"`
	WitnessDisagreed int `json:"witness_disagreed,omitempty"`
	TitleAgreed      int `json:"title_agreed,omitempty"`
	TitleDisagreed   int `json:"title_disagreed,omitempty"`

	// Unconfirmed is the text of a nudge that reached the terminal but
	// that the input box never showed (the loop withheld its Enter): no
	// more text is typed until a capture shows the box empty, or holding
	// exactly that text (then Enter only). UnconfirmedLatch says the
	// operator was told; a confirmed typing or progress clears it.
	Unconfirmed      string `json:"unconfirmed,omitempty"`
	UnconfirmedLatch bool   `json:"unconfirmed_latch,omitempty"`

	// StillKey is the live region of the WORKING screen last seen, as a
	// digest; StillSince since when it has not changed; StillLatch says
	// the operator was told it has not moved for StillAfter.
	StillKey   string    `json:"still_key,omitempty"`
	StillSince time.Time `json:"still_since,omitzero"`
	StillLatch bool      `json:"still_latch,omitempty"`

	// LastLook is when the last screen was judged: a change since a look
	// a moment ago is an answer growing (unsettled).
	LastLook time.Time `json:"last_look,omitzero"`

	// LastNudge is when the last nudge was handed over: however often
	// wakes bring polls, no other is typed within an interval of it.
	LastNudge time.Time `json:"last_nudge,omitzero"`

	// HumansUnknown is why the multiplexer could not say who is at the
	// agent, as said last: said again only when it changes.
	HumansUnknown string `json:"humans_unknown,omitempty"`

	// UsageHold is the key (LineKey) of the usage-limit line being waited
	// out, not the line, which a pane wrote; UsageUntil is when its limit
	// resets. A state an older version wrote holds the line itself.
	UsageHold  string    `json:"usage_hold,omitempty"`
	UsageUntil time.Time `json:"usage_until,omitzero"`
	// UsagePaged and UsageResumed are the keys of the usage-limit lines
	// the operator was told of, and told that the agent resumed after:
	// each is said once.
	UsagePaged   string `json:"usage_paged,omitempty"`
	UsageResumed string `json:"usage_resumed,omitempty"`
	// UsageNudged is the key of the usage-limit line the last nudge
	// resumed past: said again after it, its reset is read anew.
	UsageNudged string `json:"usage_nudged,omitempty"`
	// UsageGroup is the key of the group the usage-limit page joined:
	// the resume joins the same one.
	UsageGroup string `json:"usage_group,omitempty"`

	Board // what the fleet board reads: see board.go

	// CaptureFailures counts the captures in a row that failed, since
	// CaptureFailingSince. Once they have failed for TargetGoneAfter the
	// watched session is taken as gone: TargetGone is set (the board shows
	// it, the loop polls slower) and the operator is told once. A capture
	// that succeeds clears all three.
	CaptureFailures     int       `json:"capture_failures,omitempty"`
	CaptureFailingSince time.Time `json:"capture_failing_since,omitzero"`
	TargetGone          bool      `json:"target_gone,omitempty"`

	// Pane and PaneDir are the watched pane's coordinate and working
	// directory at the last capture; the caller sets them.
	Pane    string `json:"pane,omitempty"`
	PaneDir string `json:"pane_dir,omitempty"`

	// HostWakeSaid is where the wake relay stood when the line last said
	// it (Input.HostWake).
	HostWakeSaid HostWake `json:"host_wake_said,omitempty"`

	// HalfTyped is an answer from the chat that stopped after some of its
	// keys reached the terminal: the screen changed under it. No question
	// is offered with buttons again until a poll sees the agent's own
	// screen back (poll's).
	HalfTyped *HalfTyped `json:"half_typed,omitempty"`

	// HooksHeard says the agent's hooks announced the last end of a
	// running turn (a stop or a question first seen on a look a wake
	// brought): while it holds, a running turn is looked at every
	// HeardInterval instead of every interval. An end first seen by an
	// interval's poll clears it, and so does a remote host whose hooks
	// can no longer reach the watcher.
	HooksHeard bool `json:"hooks_heard,omitempty"`
}

// A QuestionLatch remembers one escalated question.
type QuestionLatch struct {
	Key       string    `json:"key"`
	Escalated time.Time `json:"escalated"`
	LastSeen  time.Time `json:"last_seen"`
	// WitnessChanged is when the agent's own status had last changed
	// when the question was paged (Witness.Changed): another value later
	// says the agent left the question and asked again, as the agent's
	// clock says it, whatever ours says.
	WitnessChanged time.Time `json:"witness_changed,omitzero"`
}

// A HalfTyped is an answer stopped half typed: when, and the keys that
// reached the terminal.
type HalfTyped struct {
	At   time.Time `json:"at"`
	Keys []string  `json:"keys"`
}

// A QuestionSeen is a question on screen, waiting to be seen again before
// it is escalated.
type QuestionSeen struct {
	Key string    `json:"key"`
	At  time.Time `json:"at"`
}

// QuestionSettle is how long a question must stay on the screen before it
// is paged: a dialog an auto-accept mode approves within a second is not
// a page. With polls seconds apart, such transients are seen.
const QuestionSettle = 2 * time.Second

// SettlePace is the pace of the looks after a wake, one wait after another,
// until the screen settles: a hook can fire before the screen shows what it
// announces (Claude Code's PermissionRequest, about half a second before
// its dialog is drawn, Codex's about 0.9 s), so the first second is looked
// at twice; a dialog seen is then looked at once more, QuestionSettle
// later, and paged.
var SettlePace = []time.Duration{500 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second}

// HeardInterval is the pace of the looks at a running turn while the
// agent's hooks are heard (State.HooksHeard): five intervals, at most ten
// minutes (never less than the interval). Wakes replace the polls they
// make needless; the poll stays as the net under them, slower, and back
// at the interval as soon as a turn's end comes unannounced.
func HeardInterval(interval time.Duration) time.Duration {
	return max(interval, min(5*interval, 10*time.Minute))
}

// workingLooks is how many looks at SettlePace a running turn gets after a
// wake before the interval's pace returns (the last 4 s after the wake).
const workingLooks = 4

// StateVersion is the version of State this package writes.
const StateVersion = 1

// maxFailureLatch bounds the failure latch; the oldest texts retire.
const maxFailureLatch = 200

// An ActionKind is what the shell is told to do.
type ActionKind int

const (
	Nudge ActionKind = iota + 1 // type Text, then Enter as a separate call
	Alert                       // hand Alert to the alert funnel
	Enter                       // Text is in the input box already: Enter only
	Wait                        // wait Wait before the next poll, instead of the interval
)

// An Action is one thing the shell does after the poll.
type Action struct {
	Kind  ActionKind
	Text  string      // for Nudge: the exact text to type
	Alert alert.Alert // for Alert
	Wait  time.Duration
	// Resumes is, for a Nudge, the key of the usage-limit line whose reset
	// it resumes past: a nudge not typed gives that resume back (Refund).
	Resumes string
	// OnTyped says an Alert tells of the poll's nudge: it goes only once
	// that nudge is typed (the resume notice), and not at all otherwise.
	OnTyped bool
	// Group, when set, says the Alert shares its cause with other panes:
	// it joins the page of that cause, which names them all, and goes
	// alone only when it cannot.
	Group *Grouping
}

// An Event is one line of the history: what happened, with its figures
// (statedir/event names the events).
type Event = event.Event

// An Outcome is what a poll says and does.
type Outcome struct {
	Line    string
	Actions []Action
	Events  []Event

	// parts are Line's parts, and nudged the index of the one that says
	// a nudge went out (-1 when none did), so that Withhold can say
	// otherwise without reading the line back.
	parts  []string
	nudged int
}

// Withhold takes every nudge and Enter out of a poll's outcome (the state
// could not be saved, the ledger could not record the text), gives each
// back to the budget, and says why in the line and the history: "not
// nudged (why)" where the line said "nudged", and nudge_not_typed for the
// nudge's event.
func Withhold(next State, out Outcome, why string) (State, Outcome) {
	var kept []Action
	for _, a := range out.Actions {
		if a.Kind != Nudge && a.Kind != Enter {
			kept = append(kept, a)
			continue
		}
		next = next.Refund(a.Resumes)
	}
	out.Actions = slices.DeleteFunc(kept, func(a Action) bool { return a.OnTyped })
	if out.nudged >= 0 && out.nudged < len(out.parts) {
		parts := slices.Clone(out.parts)
		parts[out.nudged] = "not nudged (" + why + ")"
		out.parts, out.Line, out.nudged = parts, strings.Join(parts, lineSep), -1
	}
	events := make([]Event, 0, len(out.Events))
	for _, e := range out.Events {
		if e.Name == event.Nudge {
			e = Event{Name: event.NudgeNotTyped, State: e.State, Fields: map[string]any{"text": e.Fields["text"], "why": why}}
		}
		events = append(events, e)
	}
	out.Events = events
	return next, out
}

// Held splits the line of an outcome that hands a nudge over around the
// part that says the nudge: the poll holds the line until the loop has
// typed the nudge or refused to, so that no line says "nudged" of a
// nudge not typed. ok is false when the line says no nudge.
func (o Outcome) Held() (h HeldLine, ok bool) {
	if o.nudged < 0 || o.nudged >= len(o.parts) {
		return HeldLine{}, false
	}
	h = HeldLine{Before: strings.Join(o.parts[:o.nudged], lineSep), Nudge: o.parts[o.nudged]}
	if rest := o.parts[o.nudged+1:]; len(rest) > 0 {
		h.After = lineSep + strings.Join(rest, lineSep)
	}
	return h, true
}

// Step judges one poll.
func Step(prev State, cfg Config, in Input) (State, Outcome) {
	next := prev
	next.Version = StateVersion
	next.Polls++
	if next.Budget.Limit != cfg.NudgeBudget {
		next.Budget.Limit = max(cfg.NudgeBudget, 0)
	}
	p := poll{cfg: cfg, in: in, next: &next, nudgedAt: -1}
	if prev.Polls == 0 && !cfg.HasProgress {
		p.notice = "no progress probe: the nudge budget cannot reset"
	}
	p.hostWake()
	if in.CaptureError != "" {
		p.captureFailed()
		p.pace(false)
		return next, p.outcome("?")
	}
	if next.TargetGone {
		p.notes = append(p.notes, "the watched session is back")
		p.hostBack()
		p.event(event.TargetBack, in.Screen.State.String(), map[string]any{"failures": next.CaptureFailures})
	}
	next.CaptureFailures, next.CaptureFailingSince, next.TargetGone = 0, time.Time{}, false
	p.ownWitness()
	p.unsettled(prev)
	p.titleWaits()
	next.LastLook = in.Now
	in = p.in
	st := in.Screen.State
	p.witness()
	p.titleWitness()
	p.humans()
	p.progress()
	p.screenChanges()
	name := st.String()
	if st != classify.Question {
		next.QuestionSeen = nil
	}
	switch {
	case st == classify.Working:
		p.working()
	case st == classify.Question:
		p.question()
	case in.Screen.Agent == "" && in.Screen.Seen == "":
		// A stopped screen no agent drew: a shell, an editor, the wrong
		// window. Never nudged, never paged as a stall or a block.
		name = NoAgent
		p.line = append(p.figures(), "no agent recognised: is the agent in this pane?")
	case (st == classify.Blocked || st == classify.Stalled) && (in.Woken || prev.Settling != nil) && name != prev.Last:
		// A stop on the first look after a wake may be a redraw: the
		// real Gemini CLI clears its screen as its Notification hook
		// fires, just before it draws a dialog. Nothing is typed or
		// paged until the next look, SettlePace away, sees it too.
		p.line = append(p.figures(), "not nudged yet: a stop seen once since a wake; the next look decides")
	case st == classify.Blocked:
		p.blocked()
	case st == classify.Stalled:
		p.stalled()
	}
	if st != classify.Working {
		next.StillKey, next.StillSince, next.StillLatch = "", time.Time{}, false
	}
	if name != prev.Last {
		p.event(event.State, name, map[string]any{"from": prev.Last, "rule": in.Screen.Rule})
	}
	p.hooksHeard(prev, name)
	next.Last = name
	if p.reset != "" && st != classify.Working && st != classify.Stalled {
		p.notes = append(p.notes, p.reset) // said on every state it happens in
	}
	// Settled: a stop seen on two looks in a row, or a question
	// escalated; a turn running or a question not yet escalated may yet
	// change. A stop seen once may be a redraw: the real Gemini CLI clears
	// its screen just before it draws a permission dialog, when its
	// Notification hook fires, and that screen reads as a stop.
	// A turn seen running on the wake's look and the four after it (4 s)
	// is settled too: a hook came at most 0.9 s before the screen showed
	// what it announced, in all three agents, and more looks at a running
	// turn only cost (each is a poll).
	working := st == classify.Working && !in.Woken && next.Settling != nil && *next.Settling >= workingLooks
	p.pace(working || st != classify.Working && next.QuestionSeen == nil && name == prev.Last)
	p.heardPace(st)
	return next, p.outcome(name)
}

// hooksHeard keeps State.HooksHeard: a running turn's end (any other state
// after WORKING) first seen on a look a wake brought says the hooks are
// heard; one first seen on an interval's poll says they missed it. The
// line says each change, once.
func (p *poll) hooksHeard(prev State, name string) {
	if prev.Last != classify.Working.String() || name == prev.Last {
		return
	}
	heard := p.in.Woken || prev.Settling != nil
	if heard == p.next.HooksHeard {
		return
	}
	p.next.HooksHeard = heard
	if heard {
		p.notes = append(p.notes, "the agent's hooks are heard: a running turn is looked at every "+
			every(HeardInterval(p.cfg.Interval))+", a hook wakes the watcher sooner")
		return
	}
	p.notes = append(p.notes, "a turn's end no hook announced: a running turn is looked at every "+every(p.cfg.Interval)+" again")
}

// every says a pace: in seconds below two minutes, else as roundDuration.
func every(d time.Duration) string {
	if d < 2*time.Minute {
		return fmt.Sprintf("%.0fs", d.Seconds())
	}
	return roundDuration(d)
}

// heardPace asks for the next look at a running turn HeardInterval away
// while the hooks are heard and no look sooner is due.
func (p *poll) heardPace(st classify.State) {
	next := p.next
	if st != classify.Working || !next.HooksHeard || p.cfg.Interval <= 0 ||
		next.Settling != nil || next.QuestionSeen != nil || next.TargetGone {
		return
	}
	for _, a := range p.actions {
		if a.Kind == Wait {
			return
		}
	}
	p.actions = append(p.actions, Action{Kind: Wait, Wait: HeardInterval(p.cfg.Interval)})
}

// pace asks for the next poll sooner than the interval when the screen may
// be about to change: after a wake, at SettlePace until settled says the
// screen has settled or the pace is spent, and for a question waiting to
// be seen again, at the end of its QuestionSettle. A session taken as gone
// is polled slower instead. At most one wait is asked for; none that the
// interval would come before.
func (p *poll) pace(settled bool) {
	next := p.next
	if next.TargetGone {
		next.Settling, next.QuestionSeen = nil, nil
		p.actions = append(p.actions, Action{Kind: Wait, Wait: max(GoneInterval, p.cfg.Interval)})
		return
	}
	if p.in.Woken {
		next.Settling = new(int)
	}
	var wait time.Duration
	if n := next.Settling; n != nil {
		if settled || *n < 0 || *n >= len(SettlePace) {
			next.Settling = nil
		} else {
			wait = SettlePace[*n]
			next.Settling = new(*n + 1)
		}
	}
	if q := next.QuestionSeen; q != nil {
		at := q.At.Add(QuestionSettle)
		if !p.lookAt.IsZero() {
			at = p.lookAt // held for a human: when the hold could end
		}
		left := at.Sub(p.in.Now)
		// Past the settle already (a clock that moved back): look
		// again soon, not at once. The question's own look replaces
		// the wake's pace: what else may change is seen then.
		wait = max(left.Round(100*time.Millisecond), 100*time.Millisecond)
	}
	if wait == 0 {
		return
	}
	p.waitAtMost(wait)
}

// NoAgent is the reading of a stopped screen that no agent drew: the
// watcher is likely aimed at the wrong pane.
const NoAgent = "NO AGENT"

// captureFailed judges a poll without a screen. One failed capture is said
// and nothing else; captures failing for TargetGoneAfter mean the watched
// session is gone, which is escalated once.
func (p *poll) captureFailed() {
	next, now := p.next, p.in.Now
	next.CaptureFailures++
	if next.CaptureFailingSince.IsZero() {
		next.CaptureFailingSince = now
	}
	why := "capture failed: " + oneLine(p.in.CaptureError)
	p.event(event.Failure, "?", map[string]any{"error": p.in.CaptureError, "failures": next.CaptureFailures})
	switch {
	case next.TargetGone:
		p.line = []string{why + "; the watched session is gone (since " + next.CaptureFailingSince.Format("15:04:05") + "), polling slower"}
	case now.Sub(next.CaptureFailingSince) >= TargetGoneAfter:
		next.TargetGone = true
		text := fmt.Sprintf("the watched session is gone: no capture since %s (%d tries); last error: %s",
			next.CaptureFailingSince.Format("15:04:05 MST"), next.CaptureFailures, oneLine(p.in.CaptureError))
		a := Action{Kind: Alert, Alert: alert.Alert{Kind: alert.Notice, Target: p.cfg.Target, State: "?", Time: now, Text: text}}
		if host := hostOf(p.cfg.Target); host != "" {
			a.Group = &Grouping{Key: hostGroupKey(p.cfg.Target), Event: alert.GroupGone, Window: GatherWindow(p.cfg.Interval),
				Cause: alert.Cause{Kind: alert.CauseHost, Host: host}, Detail: oneLine(p.in.CaptureError)}
		}
		p.actions = append(p.actions, a)
		p.event(event.Escalate, "?", map[string]any{"kind": "target-gone", "failures": next.CaptureFailures, "since": next.CaptureFailingSince})
		p.line = []string{why + "; the watched session is gone, escalated; polling slower"}
	default:
		p.line = []string{why + "; still watching"}
	}
}

// UnsettledLook is how soon a stop that a missing marker may contradict
// (classify's Unsettled: an answer with no end line under it) is looked at
// again: an answer that streams changes the screen within it.
const UnsettledLook = 3 * time.Second

// unsettled judges a stop that a rule says may not be one: an answer with
// no end line under it may still be streaming, or may be the end of a turn
// a release drew without one. No verdict rests on the missing marker: the
// agent's own status saying its turn is open is WORKING; the screen changed
// since the last look is WORKING (an answer streams); a first sighting is
// looked at again soon (lookAgain); the same screen on the next look, with
// nothing else saying the agent works, is the stop it reads as.
func (p *poll) unsettled(prev State) {
	s := &p.in.Screen
	if s.Unsettled == "" || s.State == classify.Working || s.State == classify.Question {
		return
	}
	why := "the last answer has no end line under it"
	if w := p.in.Witness; w != nil && w.Status == "busy" {
		s.State, s.Rule = classify.Working, "the agent's own status says its turn is open ("+why+")"
		return
	}
	// Only a built-in agent's title: an operator's description makes
	// nothing WORKING that no live evidence shows.
	if TitleSays(nil, s.Agent, p.in.Title) == "busy" {
		s.State, s.Rule = classify.Working, "the agent's own title says it works ("+p.in.Title+"; "+why+")"
		return
	}
	keys := make([]string, 0, len(prev.Seen))
	for _, l := range meaningful(*s) {
		keys = append(keys, LineKey(l))
	}
	changed := !slices.Equal(keys, prev.Seen)
	// A change since a look a moment ago is the answer growing; one since
	// a look an interval ago says only that something happened between.
	recent := prev.Polls > 0 && !prev.LastLook.IsZero() && p.in.Now.Sub(prev.LastLook) <= 2*UnsettledLook
	switch {
	case changed && recent:
		s.State, s.Rule = classify.Working, "the screen changed since the last look ("+why+": an answer streams)"
	case changed || prev.Last != s.State.String():
		p.lookAgain = why + " (it may be streaming)"
	}
}

// notYet holds what a stop would do (a nudge, a page) for one more look,
// UnsettledLook away, when the stop is not yet taken for one: a missing
// marker may contradict it (lookAgain), or it is the watcher's first look,
// which types and pages nothing before the operator has read its start.
// It says so in the line, with when the next look decides.
func (p *poll) notYet() bool {
	why := p.lookAgain
	if why == "" && p.in.FirstLook {
		why = "the watcher's first look"
	}
	if why == "" {
		return false
	}
	p.line = append(p.line, "not nudged yet: "+why+"; the next look, at "+p.in.Now.Add(UnsettledLook).Format("15:04:05")+", decides")
	p.waitAtMost(UnsettledLook)
	return true
}

// titleWaits reads a screen that reads WORKING while the agent's own title
// says it waits for a human: a waiting title is never outvoted by a
// screen that reads WORKING. It is a question the screen does not show:
// paged as one (QuestionSettle later, once), its dialog unread, "look at
// the session"; never typed into.
func (p *poll) titleWaits() {
	s := &p.in.Screen
	if s.State != classify.Working || TitleSays(p.in.Local, s.Agent, p.in.Title) != "waiting" {
		return
	}
	s.State, s.Rule, s.Dialog, s.Live = classify.Question, "the agent's own title says it waits for a human ("+p.in.Title+"), though the screen reads WORKING", nil, nil
}

// titleWitness compares what the agent's own title says with the screen,
// as witness does the agent's status: agreement counted, a disagreement
// said and logged; a title that says the agent is busy or waits stops a
// nudge the screen would allow.
func (p *poll) titleWitness() {
	says := TitleSays(p.in.Local, p.in.Screen.Agent, p.in.Title)
	if says == "" {
		return
	}
	st := p.in.Screen.State
	w := Witness{Status: says}
	if agrees(w, st) {
		p.next.TitleAgreed++
		return
	}
	p.next.TitleDisagreed++
	said := "the agent's own title says " + says + " (" + p.in.Title + ")"
	if says != "idle" && (st == classify.Stalled || st == classify.Blocked) && p.veto == "" {
		p.veto = said + ", though the screen reads " + st.String()
	} else {
		p.notes = append(p.notes, said+", the screen reads "+st.String())
	}
	p.event(event.Disagreement, st.String(), map[string]any{"title": p.in.Title, "title_says": says, "rule": p.in.Screen.Rule})
}

// waitAtMost asks for the next look within d: the poll's one wait is
// shortened, or added; none when the interval comes first.
func (p *poll) waitAtMost(d time.Duration) {
	if p.cfg.Interval > 0 && d >= p.cfg.Interval {
		return
	}
	for i, a := range p.actions {
		if a.Kind == Wait {
			p.actions[i].Wait = min(a.Wait, d)
			return
		}
	}
	p.actions = append(p.actions, Action{Kind: Wait, Wait: d})
}

// A poll gathers one Step's line and actions.
type poll struct {
	// resuming is the key of the usage-limit line a nudge on this poll
	// resumes after, its reset passed.
	resuming string
	cfg      Config
	in       Input
	next     *State
	line     []string // the line's parts after the state
	notes    []string // remarks appended to the line
	notice   string   // said once, at start, after the remarks
	actions  []Action
	events   []Event
	reset    string // the budget reset, said on this poll
	veto     string // why the agent's own status forbids a nudge
	// human says a human is at the agent: nothing is paged or nudged,
	// and humanUntil is when they would no longer count as there. typing
	// says a human's input came within KeyboardQuiet: nothing is typed.
	human      string
	humanUntil time.Time
	typing     string
	// lookAt is when a question held for a human is looked at again.
	lookAt time.Time
	// nudgedAt is the index in line of the part that says a nudge went
	// out, or -1.
	nudgedAt int
	// lookAgain says why a stop is not yet taken for one: the next look
	// decides (unsettled).
	lookAgain string
}

// witness compares the agent's own status with the screen. Agreement is
// counted; a disagreement is said in the line and logged, and when the
// agent says it is busy or waiting, no nudge is typed whatever the screen
// shows.
func (p *poll) witness() {
	w := p.in.Witness
	if w == nil {
		return
	}
	st := p.in.Screen.State
	if agrees(*w, st) {
		p.next.WitnessAgreed++
		return
	}
	p.next.WitnessDisagreed++
	if w.Status != "idle" && st == classify.Stalled {
		p.veto = "the agent's own status says " + w.Says() + ", though the screen reads STALLED"
	} else {
		p.notes = append(p.notes, "the agent's own status says "+w.Says()+", the screen reads "+st.String())
	}
	p.event(event.Disagreement, st.String(), map[string]any{"witness": w.Status, "waiting_for": w.WaitingFor,
		"version": w.Version, "rule": p.in.Screen.Rule, "evidence": p.in.Screen.Evidence.Text})
}

// hostWake says, once each time it changes, whether the agent's hooks on a
// remote target's host can wake this watcher. Nothing else follows from
// it: without them, the poll catches everything as before.
func (p *poll) hostWake() {
	w := p.in.HostWake
	if w == "" || w == p.next.HostWakeSaid {
		return
	}
	p.next.HostWakeSaid = w
	if w != HostWakeListening {
		p.next.HooksHeard = false
	}
	host, _, _ := strings.Cut(p.cfg.Target, ":")
	every := "at its interval"
	if p.cfg.Interval > 0 {
		every = fmt.Sprintf("every %.0fs", p.cfg.Interval.Seconds())
	}
	switch w {
	case HostWakeListening:
		p.notes = append(p.notes, "listening on "+host+" for its agents' hooks")
	case HostWakeAbsent:
		p.notes = append(p.notes, "no omega-monitor on "+host+": its hooks cannot wake this watcher, which polls "+every)
	case HostWakeOld:
		p.notes = append(p.notes, "the omega-monitor on "+host+" does not listen for hooks (an older one): this watcher polls "+every)
	}
}

// The MONITOR line's grammar (seed 000, "What comes back"): the word
// MONITOR, the target, the state (or ? or ERROR), then what the poll did
// and said, each part separated by " · ".
const lineSep = " · "

// Line is one MONITOR line: target, state, then parts. Every line the
// watcher prints or logs is made here.
func Line(target, state string, parts ...string) string {
	return strings.Join(lineParts(target, state, parts), lineSep)
}

func lineParts(target, state string, parts []string) []string {
	if state == classify.Blocked.String() {
		state += " " // the seed's format pads BLOCKED by one space
	}
	out := []string{"MONITOR", target, state}
	// A part can carry what a pane, a host or a probe printed: nothing of
	// it that a terminal would act on reaches the line.
	for _, p := range parts {
		out = append(out, printable.String(p))
	}
	return out
}

func (p *poll) outcome(state string) Outcome {
	said := append(slices.Clone(p.line), p.notes...)
	if p.notice != "" {
		said = append(said, p.notice)
	}
	parts := lineParts(p.cfg.Target, state, said)
	nudged := -1
	if p.nudgedAt >= 0 {
		nudged = len(parts) - len(said) + p.nudgedAt
	}
	return Outcome{Line: strings.Join(parts, lineSep), Actions: p.actions, Events: p.events, parts: parts, nudged: nudged}
}

func (p *poll) event(name, state string, fields map[string]any) {
	p.events = append(p.events, Event{Name: name, State: state, Fields: fields})
}

func (p *poll) figures() []string {
	return []string{"work=" + p.in.Work.String(), "progress=" + p.in.Progress.String()}
}

func (p *poll) clock() string { return p.in.Now.Format("15:04:05") }

// ResetBudget is the operator's re-arming of the nudge budget ("omega-monitor
// reset"), applied to the state before a poll judges: nothing used, the
// budget's escalation latch cleared, the figures of progress kept. by says
// who asked, for the history's event.
func ResetBudget(s State, by string) (State, Event) {
	from := s.Budget.String()
	s.Budget.Used = 0
	s.BudgetLatch = false
	return s, Event{Name: event.BudgetRearmed, Fields: map[string]any{"by": by, "from": from, "to": s.Budget.String()}}
}

// progress observes the progress reading: an advance resets the budget and
// clears the budget latch, a fall is reported and is not progress.
func (p *poll) progress() {
	// A probe's complaint is said when it changes, not on every line: the
	// line's work= and progress= say "?" while it lasts.
	var complaints []string
	if p.in.ProgressError != "" {
		complaints = append(complaints, "progress probe: "+oneLine(p.in.ProgressError))
	}
	if p.in.WorkError != "" {
		complaints = append(complaints, "work probe: "+oneLine(p.in.WorkError))
	}
	if said := strings.Join(complaints, " · "); said != p.next.ProbeComplaint {
		p.notes = append(p.notes, complaints...)
		p.next.ProbeComplaint = said
	}
	b, c := p.next.Budget.Observe(p.in.Progress)
	p.next.Budget = b
	switch c.Kind {
	case probe.Advanced:
		p.next.UnconfirmedLatch = false
		if p.next.Budget.Limit == 0 {
			// Nudging is off: there is no budget to reset, and the stall
			// told of stays told until the agent works again.
			break
		}
		p.next.BudgetLatch = false
		p.reset = c.String()
		p.event(event.BudgetReset, p.in.Screen.State.String(), map[string]any{"from": c.From, "to": c.To, "forgiven": c.Forgiven})
	case probe.Regressed:
		p.notes = append(p.notes, c.String())
	}
}

func (p *poll) working() {
	p.next.BlockedLatch = nil
	if p.next.Budget.Limit == 0 {
		// Nudging is off: each stall is told once.
		p.next.BudgetLatch = false
	}
	// A turn runs: whatever was in the box was taken.
	p.next.Unconfirmed = ""
	p.line = p.figures()
	still := p.stillWorking()
	if p.reset != "" {
		p.line = append(p.line, p.reset)
	} else {
		p.line = append(p.line, "nudges "+p.next.Budget.String(), p.clock())
	}
	if still != "" {
		p.line = append(p.line, still)
	}
}

// StillAfter is how long a screen that reads WORKING may stay exactly the
// same, with nothing else saying the agent works, before the operator is
// told: a working agent's spinner counts its seconds, so a screen that
// has not moved for so long is a turn that may have hung, or a reading
// that is wrong.
const StillAfter = 10 * time.Minute

// stillWorking keeps how long a WORKING screen has stayed the same (its
// live region, spinner and meter included), and, once it has for
// StillAfter while the agent's own status says its turn ended or there is
// none, says so in the line and pages once: "looks busy, nothing has moved
// for 10 minutes". A screen that moves, or the agent's own status saying
// it is busy, ends the spell.
func (p *poll) stillWorking() string {
	next, now := p.next, p.in.Now
	key := liveKey(p.in.Screen.Live)
	w := p.in.Witness
	if key != next.StillKey || next.StillSince.IsZero() || w != nil && w.Status == "busy" {
		next.StillKey, next.StillSince, next.StillLatch = key, now, false
		return ""
	}
	if now.Sub(next.StillSince) < StillAfter {
		return ""
	}
	said := "looks busy, nothing has moved for " + roundDuration(now.Sub(next.StillSince))
	if w == nil {
		said += " (no word of the agent's own)"
	} else {
		said += " (the agent's own status says " + w.Says() + ")"
	}
	if next.StillLatch {
		return said
	}
	next.StillLatch = true
	a := alert.Alert{Kind: alert.Notice, Target: p.cfg.Target, State: "WORKING", Time: now,
		Text: "The screen reads WORKING, but nothing on it has moved since " + next.StillSince.Format("15:04:05 MST") +
			", and nothing else says the agent works: the turn may have hung, or the reading is wrong. Look at the session."}
	p.actions = append(p.actions, Action{Kind: Alert, Alert: a})
	p.event(event.Escalate, "WORKING", map[string]any{"kind": "still", "since": next.StillSince, "witness": w != nil})
	return said + ", escalated"
}

// liveKey is a digest of the live region's lines, which a spinner's
// counting seconds change.
func liveKey(lines []classify.Line) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(LineKey(strings.TrimRight(l.Text, " ")))
	}
	return LineKey(b.String())
}

func (p *poll) question() {
	now := p.in.Now
	q := questionAlert(p.cfg.Target, now, p.in.Screen.Dialog)
	key := questionKey(q, p.in.Screen, p.in.Ledger)
	latch := p.next.QuestionLatch
	if latch != nil && latch.Key == key && now.Sub(latch.LastSeen) <= QuestionWindow && !p.askedAgain(latch) {
		latch.LastSeen = now
		p.next.QuestionSeen = nil
		p.line = []string{"waiting for the operator, NOT answered (escalated " + latch.Escalated.Format("15:04:05") + ")"}
		return
	}
	seen := p.next.QuestionSeen
	if seen == nil || seen.Key != key {
		seen = &QuestionSeen{Key: key, At: now}
		p.next.QuestionSeen = seen
	}
	if now.Sub(seen.At) < QuestionSettle {
		p.line = []string{"NOT answered, escalated if still up at " + seen.At.Add(QuestionSettle).Format("15:04:05")}
		return
	}
	said := "escalated to the operator, NOT answered"
	if p.human != "" {
		// Whoever is at the agent sees the dialog; one still up after
		// HumanQuestionWait has not been answered there, and is paged.
		anyway := seen.At.Add(HumanQuestionWait)
		if now.Before(anyway) {
			p.lookAt = anyway
			if p.humanUntil.Before(anyway) {
				p.lookAt = p.humanUntil
			}
			p.line = []string{"NOT answered, not paged: " + p.human + "; paged at " + anyway.Format("15:04:05") + " if it still waits"}
			return
		}
		said += ": it has waited " + roundDuration(now.Sub(seen.At)) + " with a human at the agent"
	}
	p.next.QuestionSeen = nil
	p.next.QuestionLatch = &QuestionLatch{Key: key, Escalated: now, LastSeen: now}
	if w := p.in.Witness; w != nil {
		p.next.QuestionLatch.WitnessChanged = w.Changed
	}
	p.actions = append(p.actions, Action{Kind: Alert, Alert: q})
	p.event(event.Escalate, "QUESTION", map[string]any{"kind": "question", "key": key, "evidence": p.in.Screen.Evidence.Text})
	p.line = []string{said}
}

// askedAgain says the agent's own status changed since the question latch
// was paged: it left that question (it was answered, at the terminal or
// from the chat) and now asks one that reads the same. That is a new
// question, relayed anew, however the screen looked between two polls.
func (p *poll) askedAgain(latch *QuestionLatch) bool {
	w := p.in.Witness
	return w != nil && w.Status == "waiting" && !w.Changed.IsZero() && !latch.WitnessChanged.IsZero() &&
		!w.Changed.Equal(latch.WitnessChanged)
}

func (p *poll) blocked() {
	p.line = []string{"work=" + p.in.Work.String()}
	if at := p.next.BlockedLatch; at != nil {
		p.line = append(p.line, "not nudged (escalated "+at.Format("15:04:05")+")")
		return
	}
	if p.human != "" {
		// Not latched: paged once the human is gone, if still blocked.
		p.line = append(p.line, "not nudged, not paged: "+p.human)
		return
	}
	if p.notYet() {
		return
	}
	now := p.in.Now
	p.next.BlockedLatch = &now
	a := alert.Alert{Kind: alert.Blocked, Target: p.cfg.Target, State: "BLOCKED", Time: now,
		Work: p.in.Work.String(), Transition: p.next.Transition}
	p.actions = append(p.actions, Action{Kind: Alert, Alert: a})
	p.event(event.Escalate, "BLOCKED", map[string]any{"kind": "blocked", "work": p.in.Work.String(), "transition": p.next.Transition})
	p.line = append(p.line, "not nudged, escalated")
}

func (p *poll) stalled() {
	// Work remains: the blocked spell, if any, is over. An unreadable count
	// fails open for the nudge, but does not end the spell: one failed probe
	// in the middle of a blocked spell must not page the operator again.
	if p.in.Work.Known {
		p.next.BlockedLatch = nil
	}
	p.line = p.figures()
	if p.reset != "" {
		p.notes = append(p.notes, p.reset)
	}
	s := p.in.Screen
	if p.veto != "" {
		p.line = append(p.line, "not nudged: "+p.veto)
		return
	}
	// Before anything is typed or paged, an Enter of ours among them.
	if why := cmp.Or(p.human, p.typing); why != "" {
		p.line = append(p.line, "not nudged: "+why)
		return
	}
	if p.next.Unconfirmed != "" && !p.unconfirmed() {
		return
	}
	switch s.Hold {
	case classify.HoldNone:
	case classify.HoldUsageLimit:
		if until, ok := p.usageHold(s.HoldLine.Text, cmp.Or(s.HoldText, s.HoldLine.Text)); ok {
			p.line = append(p.line, "not nudged: usage limit, "+until)
			p.pageUsageLimit(s)
			return
		}
		p.resuming = LineKey(s.HoldLine.Text)
	default:
		p.line = append(p.line, "not nudged: "+s.Hold.Reason())
		return
	}
	b := p.next.Budget
	if b.Limit == 0 {
		p.nudgingOff()
		return
	}
	if !b.CanNudge() {
		if p.next.BudgetLatch {
			p.line = append(p.line, "not nudged: nudge budget spent ("+b.String()+") without progress (escalated)")
			return
		}
		p.next.BudgetLatch = true
		a := alert.Alert{Kind: alert.BudgetExhausted, Target: p.cfg.Target, State: "STALLED", Time: p.in.Now,
			Work: p.in.Work.String(), Transition: p.next.Transition, Budget: b.Used, Progress: p.in.Progress.String()}
		p.actions = append(p.actions, Action{Kind: Alert, Alert: a})
		p.event(event.Escalate, "STALLED", map[string]any{"kind": "budget-exhausted", "reason": b.Reason(), "budget": b.String()})
		p.line = append(p.line, "not nudged: nudge budget spent ("+b.String()+") without progress, escalated: needs a human")
		return
	}
	if p.notYet() {
		return
	}
	if last := p.next.LastNudge; p.cfg.Interval > 0 && !p.in.OwnTextInBox {
		// A clock that moved back ends the spacing rather than
		// stretching it.
		if since := p.in.Now.Sub(last); !last.IsZero() && since >= 0 && since < p.cfg.Interval {
			p.line = append(p.line, "not nudged: the last nudge was at "+last.Format("15:04:05")+
				"; the next no sooner than "+last.Add(p.cfg.Interval).Format("15:04:05"))
			return
		}
	}
	p.next.Budget = b.Spend()
	text := p.cfg.NudgeText
	if text == "" {
		text = DefaultNudgeText
	}
	if p.in.OwnTextInBox {
		p.actions = append(p.actions, Action{Kind: Enter, Text: text})
		p.event(event.Nudge, "STALLED", map[string]any{"text": text, "budget": p.next.Budget.String(), "enter_only": true})
		p.nudgedAt = len(p.line)
		p.line = append(p.line, "nudged, Enter only: our text is in the box ("+p.next.Budget.String()+")")
		return
	}
	p.actions = append(p.actions, Action{Kind: Nudge, Text: text, Resumes: p.resuming})
	p.next.LastNudge = p.in.Now
	p.event(event.Nudge, "STALLED", map[string]any{"text": text, "budget": p.next.Budget.String()})
	p.nudgedAt = len(p.line)
	p.line = append(p.line, "nudged ("+p.next.Budget.String()+")")
	if p.resuming != "" {
		p.next.UsageNudged = p.resuming
	}
	p.resumedNotice()
}

// nudgingOff is a stall with nudging off (--nudge-budget 0): nothing is
// typed, and the operator is told once a stall: a human must move it.
func (p *poll) nudgingOff() {
	if p.next.BudgetLatch {
		p.line = append(p.line, "not nudged: nudging is off (--nudge-budget 0), operator told")
		return
	}
	p.next.BudgetLatch = true
	a := alert.Alert{Kind: alert.BudgetExhausted, Target: p.cfg.Target, State: "STALLED", Time: p.in.Now,
		Work: p.in.Work.String(), Transition: p.next.Transition, Progress: p.in.Progress.String()}
	p.actions = append(p.actions, Action{Kind: Alert, Alert: a})
	p.event(event.Escalate, "STALLED", map[string]any{"kind": "nudging-off"})
	p.line = append(p.line, "not nudged: nudging is off (--nudge-budget 0), escalated: needs a human")
}

// pageUsageLimit tells the operator, once per limit line, that a usage
// limit stopped the agent, with its reset as the screen gives it. The
// watcher's first look pages nothing; the next one does.
func (p *poll) pageUsageLimit(s classify.Result) {
	key := LineKey(s.HoldLine.Text)
	if p.in.FirstLook || p.next.UsagePaged == key {
		return
	}
	if p.in.AccountPending {
		p.line = append(p.line, "reading the account on the host first")
		p.actions = append(p.actions, Action{Kind: Wait, Wait: SettlePace[0]})
		return
	}
	p.next.UsagePaged = key
	text := cmp.Or(s.HoldText, s.HoldLine.Text)
	reset, _ := classify.ReadResetText(text) // in the line's own words; "" when it gives none
	a := alert.Alert{Kind: alert.UsageLimit, Target: p.cfg.Target, State: "STALLED", Time: p.in.Now,
		Agent: s.Agent, Limit: strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(text), "⎿")), Reset: reset}
	g := &Grouping{Key: usageGroupKey(s.Agent, p.cfg.Target, p.in.Account, p.next.UsageUntil, s.HoldLine.Text), Event: alert.GroupStopped,
		Window: GatherWindow(p.cfg.Interval), Detail: a.Limit} // shown beside the pane where its words are not the cause's
	g.Cause = usageCause(g.Key, a.Agent, p.cfg.Target)
	g.Cause.Limit, g.Cause.Reset = a.Limit, a.Reset
	p.next.UsageGroup = g.Key
	p.actions = append(p.actions, Action{Kind: Alert, Alert: a, Group: g})
	p.event(event.Escalate, "STALLED", map[string]any{"kind": "usage-limit", "reset": cmp.Or(a.Reset, "none shown")})
	p.line = append(p.line, "operator told")
}

// resumedNotice tells the operator, once per limit line, that the agent a
// usage limit stopped was nudged once its reset had passed: the notice
// goes once the nudge is typed (OnTyped), and that marks the limit told
// of (State.Typed).
func (p *poll) resumedNotice() {
	if p.resuming == "" || p.next.UsageResumed == p.resuming || p.next.UsagePaged != p.resuming {
		return
	}
	a := alert.Alert{Kind: alert.Notice, Target: p.cfg.Target, State: "STALLED", Time: p.in.Now,
		Text: "Its usage limit has reset: the watcher nudged it once to resume (" + p.next.Budget.String() + ")."}
	var g *Grouping
	if key := p.next.UsageGroup; key != "" {
		g = &Grouping{Key: key, Event: alert.GroupResumed, Window: GatherWindow(p.cfg.Interval),
			Cause: usageCause(key, p.in.Screen.Agent, p.cfg.Target)}
	}
	p.actions = append(p.actions, Action{Kind: Alert, Alert: a, OnTyped: true, Group: g})
}

// hostBack tells of a remote target whose captures work again after it
// was said gone: the notice joins its host's page, one for all the
// watchers of the host. A local session back is said in the line only.
func (p *poll) hostBack() {
	host := hostOf(p.cfg.Target)
	if host == "" {
		return
	}
	a := alert.Alert{Kind: alert.Notice, Target: p.cfg.Target, State: p.in.Screen.State.String(), Time: p.in.Now,
		Text: "Captures work again: the watched session is back."}
	g := &Grouping{Key: hostGroupKey(p.cfg.Target), Event: alert.GroupBack, Window: GatherWindow(p.cfg.Interval),
		Cause: alert.Cause{Kind: alert.CauseHost, Host: host}}
	p.actions = append(p.actions, Action{Kind: Alert, Alert: a, Group: g})
}

// unconfirmed judges a stopped screen after a nudge that reached the
// terminal but never showed in the input box, and reports whether this poll
// may go on to nudge. Our text in the box now gets its Enter, and nothing
// is spent again (the typing was). Otherwise the operator is told once, and
// that poll types nothing; a later capture that shows the box empty lets
// nudging resume, within the budget; anything else in the box is a human's,
// or a box this release draws where we cannot read it, and nothing is
// typed.
func (p *poll) unconfirmed() bool {
	s := p.in.Screen
	if p.in.OwnTextInBox {
		text := p.next.Unconfirmed
		p.next.Unconfirmed = ""
		p.actions = append(p.actions, Action{Kind: Enter, Text: text})
		p.event(event.Nudge, "STALLED", map[string]any{"text": text, "budget": p.next.Budget.String(), "enter_only": true})
		p.nudgedAt = len(p.line)
		p.line = append(p.line, "nudged, Enter only: our text is in the box ("+p.next.Budget.String()+")")
		return false
	}
	if !p.next.UnconfirmedLatch {
		p.next.UnconfirmedLatch = true
		box := "(empty)"
		switch {
		case s.Draft != "":
			box = s.Draft
		case s.Hold != classify.HoldNone:
			box = "(" + s.Hold.Reason() + ")"
		}
		a := alert.Alert{Kind: alert.Notice, Target: p.cfg.Target, State: "STALLED", Time: p.in.Now,
			Text: "The watcher typed its nudge (" + quoteText(p.next.Unconfirmed) + ") and cannot see it in the input box, " +
				"so it has stopped nudging: it types nothing more until the box reads back empty or holding that text. " +
				"The input box as captured: " + box}
		p.actions = append(p.actions, Action{Kind: Alert, Alert: a})
		p.event(event.Escalate, "STALLED", map[string]any{"kind": "nudge-unseen", "text": p.next.Unconfirmed, "box": box})
		p.line = append(p.line, "not nudged: our nudge was typed and never showed in the input box, escalated")
		return false
	}
	if s.Hold == classify.HoldNone {
		p.next.Unconfirmed = "" // the box reads back empty
		return true
	}
	p.line = append(p.line, "not nudged: our nudge was typed and never showed in the input box (escalated)")
	return false
}

// quoteText is a nudge's text for a sentence, cut to a line's length.
func quoteText(s string) string {
	if r := []rune(s); len(r) > 80 {
		s = string(r[:80]) + "…"
	}
	return strconv.Quote(s)
}

// usageHold decides whether a usage-limit stop still holds nudges, and says
// until when. Once the reset time has passed, the line left on screen no
// longer holds: a nudge is the way to resume. The agents show the reset
// to the minute, rounded down, so the hold lasts to the end of the minute
// shown: a nudge never comes before the reset. A line that shows no reset
// holds, and says so: no time is made up for it (the watcher looks again
// at its interval, and the operator was told).
func (p *poll) usageHold(line, text string) (until string, holds bool) {
	now := p.in.Now
	key := LineKey(line)
	if (p.next.UsageHold != key && p.next.UsageHold != line) || p.next.UsageUntil.IsZero() {
		p.next.UsageUntil = time.Time{}
	}
	p.next.UsageHold = key
	if p.next.UsageNudged == key && p.next.LastNudge.After(p.next.UsageUntil) {
		// The same limit said again after the nudge that resumed past its
		// reset: the reset read as passed was still to come. One resume
		// nudge a limit line: read again, a clock time past is tomorrow's.
		p.next.UsageNudged = ""
		t, ok := ResetTime(text, now)
		if !ok {
			p.next.UsageUntil = time.Time{}
			return "no reset time shown; looked at again each interval", true
		}
		if !t.Add(time.Minute).After(now) {
			t = t.AddDate(0, 0, 1)
		}
		p.next.UsageUntil = t
	}
	if p.next.UsageUntil.IsZero() {
		t, ok := ResetTime(text, now)
		if !ok {
			return "no reset time shown; looked at again each interval", true
		}
		p.next.UsageUntil = t
	}
	end := p.next.UsageUntil.Add(time.Minute)
	if !now.Before(end) {
		return "", false
	}
	return "resets " + p.next.UsageUntil.Format("15:04 MST") + fmt.Sprintf(" (in %s)", roundDuration(end.Sub(now))), true
}

func roundDuration(d time.Duration) string {
	d = d.Round(time.Minute)
	if d < time.Minute {
		return "under a minute"
	}
	h, m := int(d.Hours()), int(d.Minutes())%60
	switch {
	case h == 0:
		return fmt.Sprintf("%dm", m)
	case m == 0:
		return fmt.Sprintf("%dh", h)
	}
	return fmt.Sprintf("%dh%02dm", h, m)
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}

// maxCount bounds every counter a state file may hold: far above any real
// figure, far below where an increment wraps.
const maxCount = 1 << 40

// Check reports a state whose values no poll writes: a negative count, a
// count near the integer's end (the next poll would wrap it), a budget
// limit above any that can be configured. A state file is checked on load,
// since it may be hand-edited or damaged.
func (s State) Check() error {
	for _, c := range []struct {
		name string
		v    int
	}{
		{"version", s.Version}, {"polls", s.Polls},
		{"budget.limit", s.Budget.Limit}, {"budget.used", s.Budget.Used},
		{"witness_agreed", s.WitnessAgreed}, {"witness_disagreed", s.WitnessDisagreed},
		{"title_agreed", s.TitleAgreed}, {"title_disagreed", s.TitleDisagreed},
		{"capture_failures", s.CaptureFailures},
	} {
		if c.v < 0 || c.v > maxCount {
			return errorf("state %s is %d, out of range (0 to %d)", c.name, c.v, maxCount)
		}
	}
	return nil
}
