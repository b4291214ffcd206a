package receiver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/omega-monitor/omega-monitor/alert"
	"github.com/omega-monitor/omega-monitor/answer"
	"github.com/omega-monitor/omega-monitor/internal/pkgerr"
	"github.com/omega-monitor/omega-monitor/internal/printable"
	"github.com/omega-monitor/omega-monitor/internal/relay"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// A reply to a question's message is the operator's own words for the
// question's free-text option (free_text=on): the watcher types them into
// that option's field. The receiver takes a reply only when it is
//
//   - in the configured chat, and a reply to a message this bot sent there
//     (anything else is people talking, and gets no word from the bot);
//   - from a person allowed to answer, as a tap must be, not a bot or a
//     chat speaking for one;
//   - the operator's own new message: not forwarded, not sent through a
//     bot, not an edit;
//   - text: one printable line of at most answer.MaxText characters
//     (answer.TakeText);
//   - to a question whose buttons name an offer of a free-text option that
//     is live: the replied message's keyboard holds the nonces, so nothing
//     of the reply names what it answers.
//
// Otherwise it is refused with the reason, as a reply, and nothing is
// written. Taken, it is a request with the words, followed to its result
// as a tap is.

// applyReply handles a message update that replies to another message.
func (r *Receiver) applyReply(ctx context.Context, u *models.Update) {
	msg := u.Message
	q := msg.ReplyToMessage
	switch {
	case msg.Chat.ID != r.cfg.ChatID:
		r.say("update %d: ignored: a reply in chat %d, not the configured chat", u.ID, msg.Chat.ID)
		return
	case q.From == nil || q.From.ID != r.bot.ID() || q.Chat.ID != r.cfg.ChatID:
		r.say("update %d: ignored: a reply to a message that is not this bot's", u.ID)
		return
	}
	p := reply{r: r, ctx: ctx, update: u.ID, chat: msg.Chat.ID, message: msg.ID}
	if msg.From != nil {
		p.from = msg.From.ID
	}
	switch {
	case msg.From == nil || msg.From.IsBot || msg.SenderChat != nil || msg.SenderBusinessBot != nil || !r.cfg.Allowed(msg.From.ID):
		p.refuse("you are not allowed to answer: nothing was typed", fmt.Sprintf("user %d is not allowed", p.from))
		return
	case msg.ForwardOrigin != nil || msg.IsAutomaticForward:
		p.refuse("a forwarded message is not an answer: nothing was typed", "forwarded")
		return
	case msg.ViaBot != nil:
		p.refuse("a message sent through a bot is not an answer: nothing was typed", "via a bot")
		return
	case msg.EditDate != 0:
		p.refuse("an edited message is not an answer: nothing was typed", "edited")
		return
	case q.ForwardOrigin != nil || q.ViaBot != nil:
		p.refuse("not a question of this watcher: nothing was typed", "the replied message is not this bot's own")
		return
	case !r.cfg.FreeText:
		p.refuse("free-text answers are off: nothing was typed (free_text=on in "+r.cfg.Path+" turns them on)", "free text off")
		return
	case msg.Text == "":
		p.refuse("only text is typed: reply with your words", "no text")
		return
	}
	text, err := answer.TakeText(msg.Text)
	if err != nil {
		p.refuse("not typed: "+err.Error(), err.Error())
		return
	}
	dir, offer, why, saw := r.findField(q)
	if why != "" {
		p.refuse(why, saw)
		return
	}
	name := filepath.Base(dir)
	now := r.now()
	if why, saw := spentOrExpired(offer, now); why != "" {
		p.refuse(why, saw)
		return
	}
	if !r.allowRate(name, now) {
		p.refuse(fmt.Sprintf("too many answers to %s this minute (at most %d): reply again in a minute", name, RatePerMinute), "rate")
		return
	}
	req := statedir.AnswerRequest{
		Nonce: offer.Nonce, FromID: msg.From.ID, From: userName(*msg.From),
		ChatID: p.chat, MessageID: q.ID, At: now.UTC(), Text: text,
	}
	if err := statedir.Dir(dir).WriteRequest(req); errors.Is(err, fs.ErrExist) {
		p.refuse("already answered: words for this question were sent before", "a request is there already")
		return
	} else if err != nil {
		p.refuse("not answered: the watcher's directory cannot be written", err.Error())
		return
	}
	r.sentAt(name, now)
	in := relay.InflightRecord{Nonce: offer.Nonce, Watcher: name, ChatID: p.chat, MessageID: q.ID, From: req.From, FromID: req.FromID,
		Label: offer.Label, At: req.At, Text: q.Text, Typed: text}
	in.Entities, _ = json.Marshal(q.Entities)
	woke := r.handOver(u.ID, dir, in)
	p.send(fmt.Sprintf("sent to %s: your words for “%s”…%s", name, alert.ButtonLabel(offer.Label), woke))
	r.say("update %d: %s asked %s to type %d characters into %q (%s…)", u.ID, req.From, name, len([]rune(text)), alert.ButtonLabel(offer.Label), offer.Nonce[:8])
	r.followResult(in)
}

// findField finds the free-text offer of the question message q, through
// the nonces of its buttons: the watcher's directory and the offer, or why
// there is none (said in the chat) and what the receiver saw (logged). The
// replier is allowed to answer: why may say what became of the question.
func (r *Receiver) findField(q *models.Message) (dir string, o statedir.Offer, why, saw string) {
	var nonces []string
	if q.ReplyMarkup != nil {
		for _, row := range q.ReplyMarkup.InlineKeyboard {
			for _, b := range row {
				if n := strings.TrimPrefix(b.CallbackData, confirmPrefix); statedir.IsNonce(n) {
					nonces = append(nonces, n)
				}
			}
		}
	}
	if len(nonces) == 0 {
		// Its buttons went with an answer's outcome or a retirement the
		// receiver remembers, or in a way it does not know.
		if why, saw := r.whyGone(q.Chat.ID, q.ID, replyOlder); saw != "" {
			return "", o, why, "no keyboard" + saw
		}
		return "", o, "this question has no buttons left: it was answered, or is gone; nothing was typed", "no keyboard"
	}
	found := false
	for _, n := range nonces {
		f, err := relay.FindOffer(r.home, n)
		if errors.Is(err, relay.ErrUnknown) {
			continue
		}
		if err != nil {
			return "", o, "not answered: " + pkgerr.Why(err), err.Error()
		}
		if found && f.Dir != dir {
			return "", o, "not a question of this watcher: nothing was typed", "a keyboard of two watchers' buttons"
		}
		if !f.OnMessage(q.Chat.ID, q.ID) {
			return "", o, replyOlder + ": the question was asked again, see the newer message; nothing was typed",
				fmt.Sprintf("a reply to message %d, whose buttons are message %d's in chat %d", q.ID, f.Record.MessageID, f.Record.ChatID)
		}
		found, dir = true, f.Dir
		if f.Offer.FreeText {
			o = f.Offer
		}
	}
	switch {
	case !found:
		why, saw := r.whyGone(q.Chat.ID, q.ID, replyOlder)
		return "", o, why, "unknown nonces" + saw
	case o.Nonce == "":
		return "", o, "this question takes no words: tap one of its buttons; nothing was typed", "no free-text offer"
	}
	return dir, o, "", ""
}

// explain answers a tap on the button of a free-text offer, which only
// says how to answer it: nothing is written.
func (t *tap) explain(o statedir.Offer) {
	t.r.say("update %d: a tap by user %d on the reply button of %q (%s…): told to reply", t.update, t.cq.From.ID, alert.ButtonLabel(o.Label), o.Nonce[:8])
	t.answer(fmt.Sprintf("reply to this message with your words for “%s” (one line, at most %d characters)", alert.ButtonLabel(o.Label), answer.MaxText))
}

// typedSaid is what the report adds to an answer's option when the
// operator's words were typed: "" for a tap.
func typedSaid(in relay.InflightRecord) string {
	if in.Typed == "" {
		return ""
	}
	return " with “" + strings.Join(strings.Fields(printable.String(in.Typed)), " ") + "”"
}

// A reply is one message being handled as an answer.
type reply struct {
	r          *Receiver
	ctx        context.Context
	update     int64
	chat, from int64
	message    int
}

// refuse says why in the chat, as a reply to the message, and logs what
// the receiver saw.
func (p reply) refuse(why, saw string) {
	p.r.say("update %d: refused a reply by user %d: %s", p.update, p.from, saw)
	p.send(why)
}

// send replies to the message with text.
func (p reply) send(text string) {
	ctx, cancel := context.WithTimeout(p.ctx, callTimeout)
	defer cancel()
	if _, err := p.r.bot.SendMessage(ctx, &bot.SendMessageParams{
		ChatID: p.chat, Text: text,
		ReplyParameters: &models.ReplyParameters{MessageID: p.message, AllowSendingWithoutReply: true},
	}); err != nil {
		p.r.say("update %d: sendMessage: %v", p.update, err)
	}
}

// allowedUpdates are the updates the receiver asks Telegram for: taps,
// and messages, for /status and for the replies that answer.
func allowedUpdates() bot.AllowedUpdates {
	return bot.AllowedUpdates{models.AllowedUpdateCallbackQuery, models.AllowedUpdateMessage}
}
