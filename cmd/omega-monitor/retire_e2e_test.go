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

	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
	"github.com/omega-monitor/omega-monitor/internal/watcher"
	"github.com/omega-monitor/omega-monitor/scripts"
)

// TestQuestionLeavesTheScreenAndItsButtonsGo: a scripted agent in a real
// tmux pane asks a permission; the real funnel sends it to a (fake) Bot API
// with its buttons, and says which message it is; the operator answers at
// the terminal; the watcher sees the dialog gone, twice, and retires its
// offers; the real receiver removes the message's buttons and appends why.
// The agent asks the same question again: it is relayed again, in a new
// message with new nonces; a tap on an old button is refused, and nothing
// is typed.
func TestQuestionLeavesTheScreenAndItsButtonsGo(t *testing.T) {
	t.Parallel()
	s := testenv.Tmux(t)
	agentHome, status := agentHome(t)
	log := startAgent(t, s, "agent", "AGENT_MODE=question", "AGENT_DIALOG=menu", "AGENT_ASK_AFTER=1", "AGENT_ASK_IDLE=2", "AGENT_WORK=1", status)

	const chat = 42
	tg := fakeapi.NewTelegram(t, "123456789:AAHfakeTokenForTheRetireTest0123456")
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
	state := filepath.Join(stateHome, "monitor-agent")
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

	// work=0: the idle screen after the answer is BLOCKED, never nudged.
	r := startLoop(t, loopOptions{target: "agent", env: env, userHome: agentHome,
		flags: []string{"--mux", s.Mux, "--interval", "60", "--work-probe", "echo 0"}})
	r.waitLine("escalated to the operator", 30*time.Second)
	d := statedir.Dir(state)
	first := recordedMessage(t, d, 0)
	if m, ok := tg.Message(chat, first.MessageID); !ok || !strings.Contains(m.Markup, first.Offers[0].Nonce) {
		t.Fatalf("message %d as the Bot API has it: %+v, %v; want the question's buttons", first.MessageID, m, ok)
	}

	// Answered at the terminal: Enter on its first option.
	s.Run(t, "send-keys", "-t", "agent", "Enter")
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if slices.Contains(received(t, log), "ANSWER 1 Yes") {
			return poll.Success()
		}
		return poll.Continue("the agent has not taken the answer")
	}, poll.WithTimeout(10*time.Second))
	// The watcher is woken (as an agent's hook would), looks, and looks
	// again 2 s later; the receiver edits the message within its sweep.
	wakeUntil(t, state, func() (bool, string) {
		m, _ := tg.Message(chat, first.MessageID)
		return m.Markup == "" && strings.Contains(m.Text, "⏹ "), fmt.Sprintf("message %d: %+v", first.MessageID, m)
	})
	m, _ := tg.Message(chat, first.MessageID)
	if !strings.Contains(m.Text, "QUESTION") || !strings.Contains(m.Text, "⏹ Left the screen at ") || strings.Count(m.Text, "⏹") != 1 {
		t.Errorf("the message now reads %q, want its own text and a line that the question left the screen", m.Text)
	}
	var edits []string
	for _, c := range tg.Calls("") {
		if strings.HasPrefix(c.Method, "edit") {
			edits = append(edits, c.Method+" "+c.Form.Get("message_id"))
		}
	}
	want := []string{fmt.Sprintf("editMessageReplyMarkup %d", first.MessageID), fmt.Sprintf("editMessageText %d", first.MessageID)}
	if !slices.Equal(edits, want) {
		t.Errorf("edits %q, want %q", edits, want)
	}
	if offers, _ := d.ReadOffers(); len(offers.Offers) != 0 {
		t.Errorf("offers after the question left: %+v", offers)
	}

	// The same question asked again: a line typed into the agent, a turn,
	// then the dialog once more. Relayed again, with new buttons.
	s.Run(t, "send-keys", "-t", "agent", "-l", "go on")
	s.Run(t, "send-keys", "-t", "agent", "Enter")
	wakeUntil(t, state, func() (bool, string) {
		o, _ := d.ReadOffers()
		return o.MessageID != 0 && o.MessageID != first.MessageID, fmt.Sprintf("offers %+v", o)
	})
	second := recordedMessage(t, d, first.MessageID)
	for i, o := range second.Offers {
		if slices.ContainsFunc(first.Offers, func(f statedir.Offer) bool { return f.Nonce == o.Nonce }) {
			t.Errorf("option %d of the question asked again has an old nonce", i+1)
		}
	}
	if m, _ := tg.Message(chat, second.MessageID); !strings.Contains(m.Markup, second.Offers[0].Nonce) {
		t.Errorf("the new message's buttons: %s", m.Markup)
	}

	// A tap on a button of the first message: refused, nothing typed.
	before := received(t, log)
	tg.Push(map[string]any{"callback_query": map[string]any{
		"id": "cq-old", "chat_instance": "1", "data": first.Offers[2].Nonce,
		"from": map[string]any{"id": chat, "is_bot": false, "first_name": "Ada"},
		"message": map[string]any{
			"message_id": first.MessageID, "date": time.Now().Unix(),
			"chat": map[string]any{"id": chat, "type": "private"},
			"from": map[string]any{"id": tg.BotID, "is_bot": true, "first_name": "omega"},
			"text": "QUESTION",
		},
	}})
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		for _, c := range tg.Calls("answerCallbackQuery") {
			if c.Form.Get("callback_query_id") == "cq-old" {
				if !strings.Contains(c.Form.Get("text"), "this question left the screen at ") {
					return poll.Error(fmt.Errorf("the old tap was answered %q", c.Form.Get("text")))
				}
				return poll.Success()
			}
		}
		return poll.Continue("the old tap is not answered: %s", said.String())
	}, poll.WithTimeout(20*time.Second))
	time.Sleep(time.Second)
	if got := received(t, log); !slices.Equal(got, before) {
		t.Errorf("the agent got %q after the old tap, want nothing more than %q", got, before)
	}
	if reqs, _ := d.Requests(); len(reqs) != 0 {
		t.Errorf("requests written for the old tap: %+v", reqs)
	}
}

// recordedMessage waits until deliver has recorded, with the offers, a
// message other than not, and returns the offers.
func recordedMessage(t *testing.T, d statedir.Dir, not int) statedir.OffersRecord {
	t.Helper()
	var o statedir.OffersRecord
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		o, _ = d.ReadOffers()
		if len(o.Offers) > 0 && o.MessageID > 0 && o.MessageID != not && o.ChatID == 42 {
			return poll.Success()
		}
		b, _ := json.Marshal(o)
		return poll.Continue("no message recorded with the offers: %s", b)
	}, poll.WithTimeout(30*time.Second))
	return o
}

// wakeUntil wakes the watcher's loop, as an agent's hook would, every
// second until done says so.
func wakeUntil(t *testing.T, state string, done func() (bool, string)) {
	t.Helper()
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if ok, why := done(); ok {
			return poll.Success()
		} else {
			if err := watcher.Wake(state); err != nil {
				return poll.Error(err)
			}
			return poll.Continue("%s", why)
		}
	}, poll.WithTimeout(45*time.Second), poll.WithDelay(time.Second))
}
