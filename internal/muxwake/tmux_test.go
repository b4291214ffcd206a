package muxwake

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"

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
	for _, h := range []string{"alert-silence", "alert-activity"} {
		got = append(got, s.Run(t, "show-hooks", "-t", sp.Session, h), s.Run(t, "show-hooks", "-g", h))
	}
	return got
}

// TestArmWakesOnSilenceAndDisarmPutsBack, with a real tmux: an armed
// pane that falls silent signals the channel; Disarm leaves every option
// and hook as the user had it, whether the user had set them or not; the
// user's own hook of the session still runs meanwhile.
func TestArmWakesOnSilenceAndDisarmPutsBack(t *testing.T) {
	for _, users := range []bool{false, true} {
		t.Run(map[bool]string{false: "defaults", true: "the user's own"}[users], func(t *testing.T) {
			s := testenv.Tmux(t)
			s.NewSession(t, "agent", "exec sh")
			s.NewSession(t, "other", "exec sh")
			run := tmuxRunner(s)
			ctx := context.Background()
			sp, err := Locate(ctx, run, "=agent:")
			assert.NilError(t, err)
			if users {
				s.Run(t, "set-option", "-w", "-t", sp.Window, "monitor-silence", "30")
				s.Run(t, "set-option", "-t", sp.Session, "silence-action", "none")
				s.Run(t, "set-option", "-w", "-t", sp.Window, "monitor-activity", "on")
				s.Run(t, "set-hook", "-t", sp.Session, "alert-silence[0]", "set-option -t "+sp.Session+" @users-hook-ran yes")
				s.Run(t, "set-hook", "-t", sp.Session, "alert-activity", "")
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
			_, err = run(ctx, QuietArgs(rec)...)
			assert.NilError(t, err)
			s.Run(t, "send-keys", "-t", sp.Pane, "echo again", "Enter")
			_, err = run(wctx, "wait-for", ChannelOf(rec, Activity))
			assert.NilError(t, err, "no output signalled")
			_, err = run(ctx, DrawingArgs(rec)...)
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
	s := testenv.Tmux(t)
	s.NewSession(t, "agent", "exec sh")
	s.NewSession(t, "keep", "exec sh")
	run := tmuxRunner(s)
	ctx := context.Background()
	sp, err := Locate(ctx, run, "=agent:")
	assert.NilError(t, err)
	rec, err := Arm(ctx, run, sp, "omega-monitor-wake-0000abcd", 1234, 2, func(Record) error { return nil })
	assert.NilError(t, err)
	s.Run(t, "kill-session", "-t", "=agent")
	assert.NilError(t, Disarm(ctx, run, rec))
}
