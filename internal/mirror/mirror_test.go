package mirror_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/internal/mirror"
)

// running returns a live watcher of target proj in state with the given
// figures.
func running(state, work, progress string, nudges int) mirror.Watcher {
	return mirror.Watcher{Name: "monitor-proj", Target: "proj", Liveness: mirror.Live,
		State: state, Work: work, Progress: progress, Nudges: nudges, Budget: 5}
}

func offBudget(w mirror.Watcher) mirror.Watcher {
	w.Budget = 0
	return w
}

func with(w mirror.Watcher, l mirror.Liveness) mirror.Watcher {
	w.Liveness = l
	return w
}

// tracked returns the tracked task the agent holds after it applied the
// plan for w: what its next run reads back.
func tracked(w mirror.Watcher) mirror.Tracked {
	got := mirror.Apply(nil, mirror.Plan(nil, []mirror.Watcher{with(w, mirror.Live)}))
	if len(got) != 1 {
		panic(fmt.Sprintf("tracked(%v): %v", w, got))
	}
	return got[0]
}

func TestPlanTransitions(t *testing.T) {
	working := running("WORKING", "7", "41", 0)
	const key = "monitor-proj"
	for _, c := range []struct {
		name    string
		tracked []mirror.Tracked
		w       mirror.Watcher
		want    []mirror.Call
	}{
		{
			name: "cold: a live watcher gets a task",
			w:    working,
			want: []mirror.Call{{Call: "TaskCreate", Key: key, Title: "monitor-proj [watching] proj",
				Description: "stage: WORKING · work=7 · progress=41 · nudges 0/5", State: "in_progress"}},
		},
		{
			name: "cold: a quiet watcher still runs, so it gets a task",
			w:    with(working, mirror.Quiet),
			want: []mirror.Call{{Call: "TaskCreate", Key: key, Title: "monitor-proj [watching] proj",
				Description: "stage: WORKING · work=7 · progress=41 · nudges 0/5", State: "in_progress"}},
		},
		{name: "cold: a stale watcher leaves no ghost", w: with(working, mirror.Stale)},
		{name: "cold: a stopped watcher leaves no ghost", w: with(working, mirror.Gone)},
		{name: "nothing moved", tracked: []mirror.Tracked{tracked(working)}, w: working},
		{
			name:    "WORKING to STALLED within the budget: the description only",
			tracked: []mirror.Tracked{tracked(working)},
			w:       running("STALLED", "7", "41", 1),
			want: []mirror.Call{{Call: "TaskUpdate", Key: key,
				Description: "stage: STALLED · work=7 · progress=41 · nudges 1/5", State: "in_progress"}},
		},
		{
			name:    "STALLED back to WORKING: the description only",
			tracked: []mirror.Tracked{tracked(running("STALLED", "7", "41", 1))},
			w:       running("WORKING", "6", "42", 0),
			want: []mirror.Call{{Call: "TaskUpdate", Key: key,
				Description: "stage: WORKING · work=6 · progress=42 · nudges 0/5", State: "in_progress"}},
		},
		{
			name:    "a probe figure moved: the description only",
			tracked: []mirror.Tracked{tracked(working)},
			w:       running("WORKING", "6", "41", 0),
			want: []mirror.Call{{Call: "TaskUpdate", Key: key,
				Description: "stage: WORKING · work=6 · progress=41 · nudges 0/5", State: "in_progress"}},
		},
		{
			name:    "a question: the title says needs you",
			tracked: []mirror.Tracked{tracked(working)},
			w:       running("QUESTION", "7", "41", 0),
			want: []mirror.Call{{Call: "TaskUpdate", Key: key, Title: "monitor-proj [needs you] proj",
				Description: "stage: QUESTION · work=7 · progress=41 · nudges 0/5", State: "in_progress"}},
		},
		{
			name:    "the budget ran out while stalled: needs you",
			tracked: []mirror.Tracked{tracked(running("STALLED", "7", "41", 4))},
			w:       running("STALLED", "7", "41", 5),
			want: []mirror.Call{{Call: "TaskUpdate", Key: key, Title: "monitor-proj [needs you] proj",
				Description: "stage: STALLED · work=7 · progress=41 · nudges 5/5", State: "in_progress"}},
		},
		{
			name:    "stalled with nudging off (--nudge-budget 0): needs you, as the board says",
			tracked: []mirror.Tracked{tracked(running("STALLED", "7", "41", 4))},
			w:       offBudget(running("STALLED", "7", "41", 0)),
			want: []mirror.Call{{Call: "TaskUpdate", Key: key, Title: "monitor-proj [needs you] proj",
				Description: "stage: STALLED · work=7 · progress=41 · nudges 0/0", State: "in_progress"}},
		},
		{
			name:    "blocked: the title says blocked, the task stays open",
			tracked: []mirror.Tracked{tracked(working)},
			w:       running("BLOCKED", "0", "41", 0),
			want: []mirror.Call{{Call: "TaskUpdate", Key: key, Title: "monitor-proj [blocked] proj",
				Description: "stage: BLOCKED · work=0 · progress=41 · nudges 0/5", State: "in_progress"}},
		},
		{
			name:    "blocked, then working again",
			tracked: []mirror.Tracked{tracked(running("BLOCKED", "0", "41", 0))},
			w:       running("WORKING", "3", "41", 0),
			want: []mirror.Call{{Call: "TaskUpdate", Key: key, Title: "monitor-proj [watching] proj",
				Description: "stage: WORKING · work=3 · progress=41 · nudges 0/5", State: "in_progress"}},
		},
		{
			name:    "unknown readings print ?",
			tracked: []mirror.Tracked{tracked(working)},
			w:       running("STALLED", "", " ", 1),
			want: []mirror.Call{{Call: "TaskUpdate", Key: key,
				Description: "stage: STALLED · work=? · progress=? · nudges 1/5", State: "in_progress"}},
		},
		{
			name: "before the first poll",
			w:    running("", "", "", 0),
			want: []mirror.Call{{Call: "TaskCreate", Key: key, Title: "monitor-proj [watching] proj",
				Description: "stage: starting · work=? · progress=? · nudges 0/5", State: "in_progress"}},
		},
		{
			name:    "stopped: completed",
			tracked: []mirror.Tracked{tracked(working)},
			w:       with(working, mirror.Gone),
			want: []mirror.Call{{Call: "TaskUpdate", Key: key, Title: "monitor-proj [done] proj",
				Description: "stage: ended: stopped", State: "completed"}},
		},
		{
			name:    "died: blocked and failed",
			tracked: []mirror.Tracked{tracked(working)},
			w:       with(working, mirror.Stale),
			want: []mirror.Call{{Call: "TaskUpdate", Key: key, Title: "monitor-proj [blocked] proj",
				Description: "stage: ended: the watcher died", State: "failed"}},
		},
		{
			name:    "died while blocked: the title stays, the stage and state move",
			tracked: []mirror.Tracked{tracked(running("BLOCKED", "0", "41", 0))},
			w:       with(running("BLOCKED", "0", "41", 0), mirror.Stale),
			want: []mirror.Call{{Call: "TaskUpdate", Key: key,
				Description: "stage: ended: the watcher died", State: "failed"}},
		},
		{
			name:    "ended on an exhausted budget: blocked and failed",
			tracked: []mirror.Tracked{tracked(running("STALLED", "7", "41", 5))},
			w:       with(running("STALLED", "7", "41", 5), mirror.Gone),
			want: []mirror.Call{{Call: "TaskUpdate", Key: key, Title: "monitor-proj [blocked] proj",
				Description: "stage: ended: nudge budget exhausted", State: "failed"}},
		},
		{
			name:    "the state directory was removed: completed",
			tracked: []mirror.Tracked{{Key: key, Phase: "watching", Stage: "WORKING · work=7 · progress=41 · nudges 0/5"}},
			want: []mirror.Call{{Call: "TaskUpdate", Key: key, Title: "monitor-proj [done]",
				Description: "stage: ended: state removed", State: "completed"}},
		},
		{
			name:    "unreadable: its task is left as it is",
			tracked: []mirror.Tracked{tracked(working)},
			w:       mirror.Watcher{Name: key, Liveness: mirror.Gone, Unreadable: true},
		},
		{name: "unreadable and untracked: no task", w: mirror.Watcher{Name: key, Liveness: mirror.Live, Unreadable: true}},
		{
			name:    "a restarted watcher reopens its task",
			tracked: []mirror.Tracked{{Key: key, Phase: "done", Stage: "ended: stopped"}},
			w:       working,
			want: []mirror.Call{{Call: "TaskUpdate", Key: key, Title: "monitor-proj [watching] proj",
				Description: "stage: WORKING · work=7 · progress=41 · nudges 0/5", State: "in_progress"}},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			var ws []mirror.Watcher
			if c.w.Name != "" {
				ws = append(ws, c.w)
			}
			got := mirror.Plan(c.tracked, ws)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
			if again := mirror.Plan(mirror.Apply(c.tracked, got), ws); len(again) != 0 {
				t.Errorf("planning again after applying gave %v, want nothing", again)
			}
		})
	}
}

func TestPlanOrdersByKeyAndKeepsParallelWatchersApart(t *testing.T) {
	a := running("WORKING", "1", "1", 0)
	a.Name, a.Target = "monitor-b", "b"
	b := running("QUESTION", "2", "2", 0)
	b.Name, b.Target = "monitor-a", "a"
	got := mirror.Plan(nil, []mirror.Watcher{a, b})
	var keys []string
	for _, c := range got {
		keys = append(keys, c.Call+" "+c.Key+" "+c.Title)
	}
	want := []string{"TaskCreate monitor-a monitor-a [needs you] a", "TaskCreate monitor-b monitor-b [watching] b"}
	if diff := cmp.Diff(want, keys); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestParseTitle(t *testing.T) {
	for _, c := range []struct {
		title, key, phase string
		ok                bool
	}{
		{"monitor-proj [watching] proj", "monitor-proj", "watching", true},
		{"monitor-h-s [needs you] h:s", "monitor-h-s", "needs you", true},
		{"monitor-x [done]", "monitor-x", "done", true},
		{"Fix the build", "", "", false},
		{"two words [watching] x", "", "", false},
		{"[watching] x", "", "", false},
		{"monitor-x [] x", "", "", false},
		{"monitor-x [open", "", "", false},
	} {
		key, phase, ok := mirror.ParseTitle(c.title)
		if key != c.key || phase != c.phase || ok != c.ok {
			t.Errorf("ParseTitle(%q) = %q, %q, %v; want %q, %q, %v", c.title, key, phase, ok, c.key, c.phase, c.ok)
		}
	}
}

var (
	states    = []string{"", "WORKING", "STALLED", "QUESTION", "BLOCKED"}
	livenesss = []mirror.Liveness{mirror.Live, mirror.Quiet, mirror.Stale, mirror.Gone}
)

// randomFleet returns up to n watchers with random states and names drawn
// from a small set, so that tracked sets and fleets overlap.
func randomFleet(r *rand.Rand, n int) []mirror.Watcher {
	var out []mirror.Watcher
	seen := map[string]bool{}
	for range r.IntN(n + 1) {
		name := fmt.Sprintf("monitor-%d", r.IntN(8))
		if seen[name] {
			continue
		}
		seen[name] = true
		out = append(out, mirror.Watcher{
			Name: name, Target: strings.TrimPrefix(name, "monitor-"),
			Liveness: livenesss[r.IntN(len(livenesss))], State: states[r.IntN(len(states))],
			Work: fmt.Sprint(r.IntN(3)), Progress: fmt.Sprint(r.IntN(3)),
			Nudges: r.IntN(4), Budget: 3, Unreadable: r.IntN(10) == 0,
		})
	}
	return out
}

// TestPlanProperties drives random fleets through random steps: each plan
// names a key at most once, applying it and planning again yields nothing,
// and after a cold plan every observable watcher has exactly one task.
func TestPlanProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		var tracked []mirror.Tracked
		for step := range 6 {
			fleet := randomFleet(r, 6)
			plan := mirror.Plan(tracked, fleet)
			seen := map[string]bool{}
			for _, c := range plan {
				if seen[c.Key] {
					t.Fatalf("run %d step %d: key %s twice in %v", i, step, c.Key, plan)
				}
				seen[c.Key] = true
			}
			tracked = mirror.Apply(tracked, plan)
			if again := mirror.Plan(tracked, fleet); len(again) != 0 {
				t.Fatalf("run %d step %d: not idempotent: fleet %v tracked %v gave %v", i, step, fleet, tracked, again)
			}
			keys := map[string]int{}
			for _, tr := range tracked {
				keys[tr.Key]++
			}
			for _, w := range fleet {
				if w.Liveness.Observable() && !w.Unreadable && keys[w.Name] != 1 {
					t.Fatalf("run %d step %d: watcher %s has %d tasks", i, step, w.Name, keys[w.Name])
				}
			}
			for k, n := range keys {
				if n != 1 {
					t.Fatalf("run %d step %d: key %s tracked %d times", i, step, k, n)
				}
			}
			// The agent drops completed and failed tasks from its list now
			// and then; a cold start must still leave no ghost.
			if r.IntN(4) == 0 {
				tracked = nil
			}
		}
	}
}

func TestReadTracked(t *testing.T) {
	in := `{"key":"monitor-a","phase":"watching","stage":"WORKING · work=1"}

{"key":"monitor-b","phase":"needs you","stage":""}
`
	got, err := mirror.ReadTracked(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []mirror.Tracked{{"monitor-a", "watching", "WORKING · work=1"}, {"monitor-b", "needs you", ""}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestReadTrackedRefuses(t *testing.T) {
	for _, c := range []struct{ in, err string }{
		{`{"key":"a"}` + "\n" + `not json`, "mirror: tracked line 2: invalid character 'o' in literal null (expecting 'u')"},
		{`{"phase":"x"}`, "mirror: tracked line 1: no key"},
		{`{"key":"a"}` + "\n" + `{"key":"a"}`, `mirror: tracked line 2: key "a" already on line 1`},
		{`{"key":"a","title":"x"}`, `mirror: tracked line 1: json: unknown field "title"`},
		{`{"key":"a"} {"key":"b"}`, "mirror: tracked line 1: more than one object"},
		{`["a"]`, "mirror: tracked line 1: json: cannot unmarshal array into Go value of type mirror.Tracked"},
		{`{"key":1}`, "mirror: tracked line 1: json: cannot unmarshal number into Go struct field Tracked.key of type string"},
	} {
		_, err := mirror.ReadTracked(strings.NewReader(c.in))
		if err == nil || err.Error() != c.err {
			t.Errorf("ReadTracked(%q) = %v, want %s", c.in, err, c.err)
		}
	}
}

func TestWritePlan(t *testing.T) {
	var b bytes.Buffer
	plan := []mirror.Call{
		{Call: "TaskCreate", Key: "monitor-a", Title: "monitor-a [watching] a<b>", Description: "stage: x", State: "in_progress"},
		{Call: "TaskUpdate", Key: "monitor-b", State: "completed", Title: "monitor-b [done] b"},
	}
	if err := mirror.WritePlan(&b, plan); err != nil {
		t.Fatal(err)
	}
	want := `{"call":"TaskCreate","key":"monitor-a","title":"monitor-a [watching] a<b>","description":"stage: x","state":"in_progress"}
{"call":"TaskUpdate","key":"monitor-b","title":"monitor-b [done] b","state":"completed"}
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func FuzzReadTracked(f *testing.F) {
	f.Add(`{"key":"a","phase":"watching","stage":"x"}`)
	f.Add("{\"key\":\"a\"}\n\n{\"key\":\"b\"}")
	f.Fuzz(func(t *testing.T, in string) {
		tracked, err := mirror.ReadTracked(strings.NewReader(in))
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, tr := range tracked {
			if tr.Key == "" || seen[tr.Key] {
				t.Fatalf("ReadTracked(%q) let through %v", in, tracked)
			}
			seen[tr.Key] = true
		}
		_ = mirror.Plan(tracked, nil)
	})
}
