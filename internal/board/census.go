package board

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/tick"
)

// The files of a watcher's directory the board reads (statedir names them).
const (
	stateFile   = statedir.State
	loopFile    = statedir.Loop
	historyFile = statedir.History
	logFile     = statedir.Log
	diffFile    = statedir.DiffFile
	targetFile  = statedir.Target
	endedFile   = statedir.Ended
)

// Options tune a census. The zero value reads everything and asks the
// system about processes.
type Options struct {
	// Procs answers whether a pid runs and with which start token; nil
	// means the system's (SystemProcs).
	Procs Procs
	// Cursors, when set, holds where the last read of each log ended: the
	// census counts only the bytes appended since, and moves the cursors.
	Cursors *Cursors
	// Brief skips the history and the logs: enough for a tmux segment,
	// which tmux runs every few seconds.
	Brief bool
}

// Window is how far back the sparkline reaches, an hour a glyph.
const Window = 48

// activityWindow is the window of the activity counters.
const activityWindow = time.Hour

// Census reads every watcher's state directory under root, as of now. An
// error is returned only when root itself cannot be listed; everything else
// that cannot be read is named in Fleet.Errors and marks it degraded. A
// missing root is an empty fleet, not an error: no watcher ever ran.
func Census(root string, now time.Time, opts Options) (Fleet, error) {
	f := Fleet{GeneratedAt: now, Root: root, Watchers: []Watcher{}, Errors: []Error{}}
	if opts.Procs == nil {
		opts.Procs = SystemProcs{}
	}
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		f.Fleet.Sparkline = sparkline(now, nil)
		return f, nil
	}
	if err != nil {
		return f, fmt.Errorf("board: %w", err)
	}
	var names []string
	for _, e := range entries {
		if isCandidate(root, e) {
			names = append(names, e.Name())
		}
	}
	results := make([]reading, len(names))
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(len(names), 2*runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i] = readWatcher(filepath.Join(root, names[i]), names[i], now, opts)
			}
		}()
	}
	for i := range names {
		next <- i
	}
	close(next)
	wg.Wait()
	if !opts.Brief {
		dirs := make(map[string]bool, len(names))
		for _, n := range names {
			dirs[filepath.Join(root, n)] = true
		}
		opts.Cursors.retain(dirs)
	}

	hours := map[int64]int{}
	for _, r := range results {
		f.Errors = append(f.Errors, r.errors...)
		if r.watcher != nil {
			f.Watchers = append(f.Watchers, *r.watcher)
		}
		for h, n := range r.hours {
			hours[h] += n
		}
	}
	sortWatchers(f.Watchers)
	f.Fleet = summarize(f.Watchers, now, hours)
	audits, auditErrs := readAudits(root)
	f.Audits = audits
	f.Groups = readGroups(root, now)
	f.Errors = append(f.Errors, auditErrs...)
	f.Degraded = len(f.Errors) > 0
	return f, nil
}

// One reads the state directory name under root as the census reads each
// watcher's, without its history and log: what a command about one watcher
// (forget) needs to know of it. It says why when name is not a watcher's
// directory, or cannot be read.
func One(root, name string, now time.Time, opts Options) (Watcher, error) {
	if opts.Procs == nil {
		opts.Procs = SystemProcs{}
	}
	opts.Brief, opts.Cursors = true, nil
	r := readWatcher(filepath.Join(root, name), name, now, opts)
	if r.watcher == nil {
		if len(r.errors) > 0 {
			return Watcher{}, fmt.Errorf("board: %s", r.errors[0].Error)
		}
		return Watcher{}, fmt.Errorf("board: %s holds none of a watcher's files", filepath.Join(root, name))
	}
	return *r.watcher, nil
}

// isCandidate says whether a root entry may be a watcher's state
// directory: the root also holds the loop script (bin/), audits (audits/)
// and the board's own files (dot names). A link that leads nowhere is kept,
// so that the census names it.
func isCandidate(root string, e fs.DirEntry) bool {
	name := e.Name()
	if strings.HasPrefix(name, ".") || name == "bin" || name == statedir.Audits {
		return false
	}
	if e.Type()&fs.ModeSymlink != 0 {
		info, err := os.Stat(filepath.Join(root, name))
		return err != nil || info.IsDir()
	}
	return e.IsDir()
}

// isWatcher says whether a directory's entries are a watcher's: any of the
// files a watcher writes.
func isWatcher(inside []fs.DirEntry) bool {
	for _, f := range inside {
		switch f.Name() {
		case stateFile, loopFile, historyFile, targetFile, logFile:
			return true
		}
	}
	return false
}

// A reading is what one watcher's directory gave.
type reading struct {
	watcher *Watcher
	hours   map[int64]int // progress advances by Unix hour
	errors  []Error
}

// readState reads state.json, whose schema is the tick's (tick.State, the
// one type of the file), and the tally the tick keeps in it for the board.
// A tally the board cannot read is no error: the census then reads as it
// does without one.
func readState(path string) (tick.State, *Tally, bool, error) {
	data, err := readCapped(path, maxJSON)
	if errors.Is(err, fs.ErrNotExist) {
		return tick.State{}, nil, false, nil
	}
	if err != nil {
		return tick.State{}, nil, false, err
	}
	var st tick.State
	if err := json.Unmarshal(data, &st); err != nil {
		return tick.State{}, nil, false, fmt.Errorf("corrupt: %v", err)
	}
	return st, decodeTally(st.Board.Tally), true, nil
}

// LoopRecord is loop.json (statedir.LoopRecord).
type LoopRecord = statedir.LoopRecord

// EndedRecord is ended.json (statedir.EndedRecord).
type EndedRecord = statedir.EndedRecord

func readWatcher(dir, name string, now time.Time, opts Options) reading {
	r := reading{}
	w := &Watcher{Name: name, Dir: dir, Activity: Activity{WindowS: int(activityWindow / time.Second), Polls: map[string]int{}}}
	fail := func(file string, err error) {
		msg := err.Error()
		w.Errors = append(w.Errors, file+": "+msg)
		w.Unread = append(w.Unread, file)
		r.errors = append(r.errors, Error{Watcher: name, Path: filepath.Join(dir, file), Error: msg})
	}
	inside, err := os.ReadDir(dir)
	if err != nil {
		r.errors = append(r.errors, Error{Watcher: name, Path: dir, Error: "state directory unreadable: " + err.Error()})
		return r
	}
	if !isWatcher(inside) {
		return r // another directory: not the board's business
	}
	// Only the files the listing shows are opened: at fleet size the
	// census is mostly system calls.
	present := make(map[string]bool, len(inside))
	for _, e := range inside {
		present[e.Name()] = true
	}
	readJSON := func(file string, v any) (bool, error) {
		if !present[file] {
			return false, nil
		}
		return readJSONFile(filepath.Join(dir, file), v)
	}

	var st tick.State
	var tally *Tally
	hasState := false
	if present[stateFile] {
		st, tally, hasState, err = readState(filepath.Join(dir, stateFile))
		if err != nil {
			fail(stateFile, err)
		}
	}
	if hasState {
		w.State = st.State
		if w.State == "" {
			w.State = st.Last
		}
		w.StateSince = timePtr(st.StateSince)
		w.LastPoll = timePtr(st.LastPoll)
		w.Agent = st.Agent
		w.Work, w.Progress = st.Work, st.Progress
		w.Nudges = Nudges{Used: st.Budget.Used, Limit: st.Budget.Limit, Exhausted: st.BudgetLatch}
		w.LastLine = st.LastLine
		w.LastTransition = st.LastTransition
		w.LastAlert = st.LastAlert
		w.Explain = st.LastExplain
		if w.Explain == "" && st.Transition != "" {
			w.Explain = "last transition on screen: " + st.Transition
		}
		cutoff := now.Add(-activityWindow).Unix() / 60
		for _, m := range st.RecentPolls {
			if m.Minute > cutoff {
				for k, v := range m.Counts {
					w.Activity.Polls[k] += v
				}
			}
		}
	}

	var loop LoopRecord
	hasLoop, err := readJSON(loopFile, &loop)
	if err != nil {
		fail(loopFile, err)
	}
	if hasLoop {
		w.Pid = loop.Pid
		w.StartedAt = timePtr(loop.StartedAt)
		w.IntervalS = loop.IntervalS
		w.Target = loop.Target
		w.Pane = loop.Settings["pane"]
		w.HumanIdle = humanIdle(loop.Settings["human_idle"])
	}
	if w.Target == "" && present[targetFile] {
		if data, err := readCapped(filepath.Join(dir, targetFile), 4096); err == nil {
			w.Target = strings.TrimSpace(string(data))
		}
	}
	var ended EndedRecord
	hasEnded, err := readJSON(endedFile, &ended)
	if err != nil {
		fail(endedFile, err)
	}
	if hasEnded && (!hasLoop || !ended.At.Before(loop.StartedAt)) {
		w.Ended = timePtr(ended.At)
	}
	w.Liveness, w.LivenessReason = liveness(opts.Procs, hasLoop, loop, w.LastPoll, timePtr(st.NextPoll), w.Ended, now)
	w.StateUntil, w.StateForS = stateSpan(w, now)
	if st.TargetGone {
		w.LivenessReason += "; the watched session is gone"
	}
	if w.Liveness == Live || w.Liveness == Quiet {
		w.NeedsHuman = needsHuman(w.State, w.Nudges)
	}

	var u statedir.UndeliveredRecord
	if ok, err := readJSON(statedir.Undelivered, &u); err != nil {
		fail(statedir.Undelivered, err)
	} else if ok {
		w.Undelivered = &u
	}
	var dr statedir.DeliveryRecord
	if ok, err := readJSON(statedir.Delivery, &dr); err != nil {
		fail(statedir.Delivery, err)
	} else if ok {
		w.Delivery = &dr
	}
	var hw statedir.RemoteWakeRecord
	if ok, err := readJSON(statedir.RemoteWake, &hw); err != nil {
		fail(statedir.RemoteWake, err)
	} else if ok {
		w.HostWake = &hw
	}

	var vr statedir.VitalsRecord
	if ok, err := readJSON(statedir.Vitals, &vr); err != nil {
		fail(statedir.Vitals, err)
	} else if ok {
		w.Vitals, w.VitalsError = vitalsOf(vr, now)
	}

	var d Diff
	if ok, err := readJSON(diffFile, &d); err != nil {
		fail(diffFile, err)
	} else if ok {
		w.Diff = &d
		if d.Known() {
			w.Worktree = worktreeOf(w.Target, d.Dir)
		}
	}

	if !opts.Brief {
		// The tally the tick kept spares the reads of what it counted.
		var th *HistoryCursor
		var tl *Cursor
		if t := tally; t.usableAt(now) {
			th, tl = &t.History, &t.Log
		}
		h, err := opts.Cursors.history(filepath.Join(dir, historyFile), now, th)
		if err != nil {
			fail(historyFile, err)
		}
		h.activity(&w.Activity, now)
		r.hours = h.Hours
		if bad := h.Bad(now); bad > 0 {
			fail(historyFile, fmt.Errorf("%d line(s) could not be read", bad))
		}
		lc, err := opts.Cursors.count(filepath.Join(dir, logFile), tl)
		if err != nil {
			fail(logFile, err)
		}
		w.Log = lc
	}
	r.watcher = w
	return r
}

// stateSpan is when a watcher's state stopped being watched and how long
// it held, in seconds. While the loop runs the state holds to now; once
// it does not, its span ends at the stop, or else at the last poll, and no
// longer grows.
func stateSpan(w *Watcher, now time.Time) (*time.Time, int) {
	end := now
	var until *time.Time
	if w.Liveness == Stale || w.Liveness == Gone {
		switch {
		case w.Ended != nil:
			until = w.Ended
		case w.LastPoll != nil:
			until = w.LastPoll
		}
		if until != nil {
			end = *until
		}
	}
	if w.StateSince == nil || end.Before(*w.StateSince) {
		return until, 0
	}
	return until, int(end.Sub(*w.StateSince) / time.Second)
}

// worktreeOf names the worktree a diff was measured in, so that two
// watchers of one worktree count it once: a local directory by its real
// path, links resolved, up to the directory that holds .git (the measure
// counts the whole worktree from there, whichever of its directories the
// pane is in); a remote one as host:path, as that host printed it (its
// links cannot be read from here). A directory that no longer resolves is
// named as it was recorded.
func worktreeOf(target, dir string) string {
	if dir == "" {
		return ""
	}
	if host, _, remote := strings.Cut(target, ":"); remote {
		return host + ":" + filepath.Clean(dir)
	}
	if !filepath.IsAbs(dir) {
		return filepath.Clean(dir)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return filepath.Clean(dir)
	}
	for d := real; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return real
		}
		d = parent
	}
}

// needsHuman says what, if anything, a running watcher's agent waits on a
// human for.
func needsHuman(state string, n Nudges) string {
	switch {
	case state == "QUESTION":
		return NeedsQuestion
	case state == "BLOCKED":
		return NeedsBlocked
	case n.Exhausted && state == "STALLED":
		return NeedsBudgetExhausted
	}
	return ""
}

// maxJSON caps what the census reads of one JSON file: a state file is a
// few kilobytes, and a file that is not (or a FIFO, or a device) must not
// hold the board.
const maxJSON = 4 << 20

// readJSONFile reads a JSON file into v. A missing file is not an error:
// it reports false.
func readJSONFile(path string, v any) (bool, error) {
	data, err := readCapped(path, maxJSON)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return false, fmt.Errorf("corrupt: %v", err)
	}
	return true, nil
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// sortWatchers orders by start time, oldest first; unknown starts last, by
// name.
func sortWatchers(ws []Watcher) {
	sort.SliceStable(ws, func(i, j int) bool {
		a, b := ws[i].StartedAt, ws[j].StartedAt
		switch {
		case a != nil && b != nil && !a.Equal(*b):
			return a.Before(*b)
		case a != nil && b == nil:
			return true
		case a == nil && b != nil:
			return false
		}
		return ws[i].Name < ws[j].Name
	})
}

// sumDiffs sums the diffs of the running watchers, each worktree once,
// and marks the diffs it counted. Of two watchers of one worktree, the
// later measure counts (the first in the order of ws, on a tie): both are
// of the same lines, one more recent.
func sumDiffs(ws []Watcher) (added, removed, worktrees int) {
	counted := map[string]int{}
	for i := range ws {
		w := &ws[i]
		w.DiffCounted = false
		if !w.Diff.Known() || (w.Liveness != Live && w.Liveness != Quiet) {
			continue
		}
		key := w.Worktree
		if key == "" {
			key = "\x00" + w.Name // no directory recorded: its own
		}
		j, seen := counted[key]
		if seen && !w.Diff.At.After(ws[j].Diff.At) {
			continue
		}
		if seen {
			ws[j].DiffCounted = false
		}
		counted[key] = i
		w.DiffCounted = true
	}
	for _, i := range counted {
		added += ws[i].Diff.Added
		removed += ws[i].Diff.Removed
	}
	return added, removed, len(counted)
}

func summarize(ws []Watcher, now time.Time, hours map[int64]int) Summary {
	s := Summary{Watchers: len(ws)}
	for _, w := range ws {
		switch w.Liveness {
		case Live:
			s.Live++
		case Quiet:
			s.Quiet++
		case Stale:
			s.Stale++
		case Gone:
			s.Gone++
		}
		switch w.NeedsHuman {
		case NeedsQuestion:
			s.Questions++
		case NeedsBlocked:
			s.Blocked++
		case NeedsBudgetExhausted:
			s.BudgetsExhausted++
		}
		s.Undelivered += max(w.Activity.Undelivered, Waiting(w))
	}
	s.Added, s.Removed, s.Worktrees = sumDiffs(ws)
	s.Running = s.Live + s.Quiet
	s.NeedsHuman = s.Questions + s.Blocked + s.BudgetsExhausted
	s.Sparkline = sparkline(now, hours)
	return s
}

// humanIdle is the watcher's human_idle setting as the board says it:
// "60s", or "off"; "" for none, or one that no loop writes.
func humanIdle(v string) string {
	switch {
	case v == "0":
		return "off"
	case v == "" || len(v) > 4 || strings.Trim(v, "0123456789") != "":
		return ""
	}
	return v + "s"
}

// Waiting counts the alerts a watcher's channels hold after a failure: the
// most any one channel holds.
func Waiting(w Watcher) int {
	if w.Delivery == nil {
		return 0
	}
	n := 0
	for _, c := range w.Delivery.Channels {
		if c.FailedAt.After(c.DeliveredAt) {
			n = max(n, c.Queued)
		}
	}
	return n
}
