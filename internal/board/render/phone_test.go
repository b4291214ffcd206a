package render

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/golden"

	"github.com/omega-monitor/omega-monitor/internal/board"
)

// noWideLine fails for a line of text wider than width cells.
func noWideLine(t *testing.T, text string, width int) {
	t.Helper()
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if Width(l) > width {
			t.Errorf("a line wider than %d cells: %q", width, l)
		}
	}
}

// The fleet's phone form: counts first, then the watchers needing a human,
// then the rest, no line wider than a phone.
func TestPhoneGolden(t *testing.T) {
	f := longFleet(t)
	// longFleet's watcher more, counted.
	f.Fleet.Watchers++
	f.Fleet.Live++
	f.Fleet.Running++
	f.Fleet.BudgetsExhausted++
	f.Fleet.NeedsHuman++
	out := Phone(f)
	noWideLine(t, out, PhoneWidth)
	golden.Assert(t, out, "phone.golden")
}

func TestPhoneEmptyAndStopped(t *testing.T) {
	for _, tt := range []struct {
		name string
		f    board.Fleet
		want string
	}{
		{"no watchers", board.Fleet{Root: "/home/op/.omega/monitor"},
			"needs you: nothing · 0 watchers\n\nno watchers here: start one with\nomega-monitor SESSION\n" + PhoneHint + "\n"},
		{"stopped only", board.Fleet{Watchers: []board.Watcher{{Name: "monitor-a", Target: "a", Liveness: board.Gone}},
			Fleet: board.Summary{Watchers: 1, Gone: 1}},
			"needs you: nothing · 1 watcher: 1 gone\n\n○ a [gone] · ?\n\n" + NoLiveWatchers + "\n" + PhoneHint + "\n"},
		{"another host's watcher, and a host not read", board.Fleet{
			Watchers: []board.Watcher{{Name: "monitor-a", Target: "a", Host: "gpu1", Liveness: board.Live, State: "WORKING"}},
			Hosts: []board.Host{{Name: "gpu1", Reachable: true, Watchers: 1},
				{Name: "build2", Degraded: true, Reason: "unreachable: \x1b[31mssh: connect refused"}},
			Fleet: board.Summary{Watchers: 1, Live: 1, Running: 1}},
			"needs you: nothing · 1 watcher: 1 live\nhost build2: unreachable: ssh: connect\nrefused\n\n● gpu1/a · WORKING\n\n" + PhoneHint + "\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Phone(tt.f)); diff != "" {
				t.Errorf("phone form (-want +got):\n%s", diff)
			}
		})
	}
}

// hostile is a watcher whose every text came from a hostile pane or
// directory: escape sequences, markup, a newline, bidi overrides.
func hostile() board.Watcher {
	since := now.Add(-5 * time.Minute)
	return board.Watcher{
		Name: "monitor-<b>x</b>", Target: "<a href=\"tg://x\">tap</a>\x1b]0;title\x07\n&amp;\u202e",
		Liveness: board.Live, LivenessReason: "pid 1 runs\x1b[2J", State: "STALLED", StateSince: &since, StateForS: 300,
		Agent: "<i>claude</i>", Explain: "STALLED: <b>bold</b>\x1b[31m red\x1b[0m\n  evidence: &lt;x&gt;",
	}
}

// TestPhoneHostileTextIsInert: no escape sequence, control character or
// line break of a name or a line reaches the phone forms; markup is kept
// as the characters it is (the relay sends plain text).
func TestPhoneHostileTextIsInert(t *testing.T) {
	w := hostile()
	f := board.Fleet{Watchers: []board.Watcher{w}, Fleet: board.Summary{Watchers: 1, Live: 1, Running: 1}}
	for name, out := range map[string]string{
		"fleet":   Phone(f),
		"watcher": PhoneWatcher(w, []string{"MONITOR · <b>x</b> · STALLED\x1b[1A\r", "\x1b]52;c;cHduZWQ=\x07copied"}),
	} {
		t.Run(name, func(t *testing.T) {
			if strings.ContainsAny(out, "\x1b\x07\r\u202e") {
				t.Errorf("a control or reordering character reached the form: %q", out)
			}
			if strings.Contains(out, "tap</a>\n") || strings.Contains(out, "\n&amp;") {
				t.Errorf("a name's newline reached the form: %q", out)
			}
			if !strings.Contains(out, `<a href="tg://x">`) {
				t.Errorf("the name's markup is not kept as characters: %q", out)
			}
		})
	}
	noWideLine(t, Phone(f), PhoneWidth)
}

// TestPhoneBounded: a fleet of hundreds of watchers, and a watcher whose
// log lines and explanation are huge (or of characters Telegram counts
// twice), stay under PhoneLimit, with a note of what was left out.
func TestPhoneBounded(t *testing.T) {
	var f board.Fleet
	for i := range 500 {
		w := board.Watcher{Name: fmt.Sprintf("monitor-w%03d", i), Target: fmt.Sprintf("w%03d-%s", i, strings.Repeat("😀", 30)), Liveness: board.Live, State: "WORKING"}
		if i == 499 {
			w.State, w.NeedsHuman = "QUESTION", board.NeedsQuestion
		}
		f.Watchers = append(f.Watchers, w)
	}
	f.Fleet = board.Summary{Watchers: 500, Live: 500, Running: 500, Questions: 1, NeedsHuman: 1}
	out := Phone(f)
	if n := units(out); n > PhoneLimit {
		t.Errorf("the fleet's form is %d code units, more than %d", n, PhoneLimit)
	}
	if !strings.Contains(out, "more (omega-monitor status)") || !strings.HasSuffix(out, PhoneHint+"\n") {
		t.Errorf("the clipped fleet does not say so, or lost its hint:\n%s", out)
	}
	if !strings.Contains(out, "✋ w499") {
		t.Errorf("the watcher needing a human is not kept first:\n%s", out)
	}
	noWideLine(t, out, PhoneWidth)

	w := hostile()
	w.Explain = strings.Repeat("𝔵", 5000)
	var lines []string
	for i := range 20 {
		lines = append(lines, fmt.Sprintf("MONITOR %02d %s", i, strings.Repeat("y", 5000)))
	}
	one := PhoneWatcher(w, lines)
	if n := units(one); n > PhoneLimit {
		t.Errorf("the watcher's form is %d code units, more than %d", n, PhoneLimit)
	}
	if !strings.Contains(one, "before them left out: too long for one message") || !strings.Contains(one, "MONITOR 19 ") {
		t.Errorf("the clipped log does not say so, or lost its newest line:\n%s", one)
	}
}

// One watcher's phone form, from the census of the golden fleet.
func TestPhoneWatcherGolden(t *testing.T) {
	f := fleet(t)
	var api board.Watcher
	for _, w := range f.Watchers {
		if w.Name == "monitor-api" {
			api = w
		}
	}
	out := PhoneWatcher(api, []string{
		"MONITOR · api · WORKING · work=7 · progress=41 · nudges 0/5 · 14:15:02",
		"MONITOR · api · QUESTION · escalated to the operator, NOT answered",
	})
	golden.Assert(t, out, "phone-api.golden")
	if diff := cmp.Diff("its log: no lines yet", lastLine(PhoneWatcher(api, nil))); diff != "" {
		t.Errorf("no lines (-want +got):\n%s", diff)
	}
}

func lastLine(s string) string {
	l := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	return l[len(l)-1]
}

func TestShortAge(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Second: "0s", 45 * time.Second: "45s", 3*time.Minute + 59*time.Second: "3m",
		2*time.Hour + 5*time.Minute: "2h05m", 47 * time.Hour: "47h00m", 72 * time.Hour: "3d",
	} {
		if got := shortAge(d); got != want {
			t.Errorf("shortAge(%v) = %q, want %q", d, got, want)
		}
	}
}

// FuzzPhoneWatcher: whatever a watcher's name, explanation and lines hold,
// its phone form is under PhoneLimit and carries no escape.
func FuzzPhoneWatcher(f *testing.F) {
	f.Add("monitor-a", "a", "QUESTION: a live dialog", "MONITOR · a · WORKING", 3)
	f.Add("<b>", "\x1b]0;x\x07", strings.Repeat("𝔵", 3000), strings.Repeat("😀", 900), 40)
	f.Fuzz(func(t *testing.T, name, target, explain, line string, n int) {
		n = min(max(n, 0), 64)
		lines := make([]string, n)
		for i := range lines {
			lines[i] = line
		}
		w := board.Watcher{Name: name, Target: target, Liveness: board.Live, LivenessReason: explain, Explain: explain}
		out := PhoneWatcher(w, lines)
		if u := units(out); u > PhoneLimit {
			t.Errorf("%d code units", u)
		}
		if strings.ContainsRune(out, '\x1b') {
			t.Errorf("an escape reached the form")
		}
		f := board.Fleet{Watchers: []board.Watcher{w, w, w}}
		if u := units(Phone(f)); u > PhoneLimit {
			t.Errorf("the fleet: %d code units", u)
		}
	})
}
