package tick

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/probe"
)

// A look is one poll of a paced run: when (from t0), what the screen
// shows, and whether a wake brought it.
type look struct {
	at    time.Duration
	pane  string
	woken bool
}

// A paced is what a poll asked for: a page, a nudge, and the wait before
// the next poll (0: the interval).
type paced struct {
	Page, Nudge bool
	Wait        time.Duration
}

// lookInput is a poll at t0+at of pane, the work probe reading work.
func lookInput(at time.Duration, pane, work string, woken bool) Input {
	opt := classify.Options{Work: classify.WorkReading(probe.Read(work, true)), WorkPresent: true}
	return Input{Now: t0.Add(at), Screen: classify.ClassifyText(pane, opt), Work: probe.Read(work, true), WorkPresent: true, Woken: woken}
}

func pace(t *testing.T, c Config, looks []look) []paced {
	t.Helper()
	var ins []Input
	for _, l := range looks {
		ins = append(ins, lookInput(l.at, l.pane, "7", l.woken))
	}
	return paceInputs(t, c, ins)
}

// paceInputs is pace for inputs made by the caller.
func paceInputs(t *testing.T, c Config, ins []Input) []paced {
	t.Helper()
	var s State
	var got []paced
	for _, in := range ins {
		l := struct{ at time.Duration }{in.Now.Sub(t0)}
		var o Outcome
		s, o = Step(s, c, in)
		var p paced
		waits := 0
		for _, a := range o.Actions {
			switch a.Kind {
			case Alert:
				p.Page = true
			case Nudge:
				p.Nudge = true
			case Wait:
				p.Wait = a.Wait
				waits++
			}
		}
		if waits > 1 {
			t.Errorf("at %v: %d waits asked for, want at most one", l.at, waits)
		}
		got = append(got, p)
	}
	return got
}

func TestPaceAndQuestionSettle(t *testing.T) {
	s, ms := time.Second, time.Millisecond
	minute := 60 * s
	heard := HeardInterval(minute)
	c := cfg
	c.Interval = minute
	for _, tc := range []struct {
		name     string
		interval time.Duration
		looks    []look
		want     []paced
	}{
		{"a question is paged when still up 2s later", minute,
			[]look{{0, permission, false}, {2 * s, permission, false}, {62 * s, permission, false}},
			[]paced{{Wait: 2 * s}, {Page: true}, {}}},
		{"a dialog approved within a second is never paged", minute,
			[]look{{0, permission, false}, {1 * s, busy, false}, {61 * s, busy, false}},
			[]paced{{Wait: 2 * s}, {}, {}}},
		{"seen again too soon: waits out the rest", minute,
			[]look{{0, permission, false}, {1500 * ms, permission, false}, {2 * s, permission, false}},
			[]paced{{Wait: 2 * s}, {Wait: 500 * ms}, {Page: true}}},
		{"another question is seen anew", minute,
			[]look{{0, permission, false}, {2 * s, otherQuestion, false}, {4 * s, otherQuestion, false}},
			[]paced{{Wait: 2 * s}, {Wait: 2 * s}, {Page: true}}},
		{"after a wake a running turn is looked at 0.5, 0.5, 1 and 2s apart, then at the interval", minute,
			[]look{{0, busy, true}, {500 * ms, busy, false}, {s, busy, false}, {2 * s, busy, false}, {4 * s, busy, false}, {64 * s, busy, false}},
			[]paced{{Wait: 500 * ms}, {Wait: 500 * ms}, {Wait: s}, {Wait: 2 * s}, {}, {}}},
		{"a wake, then the dialog its hook announced: paged 2s after it is drawn, with no look between", minute,
			[]look{{0, busy, true}, {500 * ms, busy, false}, {s, permission, false}, {3 * s, permission, false}},
			[]paced{{Wait: 500 * ms}, {Wait: 500 * ms}, {Wait: 2 * s}, {Page: true}}},
		{"a wake on a stop: nudged once the next look sees it too, then settled", minute,
			[]look{{0, idle, true}, {500 * ms, idle, false}, {60500 * ms, idle, false}},
			[]paced{{Wait: 500 * ms}, {Nudge: true}, {Nudge: true}}},
		{"a turn ending during the looks: nudged once seen on two looks, which settles them", minute,
			[]look{{0, busy, true}, {500 * ms, idle, false}, {s, idle, false}},
			[]paced{{Wait: 500 * ms}, {Wait: 500 * ms}, {Nudge: true}}},
		{"a stop drawn for a moment before the dialog a hook announced: never nudged, the dialog paged", minute,
			[]look{{0, busy, true}, {500 * ms, idle, true}, {s, permission, false}, {3 * s, permission, false}},
			[]paced{{Wait: 500 * ms}, {Wait: 500 * ms}, {Wait: 2 * s}, {Page: true}}},
		{"a wake restarts the pace", minute,
			[]look{{0, busy, true}, {500 * ms, busy, false}, {s, busy, false}, {2 * s, busy, true}},
			[]paced{{Wait: 500 * ms}, {Wait: 500 * ms}, {Wait: s}, {Wait: 500 * ms}}},
		{"no wait as long as a short interval", 2 * s,
			[]look{{0, busy, true}, {500 * ms, busy, false}, {s, busy, false}, {2 * s, busy, false}, {4 * s, permission, false}},
			[]paced{{Wait: 500 * ms}, {Wait: 500 * ms}, {Wait: s}, {}, {}}},
		{"an escalated question is settled: a wake brings no more looks", minute,
			[]look{{0, permission, false}, {2 * s, permission, false}, {30 * s, permission, true}},
			[]paced{{Wait: 2 * s}, {Page: true}, {}}},
		// Once a running turn's end was first seen on a look a wake
		// brought, a running turn is looked at every HeardInterval; an
		// end first seen by an interval's poll brings the interval back;
		// with no wake ever, the pace never leaves the interval.
		{"a stop its hook announced: the running turns after it are looked at every five intervals", minute,
			[]look{{0, busy, false}, {10 * s, idle, true}, {10500 * ms, idle, false}, {70500 * ms, busy, false}, {370500 * ms, busy, false}},
			[]paced{{}, {Wait: 500 * ms}, {Nudge: true}, {Wait: heard}, {Wait: heard}}},
		{"a stop the net found: the interval again", minute,
			[]look{{0, busy, false}, {10 * s, idle, true}, {10500 * ms, idle, false}, {70500 * ms, busy, false}, {370500 * ms, idle, false}, {430500 * ms, busy, false}},
			[]paced{{}, {Wait: 500 * ms}, {Nudge: true}, {Wait: heard}, {Nudge: true}, {}}},
		{"a question its hook announced counts too, and is paged as ever", minute,
			[]look{{0, busy, false}, {10 * s, busy, true}, {10500 * ms, permission, false}, {12500 * ms, permission, false}, {72500 * ms, busy, false}},
			[]paced{{}, {Wait: 500 * ms}, {Wait: 2 * s}, {Page: true}, {Wait: heard}}},
		{"a question the net found: the interval", minute,
			[]look{{0, busy, false}, {10 * s, idle, true}, {10500 * ms, idle, false}, {70500 * ms, busy, false}, {370500 * ms, permission, false}, {372500 * ms, permission, false}, {432500 * ms, busy, false}},
			[]paced{{}, {Wait: 500 * ms}, {Nudge: true}, {Wait: heard}, {Wait: 2 * s}, {Page: true}, {}}},
		{"no wake, no slower net", minute,
			[]look{{0, busy, false}, {60 * s, idle, false}, {120 * s, busy, false}, {180 * s, permission, false}, {182 * s, permission, false}, {242 * s, busy, false}},
			[]paced{{}, {Nudge: true}, {}, {Wait: 2 * s}, {Page: true}, {}}},
		{"a wake's looks at a running turn come first", minute,
			[]look{{0, busy, false}, {10 * s, idle, true}, {10500 * ms, idle, false}, {70500 * ms, busy, true}, {71 * s, busy, false}, {71500 * ms, busy, false}, {72500 * ms, busy, false}, {74500 * ms, busy, false}},
			[]paced{{}, {Wait: 500 * ms}, {Nudge: true}, {Wait: 500 * ms}, {Wait: 500 * ms}, {Wait: s}, {Wait: 2 * s}, {Wait: heard}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := c
			c.Interval = tc.interval
			if diff := cmp.Diff(tc.want, pace(t, c, tc.looks)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestMuxWakeTakesTheScreenAsSettled: a look the multiplexer's wake
// brought (the pane silent for seconds) takes no looks at SettlePace: a
// question is seen again QuestionSettle later and paged, a stop is judged
// at once, a running turn waits for the interval; and it says nothing of
// the agent's hooks: the net stays at the interval.
func TestMuxWakeTakesTheScreenAsSettled(t *testing.T) {
	s, ms := time.Second, time.Millisecond
	c := cfg
	c.Interval = time.Minute
	type muxLook struct {
		at   time.Duration
		pane string
		wake string // "", "hook", "mux"
	}
	for _, tc := range []struct {
		name  string
		looks []muxLook
		want  []paced
	}{
		{"a question: seen again 2s later and paged, two looks in all",
			[]muxLook{{0, busy, ""}, {10 * s, permission, "mux"}, {12 * s, permission, ""}, {72 * s, permission, ""}},
			[]paced{{}, {Wait: 2 * s}, {Page: true}, {}}},
		{"a stop: nudged on the wake's look",
			[]muxLook{{0, busy, ""}, {10 * s, idle, "mux"}, {70 * s, idle, ""}},
			[]paced{{}, {Nudge: true}, {Nudge: true}}},
		{"a running turn: the interval",
			[]muxLook{{0, busy, ""}, {10 * s, busy, "mux"}, {70 * s, busy, ""}},
			[]paced{{}, {}, {}}},
		{"a turn's end it brought: the running turns after it stay at the interval",
			[]muxLook{{0, busy, ""}, {10 * s, idle, "mux"}, {70 * s, busy, ""}, {130 * s, busy, ""}},
			[]paced{{}, {Nudge: true}, {}, {}}},
		{"the looks of a hook's wake under way go on",
			[]muxLook{{0, busy, ""}, {10 * s, busy, "hook"}, {10500 * ms, busy, "mux"}, {11 * s, busy, ""}},
			[]paced{{}, {Wait: 500 * ms}, {Wait: 500 * ms}, {Wait: s}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ins []Input
			for _, l := range tc.looks {
				in := lookInput(l.at, l.pane, "7", l.wake == "hook")
				in.MuxWoken = l.wake == "mux"
				ins = append(ins, in)
			}
			if diff := cmp.Diff(tc.want, paceInputs(t, c, ins)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestGoneSessionPace: a session taken as gone is polled every
// GoneInterval, or at the interval when that is longer; a wake changes
// neither.
func TestGoneSessionPace(t *testing.T) {
	for _, interval := range []time.Duration{0, time.Minute, 10 * time.Minute} {
		s := State{TargetGone: true, CaptureFailures: 20, CaptureFailingSince: t0}
		_, o := Step(s, Config{Target: "agent", Interval: interval}, Input{Now: t0.Add(time.Hour), CaptureError: "no server", Woken: true})
		var waits []time.Duration
		for _, a := range o.Actions {
			if a.Kind == Wait {
				waits = append(waits, a.Wait)
			}
		}
		if want := []time.Duration{max(GoneInterval, interval)}; !cmp.Equal(want, waits) {
			t.Errorf("interval %v: waits %v, want %v", interval, waits, want)
		}
	}
}

// TestNudgesKeepTheInterval: however soon a wake brings the next poll,
// no second nudge is typed within an interval of the last; at the
// interval, the next one is; a clock that moved back ends the spacing; a
// watcher whose interval is not known (a replay) nudges as before.
func TestNudgesKeepTheInterval(t *testing.T) {
	paced := cfg
	paced.Interval = time.Minute
	opt := classify.Options{Work: classify.WorkReading(probe.Read("7", true)), WorkPresent: true}
	in := func(at time.Time) Input {
		return Input{Now: at, Screen: classify.ClassifyText(idle, opt), Work: probe.Read("7", true), WorkPresent: true}
	}
	nudges := func(o Outcome) int {
		n := 0
		for _, a := range o.Actions {
			if a.Kind == Nudge {
				n++
			}
		}
		return n
	}
	s, o := Step(State{}, paced, in(t0))
	if nudges(o) != 1 {
		t.Fatalf("the first poll: %s", o.Line)
	}
	s, o = Step(s, paced, in(t0.Add(5*time.Second)))
	if want := "not nudged: the last nudge was at 09:00:00; the next no sooner than 09:01:00"; nudges(o) != 0 || !strings.Contains(o.Line, want) {
		t.Errorf("a woken poll 5 s later: %s\nwant %q", o.Line, want)
	}
	if _, o2 := Step(s, paced, in(t0.Add(-time.Hour))); nudges(o2) != 1 {
		t.Errorf("a clock moved back: %s", o2.Line)
	}
	if _, o = Step(s, paced, in(t0.Add(time.Minute))); nudges(o) != 1 {
		t.Errorf("at the interval: %s", o.Line)
	}
	s, _ = Step(State{}, cfg, in(t0))
	if _, o = Step(s, cfg, in(t0.Add(time.Second))); nudges(o) != 1 {
		t.Errorf("no interval known: %s", o.Line)
	}
}

// TestAStopSeenOnceAfterAWakeWaits: a block (work 0) seen on the first look
// after a wake is neither paged nor latched; the next look, seeing it too,
// pages it once.
func TestAStopSeenOnceAfterAWakeWaits(t *testing.T) {
	c := cfg
	c.Interval = time.Minute
	in := func(at time.Duration, pane string, woken bool) Input { return lookInput(at, pane, "0", woken) }
	var s State
	s, _ = Step(s, c, in(0, busy, false))
	s, o := Step(s, c, in(10*time.Second, idle, true))
	for _, a := range o.Actions {
		if a.Kind == Alert {
			t.Fatalf("a stop seen once after a wake was paged: %s", o.Line)
		}
	}
	if !strings.Contains(o.Line, "a stop seen once since a wake") || s.BlockedLatch != nil {
		t.Errorf("line %q, latch %v", o.Line, s.BlockedLatch)
	}
	_, o = Step(s, c, in(10500*time.Millisecond, idle, false))
	pages := 0
	for _, a := range o.Actions {
		if a.Kind == Alert {
			pages++
		}
	}
	if pages != 1 {
		t.Errorf("the next look, seeing the block too: %d pages, want 1 (%s)", pages, o.Line)
	}
}

// TestHeardInterval: five intervals, at most ten minutes, never less
// than the interval.
func TestHeardInterval(t *testing.T) {
	for in, want := range map[time.Duration]time.Duration{
		2 * time.Second: 10 * time.Second, time.Minute: 5 * time.Minute,
		5 * time.Minute: 10 * time.Minute, 20 * time.Minute: 20 * time.Minute,
	} {
		if got := HeardInterval(in); got != want {
			t.Errorf("HeardInterval(%v) = %v, want %v", in, got, want)
		}
	}
}

// TestHeardHooksSaidOnceEachChange: the line says when the hooks are
// heard and when a turn's end came unannounced, once each; a remote host
// whose hooks can no longer reach the watcher stops the slower net.
func TestHeardHooksSaidOnceEachChange(t *testing.T) {
	c := cfg
	c.Interval = time.Minute
	in := func(at time.Duration, pane string, woken bool) Input { return lookInput(at, pane, "7", woken) }
	var st State
	var lines []string
	step := func(i Input) {
		var o Outcome
		st, o = Step(st, c, i)
		lines = append(lines, o.Line)
	}
	step(in(0, busy, false))
	step(in(10*time.Second, idle, true))
	step(in(11*time.Second, busy, false))
	step(in(20*time.Second, idle, true))
	step(in(21*time.Second, busy, false))
	heard, unheard := "the agent's hooks are heard: a running turn is looked at every 5m,", "no hook announced: a running turn is looked at every 60s again"
	count := func(s string) int {
		n := 0
		for _, l := range lines {
			n += strings.Count(l, s)
		}
		return n
	}
	if count(heard) != 1 || count(unheard) != 0 || !st.HooksHeard {
		t.Fatalf("after two announced stops: heard said %d times, unheard %d, state %v:\n%s", count(heard), count(unheard), st.HooksHeard, strings.Join(lines, "\n"))
	}
	remote := in(30*time.Second, busy, false)
	remote.HostWake = HostWakeAbsent
	step(remote)
	for at := 34 * time.Second; st.Settling != nil && at < time.Minute; at += 4 * time.Second {
		step(in(at, busy, false)) // the wake's looks, to their end
	}
	if st.HooksHeard || st.Settling != nil {
		t.Errorf("a host whose hooks cannot wake the watcher left the hooks heard")
	}
	st.HooksHeard = true
	step(in(90*time.Second, idle, false))
	if count(unheard) != 1 || st.HooksHeard {
		t.Errorf("a stop the net found: unheard said %d times, state %v:\n%s", count(unheard), st.HooksHeard, strings.Join(lines, "\n"))
	}
}
