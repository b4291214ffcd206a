package probe

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// unknown is the Reading of a progress probe that printed nothing useful.
var unknown = Read("", false)

func TestObserve(t *testing.T) {
	type tick struct {
		Budget Budget
		Kind   ChangeKind
		Line   string
	}
	// Each sequence starts from a budget of 5 with 3 nudges spent before
	// the first reading, and spends one more after every reading.
	tests := []struct {
		name     string
		readings []Reading
		want     []tick
	}{{
		name:     "first figure is the baseline, not progress",
		readings: []Reading{Count(41)},
		want: []tick{
			{Budget{5, 3, true, 41, 41}, Baseline, ""},
		},
	}, {
		name:     "advance resets",
		readings: []Reading{Count(41), Count(42)},
		want: []tick{
			{Budget{5, 3, true, 41, 41}, Baseline, ""},
			{Budget{5, 0, true, 42, 42}, Advanced, "nudge budget reset (progress 41 → 42)"},
		},
	}, {
		name:     "a jump is one advance",
		readings: []Reading{Count(41), Count(50)},
		want: []tick{
			{Budget{5, 3, true, 41, 41}, Baseline, ""},
			{Budget{5, 0, true, 50, 50}, Advanced, "nudge budget reset (progress 41 → 50)"},
		},
	}, {
		name:     "same figure is not progress",
		readings: []Reading{Count(41), Count(41), Count(41)},
		want: []tick{
			{Budget{5, 3, true, 41, 41}, Baseline, ""},
			{Budget{5, 4, true, 41, 41}, Unchanged, ""},
			{Budget{5, 5, true, 41, 41}, Unchanged, ""},
		},
	}, {
		name:     "unknown changes nothing",
		readings: []Reading{Count(41), unknown, Read("abc", true), Count(41)},
		want: []tick{
			{Budget{5, 3, true, 41, 41}, Baseline, ""},
			{Budget{5, 4, true, 41, 41}, Unknown, ""},
			{Budget{5, 5, true, 41, 41}, Unknown, ""},
			{Budget{5, 5, true, 41, 41}, Unchanged, ""},
		},
	}, {
		name:     "a drop is reported once and the climb back to the mark is not progress",
		readings: []Reading{Count(42), Count(40), Count(40), Count(41), Count(42), Count(43)},
		want: []tick{
			{Budget{5, 3, true, 42, 42}, Baseline, ""},
			{Budget{5, 4, true, 40, 42}, Regressed, "progress went down (42 → 40)"},
			{Budget{5, 5, true, 40, 42}, Unchanged, ""},
			{Budget{5, 5, true, 41, 42}, Unchanged, ""},
			{Budget{5, 5, true, 42, 42}, Unchanged, ""},
			{Budget{5, 0, true, 43, 43}, Advanced, "nudge budget reset (progress 42 → 43)"},
		},
	}, {
		name:     "each further drop is reported",
		readings: []Reading{Count(42), Count(40), Count(39), Count(0)},
		want: []tick{
			{Budget{5, 3, true, 42, 42}, Baseline, ""},
			{Budget{5, 4, true, 40, 42}, Regressed, "progress went down (42 → 40)"},
			{Budget{5, 5, true, 39, 42}, Regressed, "progress went down (40 → 39)"},
			{Budget{5, 5, true, 0, 42}, Regressed, "progress went down (39 → 0)"},
		},
	}, {
		name:     "an unknown tick between does not hide an advance",
		readings: []Reading{Count(41), unknown, Count(42)},
		want: []tick{
			{Budget{5, 3, true, 41, 41}, Baseline, ""},
			{Budget{5, 4, true, 41, 41}, Unknown, ""},
			{Budget{5, 0, true, 42, 42}, Advanced, "nudge budget reset (progress 41 → 42)"},
		},
	}, {
		name:     "an advance recovers an exhausted budget",
		readings: []Reading{Count(41), Count(41), Count(41), Count(44)},
		want: []tick{
			{Budget{5, 3, true, 41, 41}, Baseline, ""},
			{Budget{5, 4, true, 41, 41}, Unchanged, ""},
			{Budget{5, 5, true, 41, 41}, Unchanged, ""},
			{Budget{5, 0, true, 44, 44}, Advanced, "nudge budget reset (progress 41 → 44)"},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBudget(5).Spend().Spend().Spend()
			var got []tick
			for _, r := range tt.readings {
				var c Change
				b, c = b.Observe(r)
				got = append(got, tick{b, c.Kind, c.String()})
				b = b.Spend()
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ticks (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLongBuildKeepsGoing is the seed's measurement: a flat cap of 25 nudges
// ran out around step 40 of a 157-step build that advanced the whole time. A
// budget of 5 bound to progress must carry the same build to its end.
func TestLongBuildKeepsGoing(t *testing.T) {
	const (
		steps        = 157
		ticksPerStep = 3 // progress advances every 3 ticks
		nudgeEvery   = 5 // the agent stalls and is nudged every 5 ticks
		flatCap      = 25
	)
	b := NewBudget(5)
	nudges, resets, flatStep, maxUsed := 0, 0, -1, 0
	for tick := 0; tick <= steps*ticksPerStep; tick++ {
		var c Change
		b, c = b.Observe(Count(int64(tick / ticksPerStep)))
		if c.Kind == Advanced {
			resets++
		}
		if tick%nudgeEvery != nudgeEvery-1 {
			continue
		}
		if !b.CanNudge() {
			t.Fatalf("tick %d, step %d: budget %v exhausted on a build that advances every %d ticks", tick, tick/ticksPerStep, b, ticksPerStep)
		}
		b = b.Spend()
		nudges++
		maxUsed = max(maxUsed, b.Used)
		if nudges == flatCap+1 && flatStep < 0 {
			flatStep = tick / ticksPerStep
		}
	}
	type summary struct {
		Progress      int64
		Resets        int
		Nudges        int
		MaxUsed       int
		FlatCapStepAt int
	}
	want := summary{Progress: steps, Resets: steps, Nudges: 94, MaxUsed: 1, FlatCapStepAt: 43}
	got := summary{Progress: b.High, Resets: resets, Nudges: nudges, MaxUsed: maxUsed, FlatCapStepAt: flatStep}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("157-step build (-want +got):\n%s", diff)
	}
}

// TestFrozenProgressExhausts nudges at every tick while progress stays put:
// exactly Limit nudges go out, then the budget is exhausted and stays so
// until progress moves.
func TestFrozenProgressExhausts(t *testing.T) {
	for _, progress := range []Reading{Count(41), unknown} {
		b := NewBudget(5)
		sent := 0
		for range 20 {
			b, _ = b.Observe(progress)
			if b.CanNudge() {
				b = b.Spend()
				sent++
			}
		}
		if sent != 5 || !b.Exhausted() || b.Used != 5 {
			t.Errorf("progress %v frozen: sent %d nudges, budget %v, Exhausted %v; want 5, 5/5, true", progress, sent, b, b.Exhausted())
		}
		b, c := b.Observe(Count(42))
		if progress.Known && (c.Kind != Advanced || !b.CanNudge()) {
			t.Errorf("progress 41 → 42 after exhaustion: change %v, CanNudge %v; want advanced, true", c.Kind, b.CanNudge())
		}
	}
}

func TestSpendSaturates(t *testing.T) {
	b := NewBudget(2).Spend().Spend().Spend().Spend()
	if diff := cmp.Diff(Budget{Limit: 2, Used: 2}, b); diff != "" {
		t.Errorf("four spends of a budget of 2 (-want +got):\n%s", diff)
	}
}

func TestBudgetLimits(t *testing.T) {
	type state struct {
		Budget    Budget
		CanNudge  bool
		Exhausted bool
		String    string
	}
	tests := []struct {
		name string
		b    Budget
		want state
	}{
		{"fresh", NewBudget(5), state{Budget{Limit: 5}, true, false, "0/5"}},
		{"zero limit", NewBudget(0), state{Budget{}, false, true, "0/0"}},
		{"negative limit", NewBudget(-3), state{Budget{}, false, true, "0/0"}},
		{"zero value", Budget{}, state{Budget{}, false, true, "0/0"}},
		{"limit lowered below used", Budget{Limit: 3, Used: 5}, state{Budget{Limit: 3, Used: 5}, false, true, "5/3"}},
		{"corrupt negative used", Budget{Limit: 2, Used: -7}, state{Budget{Limit: 2, Used: -7}, true, false, "-7/2"}},
	}
	for _, tt := range tests {
		got := state{tt.b, tt.b.CanNudge(), tt.b.Exhausted(), tt.b.String()}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
	// A corrupt negative count is repaired, not honoured: at most Limit
	// nudges follow.
	b := Budget{Limit: 2, Used: -7}
	sent := 0
	for b.CanNudge() {
		b = b.Spend()
		sent++
	}
	if sent != 2 {
		t.Errorf("budget with Used -7 of 2 allowed %d nudges; want 2", sent)
	}
}

func TestBudgetJSON(t *testing.T) {
	b := NewBudget(5).Spend()
	b, _ = b.Observe(Count(42))
	b, _ = b.Observe(Count(40))
	data, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"limit":5,"used":1,"progress_seen":true,"progress_last":40,"progress_high":42}`
	if diff := cmp.Diff(want, string(data)); diff != "" {
		t.Errorf("json.Marshal (-want +got):\n%s", diff)
	}
	var back Budget
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(b, back); diff != "" {
		t.Errorf("JSON round trip (-want +got):\n%s", diff)
	}
}

func TestMessages(t *testing.T) {
	frozen, _ := NewBudget(5).Observe(Count(41))
	fell, _ := frozen.Observe(Count(40))
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"advanced", Change{Kind: Advanced, From: 41, To: 42}.String(), "nudge budget reset (progress 41 → 42)"},
		{"regressed", Change{Kind: Regressed, From: 42, To: 40}.String(), "progress went down (42 → 40)"},
		{"unchanged", Change{Kind: Unchanged, From: 41, To: 41}.String(), ""},
		{"unknown", Change{Kind: Unknown}.String(), ""},
		{"baseline", Change{Kind: Baseline, To: 41}.String(), ""},
		{"kind name", Regressed.String(), "regressed"},
		{"bad kind", ChangeKind(9).String(), "ChangeKind(9)"},
		{"reason, stuck", spendAll(frozen).Reason(), "nudge budget exhausted: 5 nudges produced no progress (progress still 41); this needs a human"},
		{"reason, fell", spendAll(fell).Reason(), "nudge budget exhausted: 5 nudges produced no progress (progress 40, best 41); this needs a human"},
		{"reason, no probe", spendAll(NewBudget(5)).Reason(), "nudge budget exhausted: 5 nudges sent and no progress figure to show that any of them helped; this needs a human"},
		{"no progress probe", NoProgressNotice(5), "no progress probe: the nudge budget cannot reset, so after 5 nudges in all this session goes to a human"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

func spendAll(b Budget) Budget {
	for b.CanNudge() {
		b = b.Spend()
	}
	return b
}
