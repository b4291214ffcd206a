package tick

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/alert"
)

// A Grouping joins an alert to the page of its cause, instead of a page of
// its own: the panes one account's usage limit stopped, or the watchers of
// one host gone, make one page that names them all. Equal keys are one
// cause; a key holds everything that tells two causes apart (the agent,
// the host, the reset), so that two accounts are never one page.
type Grouping struct {
	Key   string           `json:"key"`
	Event alert.GroupEvent `json:"event"`
	// Window is how long the group gathers after its first pane before
	// the page goes (GatherWindow).
	Window time.Duration `json:"window"`
	Cause  alert.Cause   `json:"cause"`
	// Detail is this pane's own words (its last capture error), when
	// they add to the cause's.
	Detail string `json:"detail,omitempty"`
}

// Gathering bounds: a page waits at least MinGather after its first pane,
// so that panes polled in the same second are one page, and at most
// MaxGather, so that a slow watcher does not hold the page of the others.
const (
	MinGather = 5 * time.Second
	MaxGather = 2 * time.Minute
)

// GatherWindow is how long a group gathers panes before its page goes: one
// poll interval, so that the panes one limit stopped within an interval
// (each watcher sees it at its own poll) are named on one page.
func GatherWindow(interval time.Duration) time.Duration {
	if interval <= 0 {
		interval = time.Minute
	}
	return min(max(interval, MinGather), MaxGather)
}

// hostOf is the ssh host of a target ("host:session"), "" for a local one.
func hostOf(target string) string {
	host, _, remote := strings.Cut(target, ":")
	if !remote {
		return ""
	}
	return host
}

// usageGroupKey is the cause of a usage-limit stop: the agent, the account
// where the agent's own file names it (Input.Account), else the host it
// runs on, and the limit's reset (to the minute, as the agents show it), or
// the limit line itself when it shows no reset. The panes of one account
// share them all, on whichever machines they run; two accounts never share
// a key, whether their resets differ or, where their files name them, not.
func usageGroupKey(agent, target, account string, until time.Time, line string) string {
	reset := "line " + LineKey(line)
	if !until.IsZero() {
		reset = "reset " + until.UTC().Format(time.RFC3339)
	}
	if account != "" {
		return strings.Join([]string{alert.CauseUsageLimit, agent, "account " + account, reset}, "\x00")
	}
	return strings.Join([]string{alert.CauseUsageLimit, agent, hostOf(target), reset}, "\x00")
}

// usageCause is the cause the pages of a usage limit's group name, from
// its key: a key of an account names no host, for the account's panes may
// be on several machines; any other names the pane's host.
func usageCause(key, agent, target string) alert.Cause {
	c := alert.Cause{Kind: alert.CauseUsageLimit, Agent: agent, Host: hostOf(target)}
	if strings.Contains(key, "\x00account ") {
		c.Host, c.Account = "", true
	}
	return c
}

// hostGroupKey is the cause of a remote target gone: its host.
func hostGroupKey(target string) string {
	return alert.CauseHost + "\x00" + hostOf(target)
}

// A GroupEntry is one pane's event as its group holds it: the watcher it
// came from, when it joined, and the window it asked for.
type GroupEntry struct {
	Watcher string
	Event   alert.GroupEvent
	At      time.Time
	Window  time.Duration
}

// A GroupPlan is one page of a group: its event, whether it follows an
// earlier page of that event, and the watchers it names.
type GroupPlan struct {
	Event    alert.GroupEvent `json:"event"`
	Follow   bool             `json:"follow,omitempty"`
	Watchers []string         `json:"watchers"`
}

// groupEvents orders a group's events as its pages go.
var groupEvents = []alert.GroupEvent{alert.GroupStopped, alert.GroupGone, alert.GroupResumed, alert.GroupBack}

// DuePages decides the pages a group owes at now, given its entries and
// the pages it has made: for each event, the watchers no page of that
// event named yet make one page once the window of the first of them has
// passed. A watcher named by a page is never named by another page of the
// same event; one that joins later is on the next page (Follow).
func DuePages(entries []GroupEntry, made []GroupPlan, now time.Time) []GroupPlan {
	var due []GroupPlan
	for _, ev := range groupEvents {
		named := map[string]bool{}
		follow := false
		for _, p := range made {
			if p.Event != ev {
				continue
			}
			follow = true
			for _, w := range p.Watchers {
				named[w] = true
			}
		}
		var first *GroupEntry
		var waiting []string
		for i, e := range entries {
			if e.Event != ev || named[e.Watcher] || slices.Contains(waiting, e.Watcher) {
				continue
			}
			waiting = append(waiting, e.Watcher)
			if first == nil || e.At.Before(first.At) {
				first = &entries[i]
			}
		}
		if first == nil || now.Before(first.At.Add(cmp.Or(first.Window, MinGather))) {
			continue
		}
		slices.Sort(waiting)
		due = append(due, GroupPlan{Event: ev, Follow: follow, Watchers: waiting})
	}
	return due
}
