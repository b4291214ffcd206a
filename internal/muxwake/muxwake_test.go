package muxwake

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"
)

func TestArmAndDisarmCalls(t *testing.T) {
	spot := Spot{Pane: "%3", Window: "@2", Session: "$1"}
	// What disarming undoes where nothing was the user's.
	unset := [][]string{
		{"set-option", "-u", "-w", "-t", "@2", "monitor-silence"},
		{"set-option", "-u", "-w", "-t", "@2", "monitor-activity"},
		{"set-option", "-u", "-t", "$1", "silence-action"},
		{"set-option", "-u", "-t", "$1", "activity-action"},
		{"set-hook", "-u", "-t", "$1", "alert-silence"},
		{"set-hook", "-u", "-t", "$1", "alert-activity"},
		{"set-hook", "-u", "-t", "$1", "client-attached"},
		{"set-hook", "-u", "-t", "$1", "client-detached"},
		{"set-hook", "-u", "-t", "$1", "client-session-changed"},
	}
	for _, tc := range []struct {
		name   string
		rec    Record
		disarm [][]string
	}{
		{
			name: "nothing of the user's",
			rec: Record{Spot: spot, Channel: "omega-monitor-wake-0000abcd", Index: 1234, SilenceS: 2,
				OwnHooks: map[string]bool{"alert-silence": false, "alert-activity": false, "client-attached": false, "client-detached": false, "client-session-changed": false}},
			disarm: unset,
		},
		{
			name: "the window's links heard",
			rec: Record{Spot: spot, Channel: "omega-monitor-wake-0000abcd", Index: 1234, SilenceS: 2, Linked: true,
				OwnHooks: map[string]bool{"alert-silence": false, "alert-activity": false, "client-attached": false, "client-detached": false, "client-session-changed": false}},
			disarm: append(slices.Clone(unset), []string{"set-hook", "-gu", "window-linked[1234]"}),
		},
		{
			// An earlier version's record set the alerts' hooks only:
			// the session's client hooks, maybe the user's, are left be.
			name: "an earlier version's record",
			rec: Record{Spot: spot, Channel: "omega-monitor-wake-0000abcd", Index: 1234, SilenceS: 2,
				OwnHooks: map[string]bool{"alert-silence": false, "alert-activity": true}},
			disarm: [][]string{
				{"set-option", "-u", "-w", "-t", "@2", "monitor-silence"},
				{"set-option", "-u", "-w", "-t", "@2", "monitor-activity"},
				{"set-option", "-u", "-t", "$1", "silence-action"},
				{"set-option", "-u", "-t", "$1", "activity-action"},
				{"set-hook", "-u", "-t", "$1", "alert-silence"},
				{"set-hook", "-u", "-t", "$1", "alert-activity[1234]"},
			},
		},
		{
			name: "the user's own values and hooks",
			rec: Record{Spot: spot, Channel: "omega-monitor-wake-0000abcd", Index: 1234, SilenceS: 2,
				Prior:    map[string]string{"w:monitor-silence": "30", "w:monitor-activity": "on", "s:silence-action": "none", "s:activity-action": ""},
				OwnHooks: map[string]bool{"alert-silence": true, "alert-activity": false, "client-attached": true, "client-detached": false, "client-session-changed": false}},
			disarm: [][]string{
				{"set-option", "-w", "-t", "@2", "monitor-silence", "30"},
				{"set-option", "-w", "-t", "@2", "monitor-activity", "on"},
				{"set-option", "-t", "$1", "silence-action", "none"},
				{"set-option", "-u", "-t", "$1", "activity-action"},
				{"set-hook", "-u", "-t", "$1", "alert-silence[1234]"},
				{"set-hook", "-u", "-t", "$1", "alert-activity"},
				{"set-hook", "-u", "-t", "$1", "client-attached[1234]"},
				{"set-hook", "-u", "-t", "$1", "client-detached"},
				{"set-hook", "-u", "-t", "$1", "client-session-changed"},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			held := "set-option -w -t '@2' monitor-silence 0 ; set-option -w -t '@2' monitor-activity off ; kill-session -C -t '$1' ; "
			wantArm := []string{
				"set-option", "-w", "-t", "@2", "monitor-silence", "0", ";",
				"set-option", "-w", "-t", "@2", "monitor-activity", "off", ";",
				"kill-session", "-C", "-t", "$1", ";",
				"set-option", "-t", "$1", "silence-action", "any", ";",
				"set-option", "-t", "$1", "activity-action", "any", ";",
				"set-hook", "-t", "$1", "alert-silence[1234]", "wait-for -S omega-monitor-wake-0000abcd-silence", ";",
				"set-hook", "-t", "$1", "alert-activity[1234]", "wait-for -S omega-monitor-wake-0000abcd-activity", ";",
				"set-hook", "-t", "$1", "client-attached[1234]", held + "wait-for -S omega-monitor-wake-0000abcd-heard", ";",
				"set-hook", "-t", "$1", "client-detached[1234]", "wait-for -S omega-monitor-wake-0000abcd-heard", ";",
				"set-hook", "-t", "$1", "client-session-changed[1234]", held + "wait-for -S omega-monitor-wake-0000abcd-heard",
			}
			if tc.rec.Linked {
				wantArm = append(wantArm, ";", "set-hook", "-g", "window-linked[1234]", held+"wait-for -S omega-monitor-wake-0000abcd-heard")
			}
			if diff := cmp.Diff(wantArm, ArmArgs(tc.rec)); diff != "" {
				t.Errorf("ArmArgs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.disarm, DisarmCalls(tc.rec)); diff != "" {
				t.Errorf("DisarmCalls (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNameIsTheWatchersOwn(t *testing.T) {
	a, ia := Name("/home/u/.omega/monitor/monitor-a")
	b, ib := Name("/home/u/.omega/monitor/monitor-b")
	if a == b {
		t.Errorf("two watchers share the channel %s", a)
	}
	for _, i := range []int{ia, ib} {
		if i < 1000 || i >= 10000 {
			t.Errorf("index %d out of 1000..9999", i)
		}
	}
	assert.Assert(t, validRecord(Record{Spot: Spot{"%1", "@1", "$1"}, Channel: a, Index: ia}))
}

// fakeMux answers show-options and show-hooks from a table and records
// every other call.
type fakeMux struct {
	answers map[string]string
	fail    map[string]error
	calls   [][]string
}

func (f *fakeMux) run(_ context.Context, args ...string) (string, error) {
	if slices.Contains(args, answerEnd) {
		// Arm's questions, one call: each answered as tmux would, one
		// line each, then the line that ends it.
		var out strings.Builder
		for q := range slices.Values(splitCalls(args)) {
			if len(q) == 3 && q[0] == "display-message" {
				out.WriteString(q[2] + "\n")
				continue
			}
			key := strings.Join(q, " ")
			if err, ok := f.fail[key]; ok {
				return "", err
			}
			a := f.answers[key] // unknown: nothing set, as tmux says
			if a != "" && !strings.HasSuffix(a, "\n") {
				a += "\n"
			}
			out.WriteString(a)
		}
		return out.String(), nil
	}
	key := strings.Join(args, " ")
	if err, ok := f.fail[key]; ok {
		return "", err
	}
	if a, ok := f.answers[key]; ok {
		return a, nil
	}
	f.calls = append(f.calls, args)
	return "", nil
}

// splitCalls splits a multiplexer call of several commands at its ";".
func splitCalls(args []string) [][]string {
	var calls [][]string
	for {
		i := slices.Index(args, ";")
		if i < 0 {
			return append(calls, args)
		}
		calls, args = append(calls, args[:i]), args[i+1:]
	}
}

// TestHostileServerAnswers: what the server answers is taken only in the
// exact forms tmux prints; anything else changes nothing.
func TestHostileServerAnswers(t *testing.T) {
	for _, out := range []string{"", "%1 @2", "%1 @2 $3; kill-server", "%1 @2 $3\n%4 @5 $6", "\x1b]2;x\x07 @1 $1", "%1 @2 $-3",
		// Not a tmux that clears alerts with kill-session -C: a clone, an
		// old tmux, one that does not know #{version}.
		"%1 @2 $3", "%1 @2 $3 tmux ", "%1 @2 $3 rmux 3.4", "%1 @2 $3 tmux 2.1", "%1 @2 $3 tmux 1.9a", "%1 @2 $3 tmux 3.4 x"} {
		f := &fakeMux{answers: map[string]string{"display-message -p -t =agent: #{pane_id} #{window_id} #{session_id} tmux #{version}": out}}
		if _, err := Locate(context.Background(), f.run, "=agent:"); err == nil {
			t.Errorf("Locate took %q", out)
		}
	}
	for _, out := range []string{"%1 @2 $3 tmux 2.2", "%1 @2 $3 tmux 3.3a", "%1 @2 $3 tmux next-3.6"} {
		f := &fakeMux{answers: map[string]string{"display-message -p -t =agent: #{pane_id} #{window_id} #{session_id} tmux #{version}": out}}
		if got, err := Locate(context.Background(), f.run, "=agent:"); err != nil || got != (Spot{"%1", "@2", "$3"}) {
			t.Errorf("Locate(%q) = %v, %v; want the spot", out, got, err)
		}
	}
	spot := Spot{"%1", "@2", "$3"}
	for _, prior := range []string{"30 ; kill-server", "x y", strings.Repeat("9", 40), "\x1b[2J"} {
		f := &fakeMux{answers: map[string]string{
			"show-options -qv -w -t @2 monitor-silence":  "",
			"show-options -qv -w -t @2 monitor-activity": prior,
			"show-options -qv -t $3 silence-action":      "",
		}}
		saved := false
		_, err := Arm(context.Background(), f.run, spot, "omega-monitor-wake-0000abcd", 1234, 2, func(Record) error { saved = true; return nil })
		if err == nil || saved || len(f.calls) != 0 {
			t.Errorf("a prior value %q: err %v, saved %v, calls %q; want refused, nothing saved or set", prior, err, saved, f.calls)
		}
	}
	bad := []Record{
		{Spot: spot, Channel: "omega-monitor-wake-0000abcd", Index: 1234, Prior: map[string]string{"w:monitor-silence": "1; kill-server"}},
		{Spot: spot, Channel: "omega-monitor-wake-0000abcd", Index: 1234, Prior: map[string]string{"w:remain-on-exit": "on"}},
		{Spot: Spot{"%1", "@2", "$3; kill-server"}, Channel: "omega-monitor-wake-0000abcd", Index: 1234},
		{Spot: spot, Channel: "x; kill-server", Index: 1234},
		{Spot: spot, Channel: "omega-monitor-wake-0000abcd", Index: 7},
	}
	for _, rec := range bad {
		f := &fakeMux{}
		if err := Disarm(context.Background(), f.run, rec); !errors.Is(err, ErrNotOurs) || len(f.calls) != 0 {
			t.Errorf("Disarm(%+v) = %v with calls %q; want ErrNotOurs and none", rec, err, f.calls)
		}
	}
}

// TestArmRefusesToHideTheUsersHooks: global alert (or client) hooks of the
// user's, which a session array would hide, and our index taken (of the
// session's arrays, or of the global window-linked one), leave everything
// as it was.
func TestArmRefusesToHideTheUsersHooks(t *testing.T) {
	spot := Spot{"%1", "@2", "$3"}
	base := map[string]string{
		"show-options -qv -w -t @2 monitor-silence":  "",
		"show-options -qv -w -t @2 monitor-activity": "",
		"show-options -qv -t $3 silence-action":      "",
		"show-options -qv -t $3 activity-action":     "",
		"show-hooks -t $3 alert-silence":             "",
		"show-hooks -t $3 alert-activity":            "",
		"show-hooks -g alert-silence":                "alert-silence\n",
		"show-hooks -g alert-activity":               "alert-activity\n",
	}
	for name, hooks := range map[string]map[string]string{
		"global":           {"show-hooks -g alert-silence": "alert-silence[0] run-shell 'notify-send quiet'\n"},
		"global activity":  {"show-hooks -g alert-activity": "alert-activity[3] display-message busy\n"},
		"global attached":  {"show-hooks -g client-attached": "client-attached[0] run-shell 'notify-send hi'\n"},
		"our index":        {"show-hooks -t $3 alert-activity": "alert-activity[1234] display-message hi\n"},
		"our global index": {"show-hooks -g window-linked": "window-linked[1234] display-message linked\n"},
	} {
		t.Run(name, func(t *testing.T) {
			answers := map[string]string{}
			for k, v := range base {
				answers[k] = v
			}
			for k, v := range hooks {
				answers[k] = v
			}
			f := &fakeMux{answers: answers}
			_, err := Arm(context.Background(), f.run, spot, "omega-monitor-wake-0000abcd", 1234, 2, func(Record) error { return nil })
			if !errors.Is(err, ErrHooksInTheWay) || len(f.calls) != 0 {
				t.Errorf("Arm = %v, calls %q; want ErrHooksInTheWay and no change", err, f.calls)
			}
		})
	}
}

// TestDisarmGoesOnPastAGoneWindow: a window or session gone took its
// options with it; the rest is still put back.
func TestDisarmGoesOnPastAGoneWindow(t *testing.T) {
	rec := Record{Spot: Spot{"%1", "@2", "$3"}, Channel: "omega-monitor-wake-0000abcd", Index: 1234,
		OwnHooks: map[string]bool{"alert-silence": false, "client-detached": true}}
	f := &fakeMux{fail: map[string]error{"set-option -u -w -t @2 monitor-silence": fmt.Errorf("coord: local multiplexer: can't find window: @2")}}
	assert.NilError(t, Disarm(context.Background(), f.run, rec))
	assert.Equal(t, len(f.calls), 5)
	f = &fakeMux{fail: map[string]error{"set-option -u -t $3 silence-action": fmt.Errorf("coord: local multiplexer: no answer within 5s")}}
	assert.ErrorContains(t, Disarm(context.Background(), f.run, rec), "no answer")
	assert.Equal(t, len(f.calls), 5)
}

// TestBudget: at most Wakes in any Window, never two closer than Gap; a
// fresh budget is whole; Back says when the next may pass.
func TestBudget(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	type step struct {
		at     float64
		want   bool
		spent  bool
		backAt float64 // Back after the step
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"three at once, then none for the window", []step{
			{at: 0, want: true, backAt: 2}, {at: 2, want: true, backAt: 4}, {at: 4, want: true, spent: true, backAt: 3600},
			{at: 10, want: false, spent: true, backAt: 3600},
			{at: 3599, want: false, spent: true, backAt: 3600},
			{at: 3600, want: true, spent: true, backAt: 3602},
			{at: 3601, want: false, spent: true, backAt: 3602},
			{at: 3602, want: true, spent: true, backAt: 3604},
		}},
		{"never closer than the gap", []step{
			{at: 0, want: true, backAt: 2}, {at: 1.9, want: false, backAt: 2}, {at: 2, want: true, backAt: 4},
		}},
		{"whole again after a quiet window", []step{
			{at: 0, want: true, backAt: 2}, {at: 100, want: true, backAt: 102}, {at: 200, want: true, spent: true, backAt: 3600},
			{at: 7300, want: true, backAt: 7302}, {at: 7310, want: true, backAt: 7312}, {at: 7320, want: true, spent: true, backAt: 10900},
		}},
		{"a clock gone back passes nothing more", []step{
			{at: 100, want: true}, {at: 102, want: true}, {at: 104, want: true, spent: true, backAt: 3700},
			{at: 50, want: false, spent: true, backAt: 3700},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := Budget{Wakes: 3, Window: time.Hour, Gap: 2 * time.Second}
			for i, s := range tc.steps {
				if got := b.Take(at(s.at)); got != s.want {
					t.Errorf("step %d at %vs: Take %v, want %v", i, s.at, got, s.want)
				}
				if got := b.Spent(at(s.at)); got != s.spent {
					t.Errorf("step %d at %vs: Spent %v, want %v", i, s.at, got, s.spent)
				}
				if s.backAt != 0 {
					if got := b.Back(at(s.at)); !got.Equal(at(s.backAt)) {
						t.Errorf("step %d at %vs: Back at %v, want %vs", i, s.at, got.Sub(t0), s.backAt)
					}
				}
			}
		})
	}
}

// TestBudgetOverAnyWindow: whenever wakes are offered, no window passes
// more than Wakes: the bound holds by construction, not on average.
func TestBudgetOverAnyWindow(t *testing.T) {
	b := Budget{Wakes: 3, Window: time.Hour, Gap: 2 * time.Second}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var passed []time.Time
	for s := 0; s < 6*3600; s += 4 { // a quiet spell every 4 s for six hours
		if now := t0.Add(time.Duration(s) * time.Second); b.Take(now) {
			passed = append(passed, now)
		}
	}
	for i := range passed {
		n := 0
		for _, p := range passed[i:] {
			if p.Sub(passed[i]) < time.Hour {
				n++
			}
		}
		if n > 3 {
			t.Fatalf("%d wakes in the hour from %v, want at most 3", n, passed[i].Sub(t0))
		}
	}
	if len(passed) != 18 {
		t.Errorf("%d wakes passed in six hours, want 18", len(passed))
	}
}

// TestArmAsksInOneCall: Arm asks its questions in one call, and an answer
// that is not one answer a question (too few, too many, a forged end line)
// arms nothing.
func TestArmAsksInOneCall(t *testing.T) {
	spot := Spot{"%1", "@2", "$3"}
	questions := 0
	count := func(_ context.Context, args ...string) (string, error) {
		if slices.Contains(args, answerEnd) {
			questions++
		}
		return strings.Repeat(answerEnd+"\n", len(options)+2*len(hooks)+1), nil
	}
	_, err := Arm(context.Background(), count, spot, "omega-monitor-wake-0000abcd", 1234, 2, func(Record) error { return nil })
	assert.NilError(t, err)
	assert.Equal(t, questions, 1)
	for _, out := range []string{
		"",
		strings.Repeat(answerEnd+"\n", len(options)+2*len(hooks)),
		strings.Repeat(answerEnd+"\n", len(options)+2*len(hooks)+2),
		strings.Repeat(answerEnd+"\n", len(options)+2*len(hooks)+1) + "set-hook -g alert-silence x\n",
		"30\n" + answerEnd + "\n" + answerEnd + answerEnd + "\n" + strings.Repeat(answerEnd+"\n", len(options)+2*len(hooks)-1),
	} {
		saved, calls := false, 0
		run := func(_ context.Context, args ...string) (string, error) {
			if !slices.Contains(args, answerEnd) {
				calls++
			}
			return out, nil
		}
		_, err := Arm(context.Background(), run, spot, "omega-monitor-wake-0000abcd", 1234, 2, func(Record) error { saved = true; return nil })
		if err == nil || saved || calls != 0 {
			t.Errorf("answer %q: err %v, saved %v, %d calls; want refused, nothing saved or set", out, err, saved, calls)
		}
	}
}

// TestHears: StepArgs' answer, as a server (or a hostile host) gives it;
// whatever is not an answer reads as heard, so that nothing is armed on
// its word.
func TestHears(t *testing.T) {
	for _, tc := range []struct {
		out     string
		want    bool
		wantErr bool
	}{
		{out: "0 1\n", want: false},
		{out: "1 1\n", want: true},
		{out: "0 2\n", want: true},
		{out: "3 2", want: true},
		{out: "", want: true, wantErr: true},
		{out: "0\n", want: true, wantErr: true},
		{out: "0 1 2\n", want: true, wantErr: true},
		{out: "zero one\n", want: true, wantErr: true},
		{out: "0 1\x1b]0;pwned\a\n", want: true, wantErr: true},
		{out: "0 " + strings.Repeat("1", 60), want: true, wantErr: true},
	} {
		got, err := Hears(tc.out)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("Hears(%q) = %v, %v; want %v, error %v", tc.out, got, err, tc.want, tc.wantErr)
		}
	}
}
