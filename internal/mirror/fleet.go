package mirror

import (
	"slices"

	"github.com/omega-monitor/omega-monitor/internal/board"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// mirrorFiles are the files of a state directory the mirror's view of a
// watcher comes from: an error reading one leaves the watcher's task alone.
var mirrorFiles = []string{statedir.State, statedir.Loop, statedir.Ended}

// FromFleet turns the board's census into the mirror's input. A watcher
// whose state could not be read, in part or whole, is marked unreadable, so
// that its task is neither created, moved nor closed on a guess. An error
// about the root itself makes no plan at all.
func FromFleet(f board.Fleet) ([]Watcher, error) {
	out := make([]Watcher, 0, len(f.Watchers))
	listed := make(map[string]bool, len(f.Watchers))
	for _, w := range f.Watchers {
		listed[w.Name] = true
		unreadable := slices.ContainsFunc(w.Unread, func(file string) bool { return slices.Contains(mirrorFiles, file) })
		out = append(out, Watcher{Name: w.Name, Target: w.Target, Liveness: Liveness(w.Liveness),
			State: w.State, Work: w.Work, Progress: w.Progress, Nudges: w.Nudges.Used, Budget: w.Nudges.Limit,
			Unreadable: unreadable})
	}
	for _, e := range f.Errors {
		switch {
		case e.Watcher == "":
			return nil, errorf("the state home could not be read whole: %s: %s", e.Path, e.Error)
		case !listed[e.Watcher]:
			// A directory the census could not read at all has no row.
			listed[e.Watcher] = true
			out = append(out, Watcher{Name: e.Watcher, Unreadable: true})
		}
	}
	return out, nil
}
