// Package mirror computes the task-mirror call plan: what an agent must do to
// its own task list so that it holds exactly one task per watcher, titled with
// the watcher's calm macro phase and described with its fine stage.
//
// It is a pure function of two inputs, the tasks the agent already tracks and
// the watchers as the board last saw them, and it returns one descriptor per
// task-tool call (TaskCreate or TaskUpdate). Applying a plan and planning again
// yields an empty plan. It reads no files and calls no tools: the caller
// gathers the watchers, and the agent applies the plan through its own task
// tools.
package mirror

import (
	"fmt"
	"slices"
	"strings"
)

// Liveness is how sure we are that a watcher's loop runs, in the board's
// words.
type Liveness string

const (
	Live  Liveness = "live"  // the loop runs and polled recently
	Quiet Liveness = "quiet" // the loop runs but has not polled lately
	Stale Liveness = "stale" // the loop died, its session or state remains
	Gone  Liveness = "gone"  // nothing runs: the watcher was stopped
)

// Observable reports whether a watcher still runs: live or quiet.
func (l Liveness) Observable() bool { return l == Live || l == Quiet }

// A Watcher is one watcher as the board last saw it.
type Watcher struct {
	// Name is the watcher's name (its state directory), the task's key.
	Name     string
	Target   string
	Liveness Liveness
	// State is the last state judged: WORKING, QUESTION, STALLED, BLOCKED,
	// or empty before the first poll.
	State string
	// Work and Progress are the last raw probe readings; empty is unknown.
	Work, Progress string
	// Nudges is how many nudges of the budget are spent; Budget the budget.
	Nudges, Budget int
	// Unreadable says the watcher's state could not be read: what it is
	// doing is unknown, so its task is neither created, moved nor closed.
	Unreadable bool
}

// exhausted reports whether the nudge budget ran out while stalled: a
// budget of 0 (nudging off) is out from the start, and a stall needs you.
func (w Watcher) exhausted() bool {
	return w.State == "STALLED" && w.Nudges >= w.Budget
}

// Phases, the words inside a title's brackets.
const (
	PhaseWatching = "watching"  // WORKING or STALLED within its budget
	PhaseNeedsYou = "needs you" // a question, or a budget spent: a human must look
	PhaseBlocked  = "blocked"   // no work left, or the watcher died or ran out
	PhaseDone     = "done"      // the watcher was stopped
)

// Task states a plan sets.
const (
	InProgress = "in_progress"
	Completed  = "completed"
	Failed     = "failed"
)

// Calls a plan holds.
const (
	TaskCreate = "TaskCreate"
	TaskUpdate = "TaskUpdate"
)

// A Tracked task is what the agent's task list already holds for a watcher:
// its key, the phase read from its title's brackets, and the stage read from
// its description after "stage: ".
type Tracked struct {
	Key   string `json:"key"`
	Phase string `json:"phase"`
	Stage string `json:"stage"`
}

// A Call is one descriptor of the plan: one task-tool call. A TaskUpdate
// carries the title only when the phase moved and the description only when
// the stage moved.
type Call struct {
	Call        string `json:"call"`
	Key         string `json:"key"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	State       string `json:"state"`
}

// A view is where a task should be: its phase, stage and state.
type view struct {
	phase, stage, state string
}

// want returns where the task of w should be.
func want(w Watcher) view {
	switch {
	case w.Liveness == Stale:
		return view{PhaseBlocked, "ended: the watcher died", Failed}
	case !w.Liveness.Observable() && w.exhausted():
		return view{PhaseBlocked, "ended: nudge budget exhausted", Failed}
	case !w.Liveness.Observable():
		return view{PhaseDone, "ended: stopped", Completed}
	}
	phase := PhaseWatching
	switch {
	case w.State == "QUESTION", w.exhausted():
		phase = PhaseNeedsYou
	case w.State == "BLOCKED":
		phase = PhaseBlocked
	}
	return view{phase, Stage(w), InProgress}
}

// gone is where the task of a watcher whose state directory no longer exists
// should be: it was cleared away by hand, so it is done.
var gone = view{PhaseDone, "ended: state removed", Completed}

// Stage returns the fine stage of a running watcher, the description's
// payload: its state, probe figures and nudges, as its MONITOR line says them.
func Stage(w Watcher) string {
	state := w.State
	if state == "" {
		state = "starting"
	}
	return fmt.Sprintf("%s · work=%s · progress=%s · nudges %d/%d",
		state, reading(w.Work), reading(w.Progress), w.Nudges, w.Budget)
}

func reading(raw string) string {
	if raw = strings.TrimSpace(raw); raw == "" {
		return "?"
	}
	return raw
}

// Title returns a task's title: the key first, the phase in brackets, then
// the target. The agent reads the key back as the title's first word and the
// phase from the brackets.
func Title(key, phase, target string) string {
	t := key + " [" + phase + "]"
	if target != "" {
		t += " " + target
	}
	return t
}

// Description returns a task's description for a stage.
func Description(stage string) string { return "stage: " + stage }

// ParseTitle reads a key and phase back from a title Title made; ok is false
// for any other title (a task the mirror does not own).
func ParseTitle(title string) (key, phase string, ok bool) {
	key, rest, found := strings.Cut(title, " [")
	if !found || key == "" || strings.ContainsAny(key, " \t") {
		return "", "", false
	}
	phase, _, found = strings.Cut(rest, "]")
	if !found || phase == "" {
		return "", "", false
	}
	return key, phase, true
}

// Plan returns the calls that bring the tracked tasks to the watchers'
// states, ordered by key. A watcher without a task gets one only while it
// runs (a dead watcher leaves no ghost task); a tracked task without a
// watcher is completed; an unreadable watcher's task is left alone. Tracked keys should be unique,
// as ReadTracked ensures; of repeated ones the last counts.
func Plan(tracked []Tracked, watchers []Watcher) []Call {
	have := make(map[string]Tracked, len(tracked))
	for _, t := range tracked {
		have[t.Key] = t
	}
	byKey := make(map[string]Watcher, len(watchers))
	for _, w := range watchers {
		byKey[w.Name] = w
	}
	keys := make([]string, 0, len(have)+len(byKey))
	for k := range have {
		keys = append(keys, k)
	}
	for k := range byKey {
		if _, ok := have[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)

	var plan []Call
	for _, k := range keys {
		t, tracked := have[k]
		w, known := byKey[k]
		if known && w.Unreadable {
			continue
		}
		switch {
		case !tracked:
			if !w.Liveness.Observable() {
				continue
			}
			v := want(w)
			plan = append(plan, Call{Call: TaskCreate, Key: k, Title: Title(k, v.phase, w.Target),
				Description: Description(v.stage), State: v.state})
		default:
			v := gone
			if known {
				v = want(w)
			}
			if c, ok := update(t, v, w.Target); ok {
				plan = append(plan, c)
			}
		}
	}
	return plan
}

// update returns the call that moves task t to v, if it must move.
func update(t Tracked, v view, target string) (Call, bool) {
	c := Call{Call: TaskUpdate, Key: t.Key, State: v.state}
	if t.Phase != v.phase {
		c.Title = Title(t.Key, v.phase, target)
	}
	if t.Stage != v.stage {
		c.Description = Description(v.stage)
	}
	return c, c.Title != "" || c.Description != ""
}

// Apply returns the tracked set after the agent applied plan to tracked: what
// the agent's next run would read back. It is the inverse the property tests
// use, and documents how an agent reads its own tasks.
func Apply(tracked []Tracked, plan []Call) []Tracked {
	out := slices.Clone(tracked)
	index := make(map[string]int, len(out))
	for i, t := range out {
		index[t.Key] = i
	}
	for _, c := range plan {
		i, ok := index[c.Key]
		if !ok {
			if c.Call != TaskCreate {
				continue // an update for a task never created is skipped
			}
			out = append(out, Tracked{Key: c.Key})
			i = len(out) - 1
			index[c.Key] = i
		}
		if _, phase, ok := ParseTitle(c.Title); ok {
			out[i].Phase = phase
		}
		if s, ok := strings.CutPrefix(c.Description, "stage: "); ok {
			out[i].Stage = s
		}
	}
	return out
}
