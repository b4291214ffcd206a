package board

import (
	"fmt"
	"slices"
	"strings"
)

// A Remote is another machine's census as this board read it: the host's
// row, and its fleet when one could be read.
type Remote struct {
	Host  Host
	Fleet *Fleet
}

// maxAdvances bounds what one hour of another host's sparkline adds: a
// host says what it likes, and a sum must not overflow.
const maxAdvances = 1 << 20

// Merge puts other machines' censuses on the local one: their watchers
// after this machine's, a host at a time in the order given (each marked
// with its host, in its own census's order), their errors marked the
// same, their advances in the sparkline, and one row of health a host.
// The totals are counted anew from the watchers, never taken from what a
// host summed. A host that could not be read is one error of the board
// (degraded, never empty), and its row says why.
func Merge(local Fleet, remotes []Remote) Fleet {
	f := local
	f.Watchers = slices.Clone(local.Watchers)
	f.Errors = slices.Clone(local.Errors)
	f.Groups = slices.Clone(local.Groups)
	f.Hosts = make([]Host, 0, len(remotes))
	hours := sparkHours(local.Fleet.Sparkline)
	for _, r := range remotes {
		h := r.Host
		if r.Fleet != nil {
			for _, w := range r.Fleet.Watchers {
				w.Host = h.Name
				if strings.HasPrefix(w.Worktree, "/") {
					// A path of that host's: another host's /src is
					// another worktree.
					w.Worktree = h.Name + ":" + w.Worktree
				}
				f.Watchers = append(f.Watchers, w)
			}
			h.Watchers = len(r.Fleet.Watchers)
			for _, g := range r.Fleet.Groups[:min(len(r.Fleet.Groups), maxGroups)] {
				g.Host = h.Name
				f.Groups = append(f.Groups, g)
			}
			for _, e := range r.Fleet.Errors {
				e.Host = h.Name
				f.Errors = append(f.Errors, e)
			}
			if r.Fleet.Degraded && !h.Degraded {
				h.Degraded = true
				h.Reason = fmt.Sprintf("its census is degraded: %d thing(s) could not be read", len(r.Fleet.Errors))
			}
			for hr, n := range sparkHours(r.Fleet.Fleet.Sparkline) {
				hours[hr] = min(hours[hr]+n, maxAdvances*(len(remotes)+1))
			}
		} else if h.Degraded {
			f.Errors = append(f.Errors, Error{Host: h.Name, Error: h.Reason})
		}
		f.Hosts = append(f.Hosts, h)
	}
	f.Fleet = summarize(f.Watchers, f.GeneratedAt, hours)
	f.Degraded = len(f.Errors) > 0
	return f
}

// sparkHours turns a sparkline back into advances by Unix hour, each
// hour's count bounded.
func sparkHours(s Sparkline) map[int64]int {
	hours := make(map[int64]int, len(s.Counts))
	first := s.From.Unix() / 3600
	for i, n := range s.Counts[:min(len(s.Counts), Window)] {
		if n > 0 {
			hours[first+int64(i)] = min(n, maxAdvances)
		}
	}
	return hours
}
