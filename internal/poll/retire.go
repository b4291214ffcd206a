package poll

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/omega-monitor/omega-monitor/alert"
	"github.com/omega-monitor/omega-monitor/answer"
	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/fsutil"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/statedir/event"
	"github.com/omega-monitor/omega-monitor/tick"
)

// A relayed question's buttons live as long as the question is on the
// screen (statedir/retire.go draws the exchange):
//
//   - Deliver records the message the funnel sent them under with the
//     offers (noteMessage), or, when the question was retired while its
//     alert waited, sends it without them (offeredButtons).
//   - Each poll looks for the offered dialog on the screen (judgeRetire).
//     Not there, it marks the offers gone and asks to look again a moment
//     later; still not there then, it retires them: the offers go (no
//     nonce of them is accepted again), the relay receiver is left a
//     record to remove the message's buttons and say why, and the
//     question latch is cleared, so that the same question asked again
//     is relayed again, with nonces and buttons of its own. A question
//     paged on this poll retires the offers before it at once.
//
// Two looks, as a question is paged only when seen twice: one capture that
// misses a dialog (a redraw, a pane resized) must not tell the operator it
// was answered.

// A retirement is what a poll decided of the offers of the question
// relayed last, for commit to write (applyRetire): nothing, the offers
// removed (they cannot be read), written again (their Gone moved), or
// retired for reason.
type retirement struct {
	drop   bool
	write  bool
	retire bool
	reason string
	offers statedir.OffersRecord
}

// judgeRetire decides whether the offers of the question relayed last
// retire, as above, and returns a note for the MONITOR line. next and out
// are this poll's state and outcome, neither saved nor handed over yet;
// offers are as this poll's requests left them (readErr why they could not
// be read); interval is the watcher's. It writes nothing.
func judgeRetire(next *tick.State, out *tick.Outcome, interval time.Duration, screen classify.Result, pane, captureErr string, offers statedir.OffersRecord, readErr error, now time.Time, problems *[]string) (retirement, string) {
	if captureErr != "" {
		return retirement{}, "" // nothing is known of the screen
	}
	if readErr != nil {
		// Offers that cannot be read match no tap: removed, and said
		// once, not at every poll.
		*problems = append(*problems, "answers: "+readErr.Error()+"; removed")
		return retirement{drop: true}, ""
	}
	if len(offers.Offers) == 0 {
		return retirement{}, ""
	}
	m, live := answer.Read(screen)
	samePane := offers.Pane == "" || pane == "" || offers.Pane == pane
	shows := samePane && live && m.Key() == offers.Key
	paged := slices.ContainsFunc(out.Actions, func(a tick.Action) bool { return a.Kind == tick.Alert && a.Alert.Kind == alert.Question })
	var reason string
	switch {
	case paged && shows:
		reason = statedir.RetireAgain
	case paged:
		reason = statedir.RetireReplaced
	case shows, samePane && !live && screen.State == classify.Question:
		// On the screen, or a dialog is there that cannot be read as a
		// menu and may be it: nothing is claimed.
		if !offers.Gone.IsZero() {
			offers.Gone = time.Time{}
			return retirement{write: true, offers: offers}, ""
		}
		return retirement{}, ""
	case offers.Gone.IsZero() || now.Before(offers.Gone):
		offers.Gone = now
		out.Actions = lookAgain(out.Actions, tick.QuestionSettle, interval)
		return retirement{write: true, offers: offers}, ""
	case now.Sub(offers.Gone) < tick.QuestionSettle:
		out.Actions = lookAgain(out.Actions, offers.Gone.Add(tick.QuestionSettle).Sub(now), interval)
		return retirement{}, ""
	default:
		reason = leftAs(screen, live, samePane)
	}
	// The question is over: the same one asked again is a new question,
	// relayed with buttons of its own. A question paged now holds the
	// latch, and keeps it.
	if !paged {
		next.QuestionLatch = nil
	}
	return retirement{retire: true, reason: reason, offers: offers}, " · " + retiredNote[reason]
}

// applyRetire writes what judgeRetire decided, and returns the event of
// offers retired, if they were.
func (d stateDirectory) applyRetire(rt retirement, now time.Time, problems *[]string) (tick.Event, bool) {
	sd := d.sd()
	switch {
	case rt.drop:
		if err := sd.DropOffers(); err != nil {
			*problems = append(*problems, "answers: "+err.Error())
		}
	case rt.write:
		if err := sd.WriteOffers(rt.offers); err != nil {
			*problems = append(*problems, "answers: "+err.Error())
		}
	case rt.retire:
		ev, err := d.retire(rt.offers, rt.reason, now)
		if err != nil {
			*problems = append(*problems, "answers: "+err.Error())
		}
		return ev, true
	}
	return tick.Event{}, false
}

// retiredNote is what the MONITOR line says of offers retired, by reason.
var retiredNote = map[string]string{
	statedir.RetireGone:     "the question relayed left the screen: its buttons withdrawn",
	statedir.RetireAnswered: "the question relayed was answered at the terminal: its buttons withdrawn",
	statedir.RetireReplaced: "another question took the place of the one relayed: its buttons withdrawn",
	statedir.RetireAgain:    "the question is relayed again: the earlier buttons withdrawn",
}

// leftAs says how the offered question left the screen, from what the
// screen shows now: another dialog in its place; the agent at work again,
// which only an answer lets it be; or anything else, which claims nothing
// but that it is gone.
func leftAs(screen classify.Result, live, samePane bool) string {
	switch {
	case !samePane:
		return statedir.RetireGone
	case live || screen.State == classify.Question:
		return statedir.RetireReplaced
	case screen.State == classify.Working:
		return statedir.RetireAnswered
	}
	return statedir.RetireGone
}

// retire removes offers, and leaves the receiver a record to remove the
// buttons of their message, when the funnel said which it was and no
// answer from the chat was taken for them (the receiver edits a message
// it reported an answer in itself).
func (d stateDirectory) retire(offers statedir.OffersRecord, reason string, now time.Time) (tick.Event, error) {
	sd := d.sd()
	answered := slices.ContainsFunc(offers.Offers, func(o statedir.Offer) bool { return o.Spent })
	record := !answered && offers.MessageID > 0 && offers.ChatID != 0
	var errs []error
	if record {
		if err := sd.WriteRetire(statedir.RetireRecord{Nonce: offers.Offers[0].Nonce, ChatID: offers.ChatID,
			MessageID: offers.MessageID, Reason: reason, At: now.UTC()}); err != nil {
			record = false
			errs = append(errs, err)
		}
	}
	if err := sd.DropOffers(); err != nil {
		errs = append(errs, err)
	}
	fields := map[string]any{"reason": reason, "offers": len(offers.Offers), "record": record}
	if offers.MessageID > 0 {
		fields["message_id"] = offers.MessageID
	}
	if answered {
		fields["answered_from_chat"] = true
	}
	return tick.Event{Name: event.OffersRetired, Fields: fields}, errors.Join(errs...)
}

// lookAgain asks for the next poll within in, unless the interval comes
// first: the one wait of the poll is shortened, or added; a wait longer
// than the interval (a running turn while the hooks are heard) gives way
// to the interval.
func lookAgain(actions []tick.Action, in, interval time.Duration) []tick.Action {
	in = max(in.Round(100*time.Millisecond), 100*time.Millisecond)
	if interval > 0 && in >= interval {
		return slices.DeleteFunc(actions, func(a tick.Action) bool { return a.Kind == tick.Wait && a.Wait > interval })
	}
	for i, a := range actions {
		if a.Kind == tick.Wait {
			actions[i].Wait = min(a.Wait, in)
			return actions
		}
	}
	return append(actions, tick.Action{Kind: tick.Wait, Wait: in})
}

// offeredButtons reads the buttons in the file markup, beside an alert in
// the outbox, and says whether they are still offered: a question retired
// or replaced while its alert waited is sent without them.
func offeredButtons(d statedir.Dir, markup string) (nonces []string, live bool) {
	data, err := fsutil.ReadCapped(markup, 64<<10)
	if err != nil {
		return nil, false
	}
	buttons, err := alert.ButtonData(data)
	if err != nil {
		return nil, false
	}
	for _, b := range buttons {
		if statedir.IsNonce(b) {
			nonces = append(nonces, b)
		}
	}
	offers, err := d.ReadOffers()
	if err != nil || len(nonces) == 0 {
		return nil, false
	}
	return nonces, offerIndex(offers, nonces[0]) >= 0
}

// noteMessage records sent, the message the funnel sent the buttons nonces
// under, with their offers, under the state lock a poll holds. Offers
// retired or replaced while it was being sent leave the receiver a record
// at once: its buttons go.
func noteMessage(d statedir.Dir, nonces []string, sent alert.Sent, now time.Time) error {
	if sent.MessageID <= 0 || sent.ChatID == 0 || len(nonces) == 0 {
		return nil
	}
	lock, err := d.Lock(statedir.StateLock)
	if err != nil {
		return fmt.Errorf("state lock: %w", err)
	}
	defer lock.Close()
	offers, err := d.ReadOffers()
	if err == nil && offerIndex(offers, nonces[0]) >= 0 {
		offers.ChatID, offers.MessageID = sent.ChatID, sent.MessageID
		return d.WriteOffers(offers)
	}
	return d.WriteRetire(statedir.RetireRecord{Nonce: nonces[0], ChatID: sent.ChatID, MessageID: sent.MessageID,
		Reason: statedir.RetireGone, At: now.UTC()})
}
