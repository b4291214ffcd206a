package board

import (
	"fmt"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/proc"
)

// Procs answers for a pid: whether a process runs with it, and that
// process's start token. The token is what makes a pid proof: a pid is
// reused, a pid with the same start token is the same process.
type Procs interface {
	StartToken(pid int) (token string, running bool)
}

// SystemProcs asks this machine (package proc).
type SystemProcs struct{}

// StartToken implements Procs.
func (SystemProcs) StartToken(pid int) (string, bool) { return proc.StartToken(pid) }

// liveness decides live, quiet, stale or gone, and says why. A loop is
// live while its last poll is at most two intervals old, or the poll it
// asked for (nextPoll: a slower pace of its own) at most one interval late.
func liveness(p Procs, hasLoop bool, loop LoopRecord, lastPoll, nextPoll, ended *time.Time, now time.Time) (string, string) {
	if !hasLoop {
		if ended != nil {
			return Gone, "stopped " + Ago(now, *ended)
		}
		return Gone, "no loop record (loop.json): nothing shows a loop runs"
	}
	token, running := p.StartToken(loop.Pid)
	if running && loop.StartToken != "" && token == loop.StartToken {
		interval := time.Duration(max(loop.IntervalS, 1)) * time.Second
		ref, what := loop.StartedAt, "started"
		if lastPoll != nil && lastPoll.After(ref) {
			ref, what = *lastPoll, "last poll"
		}
		if now.Sub(ref) <= 2*interval || nextPoll != nil && nextPoll.After(ref) && now.Sub(*nextPoll) <= interval {
			return Live, fmt.Sprintf("pid %d runs, %s %s", loop.Pid, what, Ago(now, ref))
		}
		return Quiet, fmt.Sprintf("pid %d runs, but no poll for %s (interval %s): a call hangs or the loop is stopped",
			loop.Pid, RoundAge(now.Sub(ref)), interval)
	}
	var why string
	switch {
	case !running:
		why = fmt.Sprintf("pid %d is dead", loop.Pid)
	case loop.StartToken == "":
		why = fmt.Sprintf("pid %d runs, but no start token was recorded: a pid alone proves nothing", loop.Pid)
	default:
		why = fmt.Sprintf("pid %d is another process now (start token %s, recorded %s)", loop.Pid, token, loop.StartToken)
	}
	if ended != nil {
		return Gone, "stopped " + Ago(now, *ended) + "; " + why
	}
	return Stale, why + ", and the watcher was not stopped"
}

// Ago says how long before now t was, coarsely: "3m ago".
func Ago(now, t time.Time) string {
	if d := now.Sub(t); d >= 0 {
		return RoundAge(d) + " ago"
	}
	return "in the future (" + t.UTC().Format(time.RFC3339) + ")"
}

// RoundAge prints a duration to the second below a minute, then coarser.
func RoundAge(d time.Duration) string {
	switch {
	case d < time.Minute:
		return d.Round(time.Second).String()
	case d < time.Hour:
		return d.Round(time.Second).String()
	case d < 48*time.Hour:
		return d.Round(time.Minute).String()
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}
