package probe

import (
	"fmt"
	"time"
)

// Humans is what the multiplexer says of the humans at the watched pane:
// how many clients show its window, and how long ago one of them last had
// input (a key, a mouse event, its attach), by the multiplexer's own clock,
// so that a host whose clock differs from this machine's reads the same.
//
// Measured on tmux (capture's tests): a client's keys move its
// client_activity and its session's session_activity, and nothing else
// does but an attach; our own send-keys and paste-buffer are no client's
// input and move neither; the agent's output, our typing's echo among it,
// moves only window_activity, which is therefore never read.
//
// The zero value is "not asked" (a bare pane, a replay): no rule applies and
// nothing is said.
type Humans struct {
	// Known says the multiplexer said; Unknown says why it could not (a
	// multiplexer that does not fill the formats). Then nothing is held
	// for a human, and the line says so once.
	Known   bool
	Unknown string
	// Clients counts the clients that show the pane's window, read-only
	// ones too: they are counted by session, and their keys move the same
	// clock.
	Clients int
	// Idle is how long since the last input at one of them.
	Idle time.Duration
}

// KeyboardQuiet is how long after a human's input at the agent no key of
// ours is typed, whatever the setting: a nudge pasted as an operator types
// lands in the middle of their message.
const KeyboardQuiet = 5 * time.Second

// At reports whether a human is at the agent: a client shows the pane's
// window and had input within idle (0: the rule is off).
func (h Humans) At(idle time.Duration) bool {
	return h.Known && h.Clients > 0 && idle > 0 && h.Idle < idle
}

// Typing reports whether a human's input reached the agent within
// KeyboardQuiet: no key of ours may go now.
func (h Humans) Typing() bool {
	return h.Known && h.Clients > 0 && h.Idle < KeyboardQuiet
}

// TypingReason says why no key of ours goes now; "" when none.
func (h Humans) TypingReason() string {
	if !h.Typing() {
		return ""
	}
	return "a human typed at the agent " + h.Ago()
}

// Ago is how long ago the last input was, in whole seconds as the
// multiplexer keeps them.
func (h Humans) Ago() string {
	d := h.Idle.Truncate(time.Second)
	if d < time.Minute {
		return fmt.Sprintf("%ds ago", int(d/time.Second))
	}
	return fmt.Sprintf("%dm%02ds ago", int(d/time.Minute), int(d%time.Minute/time.Second))
}
