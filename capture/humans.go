package capture

import (
	"strconv"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/tick"
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
func ReadHumans(line string, full bool) tick.Humans {
	unknown := func(why string) tick.Humans { return tick.Humans{Unknown: why} }
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
	case len(f) < 3:
		return unknown("the multiplexer does not list its sessions' clients (#{S:...}, #{session_attached})")
	case len(f)-2 > maxSessions:
		return unknown("the multiplexer lists more than " + strconv.Itoa(maxSessions) + " sessions")
	}
	window := f[1]
	h := tick.Humans{Known: true}
	var last int64
	for _, s := range f[2:] {
		n, rest, ok1 := strings.Cut(s, ":")
		at, win, ok2 := strings.Cut(rest, "@")
		clients, err := strconv.Atoi(n)
		t, ok3 := seconds(at)
		if !ok1 || !ok2 || err != nil || clients < 0 || clients > maxSessions || !ok3 || !windowID("@"+win) {
			return unknown("the multiplexer's line does not read as its format: " + strconv.Quote(cut(s, 40)))
		}
		if "@"+win != window || clients == 0 {
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
	return h
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
