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

	"gotest.tools/v3/poll"

	"github.com/omega-monitor/omega-monitor/internal/claudecode"
	"github.com/omega-monitor/omega-monitor/internal/codex"
	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/termagent"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
	"github.com/omega-monitor/omega-monitor/internal/watcher"
	"github.com/omega-monitor/omega-monitor/scripts"
)

// freeWords are the operator's words in the tests below: quotes, a dollar
// sign, a semicolon and letters beyond ASCII, which a shell or send-keys
// would read as something else.
const freeWords = `use CSV; keep "quoted" $HOME as is, ünïcödé ✓`

// resultWith waits until the fake model hears a tool result holding words,
// and returns it.
func resultWith(t *testing.T, api *fakeapi.Server, words string) string {
	t.Helper()
	deadline := time.Now().Add(realTimeout)
	for {
		for _, q := range api.Requests() {
			if i := slices.IndexFunc(q.Results, func(r string) bool { return strings.Contains(r, words) }); i >= 0 {
				return q.Results[i]
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the model never heard the words %q in a tool result:\n%s", words, strings.Join(requestsSince(api, 0), "\n"))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestRealClaudeAnsweredByWordsFromThePhone: the whole way, for the
// operator's own words: the real Claude Code asks an AskUserQuestion; the
// real funnel sends it to the (fake) Bot API with its buttons and the
// sentence that a reply is typed as "Type something."; the operator
// replies to the message; the real receiver takes the reply and wakes the
// watcher, which moves to the field, types the words through the paste
// buffer, sees them there, and presses Enter; the model hears exactly the
// words in the tool's result, and the message says who answered what.
func TestRealClaudeAnsweredByWordsFromThePhone(t *testing.T) {
	api := fakeapi.New(t)
	s := startClaude(t, api, claudecode.Manual)
	dialog(t, s, "please "+fakeapi.TriggerAsk, shows("Which format should the history use?", "Enter to select"))

	const chat = 42
	tg := fakeapi.NewTelegram(t, "123456789:AAHfakeTokenForTheEndToEndTest0123")
	home := t.TempDir()
	conf := filepath.Join(home, "telegram.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, "bot_token=%s\nchat_id=%d\nanswers=on\nfree_text=on\n", tg.Token, chat), 0o600); err != nil {
		t.Fatal(err)
	}
	funnel := filepath.Join(home, "omega-alert-send.sh")
	if err := os.WriteFile(funnel, scripts.AlertSend, 0o700); err != nil {
		t.Fatal(err)
	}
	stateHome := filepath.Join(home, "state")
	state := filepath.Join(stateHome, "monitor-"+s.Name)
	env := []string{"OMEGA_TELEGRAM_CONF=" + conf, "OMEGA_TELEGRAM_API=" + tg.URL, "OMEGA_MONITOR_ALERT_SEND=" + funnel,
		"OMEGA_MONITOR_HOME=" + stateHome, "OMEGA_MONITOR_STATE=" + state, "HOME=" + s.Home}

	receiver := exec.Command(filepath.Join(filepath.Dir(omegaMonitor(t)), "omega-monitor-relay"), "serve")
	receiver.Env = append([]string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}, env[:len(env)-1]...)
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

	// With Claude Code's HOME: its own status must say it waits.
	r := startLoop(t, loopOptions{target: s.Name, env: env,
		flags: []string{"--mux", s.Tmux.Mux, "--interval", "60", "--work-probe", "echo 3"}})
	r.waitLine("escalated to the operator", realTimeout)

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
	if text := sent.Form.Get("text"); !strings.Contains(text, "A reply to this message is typed as your own words for <b>3. Type something.</b>") {
		t.Errorf("the question does not say a reply is typed:\n%s", text)
	}
	if markup := sent.Form.Get("reply_markup"); !strings.Contains(markup, `"✍ reply: 3. Type something."`) {
		t.Errorf("no reply button: %s", markup)
	}

	tg.Push(map[string]any{"message": map[string]any{
		"message_id": 2001, "date": time.Now().Unix(), "text": freeWords,
		"chat": map[string]any{"id": chat, "type": "private"},
		"from": map[string]any{"id": chat, "is_bot": false, "first_name": "Ada"},
		"reply_to_message": map[string]any{
			"message_id": 1001, "date": time.Now().Unix(),
			"chat":         map[string]any{"id": chat, "type": "private"},
			"from":         map[string]any{"id": tg.BotID, "is_bot": true, "first_name": "omega"},
			"text":         sent.Form.Get("text"),
			"reply_markup": json.RawMessage(sent.Form.Get("reply_markup")),
		},
	}})
	r.waitLine("answer typed: Type something.", realTimeout)
	if got := resultWith(t, api, freeWords); !strings.Contains(got, "Which format should the history use?") {
		t.Errorf("the tool result %q does not answer the question", got)
	}
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		for _, c := range tg.Calls("editMessageText") {
			if c.Form.Get("message_id") == "1001" && strings.Contains(c.Form.Get("text"), "answered “Type something.” with “"+freeWords+"”") {
				return poll.Success()
			}
		}
		return poll.Continue("the message was not edited with the words: %+v", tg.Calls(""))
	}, poll.WithTimeout(realTimeout))
	h, err := os.ReadFile(filepath.Join(state, statedir.History))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(h), `"event":"answer_typed"`) || !strings.Contains(string(h), `ünïcödé`) {
		t.Errorf("the history does not record the words typed:\n%s", h)
	}
}

// TestRealClaudeRefusedWithWords: the real Claude Code's permission prompt,
// answered from the chat with words for "No" (Tab to amend): the watcher
// moves to No, presses Tab, sees the field open and empty, types the
// words, sees them there, presses Enter; the command never runs and the
// model hears the words with the refusal.
func TestRealClaudeRefusedWithWords(t *testing.T) {
	api := fakeapi.New(t)
	s := startClaude(t, api, claudecode.Manual)
	isDialog := shows("Do you want to proceed?", fakeapi.BashCommand)
	dialog(t, s, "now "+fakeapi.TriggerBash, isDialog)
	conf := filepath.Join(t.TempDir(), "telegram.conf")
	if err := os.WriteFile(conf, []byte("bot_token=1:x\nchat_id=42\nanswers=on\nfree_text=on\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := startLoop(t, loopOptions{target: s.Name, env: []string{"OMEGA_TELEGRAM_CONF=" + conf, "HOME=" + s.Home},
		flags: []string{"--mux", s.Tmux.Mux, "--interval", "60", "--work-probe", "echo 3"}})
	r.waitLine("escalated to the operator", realTimeout)
	d := statedir.Dir(r.state)
	offers, err := d.ReadOffers()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(offers.Offers, func(o statedir.Offer) bool { return o.FreeText })
	if i < 0 || offers.Offers[i].Label != "No, and tell Claude what to do differently" {
		t.Fatalf("no field offered for No: %+v\nscreen:\n%s", offers.Offers, s.Capture(t))
	}
	if err := d.WriteRequest(statedir.AnswerRequest{Nonce: offers.Offers[i].Nonce, From: "op", FromID: 42, ChatID: 42, At: time.Now(), Text: freeWords}); err != nil {
		t.Fatal(err)
	}
	if err := watcher.Wake(r.state); err != nil {
		t.Fatal(err)
	}
	r.waitLine("answer typed: No, and tell Claude what to do differently", realTimeout)
	if got := resultWith(t, api, freeWords); !strings.Contains(got, "doesn't want to proceed") {
		t.Errorf("the tool result %q is not the refusal", got)
	}
	time.Sleep(2 * time.Second)
	if _, err := os.Stat(filepath.Join(s.Dir, fakeapi.BashMarker)); err == nil {
		t.Errorf("answered No with words, and %s ran", fakeapi.BashCommand)
	}
}

// TestRealCodexAnsweredByNotes: the real Codex CLI's request_user_input
// (Plan mode), answered from the chat with words: the watcher offers its
// notes line as the words of "None of the above", moves the cursor there,
// presses Tab, sees the notes line open and empty under the same dialog,
// pastes the words, sees exactly them there, and presses Enter; the model
// hears the option and the words together, as Codex sends them.
func TestRealCodexAnsweredByNotes(t *testing.T) {
	t.Parallel()
	api := fakeapi.NewResponses(t)
	omegaMonitor(t)
	bin := codex.Pin.Binary(t)
	realProgram(t)
	s := codex.Start(t, testenv.Tmux(t), codex.Config{Binary: bin, API: api.URL})
	s.WaitFor(t, realTimeout, "the composer", codex.Idle)
	// Shift+Tab into Plan mode, where its question tool works; a press
	// while Codex still draws its start is lost, so until it shows.
	for i := 0; !strings.Contains(s.Capture(t), "Plan mode"); i++ {
		if i == 10 {
			t.Fatalf("Codex never showed Plan mode:\n%s", s.Capture(t))
		}
		s.Keys(t, "BTab")
		time.Sleep(2 * time.Second)
	}
	s.Type(t, "please "+fakeapi.TriggerAsk)
	s.Settle(t, realTimeout, "the question", true, termagent.Contains("Which format should the history use?", "tab to add notes"))
	conf := filepath.Join(t.TempDir(), "telegram.conf")
	if err := os.WriteFile(conf, []byte("bot_token=1:x\nchat_id=42\nanswers=on\nfree_text=on\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := startLoop(t, loopOptions{target: s.Launch.Name, env: []string{"OMEGA_TELEGRAM_CONF=" + conf}, userHome: s.Launch.Home,
		flags: []string{"--mux", s.Tmux.Mux, "--interval", "60", "--work-probe", "echo 3"}})
	r.waitLine("escalated to the operator", realTimeout)
	d := statedir.Dir(r.state)
	offers, err := d.ReadOffers()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(offers.Offers, func(o statedir.Offer) bool { return o.FreeText })
	if i < 0 || offers.Offers[i].Label != "None of the above" || offers.Offers[i].Pos != 3 {
		t.Fatalf("no notes offered with None of the above: %+v\nscreen:\n%s", offers.Offers, s.Capture(t))
	}
	if err := d.WriteRequest(statedir.AnswerRequest{Nonce: offers.Offers[i].Nonce, From: "op", FromID: 42, ChatID: 42, At: time.Now(), Text: freeWords}); err != nil {
		t.Fatal(err)
	}
	if err := watcher.Wake(r.state); err != nil {
		t.Fatal(err)
	}
	r.waitLine("answer typed: None of the above", realTimeout)
	// The tool's output is JSON: the words' quotes arrive escaped.
	got := resultWith(t, api, "user_note: ")
	want := `{"answers":{"q1":{"answers":["None of the above","user_note: ` + strings.ReplaceAll(freeWords, `"`, `\"`) + `"]}}}`
	if got != want {
		t.Errorf("the model heard %s\nwant %s", got, want)
	}
	h, err := os.ReadFile(filepath.Join(r.state, statedir.History))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(h), `"keys":["Down","Down","Tab","(the words, pasted)","Enter"]`) {
		t.Errorf("the history does not record the keys sent:\n%s", h)
	}
}
