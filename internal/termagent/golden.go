package termagent

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/expect"
	"github.com/omega-monitor/omega-monitor/probe"
)

// CaptureFlag turns a package's tour into a capture run: go test
// ./internal/codex -run TestCaptureGolden -capture.
var CaptureFlag = flag.Bool("capture", false, "drive the real program through its tour and rewrite its golden captures")

// MinCases is how many captures a real program's golden directory must
// hold.
const MinCases = 40

// CheckGolden classifies every capture in dir and fails, with the
// classifier's explanation, where it disagrees with what the harness made
// the program do.
func CheckGolden(t *testing.T, dir, program string) {
	t.Helper()
	panes, err := filepath.Glob(filepath.Join(dir, "*.pane"))
	if err != nil {
		t.Fatal(err)
	}
	if len(panes) < MinCases {
		t.Errorf("%s holds %d captures of the real %s; it must hold at least %d (go test -run TestCaptureGolden -capture)", dir, len(panes), program, MinCases)
	}
	for _, p := range panes {
		name := strings.TrimSuffix(filepath.Base(p), ".pane")
		t.Run(name, func(t *testing.T) {
			w, err := expect.Read(strings.TrimSuffix(p, ".pane") + ".want")
			if err != nil {
				t.Fatal(err)
			}
			pane, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			r := classify.Classify(classify.ParseScreen(pane), classify.Options{Work: classify.WorkReading(probe.Read(w.Work, w.HasWork)), WorkPresent: w.HasWork})
			if got := r.State.String(); got != w.State || string(r.Hold) != w.Hold {
				t.Errorf("%s: the harness made %s %s do %q, so want %s hold %q; the classifier says %s hold %q\nwhy this case exists: %s\nthe classifier's explanation:\n%s",
					name, program, w.Version, w.Status, w.State, w.Hold, got, r.Hold, w.Why, r.Explain())
			}
		})
	}
}

// A Step is one moment of a tour: what the harness makes the program do,
// what the screen must show once it did, and what that moment means.
type Step struct {
	// Name names the capture; empty takes none.
	Name string
	// Widths limits the step to some pane widths; nil means all.
	Widths []int
	// Act drives the session into the moment.
	Act func(t *testing.T, s *Session)
	// Check says the moment is on the screen.
	Check func(screen string) bool
	// Moving says the screen changes while the moment lasts (a stream):
	// it is captured as soon as Check holds, not once it is still.
	Moving bool
	// State is what the moment means; Hold and EHold the holds of the -p
	// and -e captures of a stopped screen.
	State       classify.State
	Hold, EHold classify.Hold
	// Label says what the harness made the program do, in a few words.
	Label, Why string
}

// StepTimeout bounds how long one moment may take to show.
const StepTimeout = 100 * time.Second

// Tour drives the session through steps and writes each moment into dir as
// NAME.pane (capture-pane -p -J) and NAME.e.pane (with -e), with its .want.
func Tour(t *testing.T, s *Session, dir, prefix, program, version string, steps []Step) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, st := range steps {
		if st.Widths != nil && !hasInt(st.Widths, s.Launch.Width) {
			continue
		}
		if st.Act != nil {
			st.Act(t, s)
		}
		if st.Name == "" {
			continue
		}
		check := st.Check
		if check == nil {
			check = func(string) bool { return true }
		}
		snap := s.Settle(t, StepTimeout, st.Name, !st.Moving, check)
		for _, c := range []struct {
			suffix, pane, how string
			hold              classify.Hold
		}{
			{"", snap.Plain, "capture-pane -p -J", st.Hold},
			{".e", snap.Escapes, "capture-pane -p -e -J", st.EHold},
		} {
			w := expect.Want{State: st.State.String(), Hold: string(c.hold), Status: st.Label, Version: version,
				Why: fmt.Sprintf("real %s %s, %d columns, %s: %s", program, version, s.Launch.Width, c.how, st.Why)}
			if st.State == classify.Stalled {
				w.Work, w.HasWork = "3", true
			}
			name := prefix + st.Name + c.suffix
			if err := os.WriteFile(filepath.Join(dir, name+".pane"), []byte(c.pane), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name+".want"), []byte(w.Format()), 0o644); err != nil {
				t.Fatal(err)
			}
			r := classify.Classify(classify.ParseScreen([]byte(c.pane)), classify.Options{Work: classify.WorkReading(probe.Read(w.Work, w.HasWork)), WorkPresent: w.HasWork})
			if r.State.String() != w.State || string(r.Hold) != w.Hold {
				t.Logf("DISAGREEMENT %s: want %s hold %q; the classifier says %s hold %q\n%s", name, w.State, w.Hold, r.State, r.Hold, r.Explain())
			} else {
				t.Logf("captured %s: %s hold %q", name, w.State, w.Hold)
			}
		}
	}
}

func hasInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// Contains returns a check that every sub shows on the screen.
func Contains(sub ...string) func(string) bool {
	return func(screen string) bool {
		for _, x := range sub {
			if !strings.Contains(screen, x) {
				return false
			}
		}
		return true
	}
}

// TypeText returns an act typing text and Enter.
func TypeText(text string) func(*testing.T, *Session) {
	return func(t *testing.T, s *Session) { s.Type(t, text) }
}

// Press returns an act sending tmux key names.
func Press(keys ...string) func(*testing.T, *Session) {
	return func(t *testing.T, s *Session) { s.Keys(t, keys...) }
}

// Wait returns an act that only waits.
func Wait(d time.Duration) func(*testing.T, *Session) {
	return func(*testing.T, *Session) { time.Sleep(d) }
}

// WriteCase writes a captured moment as a golden case of dir: the plain
// capture as name.pane and the one with escape sequences as name.e.pane,
// each with want as its .want, the rules that read it filled in when the
// classifier, given opt, agrees (a disagreement then fails the corpus),
// and for a QUESTION its question and options as the pane words them. how
// names the capture for want's Why, which is a format of one %s.
func WriteCase(t testing.TB, dir, name string, snap Snapshot, want expect.Want, opt classify.Options) {
	t.Helper()
	for _, c := range []struct{ suffix, pane, how string }{
		{"", snap.Plain, "capture-pane -p -J"}, {".e", snap.Escapes, "capture-pane -p -e -J"},
	} {
		w := want
		w.Why = fmt.Sprintf(want.Why, c.how)
		r := classify.Classify(classify.ParseScreen([]byte(c.pane)), opt)
		if r.State.String() == w.State && string(r.Hold) == w.Hold {
			w.Rule, w.HoldRule = r.Rule, r.HoldRule
		}
		if d := r.Dialog; w.State == "QUESTION" && d != nil {
			w.Question = strings.Join(strings.Fields(d.Question), " ")
			for _, o := range d.Options {
				if o = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(o), "❯")); o != "" {
					w.Options = append(w.Options, o)
				}
			}
		}
		for file, data := range map[string]string{name + c.suffix + ".pane": c.pane, name + c.suffix + ".want": w.Format()} {
			if err := os.WriteFile(filepath.Join(dir, file), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("captured %s%s: %s, hold %q: %q", name, c.suffix, r.State, r.Hold, r.HoldText)
	}
}

// CaptureAt runs capture once per pane width, the widths in parallel, each
// after removing dir's captures of that width (those named prefix(width)
// and more): a program's TestCaptureGolden. It runs only with -capture.
func CaptureAt(t *testing.T, dir string, widths []int, prefix func(width int) string, capture func(t *testing.T, width int)) {
	t.Helper()
	if !*CaptureFlag {
		t.Skip("captures only with -capture")
	}
	for _, width := range widths {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			t.Parallel()
			old, _ := filepath.Glob(filepath.Join(dir, prefix(width)+"*"))
			for _, f := range old {
				os.Remove(f)
			}
			capture(t, width)
		})
	}
}
