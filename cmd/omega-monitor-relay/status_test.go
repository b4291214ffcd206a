package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/golden"

	"github.com/omega-monitor/omega-monitor/internal/board/boardfix"
	"github.com/omega-monitor/omega-monitor/internal/relay"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// command is an update: user from sends text in chat, a message of their
// own that starts with a command.
func command(chat, from int64, text string) map[string]any {
	chatType := "private"
	if chat < 0 {
		chatType = "supergroup"
	}
	cmd, _, _ := strings.Cut(text, " ")
	return map[string]any{"message": map[string]any{
		"message_id": 77, "date": 1700000000, "text": text,
		"chat":     map[string]any{"id": chat, "type": chatType},
		"from":     map[string]any{"id": from, "is_bot": false, "first_name": "Ada"},
		"entities": []map[string]any{{"type": "bot_command", "offset": 0, "length": len(cmd)}},
	}}
}

// withFleet makes the world's state home a fleet the board reads: the
// agent's watcher live on a question (its loop the world's process),
// build's stale (its loop dead) and docs' stopped. Each time shown is far
// from a minute's edge: the golden board holds whatever the test's pace.
func (w *world) withFleet(t *testing.T) {
	t.Helper()
	now := time.Now().UTC()
	at := func(d time.Duration) string { return now.Add(d).Format(time.RFC3339) }
	agent := statedir.Dir(filepath.Join(w.state, "monitor-agent"))
	var loop statedir.LoopRecord
	if err := agent.ReadRecord(statedir.Loop, &loop); err != nil {
		t.Fatal(err)
	}
	boardfix.WriteDir(t, w.state, "monitor-agent", map[string]string{
		"loop.json": boardfix.LoopJSON(loop.Pid, loop.StartToken, now.Add(-30*time.Minute), 60, "agent"),
		"state.json": fmt.Sprintf(`{"version":1,"agent":"claude","budget":{"limit":5,"used":1},"state":"QUESTION","state_since":%q,"last_poll":%q,"last_explain":"QUESTION: a live dialog\n  agent:    claude\n  evidence: Do you want to proceed?"}`,
			at(-3*time.Minute-30*time.Second), at(-10*time.Second)),
		"monitor.log": "MONITOR · agent · WORKING · work=? · progress=? · nudges 1/5 · 10:00:00\nMONITOR · agent · QUESTION · escalated to the operator, NOT answered\n",
	})
	boardfix.WriteDir(t, w.state, "monitor-build", map[string]string{
		"loop.json":  boardfix.LoopJSON(999999999, "1", now.Add(-2*time.Hour), 60, "build-box:build"),
		"state.json": fmt.Sprintf(`{"version":1,"budget":{"limit":5,"used":5},"state":"STALLED","state_since":%q,"last_poll":%q}`, at(-50*time.Minute-30*time.Second), at(-38*time.Minute)),
	})
	boardfix.WriteDir(t, w.state, "monitor-docs", map[string]string{
		"loop.json":  boardfix.LoopJSON(999999998, "2", now.Add(-3*time.Hour), 60, "docs"),
		"ended.json": fmt.Sprintf(`{"at":%q,"by":"stop"}`, at(-time.Hour)),
		"state.json": fmt.Sprintf(`{"version":1,"budget":{"limit":5,"used":0},"state":"WORKING","state_since":%q,"last_poll":%q}`, at(-2*time.Hour-5*time.Minute-30*time.Second), at(-time.Hour)),
	})
}

// sent is the messages the bot sent: each one's form.
func (w *world) sent() []map[string]string {
	var out []map[string]string
	for _, c := range w.tg.Calls("sendMessage") {
		m := map[string]string{}
		for k := range c.Form {
			m[k] = c.Form.Get(k)
		}
		out = append(out, m)
	}
	return out
}

// oneSent is the text of the one message the bot sent after the first
// before ones, checked to be plain text (no parse mode, no entities)
// replying to the command, within Telegram's bound.
func (w *world) oneSent(t *testing.T, before int) string {
	t.Helper()
	sent := w.sent()[before:]
	if len(sent) != 1 {
		t.Fatalf("%d messages sent, want 1: %v\n%s", len(sent), sent, w.log())
	}
	m := sent[0]
	if m["parse_mode"] != "" || m["entities"] != "" {
		t.Errorf("not plain text: parse_mode %q, entities %q", m["parse_mode"], m["entities"])
	}
	if !strings.Contains(m["reply_parameters"], `"message_id":77`) {
		t.Errorf("not a reply to the command: %q", m["reply_parameters"])
	}
	if n := len(utf16.Encode([]rune(m["text"]))); n > 4096 {
		t.Errorf("a message of %d UTF-16 code units, past Telegram's 4096", n)
	}
	return m["text"]
}

// files lists the state home's files with their sizes and times, but the
// receiver's own (relay/): what /status must leave as it found it.
func (w *world) files(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(w.state, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == relay.Dir {
			return filepath.SkipDir
		}
		if info, err := d.Info(); err == nil {
			out[strings.TrimPrefix(path, w.state)] = fmt.Sprint(info.Size(), info.ModTime().UnixNano())
		}
		return nil
	})
	return out
}

// TestStatusBoard: /status from the allowed user in the configured chat
// gets the board in its phone form, as one plain-text message in reply;
// nothing of the state home changes, no watcher is woken, nothing is
// answered.
func TestStatusBoard(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, conf, text string
		chat, from       int64
	}{
		{"private chat", "chat_id=42\nanswers=on\n", "/status", private, private},
		{"a group, the bot named", "chat_id=-100500\nanswers=on\nallow_users=7\n", "/status@omega_bot", group, member},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, tt.conf)
			w.withFleet(t)
			w.start(t)
			before := w.files(t)
			w.handled(t, w.tg.Push(command(tt.chat, tt.from, tt.text)))
			golden.Assert(t, w.oneSent(t, 0), "status-board.golden")
			if diff := cmp.Diff(before, w.files(t)); diff != "" {
				t.Errorf("/status changed the state home (-before +after):\n%s", diff)
			}
			w.nothingDone(t)
			if c := w.tg.Calls("answerCallbackQuery"); len(c) > 0 {
				t.Errorf("callback queries answered: %v", c)
			}
			if !strings.Contains(w.log(), "/status by user") || !strings.Contains(w.log(), "sent the board (3 watchers)") {
				t.Errorf("the log does not say what was sent: %s", w.log())
			}
		})
	}
}

// TestStatusOne: /status NAME, by the watcher's target or its directory's
// name, gets its state, why it reads so and its last log lines; an unknown
// name gets one line, naming no other watcher.
func TestStatusOne(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "chat_id=42\nanswers=on\n")
	w.withFleet(t)
	w.start(t)
	for _, name := range []string{"agent", "monitor-agent"} {
		t.Run(name, func(t *testing.T) {
			before := len(w.sent())
			w.handled(t, w.tg.Push(command(private, private, "/status "+name)))
			text := w.oneSent(t, before)
			for _, want := range []string{
				"agent (monitor-agent)\nQUESTION for 3m · nudges 1/5\nlive: pid ",
				"needs you: question\nagent claude\n",
				"why it reads so:\nQUESTION: a live dialog\n  agent:    claude\n  evidence: Do you want to proceed?\n",
				"its last 2 log lines:\nMONITOR · agent · WORKING · work=? · progress=? · nudges 1/5 · 10:00:00\nMONITOR · agent · QUESTION · escalated to the operator, NOT answered\n",
			} {
				if !strings.Contains(text, want) {
					t.Errorf("the answer lacks %q:\n%s", want, text)
				}
			}
		})
	}
	t.Run("unknown", func(t *testing.T) {
		before := len(w.sent())
		w.handled(t, w.tg.Push(command(private, private, "/status ../monitor-agent")))
		if got, want := w.oneSent(t, before), `no watcher "../monitor-agent" here (/status lists them)`; got != want {
			t.Errorf("the answer = %q, want %q", got, want)
		}
	})
	t.Run("two names", func(t *testing.T) {
		before := len(w.sent())
		w.handled(t, w.tg.Push(command(private, private, "/status agent docs")))
		if got, want := w.oneSent(t, before), "usage: /status for the fleet, /status NAME for one watcher"; got != want {
			t.Errorf("the answer = %q, want %q", got, want)
		}
	})
	w.nothingDone(t)
}

// TestStatusRefused: /status from anyone but an allowed person in the
// configured chat gets no answer at all, and the receiver logs why, as it
// does a tap's refusal; so does a /status addressed to another bot.
func TestStatusRefused(t *testing.T) {
	t.Parallel()
	privateConf := "chat_id=42\nanswers=on\n"
	groupConf := "chat_id=-100500\nanswers=on\nallow_users=7\n"
	for _, tt := range []struct {
		name, conf string
		update     map[string]any
		logged     string // "" for no refusal logged
	}{
		{"another chat", privateConf, command(43, private, "/status"), "refused /status by user 42: chat 43 is not the configured chat"},
		{"another user in a private chat", privateConf, command(private, 43, "/status"), "refused /status by user 43: user 43 is not allowed"},
		{"another user in the group", groupConf, command(group, 8, "/status"), "refused /status by user 8: user 8 is not allowed"},
		{"an allowed user in another group", groupConf, command(-100999, member, "/status"), "refused /status by user 7: chat -100999 is not the configured chat"},
		{"the group itself as the sender", groupConf, edit(command(group, member, "/status"), func(m map[string]any) {
			m["sender_chat"] = map[string]any{"id": group, "type": "supergroup"}
		}), "refused /status by user 7: user 7 is not allowed"},
		{"a bot", groupConf, edit(command(group, member, "/status"), func(m map[string]any) {
			m["from"] = map[string]any{"id": member, "is_bot": true, "first_name": "bot"}
		}), "refused /status by user 7: user 7 is not allowed"},
		{"forwarded", privateConf, edit(command(private, private, "/status"), func(m map[string]any) {
			m["forward_origin"] = map[string]any{"type": "hidden_user", "date": 1, "sender_user_name": "x"}
		}), "refused /status by user 42: a forwarded message"},
		{"addressed to another bot", groupConf, command(group, member, "/status@other_bot"), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, tt.conf)
			w.withFleet(t)
			w.start(t)
			w.handled(t, w.tg.Push(tt.update))
			if c := w.tg.Calls(""); len(c) > 0 {
				t.Errorf("the Bot API was called: %v", c)
			}
			if tt.logged != "" && !strings.Contains(w.log(), tt.logged) {
				t.Errorf("the log does not say %q: %s", tt.logged, w.log())
			}
			if tt.logged == "" && strings.Contains(w.log(), "/status") {
				t.Errorf("a /status for another bot was taken: %s", w.log())
			}
			w.nothingDone(t)
		})
	}
}

// TestStatusHostileText: a watcher whose target, explanation and log lines
// hold markup, escape sequences and a link arrive as the characters they
// are, in plain text: no markup is read, no escape or control character
// reaches the chat, no line break of a name splits the board.
func TestStatusHostileText(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "chat_id=42\nanswers=on\n")
	now := time.Now().UTC()
	loopJSON, _ := json.Marshal(statedir.LoopRecord{Pid: 999999997, StartToken: "1", StartedAt: now.Add(-time.Hour), IntervalS: 60,
		Target: "<b>x</b>\x1b]0;pwned\x07\n&amp;"})
	boardfix.WriteDir(t, w.state, "monitor-x", map[string]string{
		"loop.json": string(loopJSON),
		"state.json": fmt.Sprintf(`{"version":1,"state":"STALLED","state_since":%q,"last_poll":%q,"last_explain":"STALLED: <a href=\"https://evil.example\">tap</a>\u001b[2J\r"}`,
			now.Add(-10*time.Minute).Format(time.RFC3339), now.Add(-5*time.Minute).Format(time.RFC3339)),
		"monitor.log": "MONITOR · <i>x</i> · STALLED\x1b[1A\x1b]52;c;cHduZWQ=\x07 &lt;done&gt;\n",
	})
	w.start(t)
	w.handled(t, w.tg.Push(command(private, private, "/status")))
	board := w.oneSent(t, 0)
	if !strings.Contains(board, "✗ <b>x</b> &amp; [stale] · STALLED") {
		t.Errorf("the board does not show the name as its characters, on one line:\n%q", board)
	}
	w.handled(t, w.tg.Push(command(private, private, "/status monitor-x")))
	one := w.oneSent(t, 1)
	for _, want := range []string{`STALLED: <a href="https://evil.example">tap</a>`, "MONITOR · <i>x</i> · STALLED &lt;done&gt;"} {
		if !strings.Contains(one, want) {
			t.Errorf("the answer lacks %q:\n%q", want, one)
		}
	}
	for _, text := range []string{board, one} {
		if strings.ContainsAny(text, "\x1b\x07\r") {
			t.Errorf("a control character reached the chat: %q", text)
		}
	}
	for _, m := range w.sent() {
		if !strings.Contains(m["link_preview_options"], `"is_disabled":true`) {
			t.Errorf("a link in a line may be previewed: link_preview_options %q", m["link_preview_options"])
		}
	}
}

// TestStatusHugeLog: a watcher whose log lines and explanation are huge
// gets one message under Telegram's 4096, with its newest line, and a
// note of what was left out.
func TestStatusHugeLog(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "chat_id=42\nanswers=on\n")
	w.withFleet(t)
	var log strings.Builder
	for i := range 40 {
		// A character of one cell that Telegram counts twice.
		fmt.Fprintf(&log, "MONITOR %02d %s\n", i, strings.Repeat("𝔵", 2000))
	}
	agent := statedir.Dir(filepath.Join(w.state, "monitor-agent"))
	if err := os.WriteFile(agent.Path(statedir.Log), []byte(log.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	w.start(t)
	w.handled(t, w.tg.Push(command(private, private, "/status agent")))
	text := w.oneSent(t, 0)
	if !strings.Contains(text, "before them left out: too long for one message") || !strings.Contains(text, "MONITOR 39 ") {
		t.Errorf("the clipped answer does not say so, or lost the newest line:\n%s", text)
	}
}
