package tick

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/alert"
	"github.com/omega-monitor/omega-monitor/classify"
)

func TestDuePages(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	entry := func(w string, ev alert.GroupEvent, after time.Duration) GroupEntry {
		return GroupEntry{Watcher: w, Event: ev, At: at.Add(after), Window: time.Minute}
	}
	stopped := []GroupEntry{entry("c", alert.GroupStopped, 10*time.Second), entry("a", alert.GroupStopped, 0), entry("b", alert.GroupStopped, 50*time.Second)}
	for _, tc := range []struct {
		name    string
		entries []GroupEntry
		made    []GroupPlan
		now     time.Duration
		want    []GroupPlan
	}{
		{name: "none", now: time.Hour},
		{name: "within the window", entries: stopped, now: 59 * time.Second},
		{name: "the window over: one page, all named, in order", entries: stopped, now: time.Minute,
			want: []GroupPlan{{Event: alert.GroupStopped, Watchers: []string{"a", "b", "c"}}}},
		{name: "paged: nothing more", entries: stopped, now: time.Hour,
			made: []GroupPlan{{Event: alert.GroupStopped, Watchers: []string{"a", "b", "c"}}}},
		{name: "a later pane: a follow-up, its own window",
			entries: append(stopped[:3:3], entry("d", alert.GroupStopped, 2*time.Minute)),
			made:    []GroupPlan{{Event: alert.GroupStopped, Watchers: []string{"a", "b", "c"}}}, now: 3 * time.Minute,
			want: []GroupPlan{{Event: alert.GroupStopped, Follow: true, Watchers: []string{"d"}}}},
		{name: "a later pane within its window waits",
			entries: append(stopped[:3:3], entry("d", alert.GroupStopped, 2*time.Minute)),
			made:    []GroupPlan{{Event: alert.GroupStopped, Watchers: []string{"a", "b", "c"}}}, now: 2*time.Minute + 59*time.Second},
		{name: "the resumes after the page: their own page",
			entries: append(stopped[:3:3], entry("a", alert.GroupResumed, time.Hour), entry("b", alert.GroupResumed, time.Hour+30*time.Second)),
			made:    []GroupPlan{{Event: alert.GroupStopped, Watchers: []string{"a", "b", "c"}}}, now: time.Hour + time.Minute,
			want: []GroupPlan{{Event: alert.GroupResumed, Watchers: []string{"a", "b"}}}},
		{name: "stopped and resumed in one look: two pages, stopped first",
			entries: append(stopped[:3:3], entry("a", alert.GroupResumed, 0)), now: time.Hour,
			want: []GroupPlan{{Event: alert.GroupStopped, Watchers: []string{"a", "b", "c"}}, {Event: alert.GroupResumed, Watchers: []string{"a"}}}},
		{name: "a pane's event twice names it once",
			entries: []GroupEntry{entry("a", alert.GroupGone, 0), entry("a", alert.GroupGone, time.Second)}, now: time.Hour,
			want: []GroupPlan{{Event: alert.GroupGone, Watchers: []string{"a"}}}},
		{name: "no window said: the least",
			entries: []GroupEntry{{Watcher: "a", Event: alert.GroupBack, At: at}}, now: MinGather,
			want: []GroupPlan{{Event: alert.GroupBack, Watchers: []string{"a"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := DuePages(tc.entries, tc.made, at.Add(tc.now))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("DuePages (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGatherWindow(t *testing.T) {
	for _, tc := range []struct{ interval, want time.Duration }{
		{0, time.Minute},
		{time.Second, MinGather},
		{30 * time.Second, 30 * time.Second},
		{time.Hour, MaxGather},
	} {
		if got := GatherWindow(tc.interval); got != tc.want {
			t.Errorf("GatherWindow(%v) = %v, want %v", tc.interval, got, tc.want)
		}
	}
}

// TestGroupKeys: the panes of one account share a key; any of agent,
// account (where the agent's file names it, on whichever machine), host
// (where it does not) or reset apart is another account, another page.
func TestGroupKeys(t *testing.T) {
	reset := time.Date(2026, 12, 1, 9, 2, 0, 0, time.UTC)
	one := usageGroupKey("Claude Code", "a", "", reset, "You've hit your limit · resets 9:02am")
	for _, tc := range []struct {
		name string
		key  string
		same bool
	}{
		{"another local pane", usageGroupKey("Claude Code", "b", "", reset, "You've hit your limit · resets 9:02am"), true},
		{"the reset in another zone", usageGroupKey("Claude Code", "b", "", reset.In(time.FixedZone("X", 3600)), "other words"), true},
		{"another reset", usageGroupKey("Claude Code", "b", "", reset.Add(time.Hour), "You've hit your limit · resets 10:02am"), false},
		{"another agent", usageGroupKey("Codex CLI", "b", "", reset, "You've hit your limit · resets 9:02am"), false},
		{"another host", usageGroupKey("Claude Code", "box:b", "", reset, "You've hit your limit · resets 9:02am"), false},
		{"no reset shown", usageGroupKey("Claude Code", "b", "", time.Time{}, "You've hit your limit · resets 9:02am"), false},
		{"an account named", usageGroupKey("Claude Code", "b", "0123456789abcdef", reset, "You've hit your limit · resets 9:02am"), false},
	} {
		if got := tc.key == one; got != tc.same {
			t.Errorf("%s: one key %v, want %v", tc.name, got, tc.same)
		}
	}
	acct := func(account, target string) string {
		return usageGroupKey("Claude Code", target, account, reset, "You've hit your limit · resets 9:02am")
	}
	if acct("aaaa", "a") != acct("aaaa", "b") || acct("aaaa", "a") == acct("bbbb", "b") {
		t.Error("account keys: one page per account, two for two accounts whose limits reset in the same minute")
	}
	if acct("aaaa", "box:a") != acct("aaaa", "gpu:b") || acct("aaaa", "box:a") != acct("aaaa", "c") || acct("aaaa", "box:a") == acct("bbbb", "box:b") {
		t.Error("account keys across machines: one page per account wherever its panes run, two for two accounts on one host")
	}
	for _, tc := range []struct {
		key, target string
		want        alert.Cause
	}{
		{acct("aaaa", "box:a"), "box:a", alert.Cause{Kind: alert.CauseUsageLimit, Agent: "Claude Code", Account: true}},
		{acct("aaaa", "a"), "a", alert.Cause{Kind: alert.CauseUsageLimit, Agent: "Claude Code", Account: true}},
		{acct("", "box:a"), "box:a", alert.Cause{Kind: alert.CauseUsageLimit, Agent: "Claude Code", Host: "box"}},
		{acct("", "a"), "a", alert.Cause{Kind: alert.CauseUsageLimit, Agent: "Claude Code"}},
	} {
		if diff := cmp.Diff(tc.want, usageCause(tc.key, "Claude Code", tc.target)); diff != "" {
			t.Errorf("usageCause of %q on %s (-want +got):\n%s", tc.key, tc.target, diff)
		}
	}
	if hostGroupKey("box:a") != hostGroupKey("box:b") || hostGroupKey("box:a") == hostGroupKey("other:a") {
		t.Error("host keys: one per host")
	}
}

// TestHostGoneGrouped: a remote target gone joins its host's group, and so
// does its return; a local session gone pages alone, and its return is
// said in the line only.
func TestHostGoneGrouped(t *testing.T) {
	for _, tc := range []struct {
		target     string
		gone, back *Grouping
	}{
		{target: "agent"},
		{target: "box:agent",
			gone: &Grouping{Key: hostGroupKey("box:x"), Event: alert.GroupGone, Window: time.Minute, Cause: alert.Cause{Kind: alert.CauseHost, Host: "box"}, Detail: "ssh: Connection refused"},
			back: &Grouping{Key: hostGroupKey("box:x"), Event: alert.GroupBack, Window: time.Minute, Cause: alert.Cause{Kind: alert.CauseHost, Host: "box"}}},
	} {
		c := cfg
		c.Target, c.Interval = tc.target, time.Minute
		var s State
		var gone, back []*Grouping
		for i := range 12 {
			var o Outcome
			s, o = Step(s, c, Input{Now: t0.Add(time.Duration(i) * time.Minute), CaptureError: "ssh: Connection refused"})
			for _, a := range o.Actions {
				if a.Kind == Alert {
					gone = append(gone, a.Group)
				}
			}
		}
		_, o := Step(s, c, Input{Now: t0.Add(15 * time.Minute), Screen: classify.ClassifyText(busy, classify.Options{})})
		for _, a := range o.Actions {
			if a.Kind == Alert {
				back = append(back, a.Group)
			}
		}
		if diff := cmp.Diff([]*Grouping{tc.gone}, gone); diff != "" {
			t.Errorf("%s gone (-want +got):\n%s", tc.target, diff)
		}
		var want []*Grouping
		if tc.back != nil {
			want = []*Grouping{tc.back}
		}
		if diff := cmp.Diff(want, back); diff != "" {
			t.Errorf("%s back (-want +got):\n%s", tc.target, diff)
		}
	}
}
