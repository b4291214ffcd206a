package render

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/omega-monitor/omega-monitor/internal/board"
	"github.com/omega-monitor/omega-monitor/internal/printable"
)

// The phone forms: the board as a chat message (the relay's /status),
// plain text in lines a phone shows whole, under a chat's message bound.
// Whatever a pane or a directory put in a name or a line is made
// printable here; the sender adds no markup, so none of it is read as any.
const (
	// PhoneWidth is the widest line of the fleet's phone form, in cells:
	// about what a phone's chat shows without wrapping.
	PhoneWidth = 40
	// PhoneLimit bounds a phone form's whole text, in UTF-16 code units as
	// Telegram counts a message's (its bound is 4096): a form that would
	// pass it is clipped, with a note, never sent as several messages.
	PhoneLimit = 4000
	// phoneName is the most cells a watcher's name takes in its line: its
	// state and time must fit beside it.
	phoneName = 18
	// PhoneLines is how many log lines a watcher's phone form shows.
	PhoneLines = 8
	// phoneLogLine and phoneExplain bound a log line (in cells) and the
	// explanation (in code units): the explanation must leave room for
	// the lines, and a line for the others.
	phoneLogLine = 400
	phoneExplain = 1200
	// PhoneHint ends the fleet's phone form: how to ask for more.
	PhoneHint = "/status NAME: its last lines and why"
)

// Phone is the fleet in lines of at most PhoneWidth cells, for a chat:
// what needs a human counted, the watchers counted by liveness, then one
// line a watcher, those needing a human first (in the census's order
// within each group), and the hint. It is at most PhoneLimit code units:
// the watchers that do not fit are counted in a last line.
func Phone(f board.Fleet) string {
	s := f.Fleet
	head := pack([]string{NeedsLine(s), WatchersText(s)}, " · ", PhoneWidth)
	if f.Degraded {
		head = append(head, wrapWords(fmt.Sprintf("degraded: %s could not be read (omega-monitor status says which)", plural(len(f.Errors), "part")), PhoneWidth)...)
	}
	// A host that could not be read says so: its watchers are missing
	// from the lines below, and the phone must not read that as fine.
	for _, h := range f.Hosts {
		if h.Degraded {
			head = append(head, wrapWords("host "+printableCell(h.Name)+": "+printableCell(h.Reason), PhoneWidth)...)
		}
	}
	var needing, rest []string
	for _, w := range f.Watchers {
		if w.NeedsHuman != "" {
			needing = append(needing, phoneLine(w))
		} else {
			rest = append(rest, phoneLine(w))
		}
	}
	rows := append(needing, rest...)
	var tail []string
	switch {
	case len(f.Watchers) == 0 && !f.Degraded:
		tail = wrapWords("no watchers here: start one with omega-monitor SESSION", PhoneWidth)
	case s.Running == 0:
		tail = wrapWords(noneLive(f), PhoneWidth)
	}
	tail = append(tail, PhoneHint)

	text := strings.Join(head, "\n") + "\n"
	if len(rows) > 0 {
		text += "\n"
	}
	end := "\n" + strings.Join(tail, "\n") + "\n"
	used := units(text) + units(end)
	for i, r := range rows {
		more := fmt.Sprintf("… and %d more (omega-monitor status)\n", len(rows)-i)
		if used+units(r)+1+units(more) > PhoneLimit {
			text += more
			break
		}
		text += r + "\n"
		used += units(r) + 1
	}
	return text + end
}

// The marks that start a watcher's line in the fleet's phone form: what
// it needs a human for, as the tmux segment marks it, else whether its
// loop runs.
var (
	needsMarks    = map[string]string{board.NeedsQuestion: "✋", board.NeedsBlocked: "⛔", board.NeedsBudgetExhausted: "⌛"}
	livenessMarks = map[string]string{board.Live: "●", board.Quiet: "●", board.Stale: "✗"}
)

// phoneLine is one watcher in at most PhoneWidth cells: a mark (what it
// needs a human for, else its liveness), its name, its liveness when not
// live, its state and for how long.
func phoneLine(w board.Watcher) string {
	mark := needsMarks[w.NeedsHuman]
	if mark == "" {
		mark = livenessMarks[w.Liveness]
	}
	if mark == "" {
		mark = "○" // gone, or a liveness this form does not know
	}
	name := Truncate(PhoneName(w), phoneName)
	if w.Liveness != board.Live {
		name += " [" + w.Liveness + "]"
	}
	state := orUnknown(w.State)
	if w.StateSince != nil {
		state += " " + shortAge(time.Duration(w.StateForS)*time.Second)
	}
	line := mark + " " + name + " · " + state
	// A stall no nudge ends says which, where the line has room: the
	// mark says a human is needed either way.
	if long := line + ", " + needsWord(w); w.NeedsHuman == board.NeedsBudgetExhausted && Width(long) <= PhoneWidth {
		return long
	}
	return Truncate(line, PhoneWidth)
}

// PhoneName is how the phone forms name a watcher, and what /status NAME
// takes: its target, as the operator typed it, or its directory's name
// when no target is recorded; one printable line.
func PhoneName(w board.Watcher) string {
	name := printableCell(w.Target)
	if name == "" {
		name = printableCell(w.Name)
	}
	// Another host's watcher is named as the board names it: HOST/TARGET.
	if h := printableCell(w.Host); h != "" {
		return h + "/" + name
	}
	return name
}

// PhoneWatcher is one watcher for a chat: its name, its state and for how
// long, its loop's liveness and why, what it needs a human for, its
// probes; then why it reads so (the explanation of its last verdict), and
// the last lines of its log, lines (oldest first). It is at most
// PhoneLimit code units: the explanation is cut past its own bound, and
// the oldest lines go first, with a note saying how many.
func PhoneWatcher(w board.Watcher, lines []string) string {
	var b strings.Builder
	add := func(s string) { b.WriteString(s + "\n") }
	name := PhoneName(w)
	if printableCell(w.Name) != name {
		name += " (" + printableCell(w.Name) + ")"
	}
	add(Truncate(name, 2*PhoneWidth))
	state := orUnknown(w.State)
	if w.StateSince != nil {
		state += " for " + shortAge(time.Duration(w.StateForS)*time.Second)
	}
	if w.State != "" || w.StateSince != nil {
		state += fmt.Sprintf(" · nudges %d/%d", w.Nudges.Used, w.Nudges.Limit)
	}
	add(state)
	add(Truncate(w.Liveness+": "+printableCell(w.LivenessReason), 3*PhoneWidth))
	if n := needsWord(w); n != "" {
		add("needs you: " + n)
	}
	var probes []string
	for _, p := range []struct{ what, v string }{{"agent", w.Agent}, {"work", w.Work}, {"progress", w.Progress}} {
		if v := printableCell(p.v); v != "" {
			probes = append(probes, p.what+" "+Truncate(v, 20))
		}
	}
	if len(probes) > 0 {
		add(strings.Join(probes, " · "))
	}
	for _, e := range w.Errors {
		add(Truncate("unreadable: "+printableCell(e), 2*PhoneWidth))
	}

	add("")
	add("why it reads so:")
	why := strings.TrimRight(printable.String(w.Explain), "\n ")
	if why == "" {
		why = "no explanation recorded yet (it comes with the next verdict)"
	}
	if units(why) > phoneExplain {
		why = clipUnits(why, phoneExplain-1) + "…"
	}
	add(why)

	add("")
	shown := make([]string, len(lines))
	for i, l := range lines {
		shown[i] = Truncate(printableCell(l), phoneLogLine)
	}
	if len(shown) > PhoneLines {
		shown = shown[len(shown)-PhoneLines:]
	}
	if len(shown) == 0 {
		add("its log: no lines yet")
		return b.String()
	}
	heading := func(n int) string { return fmt.Sprintf("its last %s:", plural(n, "log line")) }
	note := func(n int) string {
		return fmt.Sprintf("(%s before them left out: too long for one message; omega-monitor logs shows them)", plural(n, "line"))
	}
	// The newest lines that fit, with room for the heading and the note
	// at their longest.
	room := PhoneLimit - units(b.String()) - units(heading(len(shown))) - units(note(len(shown))) - 2
	first := len(shown)
	for first > 0 && units(shown[first-1])+1 <= room {
		room -= units(shown[first-1]) + 1
		first--
	}
	add(heading(len(shown) - first))
	if first > 0 {
		add(note(first))
	}
	for _, l := range shown[first:] {
		add(l)
	}
	return b.String()
}

// shortAge is a duration in the fewest characters that still tell it:
// 45s, 3m, 2h05m, 3d.
func shortAge(d time.Duration) string {
	s := int64(max(d, 0) / time.Second)
	switch {
	case s < 60:
		return strconv.FormatInt(s, 10) + "s"
	case s < 3600:
		return strconv.FormatInt(s/60, 10) + "m"
	case s < 48*3600:
		return fmt.Sprintf("%dh%02dm", s/3600, s/60%60)
	}
	return strconv.FormatInt(s/86400, 10) + "d"
}

// units is the length of s in UTF-16 code units, as Telegram counts it.
func units(s string) int {
	n := 0
	for _, r := range s {
		n += max(utf16.RuneLen(r), 1)
	}
	return n
}

// clipUnits is the longest start of s of at most limit code units.
func clipUnits(s string, limit int) string {
	n := 0
	for i, r := range s {
		n += max(utf16.RuneLen(r), 1)
		if n > limit {
			return s[:i]
		}
	}
	return s
}
