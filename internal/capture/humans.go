package capture

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/probe"
)

// maxSessions bounds the sessions a multiplexer's line may list.
const maxSessions = 10000

// ReadHumans reads the multiplexer's line (MuxFormat, as printed): its
// clock now, the pane's window, then for every session the clients attached
// to it, its last activity and its current window. The clients of the
// sessions that show the pane's window are the humans who can see the
// agent and type into it (clients of one session share its window; a
// grouped session, or a window linked into another, is a session of its
// own here), and the latest activity of those sessions is their last
// input: tmux sets a session's activity from its client's on every key, and
// on an attach. full says the line was read whole.
//
// A line that does not read as the format (a multiplexer that leaves a
// format unexpanded or empty, a line cut at its cap) says the multiplexer
// cannot tell: nothing is guarded for a human, and the tick says so. Every
// session lists at least the watched one, so a line listing none is one
// the multiplexer did not fill, never "nobody".
func ReadHumans(line string, full bool) probe.Humans {
	h, _ := readMux(line, full)
	return h
}

// A PaneState is what the multiplexer's line says of the pane as it was
// captured, for the condition every key of ours is sent on (KeyCondition):
// a key goes only while the pane is still as the last check saw it.
type PaneState struct {
	// PID is the pane's own process (the shell, or the program the pane
	// runs), where the pane's foreground process group is looked for.
	PID int
	// Token is the cursor's column and row, the pane's width and height
	// and whether it is in a mode (copy mode: a key would go to the mode),
	// joined by dots as the multiplexer printed them.
	Token string
	// InMode says the pane is in a mode.
	InMode bool
	// Window is the pane's window; Activity the last activity of every
	// session that shows it, each followed by a colon, in the
	// multiplexer's order.
	Window, Activity string
}

// readMux reads the multiplexer's line: the humans, and the pane's state
// when the line carries it (a line of an older frame does not: its state
// is the zero value).
func readMux(line string, full bool) (probe.Humans, PaneState) {
	unknown := func(why string) (probe.Humans, PaneState) { return probe.Humans{Unknown: why}, PaneState{} }
	if !full {
		return unknown("the multiplexer's line passes " + strconv.Itoa(MaxMuxLine) + " bytes")
	}
	f := strings.Fields(strings.TrimPrefix(line, MuxMark))
	now, ok := seconds(first(f, 0))
	switch {
	case strings.Contains(line, "#{"):
		return unknown("the multiplexer leaves its formats unexpanded (#{...})")
	case !ok:
		return unknown("the multiplexer does not say its time (display-message %s)")
	case !windowID(first(f, 1)):
		return unknown("the multiplexer does not say the pane's window (#{window_id})")
	}
	window := f[1]
	var ps PaneState
	sessions := f[2:]
	if pid, ok := seconds(first(f, 2)); ok && paneToken(first(f, 3)) {
		ps = PaneState{PID: int(pid), Token: f[3], InMode: !strings.HasSuffix(f[3], ".0"), Window: window}
		sessions = f[4:]
	}
	switch {
	case len(sessions) == 0:
		return unknown("the multiplexer does not list its sessions' clients (#{S:...}, #{session_attached})")
	case len(sessions) > maxSessions:
		return unknown("the multiplexer lists more than " + strconv.Itoa(maxSessions) + " sessions")
	}
	h := probe.Humans{Known: true}
	var last int64
	var activity strings.Builder
	for _, s := range sessions {
		n, rest, ok1 := strings.Cut(s, ":")
		at, win, ok2 := strings.Cut(rest, "@")
		clients, err := strconv.Atoi(n)
		t, ok3 := seconds(at)
		if !ok1 || !ok2 || err != nil || clients < 0 || clients > maxSessions || !ok3 || !windowID("@"+win) {
			return unknown("the multiplexer's line does not read as its format: " + strconv.Quote(cut(s, 40)))
		}
		if "@"+win != window {
			continue
		}
		activity.WriteString(at + ":")
		if clients == 0 {
			continue
		}
		h.Clients += clients
		last = max(last, t)
	}
	if h.Clients > 0 {
		// An activity after the clock's now (a clock set back) is
		// input now.
		h.Idle = time.Duration(max(now-last, 0)) * time.Second
	}
	if ps.Token != "" {
		ps.Activity = activity.String()
	}
	return h, ps
}

// paneToken says whether s reads as the pane's state in MuxFormat: five
// numbers joined by dots, the last 0 or 1.
func paneToken(s string) bool {
	f := strings.Split(s, ".")
	if len(f) != 5 || (f[4] != "0" && f[4] != "1") {
		return false
	}
	for _, n := range f {
		if _, ok := seconds(n); !ok {
			return false
		}
	}
	return true
}

// keyFormat is what the multiplexer compares, in the command that sends a
// key of ours, with what the last check's capture said of the pane: the
// pane's state as MuxFormat prints it, and the activity of each session
// that shows window WINDOW. A human's key moves their session's activity
// (and, in the agent's box, the cursor); a resize, a mode or another client
// on the window changes the rest. %s is the window.
const keyFormat = "#{cursor_x}.#{cursor_y}.#{pane_width}.#{pane_height}.#{pane_in_mode}.#{S:#{?#{==:#{window_id},%s},#{session_activity}:,}}"

// KeyCondition is the condition, in the multiplexer's formats, that holds
// while the pane is as this capture saw it: the key it guards is sent in
// the same command only if it holds, so that a keystroke of anyone else's
// between the look and the key cancels ours. ok is false when the capture
// could not say (a bare pane, an older frame, a multiplexer that does not
// fill its formats).
func (c Capture) KeyCondition() (cond string, ok bool) {
	ps := c.PaneState
	if ps.Token == "" || !windowID(ps.Window) {
		return "", false
	}
	return "#{==:" + fmt.Sprintf(keyFormat, ps.Window) + "," + ps.Token + "." + ps.Activity + "}", true
}

// seconds reads a time in whole seconds since the epoch, as tmux prints it.
func seconds(s string) (int64, bool) {
	if s == "" || len(s) > 12 || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// windowID says whether s is a window's id: @ and digits.
func windowID(s string) bool {
	d, ok := strings.CutPrefix(s, "@")
	return ok && d != "" && len(d) <= 9 && strings.Trim(d, "0123456789") == ""
}

func cut(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// first is f[i], or "" past its end.
func first(f []string, i int) string {
	if i < len(f) {
		return f[i]
	}
	return ""
}
