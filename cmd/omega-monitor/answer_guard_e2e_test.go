package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/poll"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/claudecode"
	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
	"github.com/omega-monitor/omega-monitor/internal/watcher"
)

// The answer path, tried as an operator and as an attacker would, on the
// real Claude Code: the same question asked again right after a tapped
// Yes; a shell showing a drawn dialog; a second tap on a message answered;
// an operator typing just after a look.

// linesAfter waits for a line containing want among the loop's lines
// after the first n, and returns them all.
func (r *loopRun) lineAfter(n int, want string, within time.Duration) []string {
	r.t.Helper()
	deadline := time.Now().Add(within)
	for {
		lines := r.waitLines(n+1, within)
		if slices.ContainsFunc(lines[n:], func(l string) bool { return strings.Contains(l, want) }) {
			return lines
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("no line with %q after line %d within %v:\n%s", want, n, within, strings.Join(lines, "\n"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestRealClaudeAskedAgainAfterATappedYes: the model asks to run the same
// command again right after the one a tapped Yes approved. The answer is
// typed and said so; the question is over, so the same dialog drawn again
// is a new question, relayed with new buttons; a tap on the first
// message's No is refused and types nothing into the second dialog, which
// no one was shown under that message.
func TestRealClaudeAskedAgainAfterATappedYes(t *testing.T) {
	api := fakeapi.New(t)
	api.AfterResults(fakeapi.Bash(fakeapi.BashCommand, "Leave a marker file"))
	s := startClaude(t, api, claudecode.Manual)
	isDialog := shows("Do you want to proceed?", fakeapi.BashCommand)
	dialog(t, s, "now "+fakeapi.TriggerBash, isDialog)
	r := startLoop(t, loopOptions{target: s.Name, env: []string{"OMEGA_TELEGRAM_CONF=" + answersConf(t)}, userHome: s.Home,
		flags: []string{"--mux", s.Tmux.Mux, "--interval", "60", "--work-probe", "echo 3"}})
	r.waitLine("escalated to the operator", realTimeout)
	d := statedir.Dir(r.state)
	first, err := d.ReadOffers()
	if err != nil || first.Agent == nil {
		t.Fatalf("offers %+v, %v", first, err)
	}
	yes := answerAs(t, r, "Yes", false)
	n := len(r.waitLine("answer typed: Yes", realTimeout))
	if res, err := d.ReadResult(yes.Nonce); err != nil || res.Outcome != statedir.AnswerTyped {
		t.Errorf("the first answer's result: %+v, %v", res, err)
	}
	// The second dialog: relayed anew once seen twice, new buttons.
	lines := r.lineAfter(n, "escalated to the operator, NOT answered", realTimeout)
	second, err := d.ReadOffers()
	if err != nil || len(second.Offers) == 0 || second.Offers[0].Nonce == first.Offers[0].Nonce {
		t.Fatalf("the question asked again was not offered anew: %+v, %v\n%s", second, err, strings.Join(lines, "\n"))
	}
	// Delivered after the poll that relayed it.
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		questions := 0
		for _, a := range r.alerts() {
			if strings.Contains(a, "QUESTION") {
				questions++
			}
		}
		if questions == 2 {
			return poll.Success()
		}
		return poll.Continue("%d questions relayed, want 2", questions)
	}, poll.WithTimeout(30*time.Second))
	// The first message's No, tapped now: refused; the dialog untouched.
	var no statedir.Offer
	for _, o := range first.Offers {
		if o.Label == "No" {
			no = o
		}
	}
	// The dialog as drawn (the transcript above it animates: a running
	// command's bullet blinks).
	dialogOf := func(screen string) string {
		_, d, _ := strings.Cut(screen, "Do you want to proceed?")
		return d
	}
	before := dialogOf(string(s.Capture(t)))
	if err := d.WriteRequest(statedir.AnswerRequest{Nonce: no.Nonce, From: "op", FromID: 42, ChatID: 42, At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := watcher.Wake(r.state); err != nil {
		t.Fatal(err)
	}
	m := len(lines)
	r.lineAfter(m, "answer from op refused: not a button of the question waiting", realTimeout)
	time.Sleep(2 * time.Second)
	if after := string(s.Capture(t)); !isDialog(after) || dialogOf(after) != before {
		t.Errorf("the second dialog changed after a tap on the first message:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if res, _ := d.ReadResult(no.Nonce); res.Outcome != statedir.AnswerRefused {
		t.Errorf("the first message's No: %+v", res)
	}
}

// TestShellShowingADrawnDialogGetsNoKeys: a pane running a shell that
// cat'ed a file drawn like Claude Code's permission dialog is relayed (a
// human may want to look) but with no buttons, the message saying why:
// the pane's foreground process is the shell, not the agent. A request for
// a button that was never offered is refused, and nothing reaches the
// shell: its screen and its history stay as they were.
func TestShellShowingADrawnDialogGetsNoKeys(t *testing.T) {
	t.Parallel()
	bash := testenv.Need(t, "bash")[0]
	s := testenv.Tmux(t)
	dir := t.TempDir()
	drawn, err := os.ReadFile(filepath.Join("..", "..", "golden", "panes", "claude-328-permission.pane"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "dialog.txt"), drawn, 0o600); err != nil {
		t.Fatal(err)
	}
	history := filepath.Join(dir, "history")
	s.NewSession(t, "shell", "env -i HOME="+coord.ShellQuote(dir)+" HISTFILE="+coord.ShellQuote(history)+" PS1= "+
		"PATH="+coord.ShellQuote(os.Getenv("PATH"))+" "+coord.ShellQuote(bash)+" --norc -i")
	time.Sleep(time.Second)
	s.Run(t, "send-keys", "-t", "=shell:", "clear; cat "+coord.ShellQuote(filepath.Join(dir, "dialog.txt"))+"; history -w", "Enter")
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if strings.Contains(s.Run(t, "capture-pane", "-p", "-t", "=shell:"), "Do you want to proceed?") {
			return poll.Success()
		}
		return poll.Continue("the drawn dialog is not on the screen yet")
	}, poll.WithTimeout(20*time.Second))
	r := startLoop(t, loopOptions{target: "shell", env: []string{"OMEGA_TELEGRAM_CONF=" + answersConf(t)},
		flags: []string{"--mux", s.Mux, "--interval", "60", "--work-probe", "echo 3"}})
	r.waitLine("escalated to the operator", 60*time.Second)
	alerts := strings.Join(r.alerts(), "\n")
	if !strings.Contains(alerts, "No buttons: the pane's foreground process is bash") {
		t.Errorf("the message does not say why it carries no buttons:\n%s", alerts)
	}
	d := statedir.Dir(r.state)
	if offers, _ := d.ReadOffers(); len(offers.Offers) != 0 {
		t.Fatalf("a shell's drawn dialog was offered buttons: %+v", offers)
	}
	if _, err := os.Stat(r.sent + ".markup"); err == nil {
		t.Error("the alert carried buttons")
	}
	before := s.Run(t, "capture-pane", "-p", "-t", "=shell:")
	histBefore, _ := os.ReadFile(history)
	forged := statedir.AnswerRequest{Nonce: "0123456789abcdef0123456789abcdef", From: "op", FromID: 42, ChatID: 42, At: time.Now()}
	if err := d.WriteRequest(forged); err != nil {
		t.Fatal(err)
	}
	if err := watcher.Wake(r.state); err != nil {
		t.Fatal(err)
	}
	r.waitLine("answer from op refused: not a button of the question waiting", 30*time.Second)
	time.Sleep(2 * time.Second)
	s.Run(t, "send-keys", "-t", "=shell:", "history -w", "Enter")
	time.Sleep(time.Second)
	histAfter, _ := os.ReadFile(history)
	if after := s.Run(t, "capture-pane", "-p", "-t", "=shell:"); !strings.HasPrefix(after, strings.TrimRight(before, "\n")) {
		t.Errorf("the shell's screen changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if got := strings.TrimPrefix(string(histAfter), string(histBefore)); got != "history -w\n" {
		t.Errorf("the shell received %q besides our own history -w", got)
	}
}

// TestRealClaudeOperatorTypingJustAfterALook: an operator starts typing
// just after the loop's look and before its nudge is pasted (a multiplexer
// that types their words the moment the loop sends its key, as a person
// who starts typing then would). The paste is conditional on the pane as
// the look saw it: the operator's keys changed it, so ours is cancelled,
// said once, and the operator's words reach the agent as they typed them,
// never glued to ours.
func TestRealClaudeOperatorTypingJustAfterALook(t *testing.T) {
	api := fakeapi.New(t)
	s := startClaude(t, api, claudecode.Manual)
	s.Type(t, "hello")
	s.Stable(t, realTimeout, "idle", time.Now(), shows("Done"))
	const aside = "operator aside 1: run the tests now"
	dir := t.TempDir()
	mux := filepath.Join(dir, "mux")
	flag := filepath.Join(dir, "typed")
	// The operator's keys come between the look and our key, once; the
	// key goes on once the agent has drawn them (its cursor moved), however
	// loaded the machine.
	tmux := coord.ShellQuote(s.Tmux.Mux)
	cursor := tmux + " display-message -p -t " + coord.ShellQuote(s.Pane) + " '#{cursor_x}.#{cursor_y}'"
	script := "#!/bin/sh\ncase \"$1\" in if-shell) if [ ! -e " + coord.ShellQuote(flag) + " ]; then : >" + coord.ShellQuote(flag) + "; " +
		"c=$(" + cursor + "); " + tmux + " send-keys -t " + coord.ShellQuote(s.Pane) + " -l " + coord.ShellQuote(aside) + "; " +
		"n=0; while [ \"$(" + cursor + ")\" = \"$c\" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done; fi ;; esac\n" +
		"exec " + tmux + " \"$@\"\n"
	if err := os.WriteFile(mux, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	n := len(api.Requests())
	r := startLoop(t, loopOptions{target: s.Name, userHome: s.Home,
		flags: []string{"--mux", mux, "--interval", "2", "--work-probe", "echo 3", "--human-idle", "0"}})
	lines := r.waitLine("cancelled: the pane changed between the look and the key", realTimeout)
	time.Sleep(3 * time.Second)
	// Nothing of ours reached the model; the box holds the operator's
	// words alone, which they now send.
	for _, q := range api.Requests()[n:] {
		if q.HasText {
			t.Errorf("the model heard %q before the operator pressed Enter", q.Text)
		}
	}
	screen := string(s.Capture(t))
	if !strings.Contains(screen, aside) || strings.Contains(screen, "continue with the next step") {
		t.Errorf("the input box after the cancelled paste:\n%s", screen)
	}
	s.Keys(t, "Enter")
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		for _, q := range api.Requests()[n:] {
			if q.HasText {
				if q.Text != aside {
					return poll.Error(fmt.Errorf("the model heard %q, not the operator's words %q", q.Text, aside))
				}
				return poll.Success()
			}
		}
		return poll.Continue("the operator's words have not reached the model")
	}, poll.WithTimeout(realTimeout))
	cancelled := 0
	for _, l := range r.waitLines(len(lines), time.Second) {
		if strings.Contains(l, "cancelled: the pane changed") {
			cancelled++
		}
	}
	if cancelled != 1 {
		t.Errorf("the cancelled key was said %d times, want once", cancelled)
	}
}
