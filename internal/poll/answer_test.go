package poll

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/capture"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/statedir/event"
	"github.com/omega-monitor/omega-monitor/tick"
)

var t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

func goldenPane(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "golden", "panes", name+".pane"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// tickAt runs one poll over pane at now, with answers on, and returns its
// line. The pane is the agent's own (asAgent).
func tickAt(t *testing.T, dir, pane string, now time.Time) string {
	t.Helper()
	line, err := Tick(Request{Dir: dir, Settings: answering(false), Readings: workOf7, Now: now, Capture: asAgent(t, pane, now)}, strings.NewReader(pane))
	if err != nil {
		t.Fatal(err)
	}
	return heldOr(t, dir, line)
}

// heldOr is a poll's line: line, or when the poll held it for a nudge
// handed over, the held line as it reads once the nudge is typed.
func heldOr(t *testing.T, dir, line string) string {
	t.Helper()
	if line != "" {
		return line
	}
	p, err := stateDirectory(dir).readPending()
	if err != nil || p.Line == nil {
		return line
	}
	return p.Line.Say(p.Line.Nudge)
}

// agentPID is the process the tests' agents run as.
const agentPID = 4242

// asAgent is how a test's bare pane reads as the agent's own, as a real
// one does: the agent whose screen it is runs in the pane's foreground (a
// process named as its program), and where it keeps its own status, that
// says what the screen shows: Claude Code's status file waiting on a
// question, busy on a turn, idle else; Codex's session log with its turn
// open on a question or a turn, ended else.
func asAgent(t testing.TB, pane string, now time.Time) capture.Options {
	t.Helper()
	s, err := classify.ReadScreen(strings.NewReader(pane))
	if err != nil {
		t.Fatal(err)
	}
	r := classify.Classify(s, classify.Options{})
	program := map[string]string{"Claude Code": "claude", "Codex CLI": "codex", "Gemini CLI": "gemini"}[r.Agent]
	fg := tick.Foreground{Known: true, Procs: []tick.Process{{PID: agentPID, Start: "77", Comm: program, Args: []string{program}}}}
	o := capture.Options{Now: now, Foreground: &fg}
	status := map[classify.State]string{classify.Question: "waiting", classify.Working: "busy"}[r.State]
	if status == "" {
		status = "idle"
	}
	var data string
	switch r.Agent {
	case "Claude Code":
		data = fmt.Sprintf(`{"status":%q,"updatedAt":%d,"statusUpdatedAt":%d}`, status, now.UnixMilli(), t0.Add(-time.Hour).UnixMilli())
	case "Codex CLI":
		ts := now.UTC().Format(time.RFC3339Nano)
		turn := "task_started"
		if status == "idle" {
			turn = "task_complete"
		}
		data = `{"timestamp":"` + ts + `","type":"session_meta","payload":{"cli_version":"0.171.0"}}` + "\n" +
			`{"timestamp":"` + ts + `","type":"event_msg","payload":{"type":"` + turn + `"}}` + "\n"
	default:
		return o
	}
	o.StatusFile = filepath.Join(t.TempDir(), "status.json")
	if err := os.WriteFile(o.StatusFile, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return o
}

// cursorOn moves a Claude Code dialog's cursor to option pos, as a key
// press would.
func cursorOn(pane string, pos int) string {
	lines := strings.Split(pane, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, " ❯ ") {
			lines[i] = "   " + strings.TrimPrefix(l, " ❯ ")
		}
	}
	for i, l := range lines {
		if strings.HasPrefix(l, "   "+string(rune('0'+pos))+". ") {
			lines[i] = " ❯ " + strings.TrimPrefix(l, "   ")
		}
	}
	return strings.Join(lines, "\n")
}

type answerWorld struct {
	t     *testing.T
	d     statedir.Dir
	pane  string
	offer statedir.OffersRecord
}

// relayed is a watcher that relayed a Claude Code permission prompt with
// answers on.
func relayed(t *testing.T) *answerWorld {
	t.Helper()
	w := &answerWorld{t: t, d: statedir.Dir(filepath.Join(t.TempDir(), "w")), pane: goldenPane(t, "claude-328-permission")}
	// A question is paged on its second look, QuestionSettle after the
	// first.
	tickAt(t, string(w.d), w.pane, t0.Add(-tick.QuestionSettle))
	line := tickAt(t, string(w.d), w.pane, t0)
	if !strings.Contains(line, "escalated to the operator") {
		t.Fatalf("the question was not relayed: %s", line)
	}
	var err error
	if w.offer, err = w.d.ReadOffers(); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *answerWorld) request(pos int, confirmed bool, at time.Time) statedir.AnswerRequest {
	w.t.Helper()
	r := statedir.AnswerRequest{Nonce: w.offer.Offers[pos-1].Nonce, FromID: 42, From: "op", ChatID: 42, MessageID: 7, At: at, Confirmed: confirmed}
	if err := w.d.WriteRequest(r); err != nil {
		w.t.Fatal(err)
	}
	return r
}

func (w *answerWorld) result(nonce string) statedir.AnswerResult {
	w.t.Helper()
	r, err := w.d.ReadResult(nonce)
	if err != nil {
		w.t.Fatalf("no result for %s: %v", nonce, err)
	}
	return r
}

// answerAction is the answer handed to the loop: its steps, and its
// record.
func (w *answerWorld) answerAction() (steps string, a answerAction, ok bool) {
	w.t.Helper()
	path := w.d.Path(filepath.Join(statedir.Actions, "000"+AnswerSuffix))
	data, err := os.ReadFile(path)
	if err != nil {
		return "", a, false
	}
	a, err = stateDirectory(w.d).readAnswer(path)
	if err != nil {
		w.t.Fatal(err)
	}
	return string(data), a, true
}

// TestRelayedQuestionOffersItsOptions: a question whose dialog can be
// answered is queued with a button an option, each a nonce of its own
// that the offers bind to the dialog's key.
func TestRelayedQuestionOffersItsOptions(t *testing.T) {
	t.Parallel()
	w := relayed(t)
	var labels []string
	for _, o := range w.offer.Offers {
		labels = append(labels, o.Label)
		if !statedir.IsNonce(o.Nonce) || o.Spent || !o.Expires.Equal(t0.Add(statedir.OfferLife)) {
			t.Errorf("offer %+v", o)
		}
	}
	if w.offer.Key == "" {
		t.Error("the offers are bound to no dialog")
	}
	want := []string{"Yes", "Yes, and don't ask again for go test commands in /root/work", "Yes, and switch to auto mode · shift+tab", "No", "Esc: cancel"}
	if diff := cmp.Diff(want, labels); diff != "" {
		t.Errorf("offers (-want +got):\n%s", diff)
	}
	names, _ := w.d.PendingAlerts()
	if len(names) != 1 {
		t.Fatalf("outbox: %q", names)
	}
	markup, err := os.ReadFile(filepath.Join(w.d.Path(statedir.Outbox), names[0]+statedir.MarkupSuffix))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		InlineKeyboard [][]struct {
			Text         string `json:"text"`
			CallbackData string `json:"callback_data"`
		} `json:"inline_keyboard"`
	}
	if err := json.Unmarshal(markup, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.InlineKeyboard) != 5 || m.InlineKeyboard[3][0].Text != "4. No" || m.InlineKeyboard[3][0].CallbackData != w.offer.Offers[3].Nonce {
		t.Errorf("markup: %s", markup)
	}
	// The dialog offers Esc: its own button, last, saying what it does.
	if esc := m.InlineKeyboard[4][0]; esc.Text != "Esc: cancel" || esc.CallbackData != w.offer.Offers[4].Nonce || !w.offer.Offers[4].Esc {
		t.Errorf("the Esc button: %s", markup)
	}
}

// TestAnswerByEsc: the dialog's Esc, tapped, becomes an answer whose one
// key is Escape, with no Enter after it, and a look after it.
func TestAnswerByEsc(t *testing.T) {
	t.Parallel()
	w := relayed(t)
	if err := w.d.WriteRequest(statedir.AnswerRequest{Nonce: w.offer.Offers[4].Nonce, From: "op", FromID: 42, ChatID: 42, At: t0.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	line := tickAt(t, string(w.d), w.pane, t0.Add(time.Minute))
	if !strings.Contains(line, `answer from op taken: "Esc: cancel", to be typed`) {
		t.Errorf("line: %s", line)
	}
	steps, a, ok := w.answerAction()
	want := "capture fresh\nconfirm answer fresh 0\nkeys Escape\ncapture after\nconfirm answered after 200000\nwake\nack answer_typed\n"
	if diff := cmp.Diff(want, steps); !ok || diff != "" || !a.Esc || a.Pos != 0 {
		t.Fatalf("answer action %+v %v, steps (-want +got):\n%s", a, ok, diff)
	}
}

// TestAnswerAcceptedForTheSameDialog: a request for an option of the
// dialog still on the screen becomes an answer action (the keys that move
// the cursor there), is taken once, and spends its offer.
func TestAnswerAcceptedForTheSameDialog(t *testing.T) {
	t.Parallel()
	w := relayed(t)
	r := w.request(4, false, t0.Add(time.Minute))
	line := tickAt(t, string(w.d), w.pane, t0.Add(time.Minute))
	if !strings.Contains(line, `answer from op taken: "No", to be typed`) {
		t.Errorf("line: %s", line)
	}
	steps, a, ok := w.answerAction()
	if !ok || a.Pos != 4 || a.Nonce != r.Nonce || a.Key != w.offer.Key || a.Start != 1 || a.Agent.PID != agentPID {
		t.Fatalf("answer action %+v %v", a, ok)
	}
	// One key at a time, each looked at before the next.
	want := "capture fresh\nconfirm answer fresh 0\n" +
		"keys Down\ncapture move1\nconfirm at:2 move1 200000\n" +
		"keys Down\ncapture move2\nconfirm at:3 move2 200000\n" +
		"keys Down\ncapture move3\nconfirm selected move3 200000\n" +
		"keys Enter\ncapture after\nconfirm answered after 200000\nwake\nack answer_typed\n"
	if diff := cmp.Diff(want, steps); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	if rs, _ := w.d.Requests(); len(rs) != 0 {
		t.Errorf("the request was not taken: %+v", rs)
	}
	offers, _ := w.d.ReadOffers()
	if !offers.Offers[3].Spent || offers.Offers[0].Spent {
		t.Errorf("offers after: %+v", offers.Offers)
	}
}

// TestAnswersRefused: each request that cannot be typed into the dialog
// on the screen is refused with its reason as its result, and hands the
// loop nothing.
func TestAnswersRefused(t *testing.T) {
	t.Parallel()
	stalled := goldenPane(t, "GOLDEN-stalled-real")
	for _, c := range []struct {
		name string
		make func(w *answerWorld) statedir.AnswerRequest
		pane func(w *answerWorld) string
		at   time.Duration
		why  string
	}{
		{"gone", func(w *answerWorld) statedir.AnswerRequest { return w.request(1, false, t0) },
			func(*answerWorld) string { return stalled }, time.Minute, "the question is no longer on the screen"},
		{"expired", func(w *answerWorld) statedir.AnswerRequest { return w.request(1, false, t0) },
			func(w *answerWorld) string { return w.pane }, statedir.OfferLife, "the question was relayed more than 10m0s ago"},
		{"widens unconfirmed", func(w *answerWorld) statedir.AnswerRequest { return w.request(2, false, t0) },
			func(w *answerWorld) string { return w.pane }, time.Minute, "this option widens what the agent may do: it takes a second tap to confirm"},
		{"another dialog", func(w *answerWorld) statedir.AnswerRequest { return w.request(1, false, t0) },
			func(w *answerWorld) string { return strings.Replace(w.pane, "go test ./...", "rm -rf ./...", 1) }, time.Minute,
			"the dialog on the screen is not the question relayed"},
		{"forged", func(w *answerWorld) statedir.AnswerRequest {
			r := statedir.AnswerRequest{Nonce: "0123456789abcdef0123456789abcdef", From: "op", At: t0}
			if err := w.d.WriteRequest(r); err != nil {
				t.Fatal(err)
			}
			return r
		}, func(w *answerWorld) string { return w.pane }, time.Minute, "not a button of the question waiting (it was replaced, or never offered)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := relayed(t)
			r := c.make(w)
			line := tickAt(t, string(w.d), c.pane(w), t0.Add(c.at))
			if !strings.Contains(line, "answer from op refused: "+c.why) {
				t.Errorf("line: %s", line)
			}
			if got := w.result(r.Nonce); got.Outcome != statedir.AnswerRefused || got.Why != c.why {
				t.Errorf("result %+v, want refused: %s", got, c.why)
			}
			if _, _, ok := w.answerAction(); ok {
				t.Error("a refused answer was handed to the loop")
			}
			if rs, _ := w.d.Requests(); len(rs) != 0 {
				t.Errorf("a refused request stayed: %+v", rs)
			}
		})
	}
}

// TestAnswerTakenOnce: a button answered once is refused when its nonce
// comes again; of two answers at once, the first is taken and the other
// refused.
func TestAnswerTakenOnce(t *testing.T) {
	t.Parallel()
	w := relayed(t)
	first := w.request(1, false, t0.Add(time.Second))
	second := w.request(4, false, t0.Add(2*time.Second))
	tickAt(t, string(w.d), w.pane, t0.Add(time.Minute))
	if _, a, ok := w.answerAction(); !ok || a.Nonce != first.Nonce {
		t.Fatalf("answer action %+v %v, want the first", a, ok)
	}
	if got := w.result(second.Nonce); got.Why != "another answer to this question was taken first" {
		t.Errorf("the second answer: %+v", got)
	}
	// The same button again, later: spent.
	os.Remove(w.d.Path(filepath.Join(statedir.Actions, "000"+AnswerSuffix)))
	w.d.Settle(first.Nonce)
	again := first
	again.At = t0.Add(2 * time.Minute)
	if err := w.d.WriteRequest(again); err != nil {
		t.Fatal(err)
	}
	tickAt(t, string(w.d), w.pane, t0.Add(2*time.Minute))
	if got := w.result(first.Nonce); got.Why != "this button was already answered" {
		t.Errorf("the same button again: %+v", got)
	}
}

// halfDrawn is pane as a capture finds it while the agent redraws it from
// the top: its first lines, and the rest not yet there.
func halfDrawn(pane string) string {
	lines := strings.Split(pane, "\n")
	return strings.Join(lines[:len(lines)*2/3], "\n") + "\n"
}

// TestConfirmAnswerStages: the looks around an answer's keys: the same
// dialog before the first key, its cursor where it was; the cursor one
// step on after each move (a screen not yet redrawn is looked at again);
// on the option before Enter; after Enter, the answer is typed whatever
// shows (the same dialog still there: asked again); each refusal is the
// answer's result.
func TestConfirmAnswerStages(t *testing.T) {
	t.Parallel()
	stalled := goldenPane(t, "GOLDEN-stalled-real")
	for _, c := range []struct {
		name, stage string
		pane        func(w *answerWorld) string
		why         string // "" for ok
		// idle, when not 0, frames the pane with the multiplexer's line:
		// a client on the pane's window, its last input idle seconds ago.
		idle int
		// settle says the step looks again at a screen still redrawn:
		// code 3, nothing recorded.
		settle bool
		// again says the answer is typed, the same dialog still there.
		again bool
	}{
		{"same dialog", AnswerBefore, func(w *answerWorld) string { return w.pane }, "", 0, false, false},
		{"changed", AnswerBefore, func(w *answerWorld) string { return strings.Replace(w.pane, "go test", "rm -rf", 1) },
			"the question on the screen changed before the answer was typed", 0, false, false},
		{"cursor moved since", AnswerBefore, func(w *answerWorld) string { return cursorOn(w.pane, 2) },
			"the cursor moved to option 2 since the answer was taken; nothing typed", 0, false, false},
		{"one step on", stageAt(2), func(w *answerWorld) string { return cursorOn(w.pane, 2) }, "", 0, false, false},
		{"not yet redrawn", stageAt(2), func(w *answerWorld) string { return w.pane }, "", 0, true, false},
		{"not yet redrawn, no more looks", stageAt(2), func(w *answerWorld) string { return w.pane },
			"the cursor is still on option 1 after the key, not on 2; nothing more typed", 0, false, false},
		// A capture that caught the dialog half redrawn after a key.
		{"half redrawn", stageAt(2), func(w *answerWorld) string { return halfDrawn(cursorOn(w.pane, 2)) }, "", 0, true, false},
		{"changed at the last look", stageAt(2), func(w *answerWorld) string { return halfDrawn(cursorOn(w.pane, 2)) },
			"the question on the screen changed while the cursor moved; nothing more typed", 0, false, false},
		{"two steps on", stageAt(2), func(w *answerWorld) string { return cursorOn(w.pane, 3) },
			"the cursor is on option 3, not on 2; nothing more typed", 0, false, false},
		{"cursor there", AnswerSelected, func(w *answerWorld) string { return cursorOn(w.pane, 4) }, "", 0, false, false},
		{"cursor elsewhere", AnswerSelected, func(w *answerWorld) string { return cursorOn(w.pane, 2) },
			"the cursor is on option 2, not on 4; Enter withheld", 0, false, false},
		{"moved on", AnswerDone, func(*answerWorld) string { return stalled }, "", 0, false, false},
		{"still there, looked at again", AnswerDone, func(w *answerWorld) string { return cursorOn(w.pane, 4) }, "", 0, true, false},
		{"still there at the last look: asked again", AnswerDone, func(w *answerWorld) string { return cursorOn(w.pane, 4) }, "", 0, false, true},
		// The operator's own answer is not held for a human at the agent;
		// it waits out a human's keys, which would meet its own.
		{"a human at the agent, quiet", AnswerBefore, func(w *answerWorld) string { return w.pane }, "", 30, false, false},
		{"a human typing, before the first key", AnswerBefore, func(w *answerWorld) string { return w.pane },
			"a human typed at the agent 2s ago: the dialog may be being answered there", 2, false, false},
		{"a human typing, before Enter", AnswerSelected, func(w *answerWorld) string { return cursorOn(w.pane, 4) },
			"a human typed at the agent 1s ago: the dialog may be being answered there; Enter withheld", 1, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := relayed(t)
			r := w.request(4, false, t0)
			tickAt(t, string(w.d), w.pane, t0.Add(time.Minute))
			action := w.d.Path(filepath.Join(statedir.Actions, "000"+AnswerSuffix))
			now := t0.Add(time.Minute)
			pane := c.pane(w)
			opt := asAgent(t, w.pane, now) // the agent waits, whatever the screen
			if c.idle > 0 {
				status, _ := os.ReadFile(opt.StatusFile)
				status = []byte(strings.Replace(string(status), "{", `{"tmux":"agent:@0.%0",`, 1))
				pane = fmt.Sprintf("[omega-monitor:mux] 1000 @0 1:%d@0\nagent:@0.%%0\t/w\n%s\n%s\n%s\n%s", 1000-c.idle, status, capture.StatusEnd, capture.PaneMark, pane)
				opt.Framed, opt.StatusFile = true, ""
			}
			req := ConfirmRequest{Dir: string(w.d), Target: "agent", Action: action, Stage: tick.Stage(c.stage), Now: now, Capture: opt, Try: 1}
			if c.settle {
				req.settle = true
			}
			line, look := ConfirmStep(req, strings.NewReader(pane))
			switch {
			case c.settle:
				if look != LookAgain || line != "" {
					t.Fatalf("look %d, line %q; want a look again", look, line)
				}
				return
			case (look == GoOn) != (c.why == ""):
				t.Fatalf("look %d, line %q; want refusal %q", look, line, c.why)
			case look == GoOn:
				if a, _ := stateDirectory(w.d).readAnswer(action); a.Again != c.again {
					t.Errorf("again = %v, want %v", a.Again, c.again)
				}
				if _, err := os.Stat(stateDirectory(w.d).conditionPath()); err != nil {
					t.Errorf("no condition written for the next key: %v", err)
				}
				return
			}
			if got := w.result(r.Nonce); got.Outcome != statedir.AnswerRefused || got.Why != c.why {
				t.Errorf("result %+v, want %q", got, c.why)
			}
			if fileExists(action) {
				t.Error("a refused answer's action stayed")
			}
			h, _ := os.ReadFile(w.d.Path(statedir.History))
			if !strings.Contains(string(h), `"event":"`+event.AnswerRefused+`"`) {
				t.Errorf("history: %s", h)
			}
			if l, _ := os.ReadFile(w.d.Path(statedir.Log)); !strings.Contains(string(l), line) {
				t.Errorf("the line %q is not in monitor.log:\n%s", line, l)
			}
		})
	}
}

// TestAnswerTypedIsAcked: the loop's ack of a typed answer is its result,
// and a stale answer the loop never finished is refused at the next poll.
func TestAnswerTypedIsAcked(t *testing.T) {
	t.Parallel()
	w := relayed(t)
	r := w.request(1, false, t0)
	tickAt(t, string(w.d), w.pane, t0.Add(time.Minute))
	action := w.d.Path(filepath.Join(statedir.Actions, "000"+AnswerSuffix))
	if line := Ack(string(w.d), "agent", action, event.AnswerTyped, "", t0.Add(time.Minute)); !strings.Contains(line, "answer typed: Yes · by op") {
		t.Errorf("ack line: %q", line)
	}
	if got := w.result(r.Nonce); got.Outcome != statedir.AnswerTyped || got.Label != "Yes" {
		t.Errorf("result: %+v", got)
	}

	w2 := relayed(t)
	r2 := w2.request(1, false, t0)
	tickAt(t, string(w2.d), w2.pane, t0.Add(time.Minute))
	tickAt(t, string(w2.d), w2.pane, t0.Add(2*time.Minute)) // the loop never acked
	if got := w2.result(r2.Nonce); got.Outcome != statedir.AnswerRefused || got.Why != "the watcher did not finish typing it" {
		t.Errorf("stale answer: %+v", got)
	}
}

// TestAgentWaits: an answer's keys go only while the agent's own word,
// where it keeps one, says it waits for a human: Claude Code's status file
// must be there and say so; Codex's log must be there, its turn open;
// Gemini CLI keeps none.
func TestAgentWaits(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		status, agent string
		want          bool
	}{
		{"", "Claude Code", false}, // no status file: nothing says it waits
		{"waiting", "Claude Code", true},
		{"busy", "Claude Code", false},
		{"idle", "Claude Code", false},
		{"", "Codex CLI", false},
		{"busy", "Codex CLI", true}, // its turn is open while it asks
		{"idle", "Codex CLI", false},
		{"", "Gemini CLI", true},
		{"idle", "Gemini CLI", false},
	} {
		var w *tick.Witness
		if c.status != "" {
			w = &tick.Witness{Status: c.status}
		}
		if why := agentWaits(w, c.agent); (why == "") != c.want {
			t.Errorf("agentWaits(%q, %q) = %q, want waiting %v", c.status, c.agent, why, c.want)
		}
	}
}
