package poll

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/capture"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/statedir/event"
	"github.com/omega-monitor/omega-monitor/tick"
)

// tickWith runs one poll over pane at now with answers on, read as opt
// says (whose process, whose status).
func tickWith(t *testing.T, dir, pane string, now time.Time, opt capture.Options) string {
	t.Helper()
	opt.Now = now
	line, err := Tick(Request{Dir: dir, Settings: answering(false), Readings: workOf7, Now: now, Capture: opt}, strings.NewReader(pane))
	if err != nil {
		t.Fatal(err)
	}
	return line
}

// queued is the text of the alerts waiting in d's outbox, and how many of
// them carry buttons.
func queued(t *testing.T, d statedir.Dir) (text string, withButtons int) {
	t.Helper()
	names, _ := d.PendingAlerts()
	for _, n := range names {
		b, _ := os.ReadFile(filepath.Join(d.Path(statedir.Outbox), n))
		text += string(b)
		if _, err := os.Stat(filepath.Join(d.Path(statedir.Outbox), n+statedir.MarkupSuffix)); err == nil {
			withButtons++
		}
	}
	return text, withButtons
}

// TestNoButtonsWithoutTheAgent: a question is relayed with buttons only
// while the pane's foreground process group holds the agent's own process
// and its own status says it waits; otherwise it is relayed without them,
// and the message says why: a shell that drew the dialog (it cat'ed a
// file), a pane whose processes cannot be read, an agent whose status file
// is missing or says it is busy.
func TestNoButtonsWithoutTheAgent(t *testing.T) {
	t.Parallel()
	pane := goldenPane(t, "claude-328-permission")
	shell := tick.Foreground{Known: true, Procs: []tick.Process{{PID: 10, Start: "5", Comm: "bash", Args: []string{"-bash"}}}}
	cat := tick.Foreground{Known: true, Procs: []tick.Process{{PID: 10, Start: "5", Comm: "bash", Args: []string{"-bash"}},
		{PID: 11, Start: "6", Comm: "cat", Args: []string{"cat", "dialog.txt"}}}}
	// A script named after another agent is not Claude Code's.
	codex := tick.Foreground{Known: true, Procs: []tick.Process{{PID: 10, Start: "5", Comm: "codex", Args: []string{"codex"}}}}
	for _, c := range []struct {
		name string
		opt  func(o capture.Options) capture.Options
		why  string
	}{
		{"a shell", func(o capture.Options) capture.Options { o.Foreground = &shell; return o },
			"the pane's foreground process is -bash (pid 10), not Claude Code"},
		{"a shell catting a file", func(o capture.Options) capture.Options { o.Foreground = &cat; return o },
			"the pane's foreground process is -bash (pid 10), cat (pid 11), not Claude Code"},
		{"another agent's program", func(o capture.Options) capture.Options { o.Foreground = &codex; return o },
			"the pane's foreground process is codex (pid 10), not Claude Code"},
		{"processes unknown", func(o capture.Options) capture.Options {
			o.Foreground = &tick.Foreground{Unknown: "no /proc on the host"}
			return o
		}, "the pane's processes cannot be read (no /proc on the host), and keys go only to the agent's own process"},
		{"no status file", func(o capture.Options) capture.Options { o.StatusFile = ""; return o },
			"Claude Code's own status file for this pane is not found, and it alone says whether it waits for a human"},
		{"a busy status", func(o capture.Options) capture.Options {
			os.WriteFile(o.StatusFile, []byte(`{"status":"busy","updatedAt":`+ms(o.Now)+`}`), 0o600)
			return o
		}, "the agent's own status says it is busy, not waiting for an answer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			d := statedir.Dir(filepath.Join(t.TempDir(), "w"))
			for _, at := range []time.Time{t0.Add(-tick.QuestionSettle), t0} {
				tickWith(t, string(d), pane, at, c.opt(asAgent(t, pane, at)))
			}
			text, buttons := queued(t, d)
			if buttons != 0 || !strings.Contains(text, "QUESTION") {
				t.Fatalf("%d alerts with buttons; text:\n%s", buttons, text)
			}
			if !strings.Contains(text, "No buttons: "+c.why+". Answer it at the terminal.") {
				t.Errorf("the message does not say why it has no buttons (%q):\n%s", c.why, text)
			}
			if offers, _ := d.ReadOffers(); len(offers.Offers) != 0 {
				t.Errorf("offers written: %+v", offers)
			}
		})
	}
}

// ms is t as a status file says it: milliseconds since the epoch.
func ms(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }

// TestAnAnswerTypedEndsItsQuestion: once an answer is typed, every offer
// of its question is spent (a tap on another of its buttons is refused),
// and the same dialog drawn again is a new question: relayed anew, with
// nonces and buttons of its own; the answer's result says the question is
// on the screen again.
func TestAnAnswerTypedEndsItsQuestion(t *testing.T) {
	t.Parallel()
	w := relayed(t)
	yes := w.request(1, false, t0.Add(time.Second))
	tickAt(t, string(w.d), w.pane, t0.Add(2*time.Second))
	action := w.d.Path(filepath.Join(statedir.Actions, "000"+AnswerSuffix))
	// The look after Enter finds the same dialog, at its last try.
	if _, look := ConfirmStep(ConfirmRequest{Dir: string(w.d), Target: "agent", Action: action, Stage: AnswerDone,
		Now: t0.Add(3 * time.Second), Capture: asAgent(t, w.pane, t0.Add(3*time.Second))}, strings.NewReader(w.pane)); look != GoOn {
		t.Fatalf("the look after Enter: look %d", look)
	}
	line := Ack(string(w.d), "agent", action, event.AnswerTyped, "", t0.Add(3*time.Second))
	if !strings.Contains(line, "answer typed: Yes (the same question is on the screen again: relayed anew)") {
		t.Errorf("ack line: %s", line)
	}
	if r := w.result(yes.Nonce); r.Outcome != statedir.AnswerTyped || !strings.Contains(r.Note, "the next message carries it") {
		t.Errorf("the result: %+v", r)
	}
	if offers, _ := w.d.ReadOffers(); len(offers.Offers) != 0 {
		t.Errorf("the question's offers stayed: %+v", offers)
	}
	// A tap on the first message's No, afterwards: refused, for any dialog.
	no := statedir.AnswerRequest{Nonce: w.offer.Offers[3].Nonce, FromID: 42, From: "op", ChatID: 42, MessageID: 7, At: t0.Add(4 * time.Second)}
	if err := w.d.WriteRequest(no); err != nil {
		t.Fatal(err)
	}
	first := tickAt(t, string(w.d), w.pane, t0.Add(4*time.Second))
	if r := w.result(no.Nonce); r.Outcome != statedir.AnswerRefused || !strings.Contains(r.Why, "not a button of the question waiting") {
		t.Errorf("a tap on the first message's No: %+v", r)
	}
	if _, _, ok := w.answerAction(); ok {
		t.Error("an answer of the first message was handed to the loop")
	}
	// The same dialog, seen twice: a new question, relayed with buttons.
	second := tickAt(t, string(w.d), w.pane, t0.Add(6*time.Second))
	if strings.Contains(first, "escalated to the operator") || !strings.Contains(second, "escalated to the operator, NOT answered") {
		t.Errorf("the question asked again was not relayed anew once seen twice:\n%s\n%s", first, second)
	}
	offers, _ := w.d.ReadOffers()
	if len(offers.Offers) != len(w.offer.Offers) || offers.Offers[0].Nonce == w.offer.Offers[0].Nonce {
		t.Errorf("new offers %+v, old %+v", offers.Offers, w.offer.Offers)
	}
	if _, buttons := queued(t, w.d); buttons != 2 {
		t.Errorf("%d messages with buttons, want the first and the new one", buttons)
	}
}

// TestAskedAgainBetweenPolls: a question answered at the terminal and
// asked again between two polls reads the same on the screen; the agent's
// own status, changed since it was paged, says it is a new question: its
// old buttons are withdrawn and it is relayed anew.
func TestAskedAgainBetweenPolls(t *testing.T) {
	t.Parallel()
	w := relayed(t)
	now := t0.Add(time.Minute)
	opt := asAgent(t, w.pane, now)
	// The same status, a minute later: the same question.
	if line := tickWith(t, string(w.d), w.pane, now, opt); !strings.Contains(line, "waiting for the operator") {
		t.Fatalf("line: %s", line)
	}
	status := `{"status":"waiting","updatedAt":` + ms(now.Add(time.Minute)) + `,"statusUpdatedAt":` + ms(now.Add(30*time.Second)) + `}`
	os.WriteFile(opt.StatusFile, []byte(status), 0o600)
	opt.Now = now.Add(time.Minute)
	seen := tickWith(t, string(w.d), w.pane, now.Add(time.Minute), opt)
	again := tickWith(t, string(w.d), w.pane, now.Add(time.Minute+tick.QuestionSettle), opt)
	if !strings.Contains(seen, "escalated if still up") || !strings.Contains(again, "escalated to the operator, NOT answered") ||
		!strings.Contains(again, "the earlier buttons withdrawn") {
		t.Errorf("a question asked again was not relayed anew:\n%s\n%s", seen, again)
	}
}

// TestWideningNeedsItsRecordedFirstTap: an option that widens what the
// agent may do is typed only when the receiver recorded the first tap, by
// the same person, on the same message, before the confirming one: a
// client that sends the confirming data alone gets nothing typed.
func TestWideningNeedsItsRecordedFirstTap(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		first *statedir.ConfirmAsked
		why   string
	}{
		{"no first tap", nil, "this option widens what the agent may do: it takes a second tap to confirm (no first tap was recorded)"},
		{"someone else's", &statedir.ConfirmAsked{FromID: 99, MessageID: 7, At: t0}, "this option widens what the agent may do: it takes a second tap to confirm (the first tap was someone else's)"},
		{"on another message", &statedir.ConfirmAsked{FromID: 42, MessageID: 6, At: t0}, "this option widens what the agent may do: it takes a second tap to confirm (the first tap was on another message)"},
		{"after the confirmation", &statedir.ConfirmAsked{FromID: 42, MessageID: 7, At: t0.Add(time.Hour)}, "this option widens what the agent may do: it takes a second tap to confirm (the confirmation came before the first tap)"},
		{"recorded", &statedir.ConfirmAsked{FromID: 42, MessageID: 7, At: t0}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := relayed(t)
			if c.first != nil {
				c.first.Nonce, c.first.ChatID = w.offer.Offers[1].Nonce, 42
				if err := w.d.WriteConfirmAsked(*c.first); err != nil {
					t.Fatal(err)
				}
			}
			r := w.request(2, true, t0.Add(time.Second))
			tickAt(t, string(w.d), w.pane, t0.Add(time.Minute))
			_, _, handed := w.answerAction()
			if c.why == "" {
				if !handed {
					t.Errorf("a confirmed widening was not handed to the loop: %+v", w.result(r.Nonce))
				}
				return
			}
			if got := w.result(r.Nonce); handed || got.Why != c.why {
				t.Errorf("handed %v, result %+v; want refused: %s", handed, got, c.why)
			}
		})
	}
}

// TestAButtonOfAnotherMessage: a request from a message other than the
// one the question's buttons were sent with is refused.
func TestAButtonOfAnotherMessage(t *testing.T) {
	t.Parallel()
	w := relayed(t)
	offers, _ := w.d.ReadOffers()
	offers.ChatID, offers.MessageID = 42, 8
	if err := w.d.WriteOffers(offers); err != nil {
		t.Fatal(err)
	}
	r := w.request(1, false, t0.Add(time.Second)) // from message 7
	tickAt(t, string(w.d), w.pane, t0.Add(time.Minute))
	if got := w.result(r.Nonce); got.Why != "the button is not on the message the question was relayed in" {
		t.Errorf("result: %+v", got)
	}
}

// TestAFailedStepSaysWhatReachedTheTerminal: a key the multiplexer did
// not send (the pane changed since the last look) or that failed ends the
// action; Go says what that means: an answer refused with the keys that
// had reached the terminal, after which questions carry no buttons until
// the agent's own screen is back; a nudge not typed (its budget given
// back) until its text was pasted, its Enter withheld after.
func TestAFailedStepSaysWhatReachedTheTerminal(t *testing.T) {
	t.Parallel()
	cancelled := "invalid option: " + coord.KeyCancelled
	t.Run("an answer", func(t *testing.T) {
		t.Parallel()
		w := relayed(t)
		r := w.request(4, false, t0)
		tickAt(t, string(w.d), w.pane, t0.Add(time.Minute))
		action := w.d.Path(filepath.Join(statedir.Actions, "000"+AnswerSuffix))
		// Steps: capture, confirm, keys Down, capture, confirm, keys Down
		// (6): the second Down cancelled.
		line := FailedStep(string(w.d), "agent", action, 6, cancelled, t0.Add(time.Minute))
		want := "answer NOT typed: Down " + keyCancelled + " (Down had reached the terminal)"
		if !strings.Contains(line, want) {
			t.Errorf("line %q, want %q", line, want)
		}
		actionGone(t, action)
		got := w.result(r.Nonce)
		if diff := cmp.Diff([]string{"Down"}, got.Keys); diff != "" || got.Outcome != statedir.AnswerRefused {
			t.Errorf("result %+v, keys (-want +got):\n%s", got, diff)
		}
		if l, _ := os.ReadFile(w.d.Path(statedir.Log)); !strings.Contains(string(l), want) {
			t.Errorf("monitor.log does not say it:\n%s", l)
		}
		// Keys reached the terminal: every offer of the question is spent.
		if offers, _ := w.d.ReadOffers(); len(offers.Offers) != 0 {
			t.Errorf("the offers of a half-typed answer's question stayed: %+v", offers.Offers)
		}
		// The screen changed under it: the next question has no buttons.
		other := strings.Replace(w.pane, "go test", "make build", 1)
		tickAt(t, string(w.d), other, t0.Add(2*time.Minute))
		tickAt(t, string(w.d), other, t0.Add(2*time.Minute+tick.QuestionSettle))
		text, _ := queued(t, w.d)
		if !strings.Contains(text, "No buttons: an answer from the chat stopped half typed") {
			t.Errorf("the question after a half-typed answer:\n%s", text)
		}
		// The agent's own screen back: buttons again.
		idle := goldenPane(t, "GOLDEN-stalled-real")
		if line := tickAt(t, string(w.d), idle, t0.Add(3*time.Minute)); !strings.Contains(line, "questions carry buttons again") {
			t.Errorf("line: %s", line)
		}
	})
	for _, c := range []struct {
		name string
		n    int
		ev   string
	}{
		{"a nudge's paste cancelled", 3, event.NudgeNotTyped},
		{"a nudge's Enter cancelled", 7, event.EnterWithheld},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			d := statedir.Dir(filepath.Join(t.TempDir(), "w"))
			pane := goldenPane(t, "GOLDEN-stalled-real")
			// The first look types nothing; the next, a moment later,
			// nudges.
			tickAt(t, string(d), pane, t0.Add(-tick.UnsettledLook))
			if line := tickAt(t, string(d), pane, t0); !strings.Contains(line, "nudged (1/5)") {
				t.Fatalf("no nudge: %s", line)
			}
			action := d.Path(filepath.Join(statedir.Actions, "001.nudge"))
			line := FailedStep(string(d), "agent", action, c.n, cancelled, t0)
			if !strings.Contains(line, keyCancelled) {
				t.Errorf("line: %s", line)
			}
			actionGone(t, action)
			h, _ := os.ReadFile(d.Path(statedir.History))
			if !strings.Contains(string(h), `"event":"`+c.ev+`"`) {
				t.Errorf("history, want %s:\n%s", c.ev, h)
			}
		})
	}
}

// actionGone fails unless the action file is gone: the ack of a failed step
// removes it, and the loop forks no rm of its own for it.
func actionGone(t *testing.T, action string) {
	t.Helper()
	if _, err := os.Lstat(action); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the action %s is left after its failed step's ack (%v)", filepath.Base(action), err)
	}
}

// TestStepsTheLoopKnows: every step Go writes, for every kind of action,
// is one the loop's interpreter has a branch for, and nothing else: the
// loop script's case labels are statedir.Ops.
func TestStepsTheLoopKnows(t *testing.T) {
	t.Parallel()
	script, err := os.ReadFile(filepath.Join("..", "..", "scripts", "omega-monitor.sh"))
	if err != nil {
		t.Fatal(err)
	}
	body := string(script)
	start := strings.Index(body, "\nsteps() {")
	end := strings.Index(body[start:], "\n}\n")
	if start < 0 || end < 0 {
		t.Fatal("no steps() in the loop script")
	}
	var labels []string
	for _, l := range strings.Split(body[start:start+end], "\n") {
		l = strings.TrimSpace(l)
		if i := strings.Index(l, ")"); i > 0 && !strings.ContainsAny(l[:i], " $\"(") && l[:i] != "*" {
			labels = append(labels, l[:i])
		}
	}
	var ops []string
	for _, o := range statedir.Ops {
		ops = append(ops, string(o))
	}
	slices.Sort(ops)
	slices.Sort(labels)
	if diff := cmp.Diff(ops, labels); diff != "" {
		t.Errorf("the loop's steps (-Go's +the loop's):\n%s", diff)
	}
	var all []statedir.Step
	for _, a := range []answerAction{
		{Start: 1, Pos: 4, Moves: []string{"Down", "Down", "Down"}},
		{Start: 3, Pos: 1, Moves: []string{"Up", "Up"}},
		{Esc: true},
		{Start: 3, Pos: 3, Field: &fieldAction{Tab: true, Text: "words"}},
	} {
		steps, _ := answerSteps(a)
		all = append(all, steps...)
	}
	for _, enter := range []bool{false, true} {
		steps, _ := nudgeSteps("001.nudge", "go on", enter)
		all = append(all, steps...)
	}
	all = append(all, waitSteps(1500*time.Millisecond)...)
	all = append(all, measureSteps("003.diff.sh")...)
	for _, s := range all {
		if err := s.Check(); err != nil {
			t.Errorf("Go writes a step the loop does not read: %v", err)
		}
	}
}

// TestNoAgentReadsTheSameEverywhere: a stopped screen no agent drew (a
// shell) is NO AGENT in the line and on the board (state.json, which the
// board, the JSON status, the MCP server and the tmux segment read), never
// STALLED there.
func TestNoAgentReadsTheSameEverywhere(t *testing.T) {
	t.Parallel()
	d := statedir.Dir(filepath.Join(t.TempDir(), "w"))
	shell := "$ ls\nREADME.md  go.mod  main.go\n$ \n"
	line := tickAt(t, string(d), shell, t0)
	if !strings.Contains(line, " · NO AGENT · ") {
		t.Fatalf("line: %s", line)
	}
	var s tick.State
	if err := d.ReadRecord(statedir.State, &s); err != nil {
		t.Fatal(err)
	}
	if s.Board.State != tick.NoAgent {
		t.Errorf("the board reads %q, the line NO AGENT", s.Board.State)
	}
}
