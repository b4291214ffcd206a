package poll

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/statedir/event"
)

// limitPane is Claude Code stopped by its 5-hour limit, which resets in
// t0's next minutes.
const limitPane = "⏺ Working.\n  ⎿  You've hit your 5-hour limit · resets 9:02am (UTC)\n\n" +
	"────────────────────────────────────────\n❯ \n────────────────────────────────────────\n  ? for shortcuts\n"

// TestTheResumeIsToldOnceTyped: past a usage limit's reset the poll hands
// the resume over and holds both its line and the resume notice: neither
// says "nudged" before the loop typed it. A resume the check before typing
// refused tells nothing, gives the resume back (the next poll resumes
// again, rather than holding to tomorrow), and the resume that is typed is
// told once. The page and the notice go through the limit's group (one
// pane here: its page is its own alert).
func TestTheResumeIsToldOnceTyped(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "w")
	d := statedir.Dir(dir)
	poll := func(at time.Duration) string {
		t.Helper()
		line, err := Tick(Request{Dir: dir, Settings: answering(false), Readings: workOf7, Now: t0.Add(at), Capture: asAgent(t, limitPane, t0.Add(at))},
			strings.NewReader(limitPane))
		if err != nil {
			t.Fatal(err)
		}
		return line
	}
	poll(-3 * time.Second)
	if line := poll(0); !strings.Contains(line, "not nudged: usage limit, resets 09:02 UTC") || !strings.Contains(line, "operator told") {
		t.Fatalf("before the reset: %s", line)
	}
	poll(time.Minute + 5*time.Second) // the group's window over: its page is made
	paged := told(t, dir)
	if !strings.Contains(paged, "usage limit") {
		t.Fatalf("the limit not paged: %q", paged)
	}
	action := d.Path(filepath.Join(statedir.Actions, "001.nudge"))

	resumed := func(at time.Duration) {
		t.Helper()
		if line := poll(at); line != "" {
			t.Fatalf("past the reset, a line printed before the nudge was typed: %s", line)
		}
		p, err := stateDirectory(dir).readPending()
		if err != nil || p.Line == nil || p.Resumes == "" || len(p.Joins) != 1 {
			t.Fatalf("pending %+v, %v: want the held line, the limit resumed and its notice", p, err)
		}
		if text := told(t, dir); text != paged {
			t.Errorf("told before the resume was typed:\n%s", strings.TrimPrefix(text, paged))
		}
	}
	resumed(4 * time.Minute)
	// A dialog came up: the check before typing refuses.
	line := Ack(dir, "agent", action, event.NudgeNotTyped, "a dialog is live (test)", t0.Add(4*time.Minute))
	if want := "MONITOR · agent · STALLED · work=7 · progress=? · nudge not typed: a dialog is live (test)"; !strings.HasPrefix(line, want) {
		t.Errorf("refused: %q, want it to start %q", line, want)
	}
	if text := told(t, dir); text != paged {
		t.Errorf("a resume not typed was told:\n%s", strings.TrimPrefix(text, paged))
	}
	if s, _, err := stateDirectory(dir).loadState(t0, 5, false); err != nil || !strings.HasSuffix(s.Board.LastLine, "nudge not typed: a dialog is live (test)") {
		t.Errorf("the board's last line: %q (%v)", s.Board.LastLine, err)
	}
	// The next poll (past the spacing of nudges) resumes again.
	resumed(6 * time.Minute)
	line = Ack(dir, "agent", action, event.NudgeTyped, "", t0.Add(6*time.Minute))
	if want := "MONITOR · agent · STALLED · work=7 · progress=? · nudged (1/5)"; !strings.HasPrefix(line, want) {
		t.Errorf("typed: %q, want it to start %q", line, want)
	}
	poll(8 * time.Minute) // the group's window over: the notice is made
	text := told(t, dir)
	if told := strings.TrimPrefix(text, paged); strings.Count(told, "usage limit has reset") != 1 {
		t.Errorf("the resume typed told %d times:\n%s", strings.Count(told, "usage limit has reset"), told)
	}
	log, err := os.ReadFile(d.Path(statedir.Log))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(log), "nudged ("); n != 1 {
		t.Errorf("monitor.log says nudged %d times, want once:\n%s", n, log)
	}
	if !strings.Contains(string(log), "nudge not typed: a dialog is live (test)") {
		t.Errorf("monitor.log does not say the refusal:\n%s", log)
	}
}

// told is what a watcher's alerts say, in its own outbox and in the pages
// of its groups, in the order made.
func told(t *testing.T, dir string) string {
	t.Helper()
	text, _ := queued(t, statedir.Dir(dir))
	pages, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), statedir.Groups, "*", "pages", "[0-9]*"))
	slices.SortFunc(pages, func(a, b string) int { return strings.Compare(filepath.Base(a)+a, filepath.Base(b)+b) })
	for _, p := range pages {
		page, _ := queued(t, statedir.Dir(p))
		text += page
	}
	return text
}
