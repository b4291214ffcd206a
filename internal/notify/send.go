package notify

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nicholas-fedor/shoutrrr/pkg/services/chat/telegram"

	"github.com/omega-monitor/omega-monitor/alert"
	"github.com/omega-monitor/omega-monitor/internal/fsutil"
	"github.com/omega-monitor/omega-monitor/internal/printable"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// Options bound the delivery to one channel: Tries sends at most, each
// within Timeout, Backoff times the try's number apart. A channel that does
// not answer costs at most Tries*Timeout plus the waits between, and the
// channels are sent to side by side.
type Options struct {
	Tries            int
	Timeout, Backoff time.Duration
}

// DefaultOptions: 3 tries of 10 s, 2 s then 4 s apart: 36 s at most, within
// the 90 s a poll gives the delivery of one alert.
var DefaultOptions = Options{Tries: 3, Timeout: 10 * time.Second, Backoff: 2 * time.Second}

// OptionsFrom reads OMEGA_NOTIFY_TRIES (1 to 10), OMEGA_NOTIFY_TIMEOUT and
// OMEGA_NOTIFY_BACKOFF (whole seconds; the backoff may be 0) over the
// defaults.
func OptionsFrom(getenv func(string) string) (Options, error) {
	o := DefaultOptions
	for _, s := range []struct {
		key      string
		min, max int
		set      func(int)
	}{
		{"OMEGA_NOTIFY_TRIES", 1, 10, func(n int) { o.Tries = n }},
		{"OMEGA_NOTIFY_TIMEOUT", 1, 60, func(n int) { o.Timeout = time.Duration(n) * time.Second }},
		{"OMEGA_NOTIFY_BACKOFF", 0, 30, func(n int) { o.Backoff = time.Duration(n) * time.Second }},
	} {
		v := getenv(s.key)
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < s.min || n > s.max {
			return o, fmt.Errorf("notify: %s=%q: want whole seconds (a count for the tries) from %d to %d", s.key, v, s.min, s.max)
		}
		s.set(n)
	}
	return o, nil
}

// A Result is what became of an alert at one channel.
type Result struct {
	Channel Channel
	// Had: the record said the channel had it already (delivered, or gave
	// up, on an earlier run); nothing was sent.
	Had       bool
	Delivered bool
	Why       string // why not delivered, scrubbed
	Tries     int
}

// Line is the result as a line for a human: the channel by its Name only.
func (r Result) Line() string {
	switch {
	case r.Had:
		return "had it already: " + r.Channel.Name()
	case r.Delivered:
		return "delivered: " + r.Channel.Name()
	}
	return fmt.Sprintf("not delivered: %s: %s", r.Channel.Name(), r.Why)
}

// Deliver sends msg, an alert as the outbox holds it (Telegram HTML), to
// each channel that the record at sent does not name, side by side, each
// as its service reads text. A channel that has it, or that gave up after
// its tries, is appended to the record at once, so that a run cut short
// (killed, out of time) sends it again to none of them; one that gave up
// has the alert kept in alert-failed.log of the state home, with its name
// and why (never its URL). sent "" keeps no record: every channel is sent
// to; home "" keeps nothing in alert-failed.log (install --test-alert).
func Deliver(ctx context.Context, chans []Channel, msg, sent, home string, o Options) ([]Result, error) {
	had, err := readRecord(sent)
	if err != nil {
		return nil, err
	}
	results := make([]Result, len(chans))
	var mu sync.Mutex
	var recErr error
	var wg sync.WaitGroup
	for i, c := range chans {
		results[i].Channel = c
		if had[c.ID()] {
			results[i].Had = true
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &results[i]
			r.Delivered, r.Why, r.Tries = sendTries(ctx, c, alert.Text(msg, c.Style()), o)
			if ctx.Err() != nil && !r.Delivered {
				return // cut short: not given up, tried again next time
			}
			mark := "delivered"
			if !r.Delivered {
				mark = "gave-up"
				if home == "" {
					return
				}
				if err := statedir.KeepFailed(home, "not delivered to "+c.Name()+": "+r.Why, []byte(msg)); err != nil {
					mu.Lock()
					recErr = errors.Join(recErr, fmt.Errorf("notify: alert-failed.log: %w", err))
					mu.Unlock()
					return
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if err := appendRecord(sent, c.ID()+" "+mark); err != nil {
				recErr = errors.Join(recErr, err)
			}
		}()
	}
	wg.Wait()
	if recErr == nil && ctx.Err() != nil {
		recErr = fmt.Errorf("notify: cut short: %w", ctx.Err())
	}
	return results, recErr
}

// maxWhy bounds what is said of why a send failed.
const maxWhy = 600

// sendTries sends text to c at most o.Tries times, each within o.Timeout.
func sendTries(ctx context.Context, c Channel, text string, o Options) (ok bool, why string, tries int) {
	for tries = 1; ; tries++ {
		err := sendOnce(ctx, c, text, o.Timeout)
		if err == nil {
			return true, "", tries
		}
		why = oneLine(c.Scrub(err.Error()), maxWhy)
		if tries >= o.Tries || ctx.Err() != nil {
			return false, fmt.Sprintf("%s (%s)", why, triesSaid(tries)), tries
		}
		select {
		case <-time.After(o.Backoff * time.Duration(tries)):
		case <-ctx.Done():
			return false, why, tries
		}
	}
}

// sendOnce is one send, given up after timeout: a service that never
// answers is left to its goroutine, which this short-lived process ends.
// The service is made within the timeout too: Matrix's logs in as it is
// made, and a server that takes the login and never answers must cost no
// more than one that takes the message so.
func sendOnce(ctx context.Context, c Channel, text string, timeout time.Duration) error {
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- send(tctx, c, text) }()
	select {
	case err := <-done:
		return err
	case <-tctx.Done():
		if err := ctx.Err(); err != nil {
			return err
		}
		return fmt.Errorf("no answer within %v", timeout)
	}
}

// send sends text to c once, by its service in shoutrrr; a telegram://
// line through go-telegram/bot (telegram.go), whose answer is checked as
// the library's client does not.
func send(ctx context.Context, c Channel, text string) error {
	svc, err := service(&c)
	if err != nil {
		return err
	}
	if tg, ok := svc.(*telegram.Service); ok {
		return sendTelegram(ctx, http.DefaultClient, telegramAPI, tg.GetConfig(), text)
	}
	return svc.Send(text, nil)
}

// readRecord reads the channels an alert's record names as having it.
func readRecord(path string) (map[string]bool, error) {
	had := map[string]bool{}
	if path == "" {
		return had, nil
	}
	b, err := fsutil.ReadCapped(path, 64<<10)
	if errors.Is(err, os.ErrNotExist) {
		return had, nil
	}
	if err != nil {
		return nil, fmt.Errorf("notify: the alert's record: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if id, _, ok := strings.Cut(line, " "); ok {
			had[id] = true
		}
	}
	return had, nil
}

// appendRecord appends line to the record at path (none when path is ""),
// synced: it is the promise that the channel is not sent to again.
func appendRecord(path, line string) error {
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("notify: the alert's record: %w", err)
	}
	_, err = fmt.Fprintln(f, line)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("notify: the alert's record: %w", err)
	}
	return nil
}

// ReportedName is the file in the state home that remembers which faults
// of the channels file were reported, so that each is reported once.
const ReportedName = "channels.reported"

// FirstReports returns the faults of the channels file not reported
// before, each a line to show, and remembers them as reported: a bad line
// is reported once, not at every alert. A fault is what is wrong with its
// line, with that line's text, so that a line fixed and broken again is
// reported again.
func FirstReports(home string, bad []LineError, refused error) ([]string, error) {
	path := filepath.Join(home, ReportedName)
	seen, err := readRecord(path)
	if err != nil {
		return nil, err
	}
	type fault struct{ say, key string }
	var faults []fault
	if refused != nil {
		faults = append(faults, fault{refused.Error(), refused.Error()})
	}
	for _, e := range bad {
		faults = append(faults, fault{e.Error(), e.Error() + "\x00" + e.text})
	}
	var fresh []string
	for _, f := range faults {
		sum := sha256.Sum256([]byte(f.key))
		key := hex.EncodeToString(sum[:8])
		if seen[key] {
			continue
		}
		if err := appendRecord(path, key+" reported"); err != nil {
			return fresh, err
		}
		seen[key] = true
		fresh = append(fresh, f.say)
	}
	return fresh, nil
}

// oneLine is s on one line (a service's error may quote a page it was
// answered), at most n bytes of it: a reader of the command's output takes
// a channel's outcome as one line.
func oneLine(s string, n int) string {
	return printable.Cut(strings.Join(strings.Fields(s), " "), n)
}

func triesSaid(n int) string {
	if n == 1 {
		return "1 try"
	}
	return strconv.Itoa(n) + " tries"
}

// SendOnce sends msg, an alert as the outbox holds it, to c once, as its
// service reads text, given up after timeout. Its error is scrubbed of the
// channel's secrets. The caller keeps the record and tries again.
func SendOnce(ctx context.Context, c Channel, msg string, timeout time.Duration) error {
	if err := sendOnce(ctx, c, alert.Text(msg, c.Style()), timeout); err != nil {
		return errors.New(oneLine(c.Scrub(err.Error()), maxWhy))
	}
	return nil
}
