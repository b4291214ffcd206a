package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/claudecode"
	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/termagent"
	"github.com/omega-monitor/omega-monitor/internal/watcher"
	"github.com/omega-monitor/omega-monitor/scripts"
	"gotest.tools/v3/poll"
)

// answersConf is a Telegram config that turns answers on, for a loop whose
// funnel is the tests' own.
func answersConf(t *testing.T) string {
	t.Helper()
	conf := filepath.Join(t.TempDir(), "telegram.conf")
	if err := os.WriteFile(conf, []byte("bot_token=1:x\nchat_id=42\nanswers=on\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return conf
}

// answerAs writes the relay's request for the option labelled label of the
// question r relayed, and wakes r's loop, as the relay does for a tap.
func answerAs(t *testing.T, r *loopRun, label string, confirmed bool) statedir.Offer {
	t.Helper()
	d := statedir.Dir(r.state)
	offers, err := d.ReadOffers()
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range offers.Offers {
		if o.Label != label {
			continue
		}
		if err := d.WriteRequest(statedir.AnswerRequest{Nonce: o.Nonce, From: "op", FromID: 42, ChatID: 42, At: time.Now(), Confirmed: confirmed}); err != nil {
			t.Fatal(err)
		}
		if err := watcher.Wake(r.state); err != nil {
			t.Fatal(err)
		}
		return o
	}
	t.Fatalf("no option %q offered: %+v", label, offers)
	return statedir.Offer{}
}

// typedOrCancelled waits for what became of an answer from the chat, and
// says whether it was typed. A real program may redraw between the loop's
// look and its key on a loaded machine: the key is then not sent, which
// is the guard working, and nothing may have reached the program (no
// canary run in dir). Any other refusal fails the test.
func typedOrCancelled(t *testing.T, r *loopRun, dir string) (lines []string, typed bool) {
	t.Helper()
	lines = r.waitLine("answer ", realTimeout)
	for !slices.ContainsFunc(lines, func(l string) bool {
		return strings.Contains(l, "answer typed: ") || strings.Contains(l, "answer NOT typed: ")
	}) {
		lines = r.waitLines(len(lines)+1, realTimeout)
	}
	cancelled := linesWith(lines, "answer NOT typed: ")
	if len(cancelled) == 0 {
		return lines, true
	}
	if !strings.Contains(cancelled[0], "the pane changed between the look and the key") {
		t.Fatalf("answer refused for another reason:\n%s", strings.Join(lines, "\n"))
	}
	t.Logf("the key was cancelled by the pane's change, as it must be: %s", cancelled[0])
	if _, err := os.Stat(filepath.Join(dir, fakeapi.BashMarker)); err == nil {
		t.Errorf("a cancelled answer ran the command")
	}
	return lines, false
}

// TestRealClaudeAnswersFromTheChat: the real Claude Code asks to run a
// command; the watcher relays the question with its options as buttons; an
// answer, as the relay writes it for a tap, is typed into that dialog. No:
// the command never runs and Claude Code ends the turn. Yes: it runs, and
// the model hears its result.
func TestRealClaudeAnswersFromTheChat(t *testing.T) {
	t.Parallel()
	// The loop runs with Claude Code's HOME: its own status file must say
	// it waits before a key is sent.
	for _, c := range []struct {
		label string
		ran   bool
	}{
		{"No", false},
		{"Yes", true},
		// The dialog's Esc, a button of its own: the command never runs.
		{"Esc: cancel", false},
	} {
		t.Run(c.label, func(t *testing.T) {
			api := fakeapi.New(t)
			s := startClaude(t, api, claudecode.Manual)
			isDialog := shows("Do you want to proceed?", fakeapi.BashCommand)
			dialog(t, s, "now "+fakeapi.TriggerBash, isDialog)
			env := []string{"OMEGA_TELEGRAM_CONF=" + answersConf(t)}
			r := startLoop(t, loopOptions{target: s.Name, env: env, userHome: s.Home,
				flags: []string{"--mux", s.Tmux.Mux, "--interval", "60", "--work-probe", "echo 3"}})
			r.waitLine("escalated to the operator", realTimeout)
			o := answerAs(t, r, c.label, false)
			lines := r.waitLine("answer typed: "+c.label, realTimeout)
			res, err := statedir.Dir(r.state).ReadResult(o.Nonce)
			if err != nil || res.Outcome != statedir.AnswerTyped {
				t.Errorf("result: %+v, %v\n%s", res, err, strings.Join(lines, "\n"))
			}
			// Yes: the model's next request carries the command's result.
			// No: Claude Code ends the turn, and the model hears nothing.
			deadline := time.Now().Add(realTimeout)
			for c.ran && !slices.ContainsFunc(api.Requests(), func(q fakeapi.Request) bool { return q.ToolResult }) {
				if time.Now().After(deadline) {
					t.Fatalf("the model never heard the command's result:\n%s", strings.Join(requestsSince(api, 0), "\n"))
				}
				time.Sleep(200 * time.Millisecond)
			}
			time.Sleep(2 * time.Second)
			_, err = os.Stat(filepath.Join(s.Dir, fakeapi.BashMarker))
			if ran := err == nil; ran != c.ran {
				t.Errorf("answered %s: the command ran = %v, want %v", c.label, ran, c.ran)
			}
			if screen := string(s.Capture(t)); isDialog(screen) {
				t.Errorf("the dialog is still there:\n%s", screen)
			}
		})
	}
}

// TestRealClaudeAnswersAQuestionAndAsksTwiceToWiden: an AskUserQuestion
// answered from the chat by its second option reaches the model as that
// choice; an option that widens what the agent may do is refused without
// its second tap, nothing typed, and typed with it.
func TestRealClaudeAnswersAQuestionAndAsksTwiceToWiden(t *testing.T) {
	t.Parallel()
	t.Run("question", func(t *testing.T) {
		api := fakeapi.New(t)
		s := startClaude(t, api, claudecode.Manual)
		dialog(t, s, "please "+fakeapi.TriggerAsk, shows("Which format should the history use?", "Enter to select"))
		r := startLoop(t, loopOptions{target: s.Name, env: []string{"OMEGA_TELEGRAM_CONF=" + answersConf(t)}, userHome: s.Home,
			flags: []string{"--mux", s.Tmux.Mux, "--interval", "60", "--work-probe", "echo 3"}})
		r.waitLine("escalated to the operator", realTimeout)
		answerAs(t, r, "SQLite", false)
		r.waitLine("answer typed: SQLite", realTimeout)
		deadline := time.Now().Add(realTimeout)
		for !slices.ContainsFunc(api.Requests(), func(q fakeapi.Request) bool { return q.ToolResult }) {
			if time.Now().After(deadline) {
				t.Fatalf("the model never heard the answer:\n%s", strings.Join(requestsSince(api, 0), "\n"))
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
	t.Run("widening", func(t *testing.T) {
		api := fakeapi.New(t)
		s := startClaude(t, api, claudecode.Manual)
		isDialog := shows("Do you want to proceed?", fakeapi.BashCommand)
		dialog(t, s, "now "+fakeapi.TriggerBash, isDialog)
		r := startLoop(t, loopOptions{target: s.Name, env: []string{"OMEGA_TELEGRAM_CONF=" + answersConf(t)}, userHome: s.Home,
			flags: []string{"--mux", s.Tmux.Mux, "--interval", "60", "--work-probe", "echo 3"}})
		r.waitLine("escalated to the operator", realTimeout)
		offers, err := statedir.Dir(r.state).ReadOffers()
		if err != nil {
			t.Fatal(err)
		}
		var widens statedir.Offer
		for _, o := range offers.Offers {
			if o.Widens {
				widens = o
				break
			}
		}
		if widens.Nonce == "" {
			t.Fatalf("no option offered widens: %+v", offers.Offers)
		}
		answerAs(t, r, widens.Label, false)
		r.waitLine("takes a second tap to confirm", realTimeout)
		if !isDialog(string(s.Capture(t))) {
			t.Fatal("an unconfirmed widening answer reached the dialog")
		}
		// A second tap is a new button (the first is spent); the relay
		// records the first tap as it asks for the second, and sends the
		// confirmed request for the same option.
		statedir.Dir(r.state).Settle(widens.Nonce)
		if err := statedir.Dir(r.state).WriteConfirmAsked(statedir.ConfirmAsked{Nonce: widens.Nonce, FromID: 42, ChatID: 42, At: time.Now()}); err != nil {
			t.Fatal(err)
		}
		offers, _ = statedir.Dir(r.state).ReadOffers()
		for i := range offers.Offers {
			if offers.Offers[i].Nonce == widens.Nonce {
				offers.Offers[i].Spent = false
			}
		}
		if err := statedir.Dir(r.state).WriteOffers(offers); err != nil {
			t.Fatal(err)
		}
		answerAs(t, r, widens.Label, true)
		r.waitLine("answer typed: "+widens.Label, realTimeout)
		deadline := time.Now().Add(realTimeout)
		for {
			if _, err := os.Stat(filepath.Join(s.Dir, fakeapi.BashMarker)); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the confirmed answer did not run the command")
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
}

// TestRealAgentsApprovalAnsweredFromTheChat: the command approvals of
// Codex, Gemini CLI, Copilot CLI, Qwen Code and OpenCode, answered from the chat by
// their first option, run the canary command; the watcher typed into that
// dialog only.
func TestRealAgentsApprovalAnsweredFromTheChat(t *testing.T) {
	t.Parallel()
	for _, a := range realAgents {
		t.Run(a.name, func(t *testing.T) {
			if a.approval == "" {
				t.Skipf("%s asks no approval before a tool", a.name)
			}
			s, _ := a.start(t)
			s.Type(t, a.bash)
			s.Settle(t, realTimeout, "the approval dialog", true, termagent.Contains(a.approval))
			// The loop runs with the agent's HOME: Codex's session log there
			// must say its turn is open before a key is sent.
			r := startLoop(t, loopOptions{target: s.Launch.Name, env: []string{"OMEGA_TELEGRAM_CONF=" + answersConf(t)}, userHome: s.Launch.Home,
				flags: []string{"--mux", s.Tmux.Mux, "--interval", "60", "--work-probe", "echo 3"}})
			r.waitLine("escalated to the operator", realTimeout)
			offers, err := statedir.Dir(r.state).ReadOffers()
			if err != nil || len(offers.Offers) == 0 {
				t.Fatalf("no buttons offered for %s's approval: %+v %v\nscreen:\n%s", a.name, offers, err, s.Capture(t))
			}
			first := offers.Offers[0]
			answerAs(t, r, first.Label, false)
			if _, typed := typedOrCancelled(t, r, s.Launch.Dir); !typed {
				return
			}
			deadline := time.Now().Add(realTimeout)
			for {
				if _, err := os.Stat(filepath.Join(s.Launch.Dir, fakeapi.BashMarker)); err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s's approval answered %q did not run the canary\nscreen:\n%s", a.name, first.Label, s.Capture(t))
				}
				time.Sleep(250 * time.Millisecond)
			}
		})
	}
}

// TestRealQwenAndCopilotAnsweredFromTheChat: Qwen Code's, Copilot CLI's
// and OpenCode's command approvals, answered from the chat. Yes (OpenCode's
// Allow once): the command runs, the model hears its result, and no words
// of a user reach it after the tap: nothing but the answer's keys was
// typed. Copilot's Esc, a button of its own, and OpenCode's Reject, two
// Rights along its row of buttons away: the command never runs, and the
// model hears no words.
func TestRealQwenAndCopilotAnsweredFromTheChat(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		agent, label, dialogGone string
		ran                      bool
	}{
		{"qwen", "Yes, allow once", "Allow execution of:", true},
		{"copilot", "Yes", "Do you want to run this command?", true},
		{"copilot", "Esc: cancel", "Do you want to run this command?", false},
		{"opencode", "Allow once", "Permission required", true},
		{"opencode", "Reject", "Permission required", false},
	} {
		t.Run(c.agent+"/"+c.label, func(t *testing.T) {
			i := slices.IndexFunc(realAgents, func(a realAgent) bool { return a.name == c.agent })
			a := realAgents[i]
			s, api := a.start(t)
			s.Type(t, a.bash)
			s.Settle(t, realTimeout, "the approval dialog", true, termagent.Contains(a.approval))
			r := startLoop(t, loopOptions{target: s.Launch.Name, env: []string{"OMEGA_TELEGRAM_CONF=" + answersConf(t)}, userHome: s.Launch.Home,
				flags: []string{"--mux", s.Tmux.Mux, "--interval", "60", "--work-probe", "echo 3"}})
			r.waitLine("escalated to the operator", realTimeout)
			n := len(api.Requests())
			o := answerAs(t, r, c.label, false)
			lines, typed := typedOrCancelled(t, r, s.Launch.Dir)
			if !typed {
				return
			}
			if res, err := statedir.Dir(r.state).ReadResult(o.Nonce); err != nil || res.Outcome != statedir.AnswerTyped {
				t.Errorf("result: %+v, %v\n%s", res, err, strings.Join(lines, "\n"))
			}
			deadline := time.Now().Add(realTimeout)
			for c.ran && !slices.ContainsFunc(api.Requests()[n:], func(q fakeapi.Request) bool { return q.ToolResult }) {
				if time.Now().After(deadline) {
					t.Fatalf("the model never heard the command's result:\n%s", strings.Join(requestsSince(api, n), "\n"))
				}
				time.Sleep(200 * time.Millisecond)
			}
			s.WaitFor(t, realTimeout, "the input back, the dialog gone", func(screen string) bool {
				return !strings.Contains(screen, c.dialogGone) && a.idle(screen)
			})
			_, err := os.Stat(filepath.Join(s.Launch.Dir, fakeapi.BashMarker))
			if ran := err == nil; ran != c.ran {
				t.Errorf("answered %s: the command ran = %v, want %v", c.label, ran, c.ran)
			}
			for _, q := range api.Requests()[n:] {
				if q.HasText && !q.ToolResult && (a.side == nil || !a.side(q.Text)) {
					t.Errorf("the model heard a user's words after the tap: %q\n%s", q.Text, strings.Join(requestsSince(api, n), "\n"))
				}
			}
		})
	}
}

// TestRealClaudeAnsweredFromThePhone: the whole way, as the operator has
// it: the real Claude Code asks to run a command; the watcher's real funnel
// sends the question to the (fake) Bot API with its options as buttons; the
// operator taps No; the real receiver takes the tap and wakes the watcher,
// which types the answer into that dialog; the message is edited to say so.
// The command never runs.
func TestRealClaudeAnsweredFromThePhone(t *testing.T) {
	api := fakeapi.New(t)
	s := startClaude(t, api, claudecode.Manual)
	isDialog := shows("Do you want to proceed?", fakeapi.BashCommand)
	dialog(t, s, "now "+fakeapi.TriggerBash, isDialog)

	const chat = 42
	tg := fakeapi.NewTelegram(t, "123456789:AAHfakeTokenForTheEndToEndTest0123")
	home := t.TempDir()
	conf := filepath.Join(home, "telegram.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, "bot_token=%s\nchat_id=%d\nanswers=on\n", tg.Token, chat), 0o600); err != nil {
		t.Fatal(err)
	}
	funnel := filepath.Join(home, "omega-alert-send.sh")
	if err := os.WriteFile(funnel, scripts.AlertSend, 0o700); err != nil {
		t.Fatal(err)
	}
	stateHome := filepath.Join(home, "state")
	state := filepath.Join(stateHome, "monitor-"+s.Name)
	env := []string{"OMEGA_TELEGRAM_CONF=" + conf, "OMEGA_TELEGRAM_API=" + tg.URL, "OMEGA_MONITOR_ALERT_SEND=" + funnel,
		"OMEGA_MONITOR_HOME=" + stateHome, "OMEGA_MONITOR_STATE=" + state}

	receiver := exec.Command(filepath.Join(filepath.Dir(omegaMonitor(t)), "omega-monitor-relay"), "serve")
	receiver.Env = append([]string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}, env...)
	var said syncBuffer
	receiver.Stdout, receiver.Stderr = &said, &said
	if err := receiver.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		receiver.Process.Signal(syscall.SIGTERM)
		receiver.Wait()
		t.Logf("receiver:\n%s", said.String())
	})

	r := startLoop(t, loopOptions{target: s.Name, env: env, userHome: s.Home,
		flags: []string{"--mux", s.Tmux.Mux, "--interval", "60", "--work-probe", "echo 3"}})
	r.waitLine("escalated to the operator", realTimeout)

	// The question, with a button an option, as the funnel sent it.
	var sent fakeapi.BotCall
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		for _, c := range tg.Calls("sendMessage") {
			if c.Form.Get("reply_markup") != "" {
				sent = c
				return poll.Success()
			}
		}
		return poll.Continue("no question with buttons sent yet: %+v", tg.Calls(""))
	}, poll.WithTimeout(realTimeout))
	var markup struct {
		InlineKeyboard [][]struct {
			Text         string `json:"text"`
			CallbackData string `json:"callback_data"`
		} `json:"inline_keyboard"`
	}
	if err := json.Unmarshal([]byte(sent.Form.Get("reply_markup")), &markup); err != nil {
		t.Fatal(err)
	}
	nonce := ""
	for _, row := range markup.InlineKeyboard {
		if strings.HasSuffix(row[0].Text, ". No") {
			nonce = row[0].CallbackData
		}
	}
	if nonce == "" {
		t.Fatalf("no button for No: %s", sent.Form.Get("reply_markup"))
	}

	tg.Push(map[string]any{"callback_query": map[string]any{
		"id": "cq1", "chat_instance": "1", "data": nonce,
		"from": map[string]any{"id": chat, "is_bot": false, "first_name": "Ada"},
		"message": map[string]any{
			"message_id": 1001, "date": time.Now().Unix(),
			"chat":         map[string]any{"id": chat, "type": "private"},
			"from":         map[string]any{"id": tg.BotID, "is_bot": true, "first_name": "omega"},
			"text":         sent.Form.Get("text"),
			"reply_markup": json.RawMessage(sent.Form.Get("reply_markup")),
		},
	}})
	r.waitLine("answer typed: No", realTimeout)
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		for _, c := range tg.Calls("editMessageText") {
			if strings.Contains(c.Form.Get("text"), "No") {
				return poll.Success()
			}
		}
		return poll.Continue("the message was not edited with the answer: %+v", tg.Calls(""))
	}, poll.WithTimeout(realTimeout))
	time.Sleep(2 * time.Second)
	if _, err := os.Stat(filepath.Join(s.Dir, fakeapi.BashMarker)); err == nil {
		t.Errorf("answered No from the phone, and %s ran", fakeapi.BashCommand)
	}
	if isDialog(string(s.Capture(t))) {
		t.Error("the dialog is still there")
	}
}
