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
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/omega-monitor/omega-monitor/alert"
	"github.com/omega-monitor/omega-monitor/internal/atomicfile"
	"github.com/omega-monitor/omega-monitor/internal/companion"
	"github.com/omega-monitor/omega-monitor/internal/fsutil"
	"github.com/omega-monitor/omega-monitor/internal/pollset"
	"github.com/omega-monitor/omega-monitor/internal/printable"
	"github.com/omega-monitor/omega-monitor/internal/procgroup"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/statedir/event"
	"github.com/omega-monitor/omega-monitor/tick"
)

// Delivery runs apart from the poll: the loop starts a deliverer (deliver
// --worker) when its outbox holds an alert, and never waits for it. Each
// channel (the funnel, each line of the channels file) has its own queue:
// the alerts not yet its own, oldest first (urgent ones first of all). A
// channel that fails is tried again with backoff, the alerts behind it
// waiting in order, until it takes them or they expire; the other channels
// go on. Every attempt is written in the alert's record before it starts
// and its outcome after, so that an alert reaches a channel at most once
// across stops, restarts and crashes: a send whose outcome was never
// written may have happened, and is said, not repeated.

// attemptTimeout bounds one attempt at one channel; the funnel's own
// deadline (OMEGA_ALERT_DEADLINE, 30 s from here) ends it first.
const attemptTimeout = 45 * time.Second

// maxBackoff is the longest wait between tries at a channel: a channel
// back from an outage has the alerts within that.
const maxBackoff = 30 * time.Second

// backoff is the wait after the nth failure in a row.
func (dv *deliverer) backoff(fails int) time.Duration {
	d := dv.retry
	for i := 1; i < fails && d < maxBackoff; i++ {
		d *= 2
	}
	return min(d, max(maxBackoff, dv.retry))
}

// DeliverOptions say how Deliver runs (pollset.DeliverOptions).
type DeliverOptions = pollset.DeliverOptions

// Funnel is the alert funnel a deliverer runs: the one given, else
// $OMEGA_MONITOR_ALERT_SEND, else ~/.omega/bin/omega-alert-send.sh under
// home; an error when none can be named.
func Funnel(given string, getenv func(string) string, home string) (string, error) {
	if given != "" {
		return given, nil
	}
	if getenv("OMEGA_MONITOR_ALERT_SEND") == "" && home == "" {
		return "", errors.New("no home directory for the funnel: set HOME, or OMEGA_MONITOR_ALERT_SEND")
	}
	return alert.FunnelPath(getenv, home), nil
}

// An outlet is one channel of delivery: the funnel or a line of the
// channels file.
type outlet struct {
	id, name string
	send     func(ctx context.Context, path string, msg []byte, args []string) attempt
}

// An attempt is what became of one send.
type attempt struct {
	ok, lost  bool // lost: an alert given up at a channel (kept, expired, maybe sent)
	why       string
	permanent bool // no use trying again: kept in alert-failed.log
	sent      alert.Sent
}

// buttonsSent is the message the funnel said it sent a question's buttons
// under, and their offers' nonces as they were sent.
type buttonsSent struct {
	sent   alert.Sent
	nonces []string
}

// A channelState is what an alert's record says of one channel.
type channelState struct {
	done, terminal, sending bool
	fails                   int
	lastFail                time.Time
	why                     string
}

// deliverer delivers one watcher's outbox.
type deliverer struct {
	d                 statedir.Dir
	target, stateHome string
	expiry, retry     time.Duration
	outlets           []outlet
	mu                sync.Mutex
	lines             []string
	ok                bool
	lost              bool                   // an alert given up at a channel: kept, expired, or maybe sent
	sent              map[string]buttonsSent // the funnel's message of each question sent with its buttons
	status            map[string]*statedir.ChannelHealth
}

// Deliver delivers the alerts waiting in dir's outbox to each channel: the
// funnel (unless the channels file stands in for a Telegram never set up)
// and each channel of the state home's channels file, through
// omega-monitor-notify. See DeliverOptions for how long it runs. It returns
// the MONITOR lines it said (each also in monitor.log), and whether every
// alert tried reached every channel.
func Deliver(ctx context.Context, dir, target, funnel, stateHome string, environ []string, o DeliverOptions) (lines []string, ok bool) {
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
	dv := &deliverer{d: d, target: target, stateHome: stateHome, expiry: o.Expiry, ok: true,
		sent: map[string]buttonsSent{}, status: map[string]*statedir.ChannelHealth{}}
	if dv.expiry <= 0 {
		dv.expiry = pollset.DefaultExpiry
	}
	if dv.retry = o.Retry; dv.retry <= 0 {
		dv.retry = pollset.DefaultRetry
	}
	dv.outlets = dv.findOutlets(ctx, funnel, environ)
	for _, ol := range dv.outlets {
		dv.status[ol.id] = &statedir.ChannelHealth{ID: ol.id, Name: ol.name}
	}
	if len(dv.outlets) == 0 {
		dv.keepAll("no channel to deliver to: the funnel is the default one with no Telegram config, and the channels file names no good channel")
		return dv.lines, false
	}
	if !o.Worker {
		var wg sync.WaitGroup
		for _, ol := range dv.outlets {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					if tried, _ := dv.step(ctx, ol); !tried {
						return
					}
				}
			}()
		}
		wg.Wait()
		dv.complete(time.Now())
		dv.writeStatus(time.Now())
		lock.Close()
		return dv.withGroups(ctx, dir, funnel, environ, o)
	}
	parent := os.Getppid()
	var gone bool
	for {
		gone = dv.work(ctx, parent)
		// Let go of the outbox, then look once more: an alert written as
		// this one was ending found it alive, and no other was started.
		lock.Close()
		if gone || ctx.Err() != nil {
			break
		}
		if names, err := d.PendingAlerts(); err != nil || len(names) == 0 {
			break
		}
		if lock, err = d.TryLock(statedir.OutboxLock); err != nil {
			break // another deliverer has it
		}
	}
	if gone {
		return dv.lines, dv.ok // the loop's next start delivers the groups' pages
	}
	return dv.withGroups(ctx, dir, funnel, environ, o)
}

// withGroups delivers, after the watcher's own outbox, the pages waiting
// in the groups it is a member of, and returns the lines and the outcome
// of both.
func (dv *deliverer) withGroups(ctx context.Context, dir, funnel string, environ []string, o DeliverOptions) ([]string, bool) {
	lines, ok := deliverGroups(ctx, dir, funnel, dv.stateHome, environ, o)
	return append(dv.lines, lines...), dv.ok && ok
}

// work delivers until the outbox is empty, the loop that started this
// deliverer (parent) is gone, or ctx ends; gone says the loop is.
func (dv *deliverer) work(ctx context.Context, parent int) (gone bool) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for _, ol := range dv.outlets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				tried, wait := dv.step(ctx, ol)
				if tried {
					continue
				}
				select {
				case <-ctx.Done():
				case <-time.After(min(max(wait, 50*time.Millisecond), 500*time.Millisecond)):
				}
			}
		}()
	}
	empty := 0
	for ctx.Err() == nil {
		now := time.Now()
		pending := dv.complete(now)
		dv.writeStatus(now)
		if pending == 0 {
			empty++
		} else {
			empty = 0
		}
		// Nothing waits (a new alert starts a new deliverer), or the loop
		// that started this one is gone: its next start delivers the rest.
		if gone = os.Getppid() != parent; empty >= 2 || gone {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
	}
	cancel()
	wg.Wait()
	dv.complete(time.Now())
	dv.writeStatus(time.Now())
	return gone
}

// findOutlets lists the channels: the funnel, unless the channels file
// stands in for a Telegram never set up, then each good channel of the
// channels file, as omega-monitor-notify lists it.
func (dv *deliverer) findOutlets(ctx context.Context, funnel string, environ []string) []outlet {
	channels := hasChannels(dv.stateHome)
	var out []outlet
	if !channels || telegramSetUp(funnel, environ) {
		name := "Telegram (the funnel)"
		if home := envValue(environ, "HOME"); funnel != alert.DefaultFunnel(home) {
			name = "the funnel " + funnel
		}
		out = append(out, outlet{id: funnelMark, name: name, send: func(ctx context.Context, path string, msg []byte, args []string) attempt {
			return sendFunnel(ctx, funnel, dv.stateHome, environ, msg, args)
		}})
	}
	if !channels {
		return out
	}
	bin, err := companion.Find(companion.Notify)
	if err != nil {
		dv.say("alerts NOT delivered to the channels: " + err.Error())
		dv.ok = false
		return out
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "list", "--home", dv.stateHome)
	cmd.Env = environ
	procgroup.Set(cmd, time.Second)
	listed, err := cmd.Output()
	for _, line := range strings.Split(string(listed), "\n") {
		if f, ok := strings.CutPrefix(line, "bad: "); ok {
			dv.say("channels file: " + f)
			continue
		}
		if why, ok := strings.CutPrefix(line, "refused: "); ok {
			// No channel can be read: each alert is kept for them, as
			// one that expired is, and told.
			out = append(out, outlet{id: "channels", name: "the channels", send: func(_ context.Context, _ string, msg []byte, _ []string) attempt {
				why := "the channels file is refused: " + why
				if err := statedir.KeepFailed(dv.stateHome, "not delivered to the channels: "+why, msg); err != nil {
					return attempt{why: why + "; and not kept: " + err.Error(), permanent: true}
				}
				return attempt{why: why + "; kept in alert-failed.log", permanent: true}
			}})
			continue
		}
		id, name, ok := strings.Cut(line, "\t")
		if !ok || id == "" || id == funnelMark {
			continue
		}
		out = append(out, outlet{id: id, name: name, send: func(ctx context.Context, path string, msg []byte, _ []string) attempt {
			return sendChannel(ctx, bin, dv.stateHome, id, environ, msg)
		}})
	}
	if err != nil && len(listed) == 0 {
		dv.say("alerts NOT delivered to the channels: " + companion.Notify + " list: " + err.Error())
		dv.ok = false
	}
	return out
}

// step works on the first alert of ol's queue: it sends it when it is due,
// says and keeps one that expired, and says one whose last send was cut
// short with its outcome unwritten. tried says something was done and the
// queue may go on at once; wait is how long until its head is due.
func (dv *deliverer) step(ctx context.Context, ol outlet) (tried bool, wait time.Duration) {
	if ctx.Err() != nil {
		return false, 0
	}
	names, err := dv.d.PendingAlerts()
	if err != nil {
		return false, time.Second
	}
	now := time.Now()
	queued := 0
	defer func() {
		dv.mu.Lock()
		dv.status[ol.id].Queued = queued
		dv.mu.Unlock()
	}()
	for i, name := range names {
		path := filepath.Join(dv.d.Path(statedir.Outbox), name)
		record := path + statedir.RecordSuffix
		st := readChannelStates(record)[ol.id]
		if st.terminal {
			continue
		}
		queued = len(names) - i
		fi, err := os.Stat(path)
		if err != nil {
			continue // delivered meanwhile, or not ours
		}
		msg, err := fsutil.ReadCapped(path, 1<<20)
		if err != nil {
			continue
		}
		switch {
		case st.sending:
			dv.mark(record, ol.id, "uncertain", now, "")
			dv.setLost()
			dv.say(fmt.Sprintf("alert %s may have reached %s: a send to it was cut short before its outcome was written (the deliverer died); not sent again", name, ol.name))
			return true, 0
		case now.Sub(fi.ModTime()) > dv.expiry:
			why := fmt.Sprintf("to %s within %v: %s", ol.name, dv.expiry, orNone(st.why))
			if err := statedir.KeepFailed(dv.stateHome, alert.Scrub("not delivered "+why), msg); err != nil {
				why += "; and not kept: " + err.Error()
			} else {
				why += "; kept in alert-failed.log"
			}
			dv.mark(record, ol.id, "expired", now, "")
			dv.setLost()
			dv.notDelivered(name, why)
			return true, 0
		case st.fails > 0 && now.Before(st.lastFail.Add(dv.backoff(st.fails))):
			return false, st.lastFail.Add(dv.backoff(st.fails)).Sub(now)
		}
		// A question's buttons go with it, to the funnel, while they are
		// offered.
		var args, nonces []string
		if ol.id == funnelMark {
			if fi, err := os.Lstat(path + statedir.MarkupSuffix); err == nil && fi.Mode().IsRegular() {
				var live bool
				if nonces, live = offeredButtons(dv.d, path+statedir.MarkupSuffix); live {
					args = []string{"--reply-markup", path + statedir.MarkupSuffix}
				} else {
					nonces = nil
				}
			}
		}
		// Written before the send: an outcome never written after it is a
		// send that may have happened.
		if err := dv.mark(record, ol.id, "sending", now, ""); err != nil {
			dv.notDelivered(name, "the alert's record: "+err.Error()+"; not sent, tried again")
			return false, time.Second
		}
		dv.sending(ol.id, name, st.fails+1, now)
		actx, cancel := context.WithTimeout(ctx, attemptTimeout)
		a := ol.send(actx, path, msg, args)
		a.why = boundWhy(a.why)
		cut := ctx.Err() != nil
		cancel()
		dv.sending(ol.id, "", 0, time.Time{})
		end := time.Now()
		switch {
		case a.ok:
			dv.mark(record, ol.id, "done", end, "")
			dv.mu.Lock()
			h := dv.status[ol.id]
			h.DeliveredAt, h.Delivered = end, h.Delivered+1
			if len(nonces) > 0 {
				dv.sent[name] = buttonsSent{a.sent, nonces}
			}
			dv.mu.Unlock()
			if st.fails > 0 {
				dv.say(fmt.Sprintf("alert delivered to %s, try %d", ol.name, st.fails+1))
			}
		case cut:
			// Stopped: the send was ended before it was acknowledged. The
			// next deliverer sends it again.
			dv.mark(record, ol.id, "failed", end, "cut short by a stop")
		case a.permanent:
			dv.mark(record, ol.id, "gave-up", end, a.why)
			dv.setLost()
			dv.failed(ol.id, end, a.why)
			dv.notDelivered(name, "to "+ol.name+": "+a.why)
		default:
			dv.mark(record, ol.id, "failed", end, a.why)
			dv.failed(ol.id, end, a.why)
			if st.fails == 0 {
				dv.notDelivered(name, fmt.Sprintf("to %s: %s; queued for it, tried again with backoff until it takes it or the alert is %v old", ol.name, a.why, dv.expiry))
			}
			return false, dv.backoff(st.fails + 1)
		}
		return true, 0
	}
	return false, 0
}

// complete takes out of the outbox every alert each channel has, or gave
// up, with its history event; it returns how many wait still.
func (dv *deliverer) complete(now time.Time) (pending int) {
	names, err := dv.d.PendingAlerts()
	if err != nil {
		return 1
	}
	for _, name := range names {
		path := filepath.Join(dv.d.Path(statedir.Outbox), name)
		record := path + statedir.RecordSuffix
		states := readChannelStates(record)
		all, delivered := true, true
		for _, ol := range dv.outlets {
			st := states[ol.id]
			if !st.terminal {
				all = false
				break
			}
			delivered = delivered && st.done
		}
		if !all {
			pending++
			continue
		}
		dv.mu.Lock()
		b, sent := dv.sent[name]
		delete(dv.sent, name)
		dv.mu.Unlock()
		if sent {
			if err := noteMessage(dv.d, b.nonces, b.sent, now); err != nil {
				dv.say("the message of a question's buttons not recorded: " + err.Error())
			}
		}
		os.Remove(path)
		os.Remove(path + statedir.MarkupSuffix)
		os.Remove(record)
		// Each channel that did not take it was told as it gave up.
		if delivered {
			dv.d.AppendHistory(now, dv.target, redactEvents([]event.Event{{Name: event.AlertDelivered, State: "?", Fields: map[string]any{"alert": name}}}))
		}
	}
	dv.mu.Lock()
	lost := dv.lost
	dv.mu.Unlock()
	if pending == 0 && !lost {
		os.Remove(dv.d.Path(statedir.Undelivered)) // every alert reached every channel, late or not
	}
	return pending
}

// keepAll keeps every waiting alert in alert-failed.log with why, and
// takes it out of the outbox.
func (dv *deliverer) keepAll(why string) {
	dv.setLost()
	names, _ := dv.d.PendingAlerts()
	for _, name := range names {
		path := filepath.Join(dv.d.Path(statedir.Outbox), name)
		msg, err := fsutil.ReadCapped(path, 1<<20)
		if err != nil {
			continue
		}
		said := why + "; kept in alert-failed.log"
		if err := statedir.KeepFailed(dv.stateHome, why, msg); err != nil {
			dv.notDelivered(name, why+"; and not kept: "+err.Error())
			continue
		}
		dv.notDelivered(name, said)
		os.Remove(path)
		os.Remove(path + statedir.MarkupSuffix)
		os.Remove(path + statedir.RecordSuffix)
		dv.d.AppendHistory(time.Now(), dv.target, redactEvents([]event.Event{{Name: event.AlertNotDelivered, State: "?",
			Fields: map[string]any{"alert": name, "why": alert.Scrub(why)}}}))
	}
}

// mark appends an outcome to an alert's record: "ID EVENT UNIXSECONDS why".
func (dv *deliverer) mark(record, id, ev string, at time.Time, why string) error {
	line := fmt.Sprintf("%s %s %d", id, ev, at.Unix())
	if why != "" {
		line += " " + strings.Join(strings.Fields(alert.Scrub(why)), " ")
	}
	dv.mu.Lock()
	defer dv.mu.Unlock()
	if err := appendLine(record, line); err != nil {
		return err
	}
	// A channel down for a day is tried thousands of times, two lines a
	// try: past compactAt the record is written again as its outcomes say
	// them, so that it never outgrows what readChannelStates reads (a
	// record it cannot read would send again what a channel has).
	if fi, err := os.Lstat(record); err == nil && fi.Size() > compactAt {
		if b, err := fsutil.ReadCapped(record, 256<<10); err == nil {
			return atomicfile.Write(record, []byte(compactRecord(string(b))), 0o600)
		}
	}
	return nil
}

// compactAt is the size past which an alert's record is compacted.
const compactAt = 64 << 10

// compactRecord is an alert's record with each channel's failures in a
// row said in one line, "ID failures N UNIXSECONDS why" (the count, the
// last's time and why), and a "sending" line kept only when it is the
// channel's last: what readChannelStates reads of it is unchanged.
func compactRecord(text string) string {
	type channel struct {
		fails    int
		lastFail string // the last failed line's time and why
		after    []string
	}
	var order []string
	chans := map[string]*channel{}
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		f := strings.SplitN(line, " ", 4)
		if len(f) < 2 {
			continue
		}
		c := chans[f[0]]
		if c == nil {
			c = &channel{}
			chans[f[0]] = c
			order = append(order, f[0])
		}
		switch f[1] {
		case "failed", "failures":
			n := 1
			if f[1] == "failures" && len(f) == 4 {
				count, rest, _ := strings.Cut(f[3], " ")
				n, _ = strconv.Atoi(count)
				f = append(f[:3], rest)
			}
			c.fails += n
			c.lastFail = strings.Join(f[2:], " ")
			c.after = nil
		default:
			if k := len(c.after); k > 0 && strings.HasPrefix(c.after[k-1], f[0]+" sending") {
				c.after = c.after[:k-1]
			}
			c.after = append(c.after, line)
		}
	}
	var b strings.Builder
	for _, id := range order {
		c := chans[id]
		if c.fails > 0 {
			at, why, _ := strings.Cut(c.lastFail, " ")
			fmt.Fprintf(&b, "%s failures %s %d %s\n", id, at, c.fails, why)
		}
		for _, l := range c.after {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

func (dv *deliverer) say(what string) {
	line := alert.Redact(tick.Line(dv.target, "?", what))
	dv.mu.Lock()
	dv.lines = append(dv.lines, line)
	dv.mu.Unlock()
	dv.d.AppendLog(time.Now(), line)
}

// notDelivered says an alert did not reach a channel, for the line, the
// board and the history.
func (dv *deliverer) notDelivered(name, why string) {
	dv.mu.Lock()
	dv.ok = false
	dv.mu.Unlock()
	dv.d.WriteRecord(statedir.Undelivered, statedir.UndeliveredRecord{At: time.Now().UTC(), Alert: name, Why: alert.Scrub(why)})
	dv.say("alert NOT delivered " + why)
	dv.d.AppendHistory(time.Now(), dv.target, redactEvents([]event.Event{{Name: event.AlertNotDelivered, State: "?",
		Fields: map[string]any{"alert": name, "why": alert.Scrub(why)}}}))
}

func (dv *deliverer) setLost() {
	dv.mu.Lock()
	defer dv.mu.Unlock()
	dv.lost = true
}

func (dv *deliverer) failed(id string, at time.Time, why string) {
	dv.mu.Lock()
	defer dv.mu.Unlock()
	h := dv.status[id]
	h.FailedAt, h.Why = at, alert.Scrub(why)
}

func (dv *deliverer) sending(id, name string, try int, since time.Time) {
	dv.mu.Lock()
	defer dv.mu.Unlock()
	h := dv.status[id]
	if name == "" {
		h.Sending = nil
		return
	}
	h.Sending = &statedir.Sending{Alert: name, Try: try, Since: since}
}

// writeStatus writes delivery.json, the board's view of each channel.
func (dv *deliverer) writeStatus(now time.Time) {
	dv.mu.Lock()
	rec := statedir.DeliveryRecord{PID: os.Getpid(), At: now.UTC()}
	for _, ol := range dv.outlets {
		rec.Channels = append(rec.Channels, *dv.status[ol.id])
	}
	dv.mu.Unlock()
	dv.d.WriteRecord(statedir.Delivery, rec)
}

// readChannelStates reads an alert's record: for each channel, whether it
// has the alert or gave up (terminal), its failures in a row and the last,
// and whether its last send has no outcome written (sending). Lines of the
// record before this form ("ID delivered", "ID gave-up", "funnel done") are
// read as terminal.
func readChannelStates(path string) map[string]channelState {
	states := map[string]channelState{}
	b, err := fsutil.ReadCapped(path, 256<<10)
	if err != nil {
		return states
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.SplitN(line, " ", 4)
		if len(f) < 2 {
			continue
		}
		st := states[f[0]]
		var at time.Time
		if len(f) >= 3 {
			if n, err := strconv.ParseInt(f[2], 10, 64); err == nil {
				at = time.Unix(n, 0)
			}
		}
		st.sending = false
		switch f[1] {
		case "sending":
			st.sending = true
		case "done", "delivered":
			st.done, st.terminal = true, true
		case "gave-up", "expired", "uncertain":
			st.terminal = true
			if len(f) == 4 {
				st.why = f[3]
			}
			if f[1] == "uncertain" {
				st.why = "a send cut short: it may have been delivered"
			}
		case "failed":
			st.fails++
			st.lastFail = at
			if len(f) == 4 {
				st.why = f[3]
			}
		case "failures": // "ID failures UNIXSECONDS N why", compactRecord's
			st.lastFail = at
			if len(f) == 4 {
				count, why, _ := strings.Cut(f[3], " ")
				n, _ := strconv.Atoi(count)
				st.fails, st.why = st.fails+max(n, 1), why
			}
		}
		states[f[0]] = st
	}
	return states
}

// sendFunnel runs the funnel over one message, once: the funnel's own
// retries are bounded short, since the deliverer tries again, and it keeps
// nothing in alert-failed.log (OMEGA_ALERT_QUEUED): the deliverer does, when
// the alert expires.
func sendFunnel(ctx context.Context, funnel, stateHome string, environ []string, msg []byte, args []string) attempt {
	if fi, err := os.Stat(funnel); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o100 == 0 {
		why := fmt.Sprintf("no alert funnel at %s (%s)", funnel, alert.FunnelFix(funnel, envValue(environ, "HOME")))
		if err := statedir.KeepFailed(stateHome, why, msg); err != nil {
			return attempt{why: why + "; and not kept: " + err.Error(), permanent: true}
		}
		return attempt{why: why + "; kept in alert-failed.log", permanent: true}
	}
	env := slices.Clone(environ)
	for _, kv := range []string{"OMEGA_ALERT_DEADLINE=30", "OMEGA_ALERT_TRIES=2"} {
		name, _, _ := strings.Cut(kv, "=")
		if envValue(env, name) == "" {
			env = append(env, kv)
		}
	}
	env = append(env, "OMEGA_ALERT_QUEUED=1")
	sent, err := alert.SendMessage(ctx, funnel, env, string(msg), args...)
	var fe *alert.FunnelError
	switch {
	case err == nil:
		return attempt{ok: true, sent: sent}
	case ctx.Err() != nil:
		return attempt{why: fmt.Sprintf("the funnel did not finish within %v", attemptTimeout)}
	case errors.Is(err, alert.ErrUnread):
		// A funnel of the old contract, which has sent "--stdin" for the
		// message: another try would only page that word again.
		why := fmt.Sprintf("the funnel %s exited 0 without reading the alert on its standard input, "+
			"as a funnel written for the message as $1 does (omega-monitor install updates the default one; "+
			"a custom one must read --stdin: docs/alerts.md)", funnel)
		if err := statedir.KeepFailed(stateHome, why, msg); err != nil {
			return attempt{why: why + "; and not kept: " + err.Error(), permanent: true}
		}
		return attempt{why: why + "; kept in alert-failed.log", permanent: true}
	case errors.As(err, &fe) && fe.Code == 1:
		return attempt{why: funnelCause(fe)}
	default:
		return attempt{why: err.Error()}
	}
}

// funnelCause is why the funnel said it did not send: its last line that
// gives a cause, not the one that says where it kept the message.
func funnelCause(fe *alert.FunnelError) string {
	lines := strings.Split(fe.Stderr, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.Contains(l, "logged what was not sent") {
			continue
		}
		return l
	}
	return "the funnel failed"
}

// sendChannel sends msg once to one channel of the channels file, through
// omega-monitor-notify (which links the notification library).
func sendChannel(ctx context.Context, bin, stateHome, id string, environ []string, msg []byte) attempt {
	// Only paths and the channel's digest on the command line: the secrets
	// stay in their file, and the message goes on standard input.
	cmd := exec.CommandContext(ctx, bin, "send", "--home", stateHome, "--channel", id)
	cmd.Env = environ
	cmd.Stdin = bytes.NewReader(msg)
	procgroup.Set(cmd, time.Second)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err == nil {
		return attempt{ok: true}
	}
	said := lastLine(out.String())
	if s, ok := strings.CutPrefix(said, "not delivered: "); ok {
		if _, why, ok := strings.Cut(s, ": "); ok {
			said = why
		}
	}
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return attempt{why: fmt.Sprintf("%s did not finish within %v", companion.Notify, attemptTimeout)}
	case errors.As(err, &exit) && exit.ExitCode() == 4:
		// The channels file changed under us: that line is gone.
		return attempt{why: "its line is no longer in the channels file", permanent: true}
	case said == "":
		said = lastLine(errb.String())
	}
	if said == "" {
		said = err.Error()
	}
	return attempt{why: said}
}

// maxWhy bounds why a channel did not take an alert, as it is said and
// recorded. A server's answer can be a megabyte, which the funnel or a
// notifier may pass on; the alert's record, which holds the why of each
// failure, is read whole at each step and only up to 256 KiB.
const maxWhy = 1024

// boundWhy is why, one line, redacted, then cut to maxWhy: redacted first,
// so that the cut leaves no part of a secret it would have masked whole.
func boundWhy(why string) string {
	why = statedir.OneLine(why)
	if len(why) > 64*maxWhy {
		why = why[:64*maxWhy]
	}
	return printable.Cut(alert.Scrub(why), maxWhy)
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(s)
}

func orNone(s string) string {
	if s == "" {
		return "no reason given"
	}
	return s
}

func envValue(environ []string, name string) string {
	for i := len(environ) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(environ[i], name+"="); ok {
			return v
		}
	}
	return ""
}

// funnelMark names the funnel in an alert's record.
const funnelMark = "funnel"

// hasChannels says whether the state home has a channels file (whatever
// it holds: omega-monitor-notify says what is wrong with it).
// telegramSetUp says whether the funnel is the operator's: one of their
// own, or the default one with its Telegram config in place, as environ
// names them.
func telegramSetUp(funnel string, environ []string) bool {
	getenv := func(name string) string { return envValue(environ, name) }
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
