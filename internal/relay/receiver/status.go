package receiver

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/omega-monitor/omega-monitor/internal/board"
	"github.com/omega-monitor/omega-monitor/internal/board/hosts"
	"github.com/omega-monitor/omega-monitor/internal/board/render"
)

// The board from the chat: /status is the fleet as the board reads it, in
// the phone form (render.Phone); /status NAME is one watcher's state, the
// explanation of its last verdict and its last log lines
// (render.PhoneWatcher). It is answered only to a person allowed to
// answer, in the configured chat, in the message they sent (not forwarded,
// not through a bot): anyone else gets no word, as a tap of theirs would
// change nothing, and the receiver logs the refusal. It is read-only: it
// writes nothing in the state home, moves no cursor of the board, wakes no
// watcher and types nothing; a /status sent as a reply to a question is
// this command, never the words of an answer.

// statusArgs says whether text is /status for this bot (/status, or
// /status@username in a group, the bot's name from getMe), and its words
// after the command.
func statusArgs(text, username string) (args []string, ok bool) {
	fields := strings.Fields(text)
	if len(fields) == 0 {
		return nil, false
	}
	cmd, at, addressed := strings.Cut(fields[0], "@")
	if cmd != "/status" || addressed && (username == "" || !strings.EqualFold(at, username)) {
		return nil, false
	}
	return fields[1:], true
}

// maxAsked bounds how much of an unknown NAME the answer repeats.
const maxAsked = 64

// applyStatus answers /status with args, the words after it.
func (r *Receiver) applyStatus(ctx context.Context, u *models.Update, args []string) {
	msg := u.Message
	var from int64
	if msg.From != nil {
		from = msg.From.ID
	}
	refuse := func(saw string) { r.say("update %d: refused /status by user %d: %s", u.ID, from, saw) }
	switch {
	case msg.Chat.ID != r.cfg.ChatID:
		refuse(fmt.Sprintf("chat %d is not the configured chat", msg.Chat.ID))
		return
	case msg.From == nil || msg.From.IsBot || msg.SenderChat != nil || msg.SenderBusinessBot != nil || !r.cfg.Allowed(from):
		refuse(fmt.Sprintf("user %d is not allowed", from))
		return
	case msg.ForwardOrigin != nil || msg.IsAutomaticForward || msg.ViaBot != nil:
		refuse("a forwarded message, or one sent through a bot")
		return
	}
	var text, said string
	switch len(args) {
	case 0:
		text, said = r.fleetText()
	case 1:
		text, said = r.watcherText(args[0])
	default:
		text, said = "usage: /status for the fleet, /status NAME for one watcher", "usage"
	}
	// Plain text, no parse mode: nothing a name or a line holds is read as
	// markup; and no preview of a link a pane printed.
	sctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if _, err := r.bot.SendMessage(sctx, &bot.SendMessageParams{
		ChatID: msg.Chat.ID, Text: clipText(text),
		LinkPreviewOptions: &models.LinkPreviewOptions{IsDisabled: bot.True()},
		ReplyParameters:    &models.ReplyParameters{MessageID: msg.ID, AllowSendingWithoutReply: true},
	}); err != nil {
		r.say("update %d: sendMessage: %v", u.ID, err)
		return
	}
	r.say("update %d: /status by user %d: sent %s", u.ID, from, said)
}

// census is the fleet as the board reads it, the one call through which
// the chat reads it: whatever the census comes to read reaches the chat
// too. Brief: no history and no log is counted, and no cursor of the
// board's moves (the operator's status says what is new since they looked).
func (r *Receiver) census() (board.Fleet, error) {
	// The hosts of the state home's hosts file, as the board's; the relay
	// is never the board another reads, whatever its environment says.
	b, err := hosts.Open(r.home, "", "", func(string) string { return "" })
	if err != nil {
		return board.Fleet{}, err
	}
	return b.Census(r.now(), board.Options{Brief: true})
}

// fleetText is the answer to /status: the fleet's phone form, and what
// the log says was sent.
func (r *Receiver) fleetText() (text, said string) {
	f, err := r.census()
	if err != nil {
		return "the board cannot be read: " + oneLine(err.Error()), "that the board cannot be read: " + oneLine(err.Error())
	}
	return render.Phone(f), fmt.Sprintf("the board (%d watchers)", len(f.Watchers))
}

// watcherText is the answer to /status NAME: the watcher the board names
// so (render.PhoneName), or of that directory's name; one line when there
// is none. NAME is only compared with the names the census found: it
// never becomes a path.
func (r *Receiver) watcherText(name string) (text, said string) {
	f, err := r.census()
	if err != nil {
		return "the board cannot be read: " + oneLine(err.Error()), "that the board cannot be read: " + oneLine(err.Error())
	}
	for _, w := range f.Watchers {
		if name != w.Name && name != render.PhoneName(w) {
			continue
		}
		lines, err := board.LastLines(w, render.PhoneLines)
		if err != nil {
			w.Errors = append(w.Errors, "monitor.log: "+err.Error())
		}
		return render.PhoneWatcher(w, lines), "the watcher " + w.Name
	}
	asked := oneLine(name)
	if len([]rune(asked)) > maxAsked {
		asked = string([]rune(asked)[:maxAsked]) + "…"
	}
	return fmt.Sprintf("no watcher %q here (/status lists them)", asked), "that no watcher is named so"
}

// clipText keeps text within the Bot API's bound, should a form pass it:
// one message, its end replaced by a note.
func clipText(text string) string {
	if utf16Len(text) <= maxText {
		return text
	}
	const note = "\n… (clipped: too long for one message)"
	n, room := 0, maxText-utf16Len(note)
	for i, c := range text {
		if n += utf16Len(string(c)); n > room {
			return text[:i] + note
		}
	}
	return text
}
