package statedir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/atomicfile"
)

// MaxOutbox is how many alerts may wait in a watcher's outbox. Past it the
// oldest that are not urgent are dropped, and a note says how many: a pane
// that prints failures by the hundred must not bury a question behind
// Telegram's rate limit.
const MaxOutbox = 100

// urgentMark starts the name of an urgent alert: it sorts before every
// other, so a question or a block is delivered first.
const urgentMark = "!"

// IsUrgent says whether the outbox entry name is an urgent alert.
func IsUrgent(name string) bool { return strings.HasPrefix(name, urgentMark) }

// QueueAlerts writes each message to the outbox, named so that a listing
// sorts them in the order they were written: the poll's time, then its
// sequence. An alert waits there, whatever happens to the watcher, until it
// is delivered or kept as failed.
func (d Dir) QueueAlerts(now time.Time, msgs []string) error {
	return d.queue(now, "", msgs)
}

// QueueUrgent queues messages a human must act on (a question, a block):
// they are delivered before every other alert waiting.
func (d Dir) QueueUrgent(now time.Time, msgs []string) error {
	return d.queue(now, urgentMark, msgs)
}

// MarkupSuffix names the file beside an alert that holds its buttons (a
// Telegram reply markup), written before the alert and removed after it.
const MarkupSuffix = ".markup"

// RecordSuffix names the file beside an alert that records who has it
// already when there are channels besides the funnel: "funnel", and each
// channel by a digest of its URL, a line each. Who is named there is not
// sent the alert again; the alert leaves the outbox when all are.
const RecordSuffix = ".sent"

// QueueQuestion queues an urgent alert with its buttons.
func (d Dir) QueueQuestion(now time.Time, msg string, markup []byte) error {
	return d.queueMarked(now, urgentMark, []string{msg}, markup)
}

func (d Dir) queue(now time.Time, mark string, msgs []string) error {
	return d.queueMarked(now, mark, msgs, nil)
}

func (d Dir) queueMarked(now time.Time, mark string, msgs []string, markup []byte) error {
	if len(msgs) == 0 {
		return nil
	}
	out := d.Path(Outbox)
	if err := os.MkdirAll(out, 0o700); err != nil {
		return err
	}
	stamp := now.UTC().Format("20060102T150405.000000000Z")
	n := 0
	for _, m := range msgs {
		// Never over an alert already waiting: two calls in one instant
		// (a replayed clock) would otherwise lose the first.
		var path string
		for {
			n++
			path = filepath.Join(out, fmt.Sprintf("%s%s-%03d.alert", mark, stamp, n))
			if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
				break
			}
		}
		if markup != nil {
			if err := atomicfile.Write(path+MarkupSuffix, markup, 0o600); err != nil {
				return err
			}
		}
		if err := atomicfile.Write(path, []byte(m), 0o600); err != nil {
			return err
		}
	}
	return d.capOutbox(now)
}

// capOutbox drops the oldest alerts that are not urgent past MaxOutbox,
// and queues a note of how many.
func (d Dir) capOutbox(now time.Time) error {
	names, err := d.PendingAlerts()
	if err != nil || len(names) <= MaxOutbox {
		return err
	}
	dropped := 0
	for _, name := range names {
		if len(names)-dropped <= MaxOutbox-1 {
			break
		}
		if IsUrgent(name) {
			continue
		}
		if os.Remove(filepath.Join(d.Path(Outbox), name)) == nil {
			os.Remove(filepath.Join(d.Path(Outbox), name+RecordSuffix))
			dropped++
		}
	}
	if dropped == 0 {
		return nil
	}
	note := fmt.Sprintf("<b>ALERTS DROPPED</b> · %d alert(s) of this watcher were dropped: more than %d waited to be delivered. See the watcher's log and history.", dropped, MaxOutbox)
	path := filepath.Join(d.Path(Outbox), now.UTC().Format("20060102T150405.000000000Z")+"-dropped.alert")
	return atomicfile.Write(path, []byte(note), 0o600)
}

// PendingAlerts lists the outbox's alerts in the order to deliver them:
// the urgent first, then oldest first.
func (d Dir) PendingAlerts() ([]string, error) {
	entries, err := os.ReadDir(d.Path(Outbox))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".alert") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

// KeepFailed appends an alert that cannot be delivered to alert-failed.log
// in the state home home, as the funnel does: a header line with why (one
// line, whatever a server put in it), then the alert.
func KeepFailed(home, why string, msg []byte) error {
	if err := os.MkdirAll(home, 0o700); err != nil {
		return err
	}
	f, err := openAppend(filepath.Join(home, FailedAlerts))
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "--- %s · %s\n%s\n", time.Now().UTC().Format(time.RFC3339), OneLine(why), msg)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
