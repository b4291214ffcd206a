package poll

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/omega-monitor/omega-monitor/alert"
	"github.com/omega-monitor/omega-monitor/internal/companion"
	"github.com/omega-monitor/omega-monitor/internal/fsutil"
	"github.com/omega-monitor/omega-monitor/internal/procgroup"
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
		// With channels besides the funnel, each has the alert once: the
		// record beside it says who has it, so that a channel that fails
		// is tried again without paging those that had it twice.
		record := path + statedir.RecordSuffix
		channels := hasChannels(stateHome)
		var (
			ev, why string
			done    bool
			sent    alert.Sent
		)
		switch {
		case channels && recordHas(record, funnelMark):
			ev, done = event.AlertDelivered, true
		case channels && !telegramSetUp(funnel, environ):
			// The channels are this operator's way to be paged: the
			// default funnel without its config is not a failure, each
			// alert, of a channel they never set up.
			ev, done = event.AlertDelivered, true
		default:
			ev, why, done, sent = deliverOne(funnel, stateHome, environ, msg, args...)
			if done && channels {
				if err := appendLine(record, funnelMark+" done"); err != nil {
					why, done = joinWhy(why, "the alert's record: "+err.Error()+"; kept in the outbox"), false
				}
			}
		}
		if channels {
			said, cdone := deliverChannels(stateHome, record, environ, msg)
			for _, s := range said {
				line := alert.Redact(tick.Line(target, "?", s))
				lines = append(lines, line)
				d.AppendLog(time.Now(), line)
			}
			if !cdone {
				ok = false
			}
			done = done && cdone
		}
		if done {
			os.Remove(path)
			os.Remove(path + statedir.MarkupSuffix)
			os.Remove(record)
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

// funnelMark names the funnel in an alert's record.
const funnelMark = "funnel"

// hasChannels says whether the state home has a channels file (whatever
// it holds: omega-monitor-notify says what is wrong with it).
// telegramSetUp says whether the funnel is the operator's: one of their
// own, or the default one with its Telegram config in place, as environ
// names them.
func telegramSetUp(funnel string, environ []string) bool {
	getenv := func(name string) string {
		for i := len(environ) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(environ[i], name+"="); ok {
				return v
			}
		}
		return ""
	}
	home := getenv("HOME")
	if funnel != alert.DefaultFunnel(home) {
		return true
	}
	_, err := os.Stat(alert.ConfPath(getenv, home))
	return err == nil
}

func hasChannels(stateHome string) bool {
	_, err := os.Lstat(filepath.Join(stateHome, statedir.Channels))
	return err == nil
}

// recordHas says whether an alert's record names who.
func recordHas(record, who string) bool {
	b, err := fsutil.ReadCapped(record, 64<<10)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if w, _, _ := strings.Cut(line, " "); w == who {
			return true
		}
	}
	return false
}

func appendLine(path, line string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(f, line)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func joinWhy(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// deliverChannels hands msg to omega-monitor-notify, which sends it to
// each channel the record does not name (docs/alerts.md, "Other
// channels"). It runs only here, when an alert waits, so that no poll's
// start pays for the notification library. said is what to tell: the
// channels that did not have it and the faults of the channels file not
// told before, each naming a channel by its line, never its secret; done
// says every channel has the alert or gave up.
func deliverChannels(stateHome, record string, environ []string, msg []byte) (said []string, done bool) {
	bin, err := companion.Find(companion.Notify)
	if err != nil {
		why := "alert NOT delivered to the channels: " + err.Error()
		if err := statedir.KeepFailed(stateHome, why, msg); err != nil {
			return []string{why + "; and not kept: " + err.Error()}, false
		}
		return []string{why + "; kept in alert-failed.log"}, true
	}
	ctx, cancel := context.WithTimeout(context.Background(), deliverTimeout)
	defer cancel()
	// Only paths on the command line: the channels' secrets stay in their
	// file, and the message goes on standard input.
	cmd := exec.CommandContext(ctx, bin, "send", "--home", stateHome, "--record", record)
	cmd.Env = environ
	cmd.Stdin = bytes.NewReader(msg)
	procgroup.Set(cmd, time.Second)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	for _, line := range strings.Split(out.String(), "\n") {
		switch {
		case strings.HasPrefix(line, "not delivered: "):
			said = append(said, "alert NOT delivered to "+strings.TrimPrefix(line, "not delivered: ")+"; kept in alert-failed.log")
		case strings.HasPrefix(line, "bad: "):
			said = append(said, "channels file: "+strings.TrimPrefix(line, "bad: "))
		}
	}
	if err != nil {
		why := strings.TrimSpace(errb.String())
		if i := strings.LastIndexByte(why, '\n'); i >= 0 {
			why = why[i+1:]
		}
		if ctx.Err() != nil {
			why = fmt.Sprintf("did not finish within %v", deliverTimeout)
		} else if why == "" {
			why = err.Error()
		}
		return append(said, "alert NOT delivered to every channel: "+companion.Notify+": "+why+"; kept in the outbox for those without it"), false
	}
	return said, true
}
