package render

import (
	"fmt"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/board"
)

// glanceWidth bounds a glance's lines: an agent reads them whole.
const glanceWidth = 100

// Glance is the fleet in a few short lines, for an agent to read at a
// glance (the MCP status answer's glance): the totals, then one line a
// watcher, what needs a human first. It quotes nothing a pane printed.
func Glance(f board.Fleet) []string {
	s := f.Fleet
	head := fmt.Sprintf("%d watchers: %d live, %d quiet, %d stale, %d gone · needs you: %d", s.Watchers, s.Live, s.Quiet, s.Stale, s.Gone, s.NeedsHuman)
	if f.Degraded {
		head += " · degraded: some state could not be read"
	}
	for _, h := range f.Hosts {
		if h.Degraded {
			head += " · host " + h.Name + " degraded"
		}
	}
	lines := []string{head}
	var needing, rest []string
	for _, w := range f.Watchers {
		l := glanceLine(w)
		if w.NeedsHuman != "" {
			needing = append(needing, l)
		} else {
			rest = append(rest, l)
		}
	}
	return append(append(lines, needing...), rest...)
}

// glanceLine is one watcher: its name and target, liveness when not live,
// state and for how long, nudges, and what it needs a human for.
func glanceLine(w board.Watcher) string {
	parts := []string{w.Name}
	if t := oneLine(w.Target); t != "" && "monitor-"+t != w.Name {
		parts[0] += " (" + t + ")"
	}
	if w.Host != "" {
		parts[0] = w.Host + "/" + parts[0]
	}
	if w.Liveness != board.Live {
		parts = append(parts, "["+w.Liveness+"]")
	}
	state := orUnknown(w.State)
	if w.StateForS > 0 {
		state += " for " + Clock(time.Duration(w.StateForS)*time.Second)
	}
	parts = append(parts, state)
	if w.Nudges.Limit > 0 || w.Nudges.Used > 0 {
		parts = append(parts, fmt.Sprintf("nudges %d/%d", w.Nudges.Used, w.Nudges.Limit))
	}
	if n := needsWord(w); n != "" {
		parts = append(parts, "needs you: "+n)
	}
	return Truncate(strings.Join(parts, " · "), glanceWidth)
}
