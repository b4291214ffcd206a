package relay

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"time"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/fsutil"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// What the receiver keeps across its restarts besides its offset, in Dir:
// the answers it sent each watcher in the last minute (its rate), and the
// messages it edited with an answer's outcome (a retire record for one of
// them is a no-op). Both are small, written whole and atomically, and read
// as untrusted: what is out of shape is left out.
const (
	Rate   = "rate.json"   // per watcher, when its answers were sent (RateRecord)
	Edited = "edited.json" // the messages edited with an answer ([]EditedMessage)
)

// RateWindow is the window of the per-watcher rate: a watcher is sent at
// most so many answers in any one of it.
const RateWindow = time.Minute

// maxEdited is how many edited messages are remembered: more than the
// retire records all watchers can keep waiting, and a record outlives
// its message's entry only past statedir.RetireLife.
const maxEdited = 1000

// A RateRecord is rate.json: per watcher, the times answers were sent it.
type RateRecord map[string][]time.Time

// ReadRate reads the rate record in dir, as of now (Within). A file that
// is missing or cannot be read is an empty record.
func ReadRate(dir string, now time.Time) RateRecord {
	out := RateRecord{}
	data, err := fsutil.ReadCapped(filepath.Join(dir, Rate), 64<<10)
	if err != nil {
		return out
	}
	var rec RateRecord
	if json.Unmarshal(data, &rec) != nil {
		return out
	}
	return rec.Within(now)
}

// Within is rec with only watchers' names, and only times within
// RateWindow before now (a time past now by a minute or more is planted,
// or from a clock set back: left out).
func (rec RateRecord) Within(now time.Time) RateRecord {
	out := RateRecord{}
	for name, times := range rec {
		if !coord.IsWatcher(name) {
			continue
		}
		var kept []time.Time
		for _, at := range times {
			if now.Sub(at) < RateWindow && at.Sub(now) < time.Minute {
				kept = append(kept, at)
			}
		}
		if len(kept) > 0 {
			out[name] = kept
		}
	}
	return out
}

// WriteRate writes the rate record rec in dir, atomically.
func WriteRate(dir string, rec RateRecord) error {
	if err := statedir.Dir(dir).WriteRecord(Rate, rec); err != nil {
		return errorf("%w", err)
	}
	return nil
}

// An EditedMessage is a message the receiver edited with an outcome: an
// answer's, or a retirement's. A later tap on one of its buttons is told
// what it said.
type EditedMessage struct {
	ChatID    int64     `json:"chat_id"`
	MessageID int       `json:"message_id"`
	At        time.Time `json:"at"`
	// Reason is the reason of the retire record the edit applied
	// (statedir.RetireGone, ...), and Since when the question left the
	// screen; "" for an answer's outcome.
	Reason string    `json:"reason,omitempty"`
	Since  time.Time `json:"since,omitzero"`
}

// ReadEdited reads the edited messages in dir, as of now: those within
// statedir.RetireLife, the newest maxEdited.
func ReadEdited(dir string, now time.Time) []EditedMessage {
	data, err := fsutil.ReadCapped(filepath.Join(dir, Edited), 1<<20)
	if err != nil {
		return nil
	}
	var all []EditedMessage
	if json.Unmarshal(data, &all) != nil {
		return nil
	}
	return pruneEdited(all, now)
}

// AddEdited returns edited with the message chat/msg added as edited at
// now with an answer's outcome, and the old ones pruned.
func AddEdited(edited []EditedMessage, chat int64, msg int, now time.Time) []EditedMessage {
	return AddEditedAs(edited, EditedMessage{ChatID: chat, MessageID: msg}, now)
}

// AddEditedAs returns edited with e added as edited at now (its At), in
// place of an earlier edit of its message, and the old ones pruned.
func AddEditedAs(edited []EditedMessage, e EditedMessage, now time.Time) []EditedMessage {
	edited = slices.DeleteFunc(slices.Clone(edited), func(x EditedMessage) bool { return x.ChatID == e.ChatID && x.MessageID == e.MessageID })
	e.At = now.UTC()
	return pruneEdited(append(edited, e), now)
}

// WasEdited says whether chat/msg is among edited.
func WasEdited(edited []EditedMessage, chat int64, msg int) bool {
	_, ok := FindEdited(edited, chat, msg)
	return ok
}

// FindEdited returns the edit of chat/msg among edited.
func FindEdited(edited []EditedMessage, chat int64, msg int) (EditedMessage, bool) {
	i := slices.IndexFunc(edited, func(e EditedMessage) bool { return e.ChatID == chat && e.MessageID == msg })
	if i < 0 {
		return EditedMessage{}, false
	}
	return edited[i], true
}

// WriteEdited writes the edited messages in dir, atomically.
func WriteEdited(dir string, edited []EditedMessage) error {
	if err := statedir.Dir(dir).WriteRecord(Edited, edited); err != nil {
		return errorf("%w", err)
	}
	return nil
}

// retireReasons are the reasons an EditedMessage may give: "" (an
// answer's outcome) and a retire record's.
var retireReasons = []string{"", statedir.RetireGone, statedir.RetireAnswered, statedir.RetireReplaced, statedir.RetireAgain}

func pruneEdited(all []EditedMessage, now time.Time) []EditedMessage {
	var out []EditedMessage
	for _, e := range all {
		if e.ChatID != 0 && e.MessageID > 0 && now.Sub(e.At) <= statedir.RetireLife && e.At.Sub(now) < time.Minute {
			if !slices.Contains(retireReasons, e.Reason) {
				// Out of shape: it says only that the message
				// was edited.
				e.Reason, e.Since = "", time.Time{}
			}
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, func(a, b EditedMessage) int { return a.At.Compare(b.At) })
	if len(out) > maxEdited {
		out = out[len(out)-maxEdited:]
	}
	return out
}
