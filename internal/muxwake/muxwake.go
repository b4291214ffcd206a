// Package muxwake has the multiplexer wake a watcher by itself, for an
// agent whose own hooks do not: tmux's monitor-silence, set on the watched
// pane's window, fires the session's alert-silence hook once the pane has
// drawn nothing for a few seconds, and the hook signals a wait-for channel
// of the watcher's own, which a listener beside the loop waits on. Silence
// is when an agent shows a question or stops; while it works it draws.
//
// Arm records what it changes and what was there before, before it changes
// anything, so that Disarm (at the watcher's stop, or at the next start of
// a watcher that was killed) puts every option back as it was. A wake
// carries nothing: the loop only polls sooner, and the screen decides.
package muxwake

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// A Runner runs the multiplexer with args (tmux's command line) and returns
// its standard output.
type Runner func(ctx context.Context, args ...string) (string, error)

// A Spot is where the watched pane is: the ids of the pane, its window and
// its session (%N, @N, $N), which stay the same whatever is renamed.
type Spot struct {
	Pane    string `json:"pane"`
	Window  string `json:"window"`
	Session string `json:"session"`
}

var spotRE = regexp.MustCompile(`^(%[0-9]{1,9}) (@[0-9]{1,9}) (\$[0-9]{1,9})$`)

// Locate asks the multiplexer where target's pane is. Only ids of the
// exact forms tmux prints are taken: whatever else the server answers is
// refused, never passed on.
func Locate(ctx context.Context, run Runner, target string) (Spot, error) {
	out, err := run(ctx, "display-message", "-p", "-t", target, "#{pane_id} #{window_id} #{session_id}")
	if err != nil {
		return Spot{}, fmt.Errorf("muxwake: locate %s: %w", target, err)
	}
	m := spotRE.FindStringSubmatch(strings.TrimSpace(out))
	if m == nil {
		return Spot{}, fmt.Errorf("muxwake: locate %s: not ids of a pane: %.40q", target, out)
	}
	return Spot{Pane: m[1], Window: m[2], Session: m[3]}, nil
}

// A Record is what Arm set and what was there before (muxwake.json in the
// watcher's directory).
type Record struct {
	Spot
	// Channel is the wait-for channel the hook signals.
	Channel string `json:"channel"`
	// Index is the hook's place in the session's alert-silence array.
	Index int `json:"index"`
	// SilenceS is the monitor-silence set, in seconds.
	SilenceS int `json:"silence_s"`
	// PriorSilence is the window's own monitor-silence before, "" when
	// it had none (it took the global one).
	PriorSilence string `json:"prior_silence"`
	// PriorAction is the session's own silence-action before, "" when it
	// had none.
	PriorAction string `json:"prior_action"`
	// OwnHooks says whether the session had an alert-silence array of
	// its own before (even an empty one, which hides the global hooks
	// already): when not, the array Arm made is removed whole, so that
	// the global ones apply again.
	OwnHooks bool      `json:"own_hooks"`
	ArmedAt  time.Time `json:"armed_at"`
}

// Name is the channel and the hook's index of the watcher whose state
// directory is state: its own on the server, whichever watchers share a
// session.
func Name(state string) (channel string, index int) {
	h := fnv.New32a()
	h.Write([]byte(state))
	sum := h.Sum32()
	return fmt.Sprintf("omega-monitor-wake-%08x", sum), 1000 + int(sum%9000)
}

// ErrHooksInTheWay is Arm's refusal where a hook of ours would silence the
// user's own: global alert-silence hooks that a session array of ours
// would hide, or a hook of someone else's at our index.
var ErrHooksInTheWay = errors.New("muxwake: alert-silence hooks of the user's are in the way")

// Arm sets the pane's window to report silence after silence seconds of
// no output, and the session's alert-silence hook to signal channel at
// index (silence-action any, since tmux reports the silence of a
// session's current window to no hook otherwise). save receives the record
// before anything is changed; an error from it changes nothing.
func Arm(ctx context.Context, run Runner, s Spot, channel string, index, silence int, save func(Record) error) (Record, error) {
	rec := Record{Spot: s, Channel: channel, Index: index, SilenceS: silence, ArmedAt: time.Now().UTC().Truncate(time.Second)}
	var err error
	if rec.PriorSilence, err = run(ctx, "show-options", "-qv", "-w", "-t", s.Window, "monitor-silence"); err != nil {
		return rec, fmt.Errorf("muxwake: arm: %w", err)
	}
	if rec.PriorAction, err = run(ctx, "show-options", "-qv", "-t", s.Session, "silence-action"); err != nil {
		return rec, fmt.Errorf("muxwake: arm: %w", err)
	}
	rec.PriorSilence, rec.PriorAction = strings.TrimSpace(rec.PriorSilence), strings.TrimSpace(rec.PriorAction)
	if !optionValue(rec.PriorSilence) || !optionValue(rec.PriorAction) {
		return rec, fmt.Errorf("muxwake: arm: the server's options are not values: %.40q %.40q", rec.PriorSilence, rec.PriorAction)
	}
	own, err := run(ctx, "show-hooks", "-t", s.Session, "alert-silence")
	if err != nil {
		return rec, fmt.Errorf("muxwake: arm: %w", err)
	}
	rec.OwnHooks = strings.TrimSpace(own) != ""
	if rec.OwnHooks {
		if strings.Contains(own, fmt.Sprintf("alert-silence[%d]", index)) {
			return rec, fmt.Errorf("%w: the session's alert-silence[%d] is taken", ErrHooksInTheWay, index)
		}
	} else if global, err := run(ctx, "show-hooks", "-g", "alert-silence"); err != nil {
		return rec, fmt.Errorf("muxwake: arm: %w", err)
	} else if strings.Contains(global, "alert-silence[") { // an empty array is printed as its bare name
		return rec, fmt.Errorf("%w: global ones, which a session hook would hide", ErrHooksInTheWay)
	}
	if err := save(rec); err != nil {
		return rec, fmt.Errorf("muxwake: arm: %w", err)
	}
	if _, err := run(ctx, ArmArgs(rec)...); err != nil {
		return rec, fmt.Errorf("muxwake: arm: %w", err)
	}
	return rec, nil
}

// optionValue says whether v reads as one of the values show-options gives
// for monitor-silence or silence-action: a word, or nothing.
func optionValue(v string) bool {
	if len(v) > 20 {
		return false
	}
	for _, r := range v {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// ArmArgs is the one multiplexer call that arms rec.
func ArmArgs(rec Record) []string {
	return []string{
		"set-option", "-w", "-t", rec.Window, "monitor-silence", strconv.Itoa(rec.SilenceS), ";",
		"set-option", "-t", rec.Session, "silence-action", "any", ";",
		"set-hook", "-t", rec.Session, hookName(rec), "wait-for -S " + rec.Channel,
	}
}

func hookName(rec Record) string { return fmt.Sprintf("alert-silence[%d]", rec.Index) }

// DisarmCalls are the multiplexer calls that put back what rec changed,
// one a call: one that fails (the window or the session is gone, and its
// options with it) does not keep the others from running.
func DisarmCalls(rec Record) [][]string {
	var calls [][]string
	if rec.PriorSilence == "" {
		calls = append(calls, []string{"set-option", "-u", "-w", "-t", rec.Window, "monitor-silence"})
	} else {
		calls = append(calls, []string{"set-option", "-w", "-t", rec.Window, "monitor-silence", rec.PriorSilence})
	}
	if rec.PriorAction == "" {
		calls = append(calls, []string{"set-option", "-u", "-t", rec.Session, "silence-action"})
	} else {
		calls = append(calls, []string{"set-option", "-t", rec.Session, "silence-action", rec.PriorAction})
	}
	if rec.OwnHooks {
		calls = append(calls, []string{"set-hook", "-u", "-t", rec.Session, hookName(rec)})
	} else {
		calls = append(calls, []string{"set-hook", "-u", "-t", rec.Session, "alert-silence"})
	}
	return calls
}

// ErrNotOurs is Disarm's refusal of a record that Arm did not write:
// nothing of it reaches the multiplexer.
var ErrNotOurs = errors.New("muxwake: disarm: a record that Arm did not write")

// Disarm puts back what rec changed, as far as the server still has it:
// a window or session gone took its options with it.
func Disarm(ctx context.Context, run Runner, rec Record) error {
	if !validRecord(rec) {
		return fmt.Errorf("%w: %.200q", ErrNotOurs, fmt.Sprint(rec))
	}
	var errs []error
	for _, c := range DisarmCalls(rec) {
		if _, err := run(ctx, c...); err != nil && !gone(err) {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("muxwake: disarm: %w", err)
	}
	return nil
}

// validRecord says whether rec, read back from disk, holds only what Arm
// writes: nothing else is passed to the multiplexer.
func validRecord(rec Record) bool {
	ch, _ := Name("")
	return spotRE.MatchString(rec.Pane+" "+rec.Window+" "+rec.Session) &&
		len(rec.Channel) == len(ch) && strings.HasPrefix(rec.Channel, "omega-monitor-wake-") &&
		rec.Index >= 1000 && rec.Index < 10000 &&
		optionValue(rec.PriorSilence) && optionValue(rec.PriorAction)
}

// gone says whether err is the server's word that what it was asked about
// no longer exists (or the server itself).
func gone(err error) bool {
	s := err.Error()
	for _, w := range []string{"can't find", "no server running", "error connecting to", "no such"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// ClearArgs clears the alerts of the session's windows, so that the next
// silence of a window nobody looks at fires again: tmux reports a silence
// once until the window is looked at, or its alerts cleared.
func ClearArgs(s Spot) []string { return []string{"kill-session", "-C", "-t", s.Session} }
