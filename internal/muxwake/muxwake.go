// Package muxwake has the multiplexer wake a watcher by itself, for an
// agent whose own hooks do not: tmux's monitor-silence, set on the watched
// pane's window, fires the session's alert-silence hook once the pane has
// drawn nothing for a few seconds, and the hook signals a wait-for channel
// of the watcher's own, which a listener beside the loop waits on. Silence
// is when an agent shows a question or stops; while it works it draws.
// Once it fell silent, only its next output is reported (monitor-activity,
// alert-activity, on a channel apart), which arms the silence again: one
// alert is armed at a time, each fires once, and neither an agent drawing
// without end nor one quiet for hours makes the multiplexer call anyone.
//
// tmux tells every client attached to the session of each alert (a bell,
// or a message), and the clients of any other session the window is
// linked in: an alert is armed only while nobody can hear it (Step), and
// the session's client-attached, client-detached and client-session-changed
// hooks signal a third channel, on which the listener holds the alerts or
// arms them again; so does one global window-linked hook, since tmux runs
// that hook in the session a window is linked into, not in ours.
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
	"slices"
	"strconv"
	"strings"
	"sync"
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

// spotRE matches a spot as tmux prints it, followed by the server's
// version where Locate asks it. It is compiled at its first use: its counted repetitions cost
// every start of the binary (every tick) about 0.2 ms of CPU where
// compiled at start.
var spotRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(%[0-9]{1,9}) (@[0-9]{1,9}) (\$[0-9]{1,9})(?: tmux (?:next-)?([0-9]{1,3})\.([0-9]{1,3})[a-z]?)?$`)
})

// The wakes need tmux 2.2 or later: HushArgs clears the session's alerts
// with kill-session -C, which an older tmux refuses as an unknown flag.
// A multiplexer that does not say it is tmux (rmux, a clone) is not armed
// at all: a kill-session it read without the -C would end the session.
const minMajor, minMinor = 2, 2

// Locate asks the multiplexer where target's pane is, and whether it is
// a tmux the wakes work with. Only ids of the exact forms tmux prints are
// taken: whatever else the server answers is refused, never passed on.
func Locate(ctx context.Context, run Runner, target string) (Spot, error) {
	out, err := run(ctx, "display-message", "-p", "-t", target, "#{pane_id} #{window_id} #{session_id} tmux #{version}")
	if err != nil {
		return Spot{}, fmt.Errorf("muxwake: locate %s: %w", target, err)
	}
	m := spotRE().FindStringSubmatch(strings.TrimSpace(out))
	if m == nil || m[4] == "" {
		return Spot{}, fmt.Errorf("muxwake: locate %s: not ids of a pane of tmux 2.2 or later: %.60q", target, out)
	}
	major, _ := strconv.Atoi(m[4])
	minor, _ := strconv.Atoi(m[5])
	if major < minMajor || major == minMajor && minor < minMinor {
		return Spot{}, fmt.Errorf("muxwake: locate %s: tmux %s.%s, and the wakes need %d.%d or later", target, m[4], m[5], minMajor, minMinor)
	}
	return Spot{Pane: m[1], Window: m[2], Session: m[3]}, nil
}

// The options and hooks Arm sets, as "scope:name" (w: the window's, s:
// the session's).
var (
	options = []string{"w:monitor-silence", "w:monitor-activity", "s:silence-action", "s:activity-action"}
	hooks   = []string{"alert-silence", "alert-activity", "client-attached", "client-detached", "client-session-changed"}
)

// linkedHook is the one global hook Arm sets: tmux runs a window's
// window-linked hook in the session the window is linked into (link-window,
// or a session made in the group of the watched one, new-session -t), never
// in the session it was in, so no session hook of ours hears it. At our
// index of the global array, beside whatever the user has there, it holds
// our alerts at once and tells the listener, whichever window was linked:
// the listener's step then arms again where nobody hears. It runs only
// when a window is linked somewhere, at a human's pace.
const linkedHook = "window-linked"

// The two alerts, and the clients' comings and goings (Heard), each of
// which signals a channel of its own.
const (
	Silence  = "silence"
	Activity = "activity"
	Heard    = "heard"
)

// channelOfHook is the channel hook h signals: its alert's, or Heard.
func channelOfHook(h string) string {
	if a, ok := strings.CutPrefix(h, "alert-"); ok {
		return a
	}
	return Heard
}

// A Record is what Arm set and what was there before (muxwake.json in the
// watcher's directory).
type Record struct {
	Spot
	// Channel is the prefix of the wait-for channels the hooks signal
	// (Channel-silence, Channel-activity).
	Channel string `json:"channel"`
	// Index is the hooks' place in the session's arrays.
	Index int `json:"index"`
	// SilenceS is the monitor-silence set, in seconds.
	SilenceS int `json:"silence_s"`
	// Prior is each option's own value before ("scope:name"), "" where
	// it had none (it took the global one).
	Prior map[string]string `json:"prior"`
	// OwnHooks says, for each hook Arm set, whether the session had an
	// array of its own of it before (even an empty one, which hides the
	// global hooks already): the others' arrays Arm made are removed
	// whole, so that the global ones apply again. A hook it does not name
	// was not set (a record of an earlier version's), and is not touched.
	OwnHooks map[string]bool `json:"own_hooks"`
	// Linked says Arm set the global linkedHook at Index (a record of an
	// earlier version's did not).
	Linked  bool      `json:"linked,omitempty"`
	ArmedAt time.Time `json:"armed_at"`
}

// Name is the channel and the hooks' index of the watcher whose state
// directory is state: its own on the server, whichever watchers share a
// session.
func Name(state string) (channel string, index int) {
	h := fnv.New32a()
	h.Write([]byte(state))
	sum := h.Sum32()
	return fmt.Sprintf("omega-monitor-wake-%08x", sum), 1000 + int(sum%9000)
}

// ChannelOf is the channel the alert named (Silence, Activity, Heard)
// signals.
func ChannelOf(rec Record, alert string) string { return rec.Channel + "-" + alert }

// ErrHooksInTheWay is Arm's refusal where a hook of ours would silence the
// user's own: global hooks that a session array of ours would hide,
// or a hook of someone else's at our index.
var ErrHooksInTheWay = errors.New("muxwake: hooks of the user's are in the way")

// Arm sets the session's hooks that signal the watcher's channels (the
// alerts', and the clients' comings and goings) and makes its
// silence-action and activity-action any, since tmux reports the
// session's current window to no hook otherwise; no alert is armed yet
// (StepArgs arms them). save receives the record before anything is
// changed; an error from it changes nothing.
func Arm(ctx context.Context, run Runner, s Spot, channel string, index, silence int, save func(Record) error) (Record, error) {
	rec := Record{Spot: s, Channel: channel, Index: index, SilenceS: silence, Prior: map[string]string{}, OwnHooks: map[string]bool{},
		ArmedAt: time.Now().UTC().Truncate(time.Second)}
	// One call asks every question, each answer ended by a line of
	// answerEnd: a multiplexer call costs a client's start (or, on an ssh
	// host, a round trip), and the listener's start is most of its cost.
	out, err := run(ctx, rec.priorQuery()...)
	if err != nil {
		return rec, fmt.Errorf("muxwake: arm: %w", err)
	}
	answers := strings.Split(out, answerEnd+"\n")
	if len(answers) != len(options)+2*len(hooks)+2 || answers[len(answers)-1] != "" {
		return rec, fmt.Errorf("muxwake: arm: the server's answer is not one to the questions asked: %.60q", out)
	}
	for i, o := range options {
		v := strings.TrimSpace(answers[i])
		if !optionValue(v) {
			return rec, fmt.Errorf("muxwake: arm: the server's %s is not a value: %.40q", name(o), v)
		}
		rec.Prior[o] = v
	}
	for i, h := range hooks {
		own, global := answers[len(options)+2*i], answers[len(options)+2*i+1]
		rec.OwnHooks[h] = strings.TrimSpace(own) != ""
		if strings.Contains(own, fmt.Sprintf("%s[%d]", h, index)) {
			return rec, fmt.Errorf("%w: the session's %s[%d] is taken", ErrHooksInTheWay, h, index)
		}
		// The global hooks matter only where the session has no array
		// of its own, which would hide them.
		if !rec.OwnHooks[h] && strings.Contains(global, h+"[") { // an empty array is printed as its bare name
			return rec, fmt.Errorf("%w: global %s ones, which a session hook would hide", ErrHooksInTheWay, h)
		}
	}
	if strings.Contains(answers[len(answers)-2], hookName(rec, linkedHook)) {
		return rec, fmt.Errorf("%w: the global %s is taken", ErrHooksInTheWay, hookName(rec, linkedHook))
	}
	rec.Linked = true
	if err := save(rec); err != nil {
		return rec, fmt.Errorf("muxwake: arm: %w", err)
	}
	if _, err := run(ctx, ArmArgs(rec)...); err != nil {
		return rec, fmt.Errorf("muxwake: arm: %w", err)
	}
	return rec, nil
}

// answerEnd ends each answer of priorQuery's, a line no answer to its
// questions holds.
const answerEnd = "omega-monitor-wake: end of answer"

// priorQuery is the one multiplexer call that asks what Arm changes: each
// option's own value, then each hook's session array and global one, then
// the global linkedHook's, each answer ended by a line of answerEnd.
func (rec Record) priorQuery() []string {
	var args []string
	ask := func(q ...string) {
		args = append(args, q...)
		args = append(args, ";", "display-message", "-p", answerEnd, ";")
	}
	for _, o := range options {
		ask(slices.Concat([]string{"show-options", "-qv"}, rec.scoped(o), []string{name(o)})...)
	}
	for _, h := range hooks {
		ask("show-hooks", "-t", rec.Session, h)
		ask("show-hooks", "-g", h)
	}
	ask("show-hooks", "-g", linkedHook)
	return args[:len(args)-1]
}

// scoped is the flags that name option o's window or session.
func (rec Record) scoped(o string) []string {
	if strings.HasPrefix(o, "w:") {
		return []string{"-w", "-t", rec.Window}
	}
	return []string{"-t", rec.Session}
}

func name(o string) string { return o[2:] }

// optionValue says whether v reads as one of the values show-options gives
// for the options Arm sets: a word, or nothing.
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

// ArmArgs is the one multiplexer call that sets rec's hooks and actions,
// no alert armed (HushArgs).
func ArmArgs(rec Record) []string {
	args := slices.Concat(HushArgs(rec), []string{";",
		"set-option", "-t", rec.Session, "silence-action", "any", ";",
		"set-option", "-t", rec.Session, "activity-action", "any",
	})
	for _, h := range hooks {
		cmd := "wait-for -S " + ChannelOf(rec, channelOfHook(h))
		if h == "client-attached" || h == "client-session-changed" {
			// A client comes: the alerts are held by the server at
			// once, before the pane redraws for its size, and the
			// listener, told, asks who hears.
			cmd = hold(rec) + " ; " + cmd
		}
		args = append(args, ";", "set-hook", "-t", rec.Session, hookName(rec, h), cmd)
	}
	if rec.Linked {
		args = append(args, ";", "set-hook", "-g", hookName(rec, linkedHook), hold(rec)+" ; wait-for -S "+ChannelOf(rec, Heard))
	}
	return args
}

// set is the command string that sets rec's window's monitor-silence and
// monitor-activity and clears the session's alerts. The ids are quoted:
// tmux would read $N as a variable of its environment.
func set(rec Record, silence int, activity string) string {
	return fmt.Sprintf("set-option -w -t '%s' monitor-silence %d ; set-option -w -t '%s' monitor-activity %s ; kill-session -C -t '%s'",
		rec.Window, silence, rec.Window, activity, rec.Session)
}

// hold is the command string that arms neither alert (HushArgs).
func hold(rec Record) string { return set(rec, 0, "off") }

// nobodyHears is tmux's condition, on the watched pane, that no client can
// hear an alert of its window: none attached to its session, and the
// window linked in no other session (whose clients tmux tells as well).
const nobodyHears = "#{&&:#{==:#{session_attached},0},#{==:#{window_linked_sessions},1}}"

// hearers is what StepArgs prints after its step: the clients attached to
// the pane's session, and the sessions its window is linked in.
const hearers = "#{session_attached} #{window_linked_sessions}"

// StepArgs is the one multiplexer call that arms alert (Silence: the
// pane's next silence; Activity: its next output) where nobody can hear
// it, and holds both (HushArgs) where someone can, deciding on the server
// at once; the session's alerts are cleared either way, so that one seen
// before neither holds the next back nor shows in a status line. It
// prints hearers, which Hears reads.
func StepArgs(rec Record, alert string) []string {
	arm := set(rec, rec.SilenceS, "off")
	if alert == Activity {
		arm = set(rec, 0, "on")
	}
	return []string{
		"if-shell", "-F", "-t", rec.Pane, nobodyHears, arm, hold(rec), ";",
		"display-message", "-p", "-t", rec.Pane, hearers,
	}
}

// Hears reads StepArgs' answer: whether someone can hear the alerts, so
// that the step held them. An answer that is not one says so, and reads
// as heard: the listener asks again later.
func Hears(out string) (bool, error) {
	f := strings.Fields(out)
	if len(f) != 2 || len(out) > 40 {
		return true, fmt.Errorf("muxwake: not an answer to who hears: %.40q", out)
	}
	attached, err1 := strconv.Atoi(f[0])
	linked, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil {
		return true, fmt.Errorf("muxwake: not an answer to who hears: %.40q", out)
	}
	return attached != 0 || linked != 1, nil
}

// HushArgs arms neither alert, and clears the session's: while someone
// can hear them, or while the wakes' budget is spent.
func HushArgs(rec Record) []string {
	return []string{
		"set-option", "-w", "-t", rec.Window, "monitor-silence", "0", ";",
		"set-option", "-w", "-t", rec.Window, "monitor-activity", "off", ";",
		"kill-session", "-C", "-t", rec.Session,
	}
}

func hookName(rec Record, h string) string { return fmt.Sprintf("%s[%d]", h, rec.Index) }

// DisarmCalls are the multiplexer calls that put back what rec changed,
// one a call: one that fails (the window or the session is gone, and its
// options with it) does not keep the others from running.
func DisarmCalls(rec Record) [][]string {
	var calls [][]string
	for _, o := range options {
		if v := rec.Prior[o]; v == "" {
			calls = append(calls, slices.Concat([]string{"set-option", "-u"}, rec.scoped(o), []string{name(o)}))
		} else {
			calls = append(calls, slices.Concat([]string{"set-option"}, rec.scoped(o), []string{name(o), v}))
		}
	}
	for _, h := range hooks {
		own, set := rec.OwnHooks[h]
		switch {
		case !set:
		case own:
			calls = append(calls, []string{"set-hook", "-u", "-t", rec.Session, hookName(rec, h)})
		default:
			calls = append(calls, []string{"set-hook", "-u", "-t", rec.Session, h})
		}
	}
	if rec.Linked {
		calls = append(calls, []string{"set-hook", "-gu", hookName(rec, linkedHook)})
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
	if !spotRE().MatchString(rec.Pane+" "+rec.Window+" "+rec.Session) ||
		len(rec.Channel) != len(ch) || !strings.HasPrefix(rec.Channel, "omega-monitor-wake-") ||
		rec.Index < 1000 || rec.Index >= 10000 {
		return false
	}
	for o, v := range rec.Prior {
		if !slices.Contains(options, o) || !optionValue(v) {
			return false
		}
	}
	for h := range rec.OwnHooks {
		if !slices.Contains(hooks, h) {
			return false
		}
	}
	return true
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
