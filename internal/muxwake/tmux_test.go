package muxwake

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"
	"gotest.tools/v3/poll"

	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// tmuxRunner runs the private server's tmux.
func tmuxRunner(s *testenv.TmuxServer) Runner {
	return func(ctx context.Context, args ...string) (string, error) {
		out, err := exec.CommandContext(ctx, s.Mux, args...).Output()
		if ee, ok := err.(*exec.ExitError); ok {
			return string(out), &muxError{strings.TrimSpace(string(ee.Stderr))}
		}
		return string(out), err
	}
}

// agentServer is a private tmux server with the sessions agent and,
// beside it, second (a shell each), its runner, and the agent's spot.
func agentServer(t *testing.T, second string) (*testenv.TmuxServer, Runner, Spot) {
	t.Helper()
	s := testenv.Tmux(t)
	s.NewSession(t, "agent", "exec sh")
	s.NewSession(t, second, "exec sh")
	run := tmuxRunner(s)
	sp, err := Locate(context.Background(), run, "=agent:")
	assert.NilError(t, err)
	return s, run, sp
}

type muxError struct{ said string }

func (e *muxError) Error() string { return e.said }

// optionsOf is what a user sees of the options and hooks Arm touches.
func optionsOf(t *testing.T, s *testenv.TmuxServer, sp Spot) []string {
	var got []string
	for _, o := range []string{"monitor-silence", "monitor-activity"} {
		got = append(got, s.Run(t, "show-options", "-w", "-t", sp.Window, o), s.Run(t, "show-options", "-A", "-w", "-t", sp.Window, o))
	}
	for _, o := range []string{"silence-action", "activity-action"} {
		got = append(got, s.Run(t, "show-options", "-t", sp.Session, o), s.Run(t, "show-options", "-A", "-t", sp.Session, o))
	}
	for _, h := range hooks {
		got = append(got, s.Run(t, "show-hooks", "-t", sp.Session, h), s.Run(t, "show-hooks", "-g", h))
	}
	return append(got, s.Run(t, "show-hooks", "-g", linkedHook))
}

// TestArmWakesOnSilenceAndDisarmPutsBack, with a real tmux: an armed
// pane that falls silent signals the channel; Disarm leaves every option
// and hook as the user had it, whether the user had set them or not; the
// user's own hook of the session still runs meanwhile.
func TestArmWakesOnSilenceAndDisarmPutsBack(t *testing.T) {
	for _, users := range []bool{false, true} {
		t.Run(map[bool]string{false: "defaults", true: "the user's own"}[users], func(t *testing.T) {
			s, run, sp := agentServer(t, "other")
			ctx := context.Background()
			if users {
				s.Run(t, "set-option", "-w", "-t", sp.Window, "monitor-silence", "30")
				s.Run(t, "set-option", "-t", sp.Session, "silence-action", "none")
				s.Run(t, "set-option", "-w", "-t", sp.Window, "monitor-activity", "on")
				s.Run(t, "set-hook", "-t", sp.Session, "alert-silence[0]", "set-option -t "+sp.Session+" @users-hook-ran yes")
				s.Run(t, "set-hook", "-t", sp.Session, "alert-activity", "")
				s.Run(t, "set-hook", "-t", sp.Session, "client-attached[3]", "set-option -t "+sp.Session+" @users-attached yes")
			}
			before := optionsOf(t, s, sp)
			other, err := Locate(ctx, run, "=other:")
			assert.NilError(t, err)
			otherBefore := optionsOf(t, s, other)
			var saved Record
			rec, err := Arm(ctx, run, sp, "omega-monitor-wake-0000abcd", 1234, 1, func(r Record) error { saved = r; return nil })
			assert.NilError(t, err)
			if diff := cmp.Diff(rec, saved); diff != "" {
				t.Errorf("the record saved is not the one armed (-want +got):\n%s", diff)
			}

			// Nothing armed yet; a step arms the silence, nobody
			// attached.
			assert.Equal(t, strings.TrimSpace(s.Run(t, "show-options", "-wv", "-t", sp.Window, "monitor-silence")), "0")
			out, err := run(ctx, StepArgs(rec, Silence)...)
			assert.NilError(t, err)
			heard, err := Hears(out)
			assert.NilError(t, err)
			assert.Assert(t, !heard, "heard, with nobody attached: %q", out)
			// Output, then a second of silence: the channel is signalled.
			s.Run(t, "send-keys", "-t", sp.Pane, "echo hi", "Enter")
			wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			_, err = run(wctx, "wait-for", ChannelOf(rec, Silence))
			assert.NilError(t, err, "no silence signalled within 30s of the pane's silence")
			if users {
				assert.Equal(t, strings.TrimSpace(s.Run(t, "show-options", "-qv", "-t", sp.Session, "@users-hook-ran")), "yes")
			}
			// Quiet: the next output is signalled, then the silence again.
			_, err = run(ctx, StepArgs(rec, Activity)...)
			assert.NilError(t, err)
			s.Run(t, "send-keys", "-t", sp.Pane, "echo again", "Enter")
			_, err = run(wctx, "wait-for", ChannelOf(rec, Activity))
			assert.NilError(t, err, "no output signalled")
			_, err = run(ctx, StepArgs(rec, Silence)...)
			assert.NilError(t, err)
			_, err = run(wctx, "wait-for", ChannelOf(rec, Silence))
			assert.NilError(t, err, "no second silence")

			assert.NilError(t, Disarm(ctx, run, rec))
			if diff := cmp.Diff(before, optionsOf(t, s, sp)); diff != "" {
				t.Errorf("after Disarm, the options (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(otherBefore, optionsOf(t, s, other)); diff != "" {
				t.Errorf("the other session's options changed (-before +after):\n%s", diff)
			}
		})
	}
}

// TestDisarmAfterTheSessionEnded: the session gone, Disarm has nothing
// left to put back and says no error.
func TestDisarmAfterTheSessionEnded(t *testing.T) {
	s, run, sp := agentServer(t, "keep")
	ctx := context.Background()
	rec, err := Arm(ctx, run, sp, "omega-monitor-wake-0000abcd", 1234, 2, func(Record) error { return nil })
	assert.NilError(t, err)
	s.Run(t, "kill-session", "-t", "=agent")
	assert.NilError(t, Disarm(ctx, run, rec))
}

// TestStepHoldsWhereALinkedSessionHears: the watched window linked in a
// second session, whose clients tmux would tell of its alerts, a step
// arms nothing and says so; unlinked, it arms again.
func TestStepHoldsWhereALinkedSessionHears(t *testing.T) {
	s, run, sp := agentServer(t, "other")
	ctx := context.Background()
	rec, err := Arm(ctx, run, sp, "omega-monitor-wake-0000abcd", 1234, 2, func(Record) error { return nil })
	assert.NilError(t, err)
	defer Disarm(ctx, run, rec)
	step := func(alert string) (heard bool, silence, activity string) {
		t.Helper()
		out, err := run(ctx, StepArgs(rec, alert)...)
		assert.NilError(t, err)
		heard, err = Hears(out)
		assert.NilError(t, err)
		return heard, strings.TrimSpace(s.Run(t, "show-options", "-wv", "-t", sp.Window, "monitor-silence")),
			strings.TrimSpace(s.Run(t, "show-options", "-wv", "-t", sp.Window, "monitor-activity"))
	}
	type got struct {
		Heard             bool
		Silence, Activity string
	}
	for _, tc := range []struct {
		name   string
		before []string
		alert  string
		want   got
	}{
		{name: "alone", alert: Silence, want: got{false, "2", "off"}},
		{name: "linked", before: []string{"link-window", "-s", sp.Window, "-t", "=other:"}, alert: Silence, want: got{true, "0", "off"}},
		{name: "linked, activity", alert: Activity, want: got{true, "0", "off"}},
		{name: "unlinked", before: []string{"unlink-window", "-t", "=other:1"}, alert: Activity, want: got{false, "0", "on"}},
	} {
		if tc.before != nil {
			s.Run(t, tc.before...)
		}
		h, sil, act := step(tc.alert)
		if diff := cmp.Diff(tc.want, got{h, sil, act}); diff != "" {
			t.Errorf("%s: (-want +got):\n%s", tc.name, diff)
		}
	}
}

// TestALinkHoldsTheAlertsAtOnce, with a real tmux: the watched window
// linked into another session, whose clients tmux would tell of its alerts
// (link-window; or a session made in the group of the watched one,
// new-session -t, to look at it from another terminal), has them held by
// the server the moment it is linked, before any step of the listener's;
// the listener's step then holds them while the window is in two sessions,
// and arms again once it is in one. Disarm takes the global hook out again.
//
// tmux runs window-linked twice for a grouped session, and two signals of
// a channel nobody waits on cancel out (the second takes the first's mark
// away): the listener, which always waits, is told by the first; a wait
// begun here after them would not be, so only link-window's single
// signal is waited for.
func TestALinkHoldsTheAlertsAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name         string
		link, unlink []string
		told         bool
	}{
		{"link-window", []string{"link-window", "-s", "=agent:0", "-t", "=other:5"}, []string{"unlink-window", "-t", "=other:5"}, true},
		{"a grouped session", []string{"new-session", "-d", "-t", "=agent", "-s", "viewer"}, []string{"kill-session", "-t", "=viewer"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, run, sp := agentServer(t, "other")
			ctx := context.Background()
			before := optionsOf(t, s, sp)
			rec, err := Arm(ctx, run, sp, "omega-monitor-wake-0000abcd", 1234, 2, func(Record) error { return nil })
			assert.NilError(t, err)
			step := func() (heard bool) {
				t.Helper()
				out, err := run(ctx, StepArgs(rec, Silence)...)
				assert.NilError(t, err)
				heard, err = Hears(out)
				assert.NilError(t, err)
				return heard
			}
			silence := func() string {
				return strings.TrimSpace(s.Run(t, "show-options", "-wv", "-t", sp.Window, "monitor-silence"))
			}
			assert.Assert(t, !step(), "heard with no client and no other session")
			assert.Equal(t, silence(), "2")
			s.Run(t, tc.link...)
			if tc.told {
				err := exec.Command("timeout", "10", s.Mux, "wait-for", ChannelOf(rec, Heard)).Run()
				assert.NilError(t, err, "the listener was not told of the link")
			}
			poll.WaitOn(t, func(poll.LogT) poll.Result {
				if silence() == "0" {
					return poll.Success()
				}
				return poll.Continue("the silence is still armed")
			}, poll.WithTimeout(10*time.Second))
			if !step() || silence() != "0" {
				t.Errorf("the step armed the silence of a window in two sessions")
			}
			s.Run(t, tc.unlink...)
			if step() || silence() != "2" {
				t.Errorf("not armed again once the window was in one session")
			}
			assert.NilError(t, Disarm(ctx, run, rec))
			if diff := cmp.Diff(before, optionsOf(t, s, sp)); diff != "" {
				t.Errorf("after Disarm (-before +after):\n%s", diff)
			}
		})
	}
}
