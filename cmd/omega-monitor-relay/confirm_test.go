package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// TestConfirmNeedsTheFirstTap: the first tap on a widening option is
// recorded in the watcher's directory (who, which message, when); a
// confirming tap is taken only with that record, by the same user, on the
// same message, written before it and within the offers' life. Otherwise
// it is refused, nothing written, whatever a client sends.
func TestConfirmNeedsTheFirstTap(t *testing.T) {
	t.Parallel()
	const groupConf = "chat_id=-100500\nanswers=on\nallow_users=7,9\n"
	const refused = "tap the option first, then confirm it: nothing was typed"
	confirmPath := func(w *world) string {
		return filepath.Join(w.state, "monitor-agent", statedir.Answers, nWiden+statedir.ConfirmSuffix)
	}
	plant := func(c statedir.ConfirmAsked) func(*testing.T, *world) {
		return func(t *testing.T, w *world) {
			if err := statedir.Dir(filepath.Join(w.state, "monitor-agent")).WriteConfirmAsked(c); err != nil {
				t.Fatal(err)
			}
		}
	}
	firstTap := func(chat, from int64, msg int) func(*testing.T, *world) {
		return func(t *testing.T, w *world) {
			w.handled(t, w.tg.Push(onMessage(tap(chat, from, nWiden), msg)))
		}
	}
	for _, tt := range []struct {
		name    string
		conf    string
		before  func(*testing.T, *world)
		confirm map[string]any
	}{
		{"no first tap", groupConf, nil, tap(group, member, "ok:"+nWiden)},
		{"the first tap by another user", groupConf, firstTap(group, 9, 500), tap(group, member, "ok:"+nWiden)},
		{"the first tap on another message", groupConf, firstTap(group, member, 501), tap(group, member, "ok:"+nWiden)},
		{"a first tap older than the offers live", groupConf,
			plant(statedir.ConfirmAsked{Nonce: nWiden, FromID: member, ChatID: group, MessageID: 500, At: time.Now().Add(-statedir.OfferLife - time.Minute)}),
			tap(group, member, "ok:"+nWiden)},
		{"a first tap from the future", groupConf,
			plant(statedir.ConfirmAsked{Nonce: nWiden, FromID: member, ChatID: group, MessageID: 500, At: time.Now().Add(time.Hour)}),
			tap(group, member, "ok:"+nWiden)},
		{"a record of another chat", groupConf,
			plant(statedir.ConfirmAsked{Nonce: nWiden, FromID: member, ChatID: 42, MessageID: 500, At: time.Now()}),
			tap(group, member, "ok:"+nWiden)},
		{"a record naming another button", groupConf, func(t *testing.T, w *world) {
			data := fmt.Sprintf(`{"nonce":%q,"from_id":7,"chat_id":-100500,"message_id":500,"at":%q}`, nYes, time.Now().UTC().Format(time.RFC3339Nano))
			if err := os.WriteFile(confirmPath(w), []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
		}, tap(group, member, "ok:"+nWiden)},
		{"a record that is junk", groupConf, func(t *testing.T, w *world) {
			if err := os.WriteFile(confirmPath(w), []byte("{"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, tap(group, member, "ok:"+nWiden)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, tt.conf)
			w.start(t)
			if tt.before != nil {
				tt.before(t, w)
			}
			w.handled(t, w.tg.Push(tt.confirm))
			if got := w.lastAnswer(t); got != refused {
				t.Errorf("the confirming tap was told %q, want %q", got, refused)
			}
			w.nothingDone(t)
		})
	}
	t.Run("the first tap, then its confirmation", func(t *testing.T) {
		w := newWorld(t, groupConf)
		w.start(t)
		before := time.Now()
		w.handled(t, w.tg.Push(tap(group, member, nWiden)))
		c, err := statedir.Dir(filepath.Join(w.state, "monitor-agent")).ReadConfirmAsked(nWiden)
		if err != nil {
			t.Fatal(err)
		}
		if c.At.Before(before) || c.At.After(time.Now()) {
			t.Errorf("the first tap recorded at %v, want between %v and now", c.At, before)
		}
		c.At = time.Time{}
		if diff := cmp.Diff(statedir.ConfirmAsked{Nonce: nWiden, FromID: member, ChatID: group, MessageID: 500}, c); diff != "" {
			t.Errorf("the first tap's record (-want +got):\n%s", diff)
		}
		if fi, err := os.Stat(confirmPath(w)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("the record: %v, %v", fi, err)
		}
		w.nothingDone(t)
		// Another allowed user's confirmation is not theirs to give.
		w.handled(t, w.tg.Push(tap(group, 9, "ok:"+nWiden)))
		if got := w.lastAnswer(t); got != refused {
			t.Errorf("another user's confirmation was told %q", got)
		}
		w.nothingDone(t)
		w.handled(t, w.tg.Push(tap(group, member, "ok:"+nWiden)))
		if r, ok := w.requests(t)[nWiden]; !ok || !r.Confirmed || r.FromID != member {
			t.Errorf("requests = %v, want one confirmed for %s by %d", w.requests(t), nWiden, member)
		}
		// The record stays for the watcher, which checks it again.
		if _, err := os.Stat(confirmPath(w)); err != nil {
			t.Errorf("the first tap's record is gone: %v", err)
		}
	})
}
