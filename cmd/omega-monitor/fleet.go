package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/mirror"
)

// fleetWatcher is one watcher as the mirror and the MCP server read it from
// its state directory.
type fleetWatcher struct {
	Name     string          `json:"name"`
	Target   string          `json:"target"`
	Liveness mirror.Liveness `json:"liveness"`
	State    string          `json:"state"`
	Work     string          `json:"work"`
	Progress string          `json:"progress"`
	Nudges   int             `json:"nudges"`
	Budget   int             `json:"budget"`
}

// fleetCensus is every watcher under the home, and what could not be read.
type fleetCensus struct {
	Watchers []fleetWatcher `json:"watchers"`
	Degraded bool           `json:"degraded"`
	Errors   []string       `json:"errors"`
}

// Live counts the watchers whose loop still runs.
func (c fleetCensus) Live() int {
	n := 0
	for _, w := range c.Watchers {
		if w.Liveness.Observable() {
			n++
		}
	}
	return n
}

func (c fleetCensus) mirrorWatchers() []mirror.Watcher {
	out := make([]mirror.Watcher, 0, len(c.Watchers))
	for _, w := range c.Watchers {
		out = append(out, mirror.Watcher{Name: w.Name, Target: w.Target, Liveness: w.Liveness,
			State: w.State, Work: w.Work, Progress: w.Progress, Nudges: w.Nudges, Budget: w.Budget})
	}
	return out
}

// watcherFiles are the files of a state directory this reader knows.
type watcherState struct {
	Last     string `json:"last"`
	State    string `json:"state"`
	LastPoll string `json:"last_poll"`
	Work     string `json:"work"`
	Progress string `json:"progress"`
	Budget   struct {
		Limit int `json:"limit"`
		Used  int `json:"used"`
	} `json:"budget"`
}

type loopFile struct {
	PID        int    `json:"pid"`
	StartToken string `json:"start_token"`
	IntervalS  int    `json:"interval_s"`
	Target     string `json:"target"`
}

// readFleet reads every watcher's state directory under home. It reads only:
// no watcher is touched. A directory that cannot be read is named in Errors
// and the census is degraded, never empty for it.
func readFleet(home string, now time.Time) fleetCensus {
	c := fleetCensus{Watchers: []fleetWatcher{}, Errors: []string{}}
	entries, err := os.ReadDir(home)
	if errors.Is(err, fs.ErrNotExist) {
		return c
	}
	if err != nil {
		c.Degraded = true
		c.Errors = append(c.Errors, err.Error())
		return c
	}
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || e.Name() == "audits" {
			continue
		}
		w, err := readWatcher(filepath.Join(home, e.Name()), now)
		if err != nil {
			c.Degraded = true
			c.Errors = append(c.Errors, fmt.Sprintf("%s: %v", e.Name(), err))
			continue
		}
		if w != nil {
			c.Watchers = append(c.Watchers, *w)
		}
	}
	slices.SortFunc(c.Watchers, func(a, b fleetWatcher) int { return strings.Compare(a.Name, b.Name) })
	return c
}

// readWatcher reads one state directory; nil when it holds no state.json
// (not a watcher's).
func readWatcher(dir string, now time.Time) (*fleetWatcher, error) {
	b, err := os.ReadFile(filepath.Join(dir, "state.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var st watcherState
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("state.json: %w", err)
	}
	w := &fleetWatcher{Name: filepath.Base(dir), State: st.State, Work: st.Work, Progress: st.Progress,
		Nudges: st.Budget.Used, Budget: st.Budget.Limit, Liveness: mirror.Gone}
	if w.State == "" {
		w.State = st.Last
	}
	if t, err := os.ReadFile(filepath.Join(dir, "target")); err == nil {
		w.Target = strings.TrimSpace(string(t))
	}
	var loop loopFile
	if b, err := os.ReadFile(filepath.Join(dir, "loop.json")); err == nil && json.Unmarshal(b, &loop) == nil {
		if w.Target == "" {
			w.Target = loop.Target
		}
		w.Liveness = liveness(loop, st.LastPoll, now)
	}
	if w.Target == "" {
		w.Target = strings.TrimPrefix(w.Name, coord.WatcherPrefix)
	}
	return w, nil
}

// liveness tells live from quiet from stale: the recorded pid must run with
// the recorded start token (a pid alone is never proof), and have polled
// within two intervals to be live.
func liveness(loop loopFile, lastPoll string, now time.Time) mirror.Liveness {
	if loop.PID <= 0 || !processMatches(loop.PID, loop.StartToken) {
		return mirror.Stale
	}
	interval := time.Duration(max(loop.IntervalS, 1)) * time.Second
	if t, err := time.Parse(time.RFC3339, lastPoll); err == nil && now.Sub(t) <= 2*interval {
		return mirror.Live
	}
	return mirror.Quiet
}

// processMatches reports whether pid runs and, where /proc tells its start
// time, started at token.
func processMatches(pid int, token string) bool {
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return token == "" // no /proc: the pid is all we have
	}
	// The command name (field 2) may hold spaces; fields count after it.
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 {
		return false
	}
	fields := strings.Fields(string(stat[i+1:]))
	const startTime = 22 - 3 // field 22, counting from the state (field 3)
	return len(fields) > startTime && fields[startTime] == token
}
