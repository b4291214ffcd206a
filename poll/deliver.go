package poll

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/alert"
	"github.com/omega-monitor/omega-monitor/internal/fsutil"
	"github.com/omega-monitor/omega-monitor/statedir"
	"github.com/omega-monitor/omega-monitor/statedir/event"
	"github.com/omega-monitor/omega-monitor/tick"
)

// deliverTimeout bounds one funnel run; the funnel's own deadline
// (OMEGA_ALERT_DEADLINE, 60 s from here) ends it first.
const deliverTimeout = 90 * time.Second

// MaxRoutinePerPoll is how many alerts that are not urgent one watcher's
// poll hands to the funnel: Telegram allows a chat about one message a
// second, and a question must not wait behind a watcher's flood.
const MaxRoutinePerPoll = 5

// Deliver sends the alerts waiting in dir's outbox, urgent ones first, then
// the oldest, at most MaxRoutinePerPoll of those, through funnel, one
// deliverer at a time. An alert leaves the outbox only when the
// funnel delivered it, or when it gave up and kept it in alert-failed.log
// (without a funnel, Deliver keeps it there itself); one the funnel could
// not finish stays, and the rest wait behind it. Each outcome is a history
// event. The funnel runs with environ (its configuration's variables among
// them). It returns a MONITOR line for each alert not delivered, and
// whether all that were tried were delivered.
func Deliver(dir, target, funnel, stateHome string, environ []string) (lines []string, ok bool) {
	d := statedir.Dir(dir)
	// One deliverer at a time: a watcher that restarts while the old one
	// still delivers must not send the same alert twice.
	lock, err := d.TryLock(statedir.OutboxLock)
	if errors.Is(err, fsutil.ErrLocked) {
		return nil, true
	}
	if err != nil {
		return []string{tick.Line(target, "?", "alerts NOT delivered: outbox lock: "+err.Error())}, false
	}
	defer lock.Close()
	names, err := d.PendingAlerts()
	if err != nil {
		return []string{tick.Line(target, "?", "alerts NOT delivered: outbox: "+err.Error())}, false
	}
	ok = true
	routine := 0
	for _, name := range names {
		// A rate per watcher: a flood of routine alerts leaves a few a
		// poll, and the rest wait (the outbox's cap drops the oldest);
		// urgent ones, first in the listing, always go.
		if !statedir.IsUrgent(name) {
			if routine == MaxRoutinePerPoll {
				break
			}
			routine++
		}
		path := filepath.Join(d.Path(statedir.Outbox), name)
		msg, err := fsutil.ReadCapped(path, 1<<20)
		if err != nil {
			continue // gone meanwhile, or not ours to send
		}
		// A question's buttons go with it, from the file beside it, while
		// they are offered.
		var args, nonces []string
		if fi, err := os.Lstat(path + statedir.MarkupSuffix); err == nil && fi.Mode().IsRegular() {
			var live bool
			if nonces, live = offeredButtons(d, path+statedir.MarkupSuffix); live {
				args = []string{"--reply-markup", path + statedir.MarkupSuffix}
			}
		}
		ev, why, done, sent := deliverOne(funnel, stateHome, environ, msg, args...)
		if done {
			os.Remove(path)
			os.Remove(path + statedir.MarkupSuffix)
		}
		if ev == event.AlertDelivered && len(args) > 0 {
			if err := noteMessage(d, nonces, sent, time.Now()); err != nil {
				d.AppendLog(time.Now(), alert.Redact(tick.Line(target, "?", "the message of a question's buttons not recorded: "+err.Error())))
			}
		}
		fields := map[string]any{"alert": name}
		if why != "" {
			fields["why"] = why
			ok = false
			d.WriteRecord(statedir.Undelivered, statedir.UndeliveredRecord{At: time.Now().UTC(), Alert: name, Why: alert.Scrub(why)})
			line := alert.Redact(tick.Line(target, "?", "alert NOT delivered: "+why))
			lines = append(lines, line)
			d.AppendLog(time.Now(), line)
		}
		d.AppendHistory(time.Now(), target, redactEvents([]event.Event{{Name: ev, State: "?", Fields: fields}}))
		if !done {
			break // the rest wait behind it, in order
		}
	}
	if ok {
		os.Remove(d.Path(statedir.Undelivered)) // every alert tried left
	}
	return lines, ok
}

// deliverOne runs the funnel over one message. done says the message may
// leave the outbox: delivered, or kept in alert-failed.log; sent is the
// message the funnel said it sent, if it said.
func deliverOne(funnel, stateHome string, environ []string, msg []byte, args ...string) (ev, why string, done bool, sent alert.Sent) {
	if fi, err := os.Stat(funnel); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o100 == 0 {
		why := fmt.Sprintf("no alert funnel at %s (omega-monitor install puts it there)", funnel)
		if err := statedir.KeepFailed(stateHome, why, msg); err != nil {
			return event.AlertNotDelivered, why + "; and not kept: " + err.Error(), false, sent
		}
		return event.AlertNotDelivered, why + "; kept in alert-failed.log", true, sent
	}
	ctx, cancel := context.WithTimeout(context.Background(), deliverTimeout)
	defer cancel()
	// The funnel's own deadline, unless the operator set one, ends before
	// ours.
	env := slices.Clone(environ)
	if !slices.ContainsFunc(env, func(kv string) bool {
		return strings.HasPrefix(kv, "OMEGA_ALERT_DEADLINE=") && kv != "OMEGA_ALERT_DEADLINE="
	}) {
		env = append(env, "OMEGA_ALERT_DEADLINE=60")
	}
	sent, err := alert.SendMessage(ctx, funnel, env, string(msg), args...)
	var fe *alert.FunnelError
	switch {
	case err == nil:
		return event.AlertDelivered, "", true, sent
	case ctx.Err() != nil:
		return event.AlertNotDelivered, fmt.Sprintf("the funnel did not finish within %v; kept in the outbox", deliverTimeout), false, sent
	case errors.Is(err, alert.ErrUnread):
		// A funnel of the old contract, which has sent "--stdin" for the
		// message. Kept in alert-failed.log, not in the outbox: another
		// try each poll would only page that word again.
		why := fmt.Sprintf("the funnel %s exited 0 without reading the alert on its standard input, "+
			"as a funnel written for the message as $1 does (omega-monitor install updates the default one; "+
			"a custom one must read --stdin: docs/alerts.md)", funnel)
		if err := statedir.KeepFailed(stateHome, why, msg); err != nil {
			return event.AlertNotDelivered, why + "; and not kept: " + err.Error(), false, sent
		}
		return event.AlertNotDelivered, why + "; kept in alert-failed.log", true, sent
	case errors.As(err, &fe) && fe.Code == 1:
		// The funnel's own failure: it has kept the message in
		// alert-failed.log.
		said := fe.Said
		if said == "" {
			said = "the funnel failed"
		}
		return event.AlertNotDelivered, said + "; kept in alert-failed.log", true, sent
	default:
		return event.AlertNotDelivered, err.Error() + "; kept in the outbox", false, sent
	}
}
