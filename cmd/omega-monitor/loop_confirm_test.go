package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	"gotest.tools/v3/fs"

	"github.com/omega-monitor/omega-monitor/internal/capture"
	"github.com/omega-monitor/omega-monitor/tick"
)

// historyEvents lists the event names of a state directory's history.
func historyEvents(t *testing.T, state string) []string {
	t.Helper()
	data, _ := os.ReadFile(filepath.Join(state, "history.jsonl"))
	var names []string
	for line := range strings.Lines(string(data)) {
		var e struct{ Event string }
		assert.NilError(t, json.Unmarshal([]byte(line), &e))
		names = append(names, e.Event)
	}
	return names
}

func budgetUsed(t *testing.T, state string) int {
	t.Helper()
	var s tick.State
	data, err := os.ReadFile(filepath.Join(state, "state.json"))
	assert.NilError(t, err)
	assert.NilError(t, json.Unmarshal(data, &s))
	return s.Budget.Used
}

func frameOf(pane string) string {
	return "agent:@0.%0\t/w\n" + capture.PaneMark + "\n" + pane
}

// TestOutcomesReachTheHistory: a nudge refused before typing, a nudge whose
// Enter was withheld and a nudge typed each leave their own event. Text that
// reached the terminal keeps its budget spent, Enter or not; after a typing
// the box did not show, the next poll types nothing and tells the operator
// once, and nudging resumes only when the box reads back empty.
func TestOutcomesReachTheHistory(t *testing.T) {
	t.Parallel()
	state := filepath.Join(fs.NewDir(t, "outcome").Path(), "w")
	const text = "keep going"
	stalled, question := readPane(t, "GOLDEN-stalled-real"), readPane(t, "GOLDEN-question-real")
	action := filepath.Join(state, "actions", "001.nudge")
	poll := func() {
		t.Helper()
		out, errs, code := tickOnce(t, stalled, "--state", state, "--target", "agent", "--work", "7", "--nudge-text", text)
		assert.Equal(t, code, 0, errs)
		assert.Assert(t, strings.Contains(out, "nudged"), out)
	}
	confirm := func(stage, pane string) (string, int) {
		var out, errb bytes.Buffer
		code := run([]string{"confirm", "--state", state, "--target", "agent", "--nudge-text", text, "--action", action, "--stage", stage},
			strings.NewReader(frameOf(pane)), &out, &errb)
		return out.String() + errb.String(), code
	}
	ack := func(args ...string) {
		t.Helper()
		var out, errb bytes.Buffer
		code := run(append([]string{"ack", "--state", state, "--target", "agent", "--action", action}, args...), nil, &out, &errb)
		assert.Equal(t, code, 0, errb.String())
	}

	// A dialog came up after the judged capture: nothing is typed.
	firstLook(t, stalled, "--state", state, "--target", "agent", "--work", "7", "--nudge-text", text)
	poll()
	out, code := confirm("before", question)
	assert.Equal(t, code, 1, out)
	assert.Assert(t, strings.Contains(out, "nudge not typed: a dialog is live"), out)
	assert.Equal(t, budgetUsed(t, state), 0)
	// The poll's line, held for the nudge, says what came of it: never
	// "nudged" of a nudge not typed (issue 42).
	assert.Assert(t, strings.HasPrefix(out, "MONITOR · agent · STALLED · work=7 · progress=? · nudge not typed: a dialog is live"), out)
	logged, err := os.ReadFile(filepath.Join(state, "monitor.log"))
	assert.NilError(t, err)
	assert.Assert(t, !strings.Contains(string(logged), "nudged ("), string(logged))
	_, err = os.Stat(action)
	assert.Assert(t, os.IsNotExist(err), "the refused action is removed")

	// Typed, but the box does not show our text: no Enter.
	poll()
	out, code = confirm("before", stalled)
	assert.Equal(t, code, 0, out)
	out, code = confirm("typed", stalled)
	assert.Equal(t, code, 1, out)
	assert.Assert(t, strings.Contains(out, "Enter withheld: the input box does not show our text"), out)
	assert.Equal(t, budgetUsed(t, state), 1)

	// The next poll types nothing, and says so once, to the operator too.
	out, errs, code := tickOnce(t, stalled, "--state", state, "--target", "agent", "--work", "7", "--nudge-text", text)
	assert.Equal(t, code, 0, errs)
	assert.Assert(t, strings.Contains(out, "not nudged: our nudge was typed and never showed in the input box, escalated"), out)
	left, _ := os.ReadDir(filepath.Join(state, "actions"))
	assert.Equal(t, len(left), 0, "%v", left)
	alerts, _ := os.ReadDir(filepath.Join(state, "outbox"))
	assert.Equal(t, len(alerts), 1)
	msg, err := os.ReadFile(filepath.Join(state, "outbox", alerts[0].Name()))
	assert.NilError(t, err)
	assert.Assert(t, strings.Contains(string(msg), "cannot see it in the input box"), string(msg))

	// The box reads back empty: nudging resumes, within the budget. Typed
	// and sent.
	poll()
	ack("nudge_typed")
	assert.Equal(t, budgetUsed(t, state), 2)

	// The mux failed: not typed, budget back.
	poll()
	ack("nudge_not_typed", "exit 1")
	assert.Equal(t, budgetUsed(t, state), 2)

	var got []string
	for _, e := range historyEvents(t, state) {
		if e != "state" {
			got = append(got, e)
		}
	}
	want := []string{"nudge", "nudge_not_typed", "nudge", "enter_withheld", "escalate", "nudge", "nudge_typed", "nudge", "nudge_not_typed"}
	assert.DeepEqual(t, got, want)
}

// TestLedgerFailureLeavesNoNudgeEvent: a nudge the echo ledger could not
// record is not sent, its budget is not spent, and the history says
// nudge_not_typed, never nudge.
func TestLedgerFailureLeavesNoNudgeEvent(t *testing.T) {
	t.Parallel()
	state := filepath.Join(fs.NewDir(t, "outcome").Path(), "w")
	assert.NilError(t, os.MkdirAll(filepath.Join(state, "ledger"), 0o700)) // a directory: Record fails
	firstLook(t, readPane(t, "GOLDEN-stalled-real"), "--state", state, "--target", "agent", "--work", "7")
	out, errs, code := tickOnce(t, readPane(t, "GOLDEN-stalled-real"), "--state", state, "--target", "agent", "--work", "7")
	assert.Equal(t, code, 0, errs)
	assert.Assert(t, strings.Contains(out, "not nudged (the echo ledger could not record it)"), out)
	assert.Equal(t, budgetUsed(t, state), 0)
	events := historyEvents(t, state)
	assert.Assert(t, !strings.Contains(strings.Join(events, " "), "nudge "), events)
	assert.Assert(t, strings.Contains(strings.Join(events, " "), "nudge_not_typed"), events)
}

// TestOwnTextInTheBoxGetsOnlyEnter: our nudge left unsent in the box (its
// Enter withheld or lost) reads as our text, not as an empty box: the next
// poll hands over an Enter, never the text again; text that is not exactly
// ours is a draft and holds.
func TestOwnTextInTheBoxGetsOnlyEnter(t *testing.T) {
	t.Parallel()
	const text = "continue with the next failing test; do not stop until the work probe reads 0"
	stuck := readPane(t, "adv-own-nudge-stuck-in-box")
	state := filepath.Join(fs.NewDir(t, "outcome").Path(), "w")
	assert.NilError(t, os.MkdirAll(state, 0o700))
	var out, errb bytes.Buffer
	assert.Equal(t, run([]string{"ledger", "record", filepath.Join(state, "ledger"), text}, nil, &out, &errb), 0, errb.String())
	firstLook(t, stuck, "--state", state, "--target", "agent", "--work", "5", "--nudge-text", text)
	got, errs, code := tickOnce(t, stuck, "--state", state, "--target", "agent", "--work", "5", "--nudge-text", text)
	assert.Equal(t, code, 0, errs)
	assert.Assert(t, strings.Contains(got, "Enter only"), got)
	_, err := os.Stat(filepath.Join(state, "actions", "001.enter"))
	assert.NilError(t, err)
	_, err = os.Stat(filepath.Join(state, "actions", "001.nudge"))
	assert.Assert(t, os.IsNotExist(err))

	other := filepath.Join(fs.NewDir(t, "outcome").Path(), "w")
	got, errs, _ = tickOnce(t, stuck, "--state", other, "--target", "agent", "--work", "5", "--nudge-text", "continue")
	assert.Assert(t, strings.Contains(got, "not nudged: a human's draft"), got+errs)
}

// humanFrame is a capture frame whose multiplexer line says a client shows
// the pane's window, its last input idle seconds before the multiplexer's
// now (-1: no client at all).
func humanFrame(pane string, idle int) string {
	mux := "[omega-monitor:mux] 1000 @0 0:1@0"
	if idle >= 0 {
		mux = "[omega-monitor:mux] 1000 @0 1:" + strconv.Itoa(1000-idle) + "@0"
	}
	return mux + "\n" + frameOf(pane)
}

// boxHolding is the stalled golden pane with lines in its input box.
func boxHolding(t *testing.T, lines ...string) string {
	t.Helper()
	pane := readPane(t, "GOLDEN-stalled-real")
	const empty = "❯\u00a0\n"
	assert.Assert(t, strings.Contains(pane, empty))
	return strings.Replace(pane, empty, "❯ "+strings.Join(lines, "\n  ")+"\n", 1)
}

// TestHumanKeysHoldOurs: through the commands the loop calls, with the
// multiplexer's line in the frame: a human at the agent holds the nudge
// (the line says why); a human's keys just before our typing hold the
// typing, its budget given back; a human's text in the box beside ours
// after our typing is a collision, said once in the line, the history and
// the log, the Enter withheld and the box left to them (no page about an
// unseen nudge, no second collision on the polls after).
func TestHumanKeysHoldOurs(t *testing.T) {
	t.Parallel()
	state := filepath.Join(fs.NewDir(t, "human").Path(), "w")
	const text = "keep going"
	stalled := readPane(t, "GOLDEN-stalled-real")
	action := filepath.Join(state, "actions", "001.nudge")
	judge := func(frame string) string {
		t.Helper()
		out, errs, code := tickOnce(t, frame, "--state", state, "--target", "agent", "--work", "7", "--nudge-text", text, "--frame", "--human-idle", "60")
		assert.Equal(t, code, 0, errs)
		return out
	}
	confirm := func(stage, frame string) (string, int) {
		var out, errb bytes.Buffer
		code := run([]string{"confirm", "--state", state, "--target", "agent", "--nudge-text", text, "--action", action, "--stage", stage},
			strings.NewReader(frame), &out, &errb)
		return out.String() + errb.String(), code
	}
	count := func(name string) int {
		n := 0
		for _, e := range historyEvents(t, state) {
			if e == name {
				n++
			}
		}
		return n
	}

	out := judge(humanFrame(stalled, 30))
	assert.Assert(t, strings.Contains(out, "STALLED · work=7 · progress=? · not nudged: a human is at the agent (input 30s ago)"), out)
	_, err := os.Stat(action)
	assert.Assert(t, os.IsNotExist(err), "a nudge was handed over with a human at the agent")

	// A minute without input: nudged; but the human's keys come just
	// before the typing.
	out = judge(humanFrame(stalled, 60))
	assert.Assert(t, strings.Contains(out, "nudged (1/5)"), out)
	out, code := confirm("before", humanFrame(stalled, 1))
	assert.Equal(t, code, 1, out)
	assert.Assert(t, strings.Contains(out, "nudge not typed: a human typed at the agent 1s ago"), out)
	assert.Equal(t, budgetUsed(t, state), 0)

	// Typed into a quiet box; the human typed as it was: their text
	// and ours.
	out = judge(humanFrame(stalled, 90))
	assert.Assert(t, strings.Contains(out, "nudged (1/5)"), out)
	out, code = confirm("before", humanFrame(stalled, 90))
	assert.Equal(t, code, 0, out)
	out, code = confirm("typed", humanFrame(boxHolding(t, "wait, wrong branch", text), 0))
	assert.Equal(t, code, 1, out)
	assert.Assert(t, strings.Contains(out, "nudge collided with a human's typing, Enter withheld"), out)
	assert.Assert(t, strings.Contains(out, "our text and a human's"), out)
	assert.Equal(t, budgetUsed(t, state), 1)
	log, err := os.ReadFile(filepath.Join(state, "monitor.log"))
	assert.NilError(t, err)
	assert.Assert(t, strings.Contains(string(log), "nudge collided"), string(log))

	// The polls after: held for the human, then for their draft; said
	// once, paged never.
	for _, idle := range []int{3, 200} {
		out = judge(humanFrame(boxHolding(t, "wait, wrong branch", text), idle))
		assert.Assert(t, strings.Contains(out, "not nudged"), out)
		assert.Assert(t, !strings.Contains(out, "escalated"), out)
		t.Log(out)
	}
	assert.Equal(t, count("nudge_collided"), 1)
	assert.Equal(t, count("enter_withheld"), 0)
	assert.Equal(t, count("escalate"), 0)
	alerts, _ := os.ReadDir(filepath.Join(state, "outbox"))
	assert.Equal(t, len(alerts), 0)
}
