package pollset

import (
	"fmt"
	"time"
)

// DefaultExpiry is how long an alert waits for a channel that cannot take
// it before it is given up there, said, and kept in alert-failed.log
// (OMEGA_ALERT_EXPIRY overrides it).
const DefaultExpiry = 24 * time.Hour

// DefaultRetry is the wait after a channel's first failure, doubled after
// each other, at most 30 s: a channel back from an outage has the
// alerts within that.
const DefaultRetry = 2 * time.Second

// DeliverOptions say how the deliverer (poll.Deliver) runs.
type DeliverOptions struct {
	// Worker keeps delivering until the outbox is empty, the loop that
	// started it is gone, or ctx ends; otherwise each channel is tried
	// once for each alert due, and Deliver returns.
	Worker bool
	// Expiry is how long an alert waits for a channel; DefaultExpiry when
	// zero.
	Expiry time.Duration
	// Retry is the wait after a channel's first failure; DefaultRetry
	// when zero.
	Retry time.Duration
}

// DeliverOptionsFrom reads OMEGA_ALERT_EXPIRY (a Go duration of a second
// or more) and OMEGA_ALERT_RETRY (1ms to 1h) over the defaults.
func DeliverOptionsFrom(getenv func(string) string) (DeliverOptions, error) {
	o := DeliverOptions{Expiry: DefaultExpiry, Retry: DefaultRetry}
	for _, s := range []struct {
		name     string
		lo, hi   time.Duration
		set      *time.Duration
		examples string
	}{
		{"OMEGA_ALERT_EXPIRY", time.Second, 0, &o.Expiry, "as 24h or 90m"},
		{"OMEGA_ALERT_RETRY", time.Millisecond, time.Hour, &o.Retry, "as 2s"},
	} {
		v := getenv(s.name)
		if v == "" {
			continue
		}
		d, err := time.ParseDuration(v)
		if err != nil || d < s.lo || s.hi > 0 && d > s.hi {
			return o, fmt.Errorf("%s=%q: want a duration of %v or more%s, %s", s.name, v, s.lo, upTo(s.hi), s.examples)
		}
		*s.set = d
	}
	return o, nil
}

func upTo(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return " up to " + d.String()
}
