package relay

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/statedir"
)

// ErrUnknown is a nonce no watcher offers: never relayed, or replaced by a
// newer question, or planted.
var ErrUnknown = errors.New("relay: no watcher offers this button (the question was replaced, or is gone)")

// FindOffer finds the offer of nonce among the watchers' offers in the
// state home home: the watcher's directory and the offer. Only watchers'
// directories (monitor-*) that are the user's alone are read; a nonce found
// in two of them is refused, since a real one is random and offered once.
func FindOffer(home, nonce string) (dir string, o statedir.Offer, err error) {
	if !statedir.IsNonce(nonce) {
		return "", o, fmt.Errorf("relay: %q is not a nonce", nonce)
	}
	entries, err := os.ReadDir(home)
	if err != nil {
		return "", o, fmt.Errorf("relay: %w", err)
	}
	found := 0
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
				dir, o = d, off
				found++
			}
		}
	}
	switch found {
	case 0:
		return "", statedir.Offer{}, ErrUnknown
	case 1:
		return dir, o, nil
	}
	return "", statedir.Offer{}, fmt.Errorf("relay: the button is offered by %d watchers; refusing it", found)
}
