package tick

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/alert"
)

// Board is what the state keeps for the fleet board (package board reads it
// by these JSON names): what the last poll saw, since when, and the last
// transition, alert and explanation. It is embedded in State; every field is
// omitted until it is known.
type Board struct {
	// State is the last poll's state name, "?" when the capture failed;
	// StateSince is when that state began, LastPoll when the poll ran.
	State      string    `json:"state,omitempty"`
	StateSince time.Time `json:"state_since,omitzero"`
	LastPoll   time.Time `json:"last_poll,omitzero"`
	// NextPoll is when the poll asked for the next one, when it asked for
	// a pace of its own (a wake's looks, a question's second look, a
	// running turn while the hooks are heard, a session gone); zero when
	// the next comes at the interval.
	NextPoll time.Time `json:"next_poll,omitzero"`
	// Agent is the agent recognised on the screen.
	Agent string `json:"agent,omitempty"`
	// Work and Progress are the probes' readings as the line prints them
	// ("7", "?"); empty when no probe ran.
	Work     string `json:"work,omitempty"`
	Progress string `json:"progress,omitempty"`
	// LastLine is the MONITOR line of the last poll.
	LastLine       string          `json:"last_line,omitempty"`
	LastTransition *TransitionMark `json:"last_transition,omitempty"`
	LastAlert      *AlertMark      `json:"last_alert,omitempty"`
	// LastExplain is the classifier's explanation of the last verdict.
	LastExplain string `json:"last_explain,omitempty"`
	// RecentPolls counts the polls of the last hour by state, a minute at a
	// time, so that the board shows activity without a line per poll.
	RecentPolls []MinutePolls `json:"recent_polls,omitempty"`
	// Tally is the board's count of the history and the log up to where
	// they ended at this poll, so that a census reads only what came after
	// (see board.Tally, whose format it is). The caller sets it; the tick
	// carries it unread, and a state without one only costs the board a
	// longer read.
	Tally json.RawMessage `json:"tally,omitempty"`
}

// A TransitionMark is a change of state and the line of the poll that saw it.
type TransitionMark struct {
	At   time.Time `json:"at"`
	From string    `json:"from"`
	To   string    `json:"to"`
	Line string    `json:"line"`
}

// An AlertMark is an alert handed to the funnel: when, its kind, its first
// line of text (redacted).
type AlertMark struct {
	At   time.Time `json:"at"`
	Kind string    `json:"kind"`
	Text string    `json:"text"`
}

// MinutePolls counts one minute's polls (Minute is Unix seconds / 60) by
// state name.
type MinutePolls struct {
	Minute int64          `json:"m"`
	Counts map[string]int `json:"c"`
}

// MarkBoard returns the board's record after a poll: prev is the record the
// poll started from, state the poll's state name ("?" without a screen),
// explain the classifier's explanation.
func MarkBoard(prev Board, in Input, out Outcome, state, explain string) Board {
	b := prev
	now := in.Now
	if state != prev.State || prev.StateSince.IsZero() {
		b.StateSince = now
		if prev.State != "" && state != prev.State {
			b.LastTransition = &TransitionMark{At: now, From: prev.State, To: state, Line: alert.Scrub(out.Line)}
		}
	}
	b.State = state
	b.LastPoll = now
	b.NextPoll = time.Time{}
	for _, a := range out.Actions {
		if a.Kind == Wait {
			b.NextPoll = now.Add(a.Wait)
		}
	}
	if in.CaptureError == "" && in.Screen.Agent != "" {
		b.Agent = in.Screen.Agent
	}
	b.Work, b.Progress = "", ""
	if in.WorkPresent {
		b.Work = in.Work.String()
	}
	if in.ProgressPresent {
		b.Progress = in.Progress.String()
	}
	// The line and the explanation quote what the pane printed, and the
	// board and the MCP server read them from here: kept scrubbed, as the
	// log keeps the line.
	b.LastLine = alert.Scrub(out.Line)
	b.LastExplain = alert.Scrub(strings.TrimRight(explain, "\n"))
	for _, a := range out.Actions {
		if a.Kind == Alert {
			b.LastAlert = &AlertMark{At: now, Kind: a.Alert.Kind.String(), Text: alertText(a.Alert)}
		}
	}
	b.RecentPolls = countPoll(prev.RecentPolls, now, state)
	return b
}

// countPoll adds one poll to the minute counts and drops minutes older than
// an hour, so the record stays at 61 entries at most whatever the interval.
func countPoll(recent []MinutePolls, now time.Time, state string) []MinutePolls {
	minute := now.Unix() / 60
	kept := make([]MinutePolls, 0, len(recent)+1)
	for _, m := range recent {
		if m.Minute > minute-61 && m.Minute <= minute {
			kept = append(kept, m)
		}
	}
	if n := len(kept); n > 0 && kept[n-1].Minute == minute {
		c := make(map[string]int, len(kept[n-1].Counts)+1)
		for k, v := range kept[n-1].Counts {
			c[k] = v
		}
		c[state]++
		kept[n-1].Counts = c
		return kept
	}
	return append(kept, MinutePolls{Minute: minute, Counts: map[string]int{state: 1}})
}

// alertText is an alert's gist in one scrubbed line.
func alertText(a alert.Alert) string {
	var s string
	switch a.Kind {
	case alert.Question:
		s = a.Question
	case alert.Blocked:
		s = "work=" + a.Work + " " + a.Transition
	case alert.BudgetExhausted:
		s = "nudge budget spent without progress (progress " + a.Progress + ") " + a.Transition
		if a.Budget == 0 {
			s = "stopped with work left, nudging off " + a.Transition
		}
	case alert.Failure:
		s = a.FailLine
	case alert.UsageLimit:
		s = a.Limit + " (" + a.ResetGist() + ")"
	default:
		s = a.Text
	}
	return oneLine(alert.Scrub(s))
}
