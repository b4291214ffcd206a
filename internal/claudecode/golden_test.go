package claudecode_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/claudecode"
	"github.com/omega-monitor/omega-monitor/internal/expect"
	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
	"github.com/omega-monitor/omega-monitor/internal/termagent"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
	"github.com/omega-monitor/omega-monitor/probe"
)

// captureParallel is how many Claude Codes TestCaptureGolden runs at once,
// under termagent's -capture flag.
var captureParallel = flag.Int("capture-parallel", 3, "how many Claude Codes TestCaptureGolden runs at once")

// realDir holds the captures of the real program.
const realDir = "../../golden/real"

// stateOf is how the agent's own status maps to the classifier's states; an
// idle session is STALLED or BLOCKED by the work probe.
func stateOf(status, work string) string {
	switch status {
	case "busy":
		return "WORKING"
	case "waiting":
		return "QUESTION"
	case "idle":
		if work == "0" {
			return "BLOCKED"
		}
		return "STALLED"
	}
	return "unknown status " + status
}

// readWant reads NAME.want and checks that its state is what the agent's
// own status says.
func readWant(t *testing.T, path string) expect.Want {
	t.Helper()
	w, err := expect.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := classify.ParseState(w.State); !ok {
		t.Fatalf("%s: state %q is not one of WORKING QUESTION STALLED BLOCKED", path, w.State)
	}
	if got := stateOf(w.Status, w.Work); got != w.State {
		t.Fatalf("%s: status %q with work %q means %s, but the file says state %s", path, w.Status, w.Work, got, w.State)
	}
	return w
}

// TestRealGolden classifies every capture of the real Claude Code and fails,
// with the classifier's explanation, where the classifier and the agent's
// own status file disagree.
func TestRealGolden(t *testing.T) {
	panes, err := filepath.Glob(filepath.Join(realDir, "*.pane"))
	if err != nil {
		t.Fatal(err)
	}
	if len(panes) < 40 {
		t.Errorf("golden/real holds %d captures of the real Claude Code; it must hold at least 40 (go test ./internal/claudecode -run TestCaptureGolden -capture)", len(panes))
	}
	for _, p := range panes {
		name := strings.TrimSuffix(filepath.Base(p), ".pane")
		t.Run(name, func(t *testing.T) {
			w := readWant(t, strings.TrimSuffix(p, ".pane")+".want")
			pane, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			r := classify.Classify(classify.ParseScreen(pane), classify.Options{Work: classify.WorkReading(probe.Read(w.Work, true)), WorkPresent: true})
			if got := r.State.String(); got != w.State || string(r.Hold) != w.Hold {
				t.Errorf("%s: Claude Code %s said %q, so want %s hold %q; the classifier says %s hold %q\nwhy this case exists: %s\nthe classifier's explanation:\n%s",
					name, w.Version, w.Status, w.State, w.Hold, got, r.Hold, w.Why, r.Explain())
			}
		})
	}
}

// A step is one moment of the tour that TestCaptureGolden takes the real
// program through.
type step struct {
	// name names the capture; empty takes none.
	name string
	// modes limits the step to some modes; nil means all.
	modes []claudecode.Mode
	// act drives the session into the moment.
	act func(t *testing.T, s *claudecode.Session)
	// status is what the status file must say; check, when set, what the
	// screen must show.
	status string
	check  func(screen string) bool
	// fresh says the status must have changed after act (a new turn or
	// an interrupt), not merely still hold.
	fresh bool
	// hold is the hold of the -p capture; eHold of the -e one.
	hold, eHold classify.Hold
	why         string
}

func typeText(text string) func(*testing.T, *claudecode.Session) {
	return func(t *testing.T, s *claudecode.Session) { s.Type(t, text) }
}

func keys(k ...string) func(*testing.T, *claudecode.Session) {
	return func(t *testing.T, s *claudecode.Session) { s.Keys(t, k...) }
}

// clear deletes whatever is in the input box, one character at a time.
func clear(t *testing.T, s *claudecode.Session) {
	s.Tmux.Run(t, "send-keys", "-t", s.Pane, "-N", "300", "BSpace")
}

func contains(sub ...string) func(string) bool {
	return func(screen string) bool {
		for _, x := range sub {
			if !strings.Contains(screen, x) {
				return false
			}
		}
		return true
	}
}

// tour is the sequence of moments captured in every mode and width.
var tour = []step{
	{name: "fresh", status: "idle", check: contains("❯"),
		why: "just started, nothing asked yet: an empty input box"},
	{name: "working", act: typeText("please " + fakeapi.TriggerSlow), status: "busy", fresh: true, check: contains("…"),
		why: "the fake API trickles a slow stream: the spinner is live above the input box"},
	{name: "interrupted", act: keys("Escape"), status: "idle", fresh: true, check: contains("Interrupted"),
		hold: classify.HoldInterrupt, eHold: classify.HoldInterrupt,
		why: "Esc pressed during the slow stream: Interrupted · What should Claude do instead?"},
	{name: "permission", modes: []claudecode.Mode{claudecode.Manual},
		act: typeText("now " + fakeapi.TriggerBash), status: "waiting", fresh: true, check: contains("Do you want to proceed?"),
		why: "a Bash tool_use in manual mode: the permission dialog replaces the input box"},
	{name: "permission-refused", modes: []claudecode.Mode{claudecode.Manual},
		act: keys("Escape"), status: "idle", fresh: true, check: contains("Interrupted"),
		hold: classify.HoldInterrupt, eHold: classify.HoldInterrupt,
		why: "Esc on the permission dialog: the command did not run and the turn is interrupted"},
	{name: "ran-command", modes: []claudecode.Mode{claudecode.Auto, claudecode.Bypass},
		act: typeText("now " + fakeapi.TriggerBash), status: "idle", fresh: true, check: contains("The command finished."),
		why: "a Bash tool_use the mode lets run without asking; the turn finished"},
	{name: "question", act: typeText("please " + fakeapi.TriggerAsk), status: "waiting", fresh: true, check: contains("Enter to select"),
		why: "an AskUserQuestion tool_use: the question dialog replaces the input box"},
	{name: "done", act: keys("Enter"), status: "idle", fresh: true, check: contains("The command finished."),
		why: "the question answered with its first option; the turn finished and the box is empty"},
	{name: "long-permission", modes: []claudecode.Mode{claudecode.Manual},
		act: typeText("now " + fakeapi.TriggerLongBash), status: "waiting", fresh: true, check: contains("Do you want to proceed?", fakeapi.LongBashCommand),
		why: "a long Bash tool_use in manual mode: its permission dialog"},
	{name: "tool-running", modes: []claudecode.Mode{claudecode.Manual},
		act: keys("Enter"), status: "busy", fresh: true,
		why: "the long command approved with Enter: the command runs and the turn waits for it"},
	{name: "tool-running", modes: []claudecode.Mode{claudecode.Bypass},
		act: typeText("now " + fakeapi.TriggerLongBash), status: "busy", fresh: true, check: contains(fakeapi.LongBashCommand),
		why: "a long Bash tool_use the mode lets run without asking: the command runs and the turn waits for it"},
	{name: "tool-finished", modes: []claudecode.Mode{claudecode.Manual, claudecode.Bypass},
		status: "idle", check: contains("The command finished."),
		why: "the long command finished and so did the turn"},
	// Auto mode sends a command it cannot judge locally to a safety check
	// on the server, which the fake API does not pass: Claude Code says so
	// in a dialog of its own.
	{name: "auto-check", modes: []claudecode.Mode{claudecode.Auto},
		act: typeText("now " + fakeapi.TriggerLongBash), status: "waiting", fresh: true, check: contains("Auto mode can't check"),
		why: "a long Bash tool_use in auto mode whose server-side safety check cannot get through the fake gateway: the Auto mode can't check actions dialog"},
	{name: "auto-check-cancelled", modes: []claudecode.Mode{claudecode.Auto},
		act: keys("Escape"), status: "idle", fresh: true,
		hold: classify.HoldInterrupt, eHold: classify.HoldInterrupt,
		why: "Esc on the auto-mode check dialog: the turn stops with its action not run"},
	{name: "question-many", act: typeText("please ask " + fakeapi.TriggerAskMany), status: "waiting", fresh: true, check: contains("Enter to select"),
		why: "an AskUserQuestion tool_use with two questions, the first multi-select: a tabbed question dialog"},
	{name: "question-cancelled", act: keys("Escape"), status: "idle", fresh: true, check: contains("Declined to answer"),
		hold: classify.HoldInterrupt, eHold: classify.HoldInterrupt,
		why: "Esc on the question dialog: Claude Code says Declined to answer Claude's questions and the turn ends; the human declined, so the human owns this stop as after an interrupt"},
	{name: "api-error", act: typeText("now " + fakeapi.TriggerError500), status: "idle", fresh: true, check: contains("API Error", "Resend your message"),
		hold: classify.HoldDraft, eHold: classify.HoldNone,
		why: "HTTP 500 until the retries ran out: the final API error, and the dim suggestion Resend your message to try again in the box (a draft to -p, which cannot see faint text; none to -e)"},
	{name: "retrying", act: typeText("now " + fakeapi.TriggerError429), status: "busy", fresh: true, check: contains("retrying in"),
		why: "HTTP 429 with retry-after: Claude Code counts down to its next attempt"},
	{name: "retry-cancelled", act: keys("Escape"), status: "idle", fresh: true,
		hold: classify.HoldDraft, eHold: classify.HoldDraft,
		why: "Esc during the retry countdown: the request is cancelled and the message put back in the input box, a draft the human owns"},
	{act: keys("C-u")},
	{name: "draft", act: func(t *testing.T, s *claudecode.Session) { s.Draft(t, "a human draft, not sent") },
		status: "idle", check: contains("a human draft, not sent"),
		hold: classify.HoldDraft, eHold: classify.HoldDraft,
		why: "a human typed into the input box and did not send it"},
	{act: clear},
	{name: "draft-long", act: func(t *testing.T, s *claudecode.Session) { s.Draft(t, longDraft) },
		status: "idle", check: contains("fetcher"),
		hold: classify.HoldDraft, eHold: classify.HoldDraft,
		why: "a human's long draft, wrapped over several lines of the input box, not sent"},
	{act: clear},
	{name: "slash-menu", act: func(t *testing.T, s *claudecode.Session) { s.Draft(t, "/mo") },
		status: "idle", check: contains("/mo"),
		hold: classify.HoldDraft, eHold: classify.HoldDraft,
		why: "a human typing a slash command: the command menu opens under the input box"},
}

const longDraft = "when you are done with the parser, please also look at the retry loop in the fetcher, " +
	"it keeps going after a 401 and it should stop; the longer draft ends here"

// TestCaptureGolden drives the real Claude Code through every state in every
// mode and width and writes each moment into golden/real, labelled by the
// status Claude Code itself wrote for the pane. It runs only with -capture.
func TestCaptureGolden(t *testing.T) {
	if !*termagent.CaptureFlag {
		t.Skip("captures only with -capture")
	}
	bin := claudecode.Binary(t)
	version, err := claudecode.BinaryVersion(t.Context(), bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(realDir, 0o755); err != nil {
		t.Fatal(err)
	}
	sem := make(chan struct{}, max(*captureParallel, 1))
	for _, mode := range claudecode.Modes {
		for _, width := range claudecode.Widths {
			t.Run(fmt.Sprintf("%s-%d", mode, width), func(t *testing.T) {
				t.Parallel()
				sem <- struct{}{}
				defer func() { <-sem }()
				captureTour(t, bin, version, mode, width)
			})
		}
	}
}

func captureTour(t *testing.T, bin, version string, mode claudecode.Mode, width int) {
	prefix := fmt.Sprintf("claude-%s-%d-", mode, width)
	old, _ := filepath.Glob(filepath.Join(realDir, prefix+"*"))
	for _, f := range old {
		os.Remove(f)
	}
	api := fakeapi.New(t)
	s := claudecode.Start(t, testenv.Tmux(t), claudecode.Config{
		Binary: bin, API: api.URL, Mode: mode, Width: width, Height: 40,
	})
	for _, st := range tour {
		if st.modes != nil && !hasMode(st.modes, mode) {
			continue
		}
		since := time.Time{}
		if st.fresh {
			since = time.Now()
		}
		if st.act != nil {
			st.act(t, s)
		}
		if st.name == "" {
			time.Sleep(time.Second)
			continue
		}
		snap := s.Stable(t, 3*time.Minute, st.status, since, st.check)
		work := "3"
		if mode == claudecode.Auto {
			work = "0" // some stopped screens with no work left: BLOCKED
		}
		if st.status != "idle" {
			work = ""
		}
		base := prefix + st.name
		for _, c := range []struct {
			suffix string
			pane   []byte
			hold   classify.Hold
			how    string
		}{
			{"", snap.Plain, st.hold, "capture-pane -p -J"},
			{".e", snap.Escapes, st.eHold, "capture-pane -p -e -J"},
		} {
			w := expect.Want{
				Work: work, HasWork: work != "", Hold: string(c.hold), Status: snap.Status.Status, Version: snap.Status.Version,
				Agent: "Claude Code", // the rule: go test ./classify -run TestGolden -update, then read the diff
				Why: fmt.Sprintf("real Claude Code %s, %s mode, %d columns, %s: %s; its status file said %s%s",
					version, mode, width, c.how, st.why, snap.Status.Status, waitingFor(snap.Status)),
			}
			if w.Version == "" {
				w.Version = version
			}
			w.State = stateOf(w.Status, w.Work)
			if w.Status == "idle" && w.Work == "" {
				t.Fatalf("%s: no work reading for an idle capture", base)
			}
			name := base + c.suffix
			if err := os.WriteFile(filepath.Join(realDir, name+".pane"), c.pane, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(realDir, name+".want"), []byte(w.Format()), 0o644); err != nil {
				t.Fatal(err)
			}
			r := classify.Classify(classify.ParseScreen(c.pane), classify.Options{Work: classify.WorkReading(probe.Read(w.Work, true)), WorkPresent: true})
			if r.State.String() != w.State || string(r.Hold) != w.Hold {
				t.Logf("DISAGREEMENT %s: status %s wants %s hold %q; the classifier says %s hold %q\n%s",
					name, w.Status, w.State, w.Hold, r.State, r.Hold, r.Explain())
			} else {
				t.Logf("captured %s: %s hold %q", name, w.State, w.Hold)
			}
		}
	}
	t.Logf("%s: the fake API saw %q", s.Name, api.Texts())
	if u := api.Unknown(); len(u) > 0 {
		t.Logf("%s: the fake API had no answer for %q", s.Name, u)
	}
}

func waitingFor(st claudecode.Status) string {
	if st.WaitingFor == "" {
		return ""
	}
	return " (waiting for " + st.WaitingFor + ")"
}

func hasMode(modes []claudecode.Mode, m claudecode.Mode) bool {
	for _, x := range modes {
		if x == m {
			return true
		}
	}
	return false
}
