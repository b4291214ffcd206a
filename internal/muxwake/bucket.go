package muxwake

import "time"

// A Bucket bounds the wakes passed on to the loop: at most Cap in a row,
// then one every Every. A wake that finds the bucket empty is kept as one
// pending wake, passed on when a token comes back: however often the
// multiplexer fires, the loop is woken no more often than that, and what
// it costs stays bounded.
type Bucket struct {
	Cap   int
	Every time.Duration

	tokens  int
	at      time.Time // when tokens was counted
	started bool
	pending bool
}

// refill counts the tokens come back by now.
func (b *Bucket) refill(now time.Time) {
	if !b.started {
		b.tokens, b.at, b.started = b.Cap, now, true
		return
	}
	if now.Before(b.at) { // the clock went back: count from now
		b.at = now
		return
	}
	if b.Every <= 0 {
		b.tokens = b.Cap
		return
	}
	n := int(now.Sub(b.at) / b.Every)
	if n <= 0 {
		return
	}
	b.tokens = min(b.Cap, b.tokens+n)
	b.at = b.at.Add(time.Duration(n) * b.Every)
	if b.tokens == b.Cap {
		b.at = now
	}
}

// Offer takes a wake at now and says whether to pass it on now; when not,
// one is pending until Due.
func (b *Bucket) Offer(now time.Time) bool {
	b.refill(now)
	if b.tokens > 0 {
		b.tokens--
		b.pending = false
		return true
	}
	b.pending = true
	return false
}

// Due is when the pending wake is to be passed on, and false when none is.
func (b *Bucket) Due() (time.Time, bool) { return b.at.Add(b.Every), b.pending }

// Fire says whether the pending wake is to be passed on at now, and takes
// it with its token.
func (b *Bucket) Fire(now time.Time) bool {
	if !b.pending {
		return false
	}
	b.refill(now)
	if b.tokens == 0 {
		return false
	}
	b.tokens--
	b.pending = false
	return true
}
