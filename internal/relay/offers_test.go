package relay

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// TestFindOffer: the offer of a nonce comes with the record that holds it
// (its message), from a private watcher's directory only; a nonce two
// watchers offer, one none offers, and data that is no nonce are refused.
func TestFindOffer(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	n1, n2, twice, open := strings.Repeat("1a", 16), strings.Repeat("2b", 16), strings.Repeat("3c", 16), strings.Repeat("4d", 16)
	write := func(name string, rec statedir.OffersRecord) string {
		d := statedir.Dir(filepath.Join(home, name))
		if err := d.Prepare(); err != nil {
			t.Fatal(err)
		}
		if err := d.WriteOffers(rec); err != nil {
			t.Fatal(err)
		}
		return string(d)
	}
	agent := statedir.OffersRecord{Key: "k1", At: at, ChatID: 42, MessageID: 777, Offers: []statedir.Offer{
		{Nonce: n1, Pos: 1, Label: "Yes", Expires: at.Add(statedir.OfferLife)},
		{Nonce: twice, Pos: 2, Label: "No", Expires: at.Add(statedir.OfferLife)},
	}}
	dir := write("monitor-agent", agent)
	write("monitor-other", statedir.OffersRecord{Key: "k2", At: at, Offers: []statedir.Offer{
		{Nonce: n2, Pos: 1, Label: "Yes", Expires: at.Add(statedir.OfferLife)},
		{Nonce: twice, Pos: 2, Label: "No", Expires: at.Add(statedir.OfferLife)},
	}})
	// Open to others: its offers are no one's.
	openDir := write("monitor-open", statedir.OffersRecord{Key: "k3", At: at, Offers: []statedir.Offer{{Nonce: open, Pos: 1, Label: "Yes"}}})
	os.Chmod(openDir, 0o777)

	got, err := FindOffer(home, n1)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Found{Dir: dir, Record: agent, Offer: agent.Offers[0]}, got); diff != "" {
		t.Errorf("FindOffer (-want +got):\n%s", diff)
	}
	for _, tt := range []struct {
		nonce, want string
	}{
		{twice, "offered by 2 watchers"},
		{open, ErrUnknown.Error()},
		{strings.Repeat("5e", 16), ErrUnknown.Error()},
		{"../monitor-agent", "is not a nonce"},
	} {
		if _, err := FindOffer(home, tt.nonce); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("FindOffer(%q) = %v, want %q", tt.nonce, err, tt.want)
		}
	}
	if _, err := FindOffer(home, open); !errors.Is(err, ErrUnknown) {
		t.Errorf("FindOffer of a directory open to others = %v, want ErrUnknown", err)
	}
}

func TestFoundOnMessage(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name      string
		chat      int64
		msg       int
		tapChat   int64
		tapMsg    int
		onMessage bool
	}{
		{"the recorded message", 42, 777, 42, 777, true},
		{"no message recorded", 0, 0, 42, 500, true},
		{"another message", 42, 777, 42, 500, false},
		{"another chat", 43, 777, 42, 777, false},
		{"only the chat recorded, the same", 42, 0, 42, 500, true},
		{"only the message recorded, another", 0, 777, 42, 500, false},
	} {
		f := Found{Record: statedir.OffersRecord{ChatID: tt.chat, MessageID: tt.msg}}
		if got := f.OnMessage(tt.tapChat, tt.tapMsg); got != tt.onMessage {
			t.Errorf("%s: OnMessage = %v, want %v", tt.name, got, tt.onMessage)
		}
	}
}
