package receiver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/relay"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// A question that leaves the screen unanswered from the chat loses its
// buttons: its watcher retires its offers and leaves a retire record in its
// directory (internal/statedir/retire.go), and the receiver, here, removes the
// buttons of the message the record names and appends a line saying why.
//
// retireEvery is the pace at which the receiver looks for records: a sweep
// of the watchers' answers/ directories next to the long poll, rather than
// a wake. A wake would have every poll that retires find and signal the
// receiver (one more effect in the loop, one more signal another process
// could send), and the edit is no race: a tap on a button retired is
// refused whenever it comes, for its offer is gone. A few directory
// listings every few seconds cost nothing, and the buttons go within
// seconds.
const retireEvery = 3 * time.Second

// sweepRetires applies the watchers' retire records every retireEvery
// until the receiver stops; it is one of r.follow.
func (r *Receiver) sweepRetires() {
	defer r.follow.Done()
	tick := time.NewTicker(retireEvery)
	defer tick.Stop()
	for {
		r.retireAll()
		select {
		case <-r.life.Done():
			return
		case <-tick.C:
		}
	}
}

// retireAll applies the retire records waiting in every watcher's
// directory that is the user's alone, and drops those it refuses.
func (r *Receiver) retireAll() {
	for _, w := range r.privateWatchers() {
		recs, refused := w.dir.Retires(r.now())
		for _, f := range refused {
			r.say("%s: retire record %q refused and removed: %s", w.name, f.Name, f.Why)
			w.dir.DropRetire(f.Name)
		}
		for _, rec := range recs {
			if r.life.Err() != nil {
				return
			}
			if r.retire(w.name, rec) {
				w.dir.DropRetire(rec.Nonce + statedir.RetireSuffix)
			}
		}
	}
}

// watcherDir is one watcher's directory under the receiver's home.
type watcherDir struct {
	name string
	dir  statedir.Dir
}

// privateWatchers lists the watchers' directories whose directory and
// answers directory are the user's alone: a record in any other could
// have been planted by another user, so none of it is read.
func (r *Receiver) privateWatchers() []watcherDir {
	entries, err := os.ReadDir(r.home)
	if err != nil {
		return nil
	}
	var out []watcherDir
	for _, e := range entries {
		if !e.IsDir() || !coord.IsWatcher(e.Name()) {
			continue
		}
		path := filepath.Join(r.home, e.Name())
		if statedir.CheckPrivate(path) != nil || statedir.CheckPrivate(filepath.Join(path, statedir.Answers)) != nil {
			continue
		}
		out = append(out, watcherDir{e.Name(), statedir.Dir(path)})
	}
	return out
}

// retire removes the buttons of the message rec names and appends the
// line of its reason, keeping the message's own text and formatting, which
// the Bot API returns with the first edit: nothing of the record but its
// ids and its reason reaches the chat. It reports whether the record is
// done with (applied, or nothing to apply); false keeps it for the next
// sweep (the Bot API did not answer).
func (r *Receiver) retire(watcher string, rec statedir.RetireRecord) bool {
	said := fmt.Sprintf("%s: retire %s… (message %d)", watcher, rec.Nonce[:8], rec.MessageID)
	switch {
	case rec.ChatID != r.cfg.ChatID:
		r.say("%s: refused: chat %d is not the configured chat", said, rec.ChatID)
		return true
	case r.answering(rec.ChatID, rec.MessageID):
		r.say("%s: an answer to it is being carried, whose report edits it", said)
		return true
	case r.wasEdited(rec.ChatID, rec.MessageID):
		r.say("%s: edited already, with an answer: nothing to do", said)
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	none := models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{}}
	msg, err := r.bot.EditMessageReplyMarkup(ctx, &bot.EditMessageReplyMarkupParams{ChatID: rec.ChatID, MessageID: rec.MessageID, ReplyMarkup: none})
	switch {
	case errors.Is(err, bot.ErrorBadRequest), errors.Is(err, bot.ErrorNotFound), errors.Is(err, bot.ErrorForbidden):
		// Its buttons are gone already ("message is not modified"), or
		// the message is: nothing is said. A tap on one is told why.
		r.say("%s: editMessageReplyMarkup: %v: left as it is", said, err)
		r.markRetired(rec)
		return true
	case err != nil:
		r.say("%s: editMessageReplyMarkup: %v: tried again in %v", said, err, retireEvery)
		return false
	}
	r.markRetired(rec)
	line := retireLine(rec)
	if text := msg.Text + "\n\n" + line; msg.Text != "" && utf16Len(text) <= maxText {
		_, err := r.bot.EditMessageText(ctx, &bot.EditMessageTextParams{
			ChatID: rec.ChatID, MessageID: rec.MessageID, Text: text, Entities: msg.Entities, ReplyMarkup: none,
		})
		if err == nil {
			r.say("%s: %s", said, line)
			return true
		}
		r.say("%s: editMessageText: %v; replying instead", said, err)
	}
	if _, err := r.bot.SendMessage(ctx, &bot.SendMessageParams{
		ChatID: rec.ChatID, Text: line,
		ReplyParameters: &models.ReplyParameters{MessageID: rec.MessageID, AllowSendingWithoutReply: true},
	}); err != nil {
		r.say("%s: sendMessage: %v", said, err)
	}
	r.say("%s: %s", said, line)
	return true
}

// retireLine is what the message is told of its question, by reason, and
// when (the receiver's own words: none come from the record).
func retireLine(rec statedir.RetireRecord) string {
	at := rec.At.Local().Format("15:04")
	switch rec.Reason {
	case statedir.RetireAnswered:
		return "⏹ Answered at the terminal at " + at + " (the agent went on): these buttons are withdrawn."
	case statedir.RetireReplaced:
		return "⏹ Another question took its place on the screen at " + at + ": these buttons are withdrawn."
	case statedir.RetireAgain:
		return "⏹ Asked again at " + at + ", in a newer message with buttons of its own: these buttons are withdrawn."
	}
	return "⏹ Left the screen at " + at + " without an answer from this chat: these buttons are withdrawn."
}

// answering says whether an answer from a tap on the message chat/msg is
// being carried: its report will edit the message.
func (r *Receiver) answering(chat int64, msg int) bool {
	return slices.ContainsFunc(relay.Inflights(r.dir), func(in relay.InflightRecord) bool {
		return in.ChatID == chat && in.MessageID == msg
	})
}

// markEdited remembers that the message chat/msg was edited with an
// answer's outcome, across restarts.
func (r *Receiver) markEdited(chat int64, msg int) {
	r.mark(relay.EditedMessage{ChatID: chat, MessageID: msg})
}

// markRetired remembers that the message of rec was edited with its
// retirement, and why, across restarts: a tap on one of its buttons is
// told.
func (r *Receiver) markRetired(rec statedir.RetireRecord) {
	r.mark(relay.EditedMessage{ChatID: rec.ChatID, MessageID: rec.MessageID, Reason: rec.Reason, Since: rec.At})
}

func (r *Receiver) mark(e relay.EditedMessage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.edited = relay.AddEditedAs(r.edited, e, r.now())
	if err := relay.WriteEdited(r.dir, r.edited); err != nil {
		r.say("%v (a restart would not know the message was edited)", err)
	}
}

func (r *Receiver) wasEdited(chat int64, msg int) bool {
	_, ok := r.editedAs(chat, msg)
	return ok
}

// editedAs returns what the receiver remembers of its edit of the message
// chat/msg.
func (r *Receiver) editedAs(chat int64, msg int) (relay.EditedMessage, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return relay.FindEdited(r.edited, chat, msg)
}
