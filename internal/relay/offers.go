package relay

import (
	"os"
	"path/filepath"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// ErrUnknown is a nonce no watcher offers: never relayed, or replaced by a
// newer question, or planted.
var ErrUnknown = errorf("no watcher offers this button (the question was replaced, or is gone)")

// A Found is an offer FindOffer found: the watcher's directory, the
// offers record that holds it, and the offer.
type Found struct {
	Dir    string
	Record statedir.OffersRecord
	Offer  statedir.Offer
}

// OnMessage says whether the offer's button may be taken from the message
// msg of chat: the record names that message, or names none (the funnel
// did not say which message it sent). A button of another message is one
// of an older message of the same question, relayed again with the same
// offers, or data a modified client sent from a message it is not on.
func (f Found) OnMessage(chat int64, msg int) bool {
	return (f.Record.ChatID == 0 || f.Record.ChatID == chat) && (f.Record.MessageID == 0 || f.Record.MessageID == msg)
}

// FindOffer finds the offer of nonce among the watchers' offers in the
// state home home, with the offers record that holds it. Only watchers'
// directories (monitor-*) that are the user's alone are read; a nonce
// found in two of them is refused, since a real one is random and offered
// once.
func FindOffer(home, nonce string) (Found, error) {
	if !statedir.IsNonce(nonce) {
		return Found{}, errorf("%q is not a nonce", nonce)
	}
	entries, err := os.ReadDir(home)
	if err != nil {
		return Found{}, errorf("%w", err)
	}
	var f Found
	n := 0
	for _, e := range entries {
		if !e.IsDir() || !coord.IsWatcher(e.Name()) {
			continue
		}
		d := filepath.Join(home, e.Name())
		if statedir.CheckPrivate(d) != nil || statedir.CheckPrivate(filepath.Join(d, statedir.Answers)) != nil {
			continue
		}
		rec, err := statedir.Dir(d).ReadOffers()
		if err != nil {
			continue
		}
		for _, off := range rec.Offers {
			if off.Nonce == nonce {
				f = Found{Dir: d, Record: rec, Offer: off}
				n++
			}
		}
	}
	switch n {
	case 0:
		return Found{}, ErrUnknown
	case 1:
		return f, nil
	}
	return Found{}, errorf("the button is offered by %d watchers; refusing it", n)
}
