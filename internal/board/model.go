// Package board is the fleet board's census: it reads the state directories
// of every watcher under a root, decides each watcher's liveness from its
// loop's pid and process start token (package proc), and counts progress
// advances for a 48-hour sparkline, into a Fleet: the model the board's
// forms (package render, and JSON), the MCP status tool and the task mirror
// read.
//
// It only READS watchers' state: it never runs ssh, git or a multiplexer,
// never writes a watcher's files, and does not import tick (state.json is
// read by its JSON field names). The census takes its clock as an argument.
// The one effect besides reading files is asking the system whether a pid
// runs and what its start token is (Procs), which a caller may replace.
package board

import (
	"time"

	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/tick"
)

// The data model below is what every form of the board shows, and what the
// MCP status tool and the task mirror read. Its JSON field names are a
// contract: add fields, never rename or remove one.

// A Fleet is one census: every watcher under the root, the fleet's totals,
// and what could not be read. A degraded census is never an empty fleet:
// Degraded says some state could not be read, and Errors says which.
type Fleet struct {
	// GeneratedAt is the census clock.
	GeneratedAt time.Time `json:"generated_at"`
	// Root is the directory read ($OMEGA_MONITOR_HOME).
	Root string `json:"root"`
	// Watchers are sorted by start time, oldest first; a watcher with no
	// known start comes last, by name.
	Watchers []Watcher `json:"watchers"`
	Fleet    Summary   `json:"fleet"`
	Degraded bool      `json:"degraded"`
	Errors   []Error   `json:"errors"`
	// Audits are the deep audits' latest runs (audits/*/last.json), by
	// name; absent when none ever ran.
	Audits []Audit `json:"audits,omitempty"`
	// Hooks says, for each agent the fleet watches, whether its user
	// settings hold our wake hook; the status command sets it (the census
	// reads no agent's files).
	Hooks map[string]bool `json:"hooks,omitempty"`
	// Hosts are the other machines whose boards this one shows (status
	// --hosts, or the hosts file of the state home), each with its health;
	// absent when the board reads this machine alone.
	Hosts []Host `json:"hosts,omitempty"`
	// Groups are the causes that stopped many panes at once (a usage
	// limit, a host gone) with a page gathering or not yet delivered;
	// absent when none has.
	Groups []Group `json:"groups,omitempty"`
}

// A Host is another machine on the board, read over ssh by its alias: its
// health, and how many of the board's watchers are its.
type Host struct {
	// Name is the host's ssh alias.
	Name string `json:"name"`
	// Reachable says its board was read this refresh.
	Reachable bool `json:"reachable"`
	// FreshAt is the host's own census clock: the time its board was read
	// as of (null when none was read).
	FreshAt *time.Time `json:"fresh_at"`
	// RTTMs is the round trip of the read, in milliseconds: connection,
	// the host's census and the transfer.
	RTTMs int `json:"rtt_ms"`
	// Watchers counts the host's watchers on the board.
	Watchers int `json:"watchers"`
	// Degraded says the host's row is not whole: unreachable, too slow,
	// an answer that could not be read, or a census of its own degraded;
	// Reason says why, in one line.
	Degraded bool   `json:"degraded"`
	Reason   string `json:"reason,omitempty"`
}

// A Summary is the fleet at a glance: liveness counted, what needs a human
// counted, the fleet's diff summed and the sparkline.
type Summary struct {
	Watchers int `json:"watchers"`
	Live     int `json:"live"`
	Quiet    int `json:"quiet"`
	Stale    int `json:"stale"`
	Gone     int `json:"gone"`
	// Running is Live + Quiet: the watchers whose loop runs.
	Running int `json:"running"`
	// Questions, Blocked and BudgetsExhausted count the running watchers
	// whose agent needs a human now; NeedsHuman is their sum.
	Questions        int `json:"questions"`
	Blocked          int `json:"blocked"`
	BudgetsExhausted int `json:"budgets_exhausted"`
	NeedsHuman       int `json:"needs_human"`
	// Undelivered sums the alerts of the last hour that the funnel could
	// not deliver, across the fleet: escalations nobody saw.
	Undelivered int `json:"undelivered"`
	// Added and Removed sum the known diffs of the running watchers, each
	// worktree once (Watcher.DiffCounted): a stopped watcher's diff is
	// history, and a worktree watched twice wrote its lines once.
	Added   int `json:"added"`
	Removed int `json:"removed"`
	// Worktrees counts the worktrees summed into Added and Removed.
	Worktrees int       `json:"worktrees"`
	Sparkline Sparkline `json:"sparkline"`
}

// A Sparkline counts progress advances (history events budget_reset) an
// hour at a time over the last Hours hours, across the whole fleet.
type Sparkline struct {
	Hours int `json:"hours"`
	// From is the start of the first hour (a whole clock hour, UTC).
	From time.Time `json:"from"`
	// Counts holds one count an hour, oldest first; the last is the
	// current, partial hour.
	Counts []int `json:"counts"`
	Total  int   `json:"total"`
	Peak   int   `json:"peak"`
	// Glyphs is Counts drawn one glyph an hour, scaled to Peak: '·' for
	// none, then ▁▂▃▄▅▆▇█.
	Glyphs string `json:"glyphs"`
}

// An Error is one thing the census could not read. Watcher is empty for an
// error about the root itself.
type Error struct {
	// Host is the ssh alias of the host whose state it is, empty for
	// this machine's.
	Host    string `json:"host,omitempty"`
	Watcher string `json:"watcher,omitempty"`
	Path    string `json:"path"`
	Error   string `json:"error"`
}

// Liveness values: whether a watcher's loop runs.
const (
	// Live: the recorded pid runs with the recorded start token and a poll
	// came in within two intervals.
	Live = "live"
	// Quiet: the pid runs with its start token, but no poll came in two
	// intervals (a hung call). Still counted as running, and said.
	Quiet = "quiet"
	// Stale: the pid is dead, or another process has it now, and the loop
	// did not end by a stop: the watcher's state remains without a loop.
	Stale = "stale"
	// Gone: nothing runs, and the watcher was stopped (or never recorded
	// a loop).
	Gone = "gone"
)

// Needs-a-human values of Watcher.NeedsHuman.
const (
	NeedsQuestion        = "question"
	NeedsBlocked         = "blocked"
	NeedsBudgetExhausted = "budget_exhausted"
)

// A Watcher is one watcher as the board shows it. Readings that are not
// known are empty (strings), zero (counts) or null (times and objects).
type Watcher struct {
	// Host is the ssh alias of the machine the watcher runs on, as the
	// board read it (Fleet.Hosts); empty for this machine's watchers.
	Host string `json:"host,omitempty"`
	// Name is the watcher's session name, its state directory's name.
	Name string `json:"name"`
	Dir  string `json:"dir"`
	// Liveness is live, quiet, stale or gone; LivenessReason says why, in
	// words ("pid 4242 runs, last poll 12s ago").
	Liveness       string `json:"liveness"`
	LivenessReason string `json:"liveness_reason"`
	// Pid, StartedAt and IntervalS are the loop's record (loop.json).
	Pid       int        `json:"pid,omitempty"`
	StartedAt *time.Time `json:"started_at"`
	IntervalS int        `json:"interval_s,omitempty"`
	// Target is the watched session (host:session for ssh).
	Target string `json:"target"`
	// Pane is the pane the watcher follows (%N), pinned when it started.
	Pane string `json:"pane,omitempty"`
	// HumanIdle is how long a human's input at the agent holds pages and
	// nudges ("60s"), or "off"; empty from a loop that did not record it.
	HumanIdle string `json:"human_idle,omitempty"`
	// Undelivered is the watcher's last alert that could not be delivered,
	// and why, while it stands.
	Undelivered *statedir.UndeliveredRecord `json:"undelivered,omitempty"`
	// Delivery is what the deliverer last said of each channel
	// (delivery.json): its queue, last delivery, last failure and the send
	// under way.
	Delivery *statedir.DeliveryRecord `json:"delivery,omitempty"`
	// HostWake is where the wake relay of an ssh target stands (wake.json):
	// whether the agent's hooks on the host can wake the watcher.
	HostWake *statedir.RemoteWakeRecord `json:"host_wake,omitempty"`
	// Agent is the agent recognised on the last screen.
	Agent string `json:"agent,omitempty"`
	// State is the last poll's state (WORKING, QUESTION, STALLED, BLOCKED,
	// or ? when the capture failed), since StateSince.
	State      string     `json:"state,omitempty"`
	StateSince *time.Time `json:"state_since"`
	// StateUntil is when the state stopped being watched, for a watcher
	// whose loop no longer runs (stale or gone): its stop (ended.json), or
	// else its last poll. Null while the loop runs.
	StateUntil *time.Time `json:"state_until"`
	// StateForS is how long the state has held, in seconds: to the census
	// clock while the loop runs, to StateUntil once it does not (frozen, so
	// a stopped watcher's duration does not grow).
	StateForS int        `json:"state_for_s"`
	LastPoll  *time.Time `json:"last_poll"`
	// Work and Progress are the probes' last readings as the MONITOR line
	// prints them ("7", or "?" when unknown); empty when no probe runs.
	Work     string `json:"work,omitempty"`
	Progress string `json:"progress,omitempty"`
	Nudges   Nudges `json:"nudges"`
	// NeedsHuman is question, blocked or budget_exhausted when the agent
	// waits for a human now, else empty.
	NeedsHuman string `json:"needs_human,omitempty"`
	// Diff is the watched worktree's diff; null until one was recorded.
	Diff *Diff `json:"diff"`
	// Worktree is the worktree the diff is of, by its real path (links
	// resolved, up to the directory that holds .git), host:path for a
	// remote target's; empty without a known diff.
	Worktree string `json:"worktree,omitempty"`
	// DiffCounted says the diff is in the fleet's sum: the loop runs, and
	// no watcher before it in Watchers counted the same worktree.
	DiffCounted bool     `json:"diff_counted"`
	Activity    Activity `json:"activity"`
	// Vitals is the agent's own activity over the last hour, counted from
	// its own record (vitals.json); null where no record is readable, and
	// VitalsError then says why.
	Vitals      *Vitals  `json:"vitals"`
	VitalsError string   `json:"vitals_error,omitempty"`
	Log         LogCount `json:"log"`
	// LastLine is the last MONITOR line the tick printed.
	LastLine       string      `json:"last_line,omitempty"`
	LastTransition *Transition `json:"last_transition"`
	LastAlert      *AlertMark  `json:"last_alert"`
	// Explain is the classifier's explanation of the last verdict.
	Explain string `json:"explain,omitempty"`
	// Ended is when the watcher was stopped, when it was.
	Ended *time.Time `json:"ended"`
	// Errors are this watcher's unreadable parts; the rest is still shown.
	Errors []string `json:"errors,omitempty"`
	// Unread names the files of the state directory those errors are
	// about, for a Go caller to decide on (the mirror leaves a watcher's
	// task alone when its state is unread), never by the errors' words.
	Unread []string `json:"-"`
}

// Nudges is the nudge budget: Used of Limit since progress last advanced.
type Nudges struct {
	Used  int `json:"used"`
	Limit int `json:"limit"`
	// Exhausted says the budget ran out and was escalated.
	Exhausted bool `json:"exhausted"`
}

// A Diff is what the agent has written in the watched pane's directory
// (diff.json, statedir.Diff).
type Diff = statedir.Diff

// Activity counts what a watcher did in the last WindowS seconds (an hour).
type Activity struct {
	WindowS int `json:"window_s"`
	// Polls counts polls by state name (WORKING, QUESTION, STALLED,
	// BLOCKED, ?).
	Polls       map[string]int `json:"polls"`
	Nudges      int            `json:"nudges"`
	Escalations int            `json:"escalations"`
	// Undelivered counts the alerts the funnel could not deliver: an
	// escalation that never left is not one the operator saw.
	Undelivered   int `json:"undelivered"`
	Failures      int `json:"failures"`
	Disagreements int `json:"disagreements"`
	Advances      int `json:"advances"`
}

// Vitals are seed 004's WorkerVitals: what the agent itself did in the
// last WindowS seconds, as its own record tells (Claude Code's transcript,
// Codex's session log), read by the watcher's polls.
type Vitals struct {
	WindowS int `json:"window_s"`
	// Tools counts tool calls; Reason reasoning blocks; Text text replies;
	// Wait the times it handed over to the human (a turn ended, a
	// question asked).
	Tools  int `json:"tools"`
	Reason int `json:"reason"`
	Text   int `json:"text"`
	Wait   int `json:"wait"`
	// Agent and Source are the record's agent and path; ReadAt when a poll
	// last read it; Behind the bytes it has yet to read (reads are
	// bounded); Gap the bytes never read, of a record over ssh that grew
	// between two polls by more than a poll carries.
	Agent  string    `json:"agent"`
	Source string    `json:"source"`
	ReadAt time.Time `json:"read_at"`
	Behind int64     `json:"behind,omitempty"`
	Gap    int64     `json:"gap,omitempty"`
}

// A LogCount is the watcher's log of MONITOR lines: Lines in all, New since
// the caller's last read (its cursor), Bytes its size.
type LogCount struct {
	Lines int   `json:"lines"`
	New   int   `json:"new"`
	Bytes int64 `json:"bytes"`
}

// A Transition is the last change of state: from, to, when, and the MONITOR
// line of that poll, as the tick records it.
type Transition = tick.TransitionMark

// An AlertMark is the last alert handed to the funnel: when, its kind
// (question, blocked, budget-exhausted, failure) and its first line, as the
// tick records it.
type AlertMark = tick.AlertMark
