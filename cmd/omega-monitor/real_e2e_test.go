package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/claudecode"
	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// End-to-end tests of the poll loop against the real Claude Code: the real
// scripts/omega-monitor.sh and omega-monitor binary watch the pinned Claude
// Code (internal/claudecode) in a private tmux server, talking to a fake
// Messages API (internal/fakeapi) that records, byte for byte, every user
// text that reaches the model. What is asserted is what reaches the model
// and what stays on the screen, never how fast.

// realNudge is the nudge the tests type: quotes, ';', '$' and non-ASCII,
// which must all arrive as they are. It holds no trigger word of the fake
// API, which answers it with a short end_turn text.
const realNudge = `keep going: "step 2"; cost $HOME — ünïcödé ✓`

// realTimeout bounds each wait on the real program; the machines that run
// these tests are often loaded.
const realTimeout = 2 * time.Minute

// startClaude starts the pinned Claude Code in mode against api, in a tmux
// server of its own, idle at its input box. The omega-monitor binary and
// Claude Code are readied first, then the test runs in parallel with the
// other real-program tests.
func startClaude(t *testing.T, api *fakeapi.Server, mode claudecode.Mode) *claudecode.Session {
	t.Helper()
	omegaMonitor(t) // built now, before any test runs in parallel
	bin := claudecode.Binary(t)
	t.Parallel()
	realProgram(t)
	return claudecode.Start(t, testenv.Tmux(t), claudecode.Config{Binary: bin, API: api.URL, Mode: mode})
}

// realPrograms bounds how many tests drive a real agent program at once.
// Each draws its screen on the CPU; one starved of it by a crowd of others
// shows a typed nudge late, and the loop rightly withholds the Enter, which
// fails a test that counts nudges. Two at once is what -parallel 2 gave
// them; the tests of tmux, sshd and the loop, which mostly wait, run beside.
var realPrograms = make(chan struct{}, 2)

// realProgram waits for a turn among the tests that drive a real agent
// program, and holds it until t ends. Call it after t.Parallel.
func realProgram(t *testing.T) {
	t.Helper()
	realPrograms <- struct{}{}
	t.Cleanup(func() { <-realPrograms })
}

// watchClaude runs the loop on s's session every second, with work left
// (work probe echo 3). With witness, the loop runs with Claude Code's HOME,
// so it reads the agent's own status file as a second witness; without, the
// screen decides alone.
func watchClaude(t *testing.T, s *claudecode.Session, witness bool, flags ...string) *loopRun {
	t.Helper()
	opt := loopOptions{target: s.Name, flags: append([]string{
		"--mux", s.Tmux.Mux, "--interval", "1", "--work-probe", "echo 3"}, flags...)}
	if witness {
		opt.env = []string{"HOME=" + s.Home}
	}
	return startLoop(t, opt)
}

// witnessed returns how many of the loop's polls the agent's own status
// file agreed and disagreed with the screen, as its state says.
func witnessed(t *testing.T, r *loopRun) (agreed, disagreed int) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(r.state, "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Agreed    int `json:"witness_agreed"`
		Disagreed int `json:"witness_disagreed"`
	}
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatalf("state.json: %v", err)
	}
	return st.Agreed, st.Disagreed
}

// checkWitness checks that the status file was read on every poll of a
// stopped screen, and agreed, with witness; and never read without. The
// loop must have stopped.
func checkWitness(t *testing.T, r *loopRun, witness bool) {
	t.Helper()
	r.mu.Lock()
	polls := len(r.lines)
	r.mu.Unlock()
	agreed, disagreed := witnessed(t, r)
	want := 0
	if witness {
		want = polls
	}
	if agreed < want || agreed > polls || disagreed != 0 {
		t.Errorf("witness %v: the agent's own status agreed on %d polls and disagreed on %d, want %d and 0", witness, agreed, disagreed, want)
	}
}

// turn types text into s and waits until the turn it starts is over and the
// screen passes check.
func turn(t *testing.T, s *claudecode.Session, text string, check func(string) bool) claudecode.Snapshot {
	t.Helper()
	since := time.Now()
	s.Type(t, text)
	return s.Stable(t, realTimeout, "idle", since, check)
}

// dialog types text into s and waits until Claude Code waits for the human
// in a dialog that passes check.
func dialog(t *testing.T, s *claudecode.Session, text string, check func(string) bool) claudecode.Snapshot {
	t.Helper()
	since := time.Now()
	s.Type(t, text)
	return s.Stable(t, realTimeout, "waiting", since, check)
}

func shows(sub ...string) func(string) bool {
	return func(screen string) bool {
		for _, x := range sub {
			if !strings.Contains(screen, x) {
				return false
			}
		}
		return true
	}
}

// linesWith returns the lines that contain part.
func linesWith(lines []string, part string) []string {
	var out []string
	for _, l := range lines {
		if strings.Contains(l, part) {
			out = append(out, l)
		}
	}
	return out
}

// nudgedLines returns the lines in which the loop delivered a nudge: typed
// with its Enter, or, when the box was slow to show the text, the Enter
// alone a later poll pressed on it. Each is one nudge of the budget.
func nudgedLines(lines []string) []string {
	var out []string
	for _, l := range lines {
		if strings.Contains(l, " · nudged (") || strings.Contains(l, " · nudged, Enter only: ") {
			out = append(out, l)
		}
	}
	return out
}

// requestsSince describes the requests the fake API received after the
// first n, one a line.
func requestsSince(api *fakeapi.Server, n int) []string {
	var out []string
	for _, r := range api.Requests()[n:] {
		out = append(out, fmt.Sprintf("%s %s tools=%d text=%q tool_result=%v", r.Method, r.Path, r.Tools, r.Text, r.ToolResult))
	}
	return out
}

// TestRealClaudeIdleGetsExactlyTheBudget: Claude Code idle after a finished
// turn, with work left, receives exactly the budget of nudges, each reaching
// the model as the next user message byte for byte, and nothing more while
// the loop keeps polling.
func TestRealClaudeIdleGetsExactlyTheBudget(t *testing.T) {
	api := fakeapi.New(t)
	s := startClaude(t, api, claudecode.Manual)
	setup := "start on the first step"
	turn(t, s, setup, shows("nothing more to do"))

	r := watchClaude(t, s, true, "--nudge-budget", "2", "--nudge-text", realNudge)
	lines := r.waitLine("nudge budget spent", realTimeout)
	// Several more polls of the same stop: nothing more may be typed.
	lines = r.waitLines(len(lines)+5, realTimeout)
	r.stop()
	s.Stable(t, realTimeout, "idle", time.Time{}, nil)
	if agreed, disagreed := witnessed(t, r); agreed == 0 {
		t.Errorf("the agent's own status was never read (agreed %d, disagreed %d)", agreed, disagreed)
	} else if disagreed > 0 {
		t.Logf("the agent's own status agreed on %d polls, disagreed on %d", agreed, disagreed)
	}

	if got := nudgedLines(lines); len(got) != 2 {
		t.Errorf("the loop nudged %d times, want the budget of 2:\n%s", len(got), strings.Join(lines, "\n"))
	}
	want := []string{setup, realNudge, realNudge}
	if got := api.Texts(); !slices.Equal(got, want) {
		t.Errorf("the fake API saw the user texts %q, want exactly %q", got, want)
	}
	if a := r.alerts(); len(a) != 1 || !strings.Contains(a[0], "NUDGE BUDGET") {
		t.Errorf("alerts = %q, want one budget escalation", a)
	}
}

// watchDialog runs the loop over a dialog twice, by the screen alone and
// with the agent's own status as well, and checks each run: QUESTION on every
// poll, the dialog escalated once, and the dialog still on the screen after.
func watchDialog(t *testing.T, s *claudecode.Session, isDialog func(string) bool) {
	t.Helper()
	for _, witness := range []bool{false, true} {
		r := watchClaude(t, s, witness, "--nudge-budget", "2", "--nudge-text", realNudge)
		lines := r.waitLines(6, realTimeout)
		r.stop()
		checkWitness(t, r, witness)
		for _, l := range lines {
			if !strings.Contains(l, " · QUESTION · ") {
				t.Errorf("witness %v: line %q: want QUESTION on every poll of the dialog", witness, l)
			}
		}
		if a := r.alerts(); len(a) != 1 || !strings.Contains(a[0], "QUESTION") {
			t.Errorf("witness %v: alerts = %q, want the dialog escalated once", witness, a)
		}
	}
	if screen := string(s.Capture(t)); !isDialog(screen) {
		t.Errorf("the dialog is gone:\n%s", screen)
	}
}

// TestRealClaudePermissionDialogGetsNothing: with the loop running, poll
// after poll, nothing is typed into a permission dialog: it is still on the
// screen, the model heard nothing more, and the command it asks to run
// (which Enter would approve) never ran. The screen alone must refuse; the
// agent's own status agrees.
func TestRealClaudePermissionDialogGetsNothing(t *testing.T) {
	api := fakeapi.New(t)
	s := startClaude(t, api, claudecode.Manual)
	isDialog := shows("Do you want to proceed?", fakeapi.BashCommand)
	dialog(t, s, "now "+fakeapi.TriggerBash, isDialog)
	n := len(api.Requests())
	watchDialog(t, s, isDialog)
	if st := s.Status(t); st == nil || st.Status != "waiting" || st.WaitingFor != "permission prompt" {
		t.Errorf("Claude Code's own status at the end: %+v, want waiting for the permission prompt", st)
	}
	if got := requestsSince(api, n); len(got) > 0 {
		t.Errorf("the fake API received requests after the dialog appeared:\n%s", strings.Join(got, "\n"))
	}
	if _, err := os.Stat(filepath.Join(s.Dir, fakeapi.BashMarker)); err == nil {
		t.Errorf("%s ran: the permission dialog was answered", fakeapi.BashCommand)
	}
}

// TestRealClaudeQuestionDialogGetsNothing: the same for the question dialog,
// where Enter would pick the first option and send it to the model.
func TestRealClaudeQuestionDialogGetsNothing(t *testing.T) {
	api := fakeapi.New(t)
	s := startClaude(t, api, claudecode.Manual)
	isDialog := shows("Which format should the history use?", "Enter to select")
	dialog(t, s, "please "+fakeapi.TriggerAsk, isDialog)
	n := len(api.Requests())
	watchDialog(t, s, isDialog)
	if st := s.Status(t); st == nil || st.Status != "waiting" {
		t.Errorf("Claude Code's own status at the end: %+v, want waiting", st)
	}
	if got := requestsSince(api, n); len(got) > 0 {
		t.Errorf("the fake API received requests after the dialog appeared:\n%s", strings.Join(got, "\n"))
	}
}

// faintSGR matches an SGR sequence that turns on faint (2).
var faintSGR = regexp.MustCompile(`\x1b\[(?:[0-9]*;)*2(?:;[0-9]*)*m`)

// faintBefore reports whether, in a capture taken with -e, the line holding
// text turns faint on before text's second character (the first may sit in
// the cursor's reverse-video cell).
func faintBefore(capture []byte, text string) bool {
	for line := range strings.SplitSeq(string(capture), "\n") {
		i := strings.Index(line, text[1:])
		if i < 0 {
			continue
		}
		return faintSGR.MatchString(line[:i])
	}
	return false
}

// TestRealClaudeSuggestionDoesNotHoldButDraftDoes: after the final API
// error Claude Code draws "Resend your message to try again" faint in its
// input box. That suggestion is not a human's draft: the loop, which
// captures with -e, nudges, and the nudge reaches the model. A human's draft
// typed into the same box, not sent, holds every nudge.
func TestRealClaudeSuggestionDoesNotHoldButDraftDoes(t *testing.T) {
	api := fakeapi.New(t)
	s := startClaude(t, api, claudecode.Manual)
	const suggestion = "Resend your message to try again"
	isError := shows("API Error", suggestion)

	snap := turn(t, s, "now "+fakeapi.TriggerError500, isError)
	if !faintBefore(snap.Escapes, suggestion) {
		t.Fatalf("the suggestion is not drawn faint:\n%q", snap.Escapes)
	}
	n := len(api.Texts())
	r := watchClaude(t, s, true, "--nudge-budget", "1", "--nudge-text", realNudge)
	lines := r.waitNudged("1/1", realTimeout)
	deadline := time.Now().Add(realTimeout)
	for len(api.Texts()) == n && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	r.stop()
	if got := api.Texts()[n:]; len(got) != 1 || got[0] != realNudge {
		t.Errorf("after the dim suggestion the fake API saw %q, want exactly [%q]\nloop:\n%s", got, realNudge, strings.Join(lines, "\n"))
	}
	turnOver := func(screen string) bool { return strings.Contains(screen, "nothing more to do") }
	s.Stable(t, realTimeout, "idle", time.Time{}, turnOver)

	// The same error again, and a human starts a reply over the
	// suggestion.
	turn(t, s, "now "+fakeapi.TriggerError500+" again", isError)
	draft := "a human's draft; wait for me"
	s.Draft(t, draft)
	n = len(api.Requests())
	r = watchClaude(t, s, true, "--nudge-budget", "2", "--nudge-text", realNudge)
	lines = r.waitLines(6, realTimeout)
	r.stop()
	checkWitness(t, r, true)
	for _, l := range lines {
		if !strings.Contains(l, "not nudged: a human's draft") {
			t.Errorf("line %q: a human's draft in the input box must hold the nudge", l)
		}
	}
	if got := requestsSince(api, n); len(got) > 0 {
		t.Errorf("the fake API received requests while a human's draft was in the box:\n%s", strings.Join(got, "\n"))
	}
	if screen := string(s.Capture(t)); !inBox(screen, draft) {
		t.Errorf("the draft is not intact in the input box:\n%s", screen)
	}
}

// inBox reports whether the input box on screen holds exactly draft: a line
// that starts with the prompt marker and ends with the draft.
func inBox(screen, draft string) bool {
	for line := range strings.SplitSeq(screen, "\n") {
		line = strings.TrimSpace(strings.ReplaceAll(line, "\u00a0", " "))
		if strings.HasPrefix(line, "❯") && strings.TrimSpace(strings.TrimPrefix(line, "❯")) == draft {
			return true
		}
	}
	return false
}

// TestRealClaudeOperatorTurnBetweenCaptureAndNudge: the loop judges an idle
// Claude Code STALLED, and before its nudge is typed the operator sends a
// message that starts a turn with a permission dialog. The judged screen is
// made old on purpose: the multiplexer wrapper sleeps after each capture, as
// a slow ssh hop would, and the operator types while it sleeps. The fresh
// capture before typing sees the new turn: nothing reaches the dialog, the
// command it asks for never runs, the operator's text reaches the model
// exactly as typed and nothing else does, and the history says why the
// nudge was not typed.
func TestRealClaudeOperatorTurnBetweenCaptureAndNudge(t *testing.T) {
	api := fakeapi.New(t)
	s := startClaude(t, api, claudecode.Manual)
	setup := "start on the first step"
	turn(t, s, setup, shows("nothing more to do"))

	dir := t.TempDir()
	captured := filepath.Join(dir, "captured")
	slowMux := filepath.Join(dir, "mux")
	// The capture's display-message, not loop-env's question for the
	// server's socket at start.
	// The watcher's first look types nothing: the capture judged for the
	// nudge is its second.
	count := filepath.Join(dir, "captures")
	wrapper := "#!/bin/sh\n" + coord.ShellQuote(s.Tmux.Mux) + ` "$@"; rc=$?
case "$1 $*" in display-message*socket_path*) ;; display-message*) n=$(cat ` + coord.ShellQuote(count) + ` 2>/dev/null); n=$((n + 1)); echo $n >` + coord.ShellQuote(count) + `
	[ $n -lt 2 ] || : >` + coord.ShellQuote(captured) + `; sleep 3 ;; esac
exit $rc
`
	if err := os.WriteFile(slowMux, []byte(wrapper), 0o700); err != nil {
		t.Fatal(err)
	}
	// Without Claude Code's HOME: the agent's own status, read when the
	// tick runs, would already say "waiting" and veto the nudge; the screen
	// alone must stop it here.
	opt := loopOptions{target: s.Name, flags: []string{
		"--mux", slowMux, "--interval", "1", "--work-probe", "echo 3", "--nudge-text", realNudge}}
	r := startLoop(t, opt)
	deadline := time.Now().Add(realTimeout)
	for {
		if _, err := os.Stat(captured); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the loop never captured the pane")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The judged capture is taken; the loop is still in its slow hop.
	operator := "now " + fakeapi.TriggerBash
	s.Type(t, operator)
	isDialog := shows("Do you want to proceed?", fakeapi.BashCommand)
	s.Stable(t, realTimeout, "waiting", time.Time{}, isDialog)
	lines := r.waitLine("nudge not typed", realTimeout)
	lines = r.waitLines(len(lines)+2, realTimeout)
	r.stop()

	// The one nudge judged on the old screen is said as not typed, in its
	// poll's line: no line says it was nudged (issue 42).
	if got, refused := nudgedLines(lines), linesWith(lines, " · STALLED · work=3 · progress=? · nudge not typed: a dialog is live"); len(got) != 0 || len(refused) != 1 {
		t.Errorf("want the one nudge judged on the old screen said not typed, got %d nudged, %d refused:\n%s", len(got), len(refused), strings.Join(lines, "\n"))
	}
	if want, got := []string{setup, operator}, api.Texts(); !slices.Equal(got, want) {
		t.Errorf("the fake API saw the user texts %q, want exactly %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, fakeapi.BashMarker)); err == nil {
		t.Errorf("%s ran: the permission dialog was answered", fakeapi.BashCommand)
	}
	if screen := string(s.Capture(t)); !isDialog(screen) {
		t.Errorf("the dialog is gone:\n%s", screen)
	}
	history, _ := os.ReadFile(filepath.Join(r.state, "history.jsonl"))
	if !strings.Contains(string(history), `"event":"nudge_not_typed"`) || strings.Contains(string(history), `"event":"nudge_typed"`) {
		t.Errorf("the history does not say the nudge was not typed:\n%s", history)
	}
}

// TestRealClaudeCollapsedNudgeIsTypedOnce: a nudge long enough for Claude
// Code to collapse into a paste placeholder never reads back in the input
// box: its Enter is withheld, the typing is spent, the operator is told
// once, and nothing more is typed while the placeholder stays there.
func TestRealClaudeCollapsedNudgeIsTypedOnce(t *testing.T) {
	api := fakeapi.New(t)
	s := startClaude(t, api, claudecode.Manual)
	setup := "start on the first step"
	turn(t, s, setup, shows("nothing more to do"))
	long := strings.Repeat("keep going with the plan; say what you are waiting on, if anything. ", 14)
	r := watchClaude(t, s, true, "--nudge-budget", "3", "--nudge-text", strings.TrimSpace(long))
	lines := r.waitLine("never showed in the input box, escalated", realTimeout)
	lines = r.waitLines(len(lines)+5, realTimeout)
	r.stop()
	screen := s.Capture(t)
	t.Logf("the screen after:\n%s", screen)
	if got, typed := nudgedLines(lines), linesWith(lines, " · nudge typed, Enter withheld: "); len(got) != 0 || len(typed) != 1 {
		t.Errorf("the loop typed %d times (%d lines say nudged), want once, its Enter withheld:\n%s", len(typed), len(got), strings.Join(lines, "\n"))
	}
	if got := api.Texts(); !slices.Equal(got, []string{setup}) {
		t.Errorf("the fake API saw %q: a collapsed nudge was entered", got)
	}
	var told int
	for _, a := range r.alerts() {
		if strings.Contains(a, "cannot see it in the input box") {
			told++
		}
	}
	if told != 1 {
		t.Errorf("alerts = %q, want the unseen nudge told once", r.alerts())
	}
}
