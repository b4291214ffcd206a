package mirror

import (
	"errors"
	"strings"

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
		unreadable := false
		for _, e := range w.Errors {
			for _, file := range mirrorFiles {
				if strings.HasPrefix(e, file+":") {
					unreadable = true
				}
			}
		}
		out = append(out, Watcher{Name: w.Name, Target: w.Target, Liveness: Liveness(w.Liveness),
			State: w.State, Work: w.Work, Progress: w.Progress, Nudges: w.Nudges.Used, Budget: w.Nudges.Limit,
			Unreadable: unreadable})
	}
	for _, e := range f.Errors {
		switch {
		case e.Watcher == "":
			return nil, errors.New("mirror: the state home could not be read whole: " + e.Path + ": " + e.Error)
		case !listed[e.Watcher]:
			// A directory the census could not read at all has no row.
			listed[e.Watcher] = true
			out = append(out, Watcher{Name: e.Watcher, Unreadable: true})
		}
	}
	return out, nil
}
