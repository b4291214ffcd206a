// Package receiver is the answer receiver: it long-polls the Bot API
// (getUpdates, through github.com/go-telegram/bot) for taps on the
// buttons of the alerts the watchers relayed, and carries an allowed tap
// to the watcher as an answer request in its directory (statedir), then
// reports in the chat what became of it; and it answers an allowed
// user's /status with the board (status.go). It types nothing: the watcher
// does, after its own checks.
//
// It is linked only by omega-monitor-relay: the client and net/http would
// cost every start of omega-monitor, each poll's among them.
package receiver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/omega-monitor/omega-monitor/alert"
	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/pkgerr"
	"github.com/omega-monitor/omega-monitor/internal/printable"
	"github.com/omega-monitor/omega-monitor/internal/proc"
	"github.com/omega-monitor/omega-monitor/internal/relay"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/watcher"
)

const (
	// ResultWait bounds how long the receiver waits for the watcher's
	// result of an answer before it says, in the chat, that none came.
	ResultWait = 2 * time.Minute
	// RatePerMinute is how many answers a minute one watcher is sent;
	// a tap beyond is refused with the reason.
	RatePerMinute = 4
	// pollTimeout is getUpdates' long poll; the HTTP client's clock
	// allows it and some.
	pollTimeout = 50 * time.Second
	// callTimeout bounds every other call to the Bot API.
	callTimeout = 20 * time.Second
	// confirmPrefix starts the callback data of a confirming tap.
	confirmPrefix = "ok:"
)

// A Receiver handles the updates of one bot for one state home.
type Receiver struct {
	cfg  relay.Config
	home string // the state home
	dir  string // the receiver's own directory in it
	out  io.Writer
	now  func() time.Time
	// username is the bot's, from getMe: a group's command may name it.
	username string

	sayMu     sync.Mutex  // one line at a time, in the same order in both places
	log       *relay.Log  // relay.log: every line said, nil before the lock is held
	logBroken atomic.Bool // relay.log could not be written: said once in the pane

	mu     sync.Mutex
	offset int64                 // the last update handled
	rec    relay.RecordFile      // relay.json
	sent   relay.RateRecord      // per watcher, the answers sent in the last minute
	edited []relay.EditedMessage // the messages edited with an answer's outcome
	fatal  error                 // what stops the receiver: it cannot record its offset

	bot    *bot.Bot
	stop   context.CancelFunc // ends the long poll
	follow sync.WaitGroup     // the answers being followed to their result
	life   context.Context    // ends the follows at shutdown
}

// Serve runs the receiver until ctx ends: it reads the config, takes the
// state home's receiver lock, and handles updates, each once, in order.
// Its lines go to out, one an event; the token is in none of them.
func Serve(ctx context.Context, getenv func(string) string, out io.Writer) error {
	home, err := statedir.Home(getenv)
	if err != nil {
		return err
	}
	cfg, err := relay.Load(getenv, getenv("HOME"))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return fmt.Errorf("receiver: %w", err)
	}
	dir, err := relay.Home(home)
	if err != nil {
		return err
	}
	// The token is checked (getMe) before the lock is taken: relay start
	// takes a held lock for a receiver that started, and one the Bot API
	// refuses has not.
	// getMe also names the bot, as a group's commands address it
	// (/status@name).
	me, err := getMe(ctx, cfg)
	if errors.Is(err, bot.ErrorUnauthorized) {
		return fmt.Errorf("receiver: the Bot API at %s refused the bot token of %s (getMe: unauthorized)", cfg.API, cfg.Path)
	} else if err != nil {
		return fmt.Errorf("receiver: the Bot API at %s: getMe: %s", cfg.API, scrub(cfg.Token(), err.Error()))
	}
	lock, err := relay.Lock(dir)
	if err != nil {
		return err
	}
	defer lock.Close()
	offset, err := relay.ReadOffset(dir)
	if err != nil {
		return err
	}
	// The rate and the messages edited outlive a restart: a stop and a
	// start must not give a watcher a fresh minute.
	r := &Receiver{cfg: cfg, home: home, dir: dir, out: out, now: time.Now, offset: offset, username: me.Username,
		log:  relay.NewLog(dir),
		sent: relay.ReadRate(dir, time.Now()), edited: relay.ReadEdited(dir, time.Now())}
	r.rec = relay.RecordFile{Pid: os.Getpid(), StartToken: proc.Self(), Since: r.now().UTC(), Offset: offset}
	if err := relay.WriteRecord(dir, r.rec); err != nil {
		return err
	}

	pollCtx, stop := context.WithCancel(ctx)
	defer stop()
	r.stop = stop
	life, endFollows := context.WithCancel(context.Background())
	defer endFollows()
	r.life = life

	b, err := bot.New(cfg.Token(),
		bot.WithServerURL(cfg.API),
		bot.WithHTTPClient(pollTimeout, &http.Client{Timeout: pollTimeout + 15*time.Second}),
		bot.WithSkipGetMe(),
		// One update at a time, in order, in the worker: its offset is
		// recorded only once it is handled. An unbuffered channel keeps
		// the client from asking for (and so confirming to Telegram)
		// the next batch while this one waits.
		bot.WithWorkers(1),
		bot.WithNotAsyncHandlers(),
		bot.WithUpdatesChannelCap(0),
		bot.WithInitialOffset(offset),
		// Taps, and messages: /status (status.go) and the replies that
		// answer (reply.go). Telegram keeps the rest from this receiver.
		bot.WithAllowedUpdates(allowedUpdates()),
		bot.WithDefaultHandler(r.handle),
		bot.WithErrorsHandler(func(err error) { r.say("Bot API: %v", err) }),
	)
	if err != nil {
		return fmt.Errorf("receiver: %s", r.scrub(err.Error()))
	}
	r.bot = b
	r.say("receiving answers for %s, from update %d", cfg, offset+1)
	for _, rec := range relay.Inflights(dir) {
		r.say("following the answer %s… to %s again", rec.Nonce[:8], rec.Watcher)
		r.followResult(rec)
	}
	r.follow.Add(1)
	go r.sweepRetires()
	b.Start(pollCtx)
	endFollows()
	r.follow.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fatal != nil {
		// The pane gets it from main, as every error Serve returns; the
		// log, only from here.
		r.log.Append(r.now().Format(statedir.LogTime) + " " + oneLine(r.scrub(r.fatal.Error())))
		return r.fatal
	}
	r.say("stopped at update %d", r.offset)
	return nil
}

// getMe asks the Bot API who the bot is, within callTimeout.
func getMe(ctx context.Context, cfg relay.Config) (*models.User, error) {
	b, err := bot.New(cfg.Token(), bot.WithServerURL(cfg.API), bot.WithSkipGetMe())
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	return b.GetMe(ctx)
}

// say writes one line, the token masked: to the pane, the time and what
// happened; to relay.log, the same after the date too, since the log
// outlives the day. A log that cannot be written is said once in the pane
// (and again once it could be written and cannot again): the pane keeps
// every line either way.
func (r *Receiver) say(format string, args ...any) {
	line := oneLine(r.scrub(fmt.Sprintf(format, args...)))
	r.sayMu.Lock()
	defer r.sayMu.Unlock()
	now := r.now()
	fmt.Fprintf(r.out, "%s %s\n", now.Format("15:04:05"), line)
	if r.log == nil {
		return
	}
	if err := r.log.Append(now.Format(statedir.LogTime) + " " + line); err == nil {
		r.logBroken.Store(false)
	} else if !r.logBroken.Swap(true) {
		fmt.Fprintf(r.out, "%s %s not written: %s (its lines go on here only)\n", now.Format("15:04:05"), relay.LogFile, oneLine(err.Error()))
	}
}

// oneLine is s as one printable line.
func oneLine(s string) string { return strings.Join(strings.Fields(printable.String(s)), " ") }

// scrub masks the bot token in s.
func (r *Receiver) scrub(s string) string { return scrub(r.cfg.Token(), s) }

func scrub(token, s string) string {
	if token != "" {
		s = strings.ReplaceAll(s, token, "[redacted]")
	}
	return s
}

// handle is every update's handler: an update already handled (its id at
// or below the offset) is skipped; any other is handled, and then, only
// then, its id is recorded as the offset.
func (r *Receiver) handle(ctx context.Context, b *bot.Bot, u *models.Update) {
	r.mu.Lock()
	done := u.ID <= r.offset || r.fatal != nil
	r.mu.Unlock()
	if done {
		r.say("update %d: already handled", u.ID)
		return
	}
	// The calls of one update outlive a stop: a tap half carried would
	// be carried again, or lost, after a restart.
	callCtx := context.WithoutCancel(ctx)
	r.apply(callCtx, u)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := relay.WriteOffset(r.dir, u.ID); err != nil {
		r.fatal = fmt.Errorf("receiver: update %d handled, but its offset is not recorded, and a restart would handle it again: %w", u.ID, err)
		r.stop()
		return
	}
	r.offset = u.ID
	r.rec.LastUpdate, r.rec.Offset = r.now().UTC(), u.ID
	relay.WriteRecord(r.dir, r.rec)
}

// apply handles one update: a tap by an allowed user on a button that a
// watcher offers, a reply that answers (reply.go), or /status (status.go).
// Everything else is ignored or refused, with nothing written.
func (r *Receiver) apply(ctx context.Context, u *models.Update) {
	cq := u.CallbackQuery
	if cq == nil && u.Message != nil {
		// A command first, even as a reply: /status types nothing.
		if args, ok := statusArgs(u.Message.Text, r.username); ok {
			r.applyStatus(ctx, u, args)
			return
		}
	}
	if cq == nil && u.Message != nil && u.Message.ReplyToMessage != nil {
		r.applyReply(ctx, u)
		return
	}
	if cq == nil {
		r.say("update %d: ignored: %s, not a button's tap", u.ID, kind(u))
		return
	}
	t := tap{r: r, ctx: ctx, cq: cq, update: u.ID}
	msg := cq.Message.Message
	switch {
	case cq.InlineMessageID != "":
		t.refuse("not a button of this watcher", "an inline message's button")
		return
	case msg == nil && cq.Message.InaccessibleMessage == nil:
		t.refuse("not a button of this watcher", "a tap with no message")
		return
	}
	if msg != nil {
		t.chat, t.message = msg.Chat.ID, msg.ID
	} else {
		t.chat, t.message = cq.Message.InaccessibleMessage.Chat.ID, cq.Message.InaccessibleMessage.MessageID
	}
	switch {
	case t.chat != r.cfg.ChatID && upgraded(r.cfg.ChatID, t.chat):
		// A group made a supergroup gets a new id, and its old buttons
		// come from it: refused, and the operator told how to follow.
		t.refuse(fmt.Sprintf("this chat is not the configured one: if the group became a supergroup, set chat_id=%d in telegram.conf, then relay stop and start", t.chat),
			fmt.Sprintf("chat %d is not the configured chat %d (a basic group made a supergroup has a new id)", t.chat, r.cfg.ChatID))
		return
	case t.chat != r.cfg.ChatID:
		t.refuse("this chat may not answer", fmt.Sprintf("chat %d is not the configured chat", t.chat))
		return
	case cq.From.IsBot || !r.cfg.Allowed(cq.From.ID):
		t.refuse("you are not allowed to answer", fmt.Sprintf("user %d is not allowed", cq.From.ID))
		return
	case msg != nil && (msg.ForwardOrigin != nil || msg.ViaBot != nil || msg.From == nil || msg.From.ID != r.bot.ID()):
		t.refuse("not a button of this watcher", "the message is not this bot's own")
		return
	}
	data, confirmed := strings.CutPrefix(cq.Data, confirmPrefix)
	if !statedir.IsNonce(data) {
		t.refuse("not a button of this watcher", "callback data that is no nonce")
		return
	}
	t.nonce = data
	// From here on the tapper is allowed to answer, and the message is
	// the bot's own in the configured chat: what the tap is told may say
	// what became of the question.
	found, err := relay.FindOffer(r.home, t.nonce)
	if errors.Is(err, relay.ErrUnknown) {
		why, saw := r.whyGone(t.chat, t.message, tapOlder)
		t.refuse(why, "unknown nonce"+saw)
		return
	}
	if err != nil {
		t.refuse("not answered: "+pkgerr.Why(err), err.Error())
		return
	}
	dir, offer := found.Dir, found.Offer
	name := filepath.Base(dir)
	now := r.now()
	if why, saw := spentOrExpired(offer, now); why != "" {
		t.refuse(why, saw)
		return
	}
	if !found.OnMessage(t.chat, t.message) {
		t.refuse(tapOlder+": the question was asked again, see the newer message; nothing was typed",
			fmt.Sprintf("a button of message %d in chat %d, tapped on message %d", found.Record.MessageID, found.Record.ChatID, t.message))
		return
	}
	switch {
	case offer.FreeText:
		t.explain(offer)
		return
	case confirmed && !offer.Widens:
		t.refuse("not a button of this watcher", "a confirmation of an option that takes none")
		return
	case offer.Widens && !confirmed:
		t.askConfirm(statedir.Dir(dir), offer, now)
		return
	case confirmed:
		if saw := firstTap(statedir.Dir(dir), &t, now); saw != "" {
			t.refuse("tap the option first, then confirm it: nothing was typed", saw)
			return
		}
	}
	if !r.allowRate(name, now) {
		t.refuse(fmt.Sprintf("too many answers to %s this minute (at most %d): tap again in a minute", name, RatePerMinute), "rate")
		return
	}
	req := statedir.AnswerRequest{
		Nonce: t.nonce, FromID: cq.From.ID, From: userName(cq.From),
		ChatID: t.chat, MessageID: t.message, At: now.UTC(), Confirmed: confirmed,
	}
	if err := statedir.Dir(dir).WriteRequest(req); errors.Is(err, fs.ErrExist) {
		t.refuse("already answered: this button was tapped before", "a request is there already")
		return
	} else if err != nil {
		t.refuse("not answered: the watcher's directory cannot be written", err.Error())
		return
	}
	r.sentAt(name, now)
	in := relay.InflightRecord{Nonce: t.nonce, Watcher: name, ChatID: t.chat, MessageID: t.message, From: req.From, FromID: req.FromID, Label: offer.Label, At: req.At}
	if msg != nil {
		in.Text = msg.Text
		in.Entities, _ = json.Marshal(msg.Entities)
	}
	woke := r.handOver(u.ID, dir, in)
	t.answer(fmt.Sprintf("sent to %s…%s", name, woke))
	r.say("update %d: %s asked %s to answer %q (%s…)", u.ID, req.From, name, alert.ButtonLabel(offer.Label), t.nonce[:8])
	r.followResult(in)
}

// handOver records the answer in flight and wakes the watcher of dir for
// it; it returns what to add to the chat's "sent" when the watcher's loop
// does not run.
func (r *Receiver) handOver(update int64, dir string, in relay.InflightRecord) (woke string) {
	if err := relay.WriteInflight(r.dir, in); err != nil {
		r.say("update %d: %v (the result will be reported only while this receiver runs)", update, err)
	}
	if err := watcher.Wake(dir); err != nil {
		woke = " (its loop does not run now: the answer waits for it)"
		r.say("update %d: %v", update, err)
	}
	return woke
}

// spentOrExpired says why an offer can no longer be answered, for the
// chat and for the log; "" when it can. Spent is said first: an offer
// answered and expired since was answered.
func spentOrExpired(offer statedir.Offer, now time.Time) (why, saw string) {
	switch {
	case offer.Spent:
		return "this question was already answered: nothing was typed", "spent"
	case !now.Before(offer.Expires):
		return fmt.Sprintf("this question expired at %s: nothing was typed", offer.Expires.Local().Format("15:04")), "expired"
	}
	return "", ""
}

// How the chat names a message of a question asked again since, for a
// tap on its button and for a reply to it.
const (
	tapOlder   = "this button belongs to an older message"
	replyOlder = "this is an older message of the question"
)

// whyGone says why no watcher offers the buttons of the message msg of
// chat any more, for the chat, and what the receiver found, for the log.
// Only the receiver's own memory is read: the messages it edited (with an
// answer's outcome, or a retirement), and the retire records waiting; a
// message it knows nothing of gets the words of old. older is how a
// message of a question asked again is named.
func (r *Receiver) whyGone(chat int64, msg int, older string) (why, saw string) {
	e, ok := r.editedAs(chat, msg)
	if !ok {
		rec, found := r.pendingRetire(chat, msg)
		if !found {
			return "this question is gone or was replaced: nothing was typed", ""
		}
		e = relay.EditedMessage{ChatID: chat, MessageID: msg, Reason: rec.Reason, Since: rec.At}
	}
	at := e.Since.Local().Format("15:04")
	switch e.Reason {
	case "":
		return "this question was already answered from this chat (see its message): nothing was typed", ", the message edited with an answer's outcome"
	case statedir.RetireAgain:
		return older + ": the question was asked again at " + at + ", see the newer message; nothing was typed", ", asked again"
	case statedir.RetireReplaced:
		return "another question took this one's place on the screen at " + at + ": nothing was typed", ", replaced"
	case statedir.RetireAnswered:
		return "this question was answered at the terminal at " + at + ": nothing was typed", ", answered at the terminal"
	}
	return "this question left the screen at " + at + " without an answer: nothing was typed", ", gone"
}

// pendingRetire finds a retire record waiting for the message msg of chat
// in a watcher's directory: a tap can come between the poll that retired
// the question and the sweep that applies it.
func (r *Receiver) pendingRetire(chat int64, msg int) (statedir.RetireRecord, bool) {
	for _, w := range r.privateWatchers() {
		recs, _ := w.dir.Retires(r.now())
		for _, rec := range recs {
			if rec.ChatID == chat && rec.MessageID == msg {
				return rec, true
			}
		}
	}
	return statedir.RetireRecord{}, false
}

// firstTap says what is wrong with the first tap the confirming tap t
// confirms (the ConfirmAsked record askConfirm wrote in d), for the log;
// "" when there is nothing wrong: it is there, by the same user, on the
// same message, before now and within statedir.OfferLife of it. A client
// can send a confirming tap's data without the first tap: it finds none.
func firstTap(d statedir.Dir, t *tap, now time.Time) (saw string) {
	c, err := d.ReadConfirmAsked(t.nonce)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "a confirmation with no first tap recorded"
	case err != nil:
		return "a confirmation whose first tap cannot be read: " + err.Error()
	case c.FromID != t.cq.From.ID:
		return fmt.Sprintf("a confirmation of the first tap of user %d", c.FromID)
	case c.ChatID != t.chat || c.MessageID != t.message:
		return fmt.Sprintf("a confirmation on message %d of a first tap on message %d in chat %d", t.message, c.MessageID, c.ChatID)
	case !c.At.Before(now):
		return fmt.Sprintf("a confirmation of a first tap recorded at %s, not before it", c.At.Format(time.RFC3339))
	case now.Sub(c.At) > statedir.OfferLife:
		return fmt.Sprintf("a confirmation of a first tap more than %v old", statedir.OfferLife)
	}
	return ""
}

// allowRate says whether the watcher name may be sent another answer now.
func (r *Receiver) allowRate(name string, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	recent := r.sent[name][:0]
	for _, at := range r.sent[name] {
		if now.Sub(at) < time.Minute {
			recent = append(recent, at)
		}
	}
	r.sent[name] = recent
	return len(recent) < RatePerMinute
}

func (r *Receiver) sentAt(name string, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent[name] = append(r.sent[name], now)
	r.sent = r.sent.Within(now)
	if err := relay.WriteRate(r.dir, r.sent); err != nil {
		r.say("%v (a restart within the minute would not count this answer)", err)
	}
}

// A tap is one callback query being handled.
type tap struct {
	r             *Receiver
	ctx           context.Context
	cq            *models.CallbackQuery
	update        int64
	chat          int64
	message       int
	nonce         string
	answeredQuery bool
}

// answer answers the callback query with text, once: Telegram shows it
// to the one who tapped, and stops the button's spinner.
func (t *tap) answer(text string) {
	if t.answeredQuery {
		return
	}
	t.answeredQuery = true
	ctx, cancel := context.WithTimeout(t.ctx, callTimeout)
	defer cancel()
	if _, err := t.r.bot.AnswerCallbackQuery(ctx, &bot.AnswerCallbackQueryParams{CallbackQueryID: t.cq.ID, Text: text}); err != nil {
		t.r.say("update %d: answerCallbackQuery: %v", t.update, err)
	}
}

// refuse answers the tap with why, and logs what the receiver saw.
func (t *tap) refuse(why, saw string) {
	t.r.say("update %d: refused a tap by user %d: %s", t.update, t.cq.From.ID, saw)
	t.answer(why)
}

// askConfirm answers the first tap on an option that widens what the
// agent may do: it is recorded in the watcher's directory d (a
// ConfirmAsked, which the confirming tap, and the watcher, look for), and
// the message gets a button to confirm it, whose data is the nonce with
// confirmPrefix. No request is written. A first tap that cannot be
// recorded is refused: its confirmation would be.
func (t *tap) askConfirm(d statedir.Dir, o statedir.Offer, now time.Time) {
	asked := statedir.ConfirmAsked{Nonce: o.Nonce, FromID: t.cq.From.ID, ChatID: t.chat, MessageID: t.message, At: now.UTC()}
	if err := d.WriteConfirmAsked(asked); err != nil {
		t.refuse("not answered: the watcher's directory cannot be written", err.Error())
		return
	}
	label := alert.ButtonLabel("Confirm: " + o.Label)
	confirm := models.InlineKeyboardButton{Text: label, CallbackData: confirmPrefix + o.Nonce}
	var rows [][]models.InlineKeyboardButton
	if msg := t.cq.Message.Message; msg != nil && msg.ReplyMarkup != nil {
		for _, row := range msg.ReplyMarkup.InlineKeyboard {
			if len(row) > 0 && strings.HasPrefix(row[0].CallbackData, confirmPrefix) {
				continue // one confirmation at a time: the last option tapped
			}
			rows = append(rows, row)
		}
	}
	rows = append(rows, []models.InlineKeyboardButton{confirm})
	ctx, cancel := context.WithTimeout(t.ctx, callTimeout)
	defer cancel()
	_, err := t.r.bot.EditMessageReplyMarkup(ctx, &bot.EditMessageReplyMarkupParams{
		ChatID: t.chat, MessageID: t.message, ReplyMarkup: models.InlineKeyboardMarkup{InlineKeyboard: rows},
	})
	if err != nil {
		t.r.say("update %d: editMessageReplyMarkup: %v; sending the confirmation apart", t.update, err)
		_, err = t.r.bot.SendMessage(ctx, &bot.SendMessageParams{
			ChatID: t.chat, Text: "This option lets the agent go on without asking: " + label + "?",
			ReplyParameters: &models.ReplyParameters{MessageID: t.message, AllowSendingWithoutReply: true},
			ReplyMarkup:     models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{{confirm}}},
		})
		if err != nil {
			t.r.say("update %d: sendMessage: %v", t.update, err)
		}
	}
	t.r.say("update %d: asked user %d to confirm %q (%s…)", t.update, t.cq.From.ID, alert.ButtonLabel(o.Label), o.Nonce[:8])
	t.answer("this option lets the agent go on without asking: tap “" + label + "” to send it")
}

// followResult waits, in the background, for the watcher's result of the
// answer in, then reports it in the chat and settles it. A stop ends the
// wait and keeps the record, for the next receiver to follow.
func (r *Receiver) followResult(in relay.InflightRecord) {
	if !coord.IsWatcher(in.Watcher) || strings.ContainsAny(in.Watcher, `/\`) || in.Watcher == "." || in.Watcher == ".." {
		relay.DropInflight(r.dir, in.Nonce)
		return
	}
	dir := statedir.Dir(filepath.Join(r.home, in.Watcher))
	r.follow.Add(1)
	go func() {
		defer r.follow.Done()
		deadline := in.At.Add(ResultWait)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			res, err := dir.ReadResult(in.Nonce)
			switch {
			case err == nil:
				r.report(in, dir, res)
				return
			case !errors.Is(err, fs.ErrNotExist):
				r.report(in, dir, statedir.AnswerResult{Nonce: in.Nonce, Outcome: statedir.AnswerRefused, Why: "the watcher's result cannot be read", At: r.now()})
				return
			case r.now().After(deadline):
				r.report(in, dir, statedir.AnswerResult{Nonce: in.Nonce, Outcome: statedir.AnswerRefused,
					Why: fmt.Sprintf("the watcher did not take it within %v (is it running?)", ResultWait), At: r.now()})
				return
			}
			select {
			case <-r.life.Done():
				return
			case <-tick.C:
			}
		}
	}()
}

// report edits the answered message: its buttons go, and a line says who
// answered what and when, or why it was not typed. Then the answer is
// settled. A result asking for a confirmation puts the confirm button in.
func (r *Receiver) report(in relay.InflightRecord, dir statedir.Dir, res statedir.AnswerResult) {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	label := alert.ButtonLabel(in.Label)
	if res.Label != "" {
		label = alert.ButtonLabel(res.Label)
	}
	at := res.At
	if at.IsZero() {
		at = r.now()
	}
	var line string
	switch res.Outcome {
	case statedir.AnswerTyped:
		line = fmt.Sprintf("✅ %s answered “%s”%s at %s", in.From, label, typedSaid(in), at.Local().Format("15:04:05"))
		// What the screen showed after it, as the watcher said it: the
		// same question asked again is in a newer message.
		if note := strings.TrimSpace(printable.String(res.Note)); note != "" {
			line += " (" + note + ")"
		}
	case statedir.AnswerConfirm:
		// The tap carried was the first: recorded as askConfirm records
		// one, or its confirmation would be refused.
		if in.FromID != 0 {
			asked := statedir.ConfirmAsked{Nonce: in.Nonce, FromID: in.FromID, ChatID: in.ChatID, MessageID: in.MessageID, At: r.now().UTC()}
			if err := dir.WriteConfirmAsked(asked); err != nil {
				r.say("answer %s…: %v (its confirmation will be refused)", in.Nonce[:8], err)
			}
		}
		confirm := models.InlineKeyboardButton{Text: alert.ButtonLabel("Confirm: " + label), CallbackData: confirmPrefix + in.Nonce}
		if _, err := r.bot.EditMessageReplyMarkup(ctx, &bot.EditMessageReplyMarkupParams{ChatID: in.ChatID, MessageID: in.MessageID,
			ReplyMarkup: models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{{confirm}}}}); err != nil {
			r.say("answer %s…: editMessageReplyMarkup: %v", in.Nonce[:8], err)
		}
		r.say("answer %s… to %s: the watcher asks for a confirmation", in.Nonce[:8], in.Watcher)
		dir.Settle(in.Nonce)
		relay.DropInflight(r.dir, in.Nonce)
		return
	default:
		why := strings.TrimSpace(printable.String(res.Why))
		if why == "" {
			why = "the watcher gave no reason"
		}
		verb := "tapped"
		if in.Typed != "" {
			verb = "answered"
		}
		line = fmt.Sprintf("✖ %s %s “%s”%s at %s: not typed: %s", in.From, verb, label, typedSaid(in), in.At.Local().Format("15:04:05"), why)
		// Which keys of it had reached the terminal before it stopped:
		// the chat is told exactly.
		if keys := reachedSaid(res.Keys); keys != "" {
			line += "; " + keys + " had reached the terminal"
		}
	}
	r.edit(ctx, in, line)
	r.markEdited(in.ChatID, in.MessageID)
	r.say("answer %s… to %s: %s", in.Nonce[:8], in.Watcher, line)
	dir.Settle(in.Nonce)
	relay.DropInflight(r.dir, in.Nonce)
}

// reachedSaid names the keys of a refused answer that had reached the
// terminal ("Down and Down"), each a key's name the watcher wrote, made
// printable; "" for none.
func reachedSaid(keys []string) string {
	var said []string
	for _, k := range keys {
		if k = alert.ButtonLabel(k); k != "" {
			said = append(said, k)
		}
	}
	return alert.And(said)
}

// maxText is the Bot API's limit on a message's text, in UTF-16 units.
const maxText = 4096

// edit replaces the message's text with its own and line, keeping its
// formatting (its entities) and removing its buttons. A message that
// cannot be edited so (too long, too old, not known) loses its buttons and
// gets line as a reply.
func (r *Receiver) edit(ctx context.Context, in relay.InflightRecord, line string) {
	none := models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{}}
	var entities []models.MessageEntity
	json.Unmarshal(in.Entities, &entities)
	text := line
	if in.Text != "" {
		text = in.Text + "\n\n" + line
	}
	if utf16Len(text) <= maxText && in.Text != "" {
		_, err := r.bot.EditMessageText(ctx, &bot.EditMessageTextParams{
			ChatID: in.ChatID, MessageID: in.MessageID, Text: text, Entities: entities, ReplyMarkup: none,
		})
		if err == nil {
			return
		}
		r.say("answer %s…: editMessageText: %v; replying instead", in.Nonce[:8], err)
	}
	if _, err := r.bot.EditMessageReplyMarkup(ctx, &bot.EditMessageReplyMarkupParams{ChatID: in.ChatID, MessageID: in.MessageID, ReplyMarkup: none}); err != nil {
		r.say("answer %s…: editMessageReplyMarkup: %v", in.Nonce[:8], err)
	}
	if _, err := r.bot.SendMessage(ctx, &bot.SendMessageParams{
		ChatID: in.ChatID, Text: line,
		ReplyParameters: &models.ReplyParameters{MessageID: in.MessageID, AllowSendingWithoutReply: true},
	}); err != nil {
		r.say("answer %s…: sendMessage: %v", in.Nonce[:8], err)
	}
}

// utf16Len is the length of s as Telegram counts it.
func utf16Len(s string) int {
	n := 0
	for _, c := range s {
		n++
		if c > 0xffff {
			n++
		}
	}
	return n
}

// userName is how the chat names the one who tapped: their name from the
// update, made one printable line and cut; their id when they have none.
func userName(u models.User) string {
	name := strings.TrimSpace(u.FirstName + " " + u.LastName)
	if name == "" && u.Username != "" {
		name = "@" + u.Username
	}
	name = alert.ButtonLabel(name)
	if name == "" {
		return fmt.Sprintf("user %d", u.ID)
	}
	return name
}

// kind names what an update that is not a tap carries, for the log.
func kind(u *models.Update) string {
	switch {
	case u.Message != nil && u.Message.ReplyToMessage != nil:
		return "a reply"
	case u.Message != nil:
		return "a message"
	case u.EditedMessage != nil:
		return "an edited message"
	case u.InlineQuery != nil:
		return "an inline query"
	case u.ChannelPost != nil || u.EditedChannelPost != nil:
		return "a channel post"
	}
	return "an update of another kind"
}

// upgraded says whether chat may be the supergroup the configured basic
// group became: Telegram numbers basic groups as small negatives and
// supergroups from -100 followed by ten or more digits.
func upgraded(configured, chat int64) bool {
	const supergroup = -1000000000000
	return configured < 0 && configured > supergroup && chat <= supergroup
}
