package muxwake

import "time"

// A Budget bounds the wakes passed on to the loop: at most Wakes in any
// Window, never two closer than Gap. The watcher sizes it so that what the
// wakes cost stays a fixed share of what its regular polls cost (see
// watcher.muxWakeBudget): however often the multiplexer fires, the loop is
// woken no more often than that. A fresh budget is whole, so that the
// first quiet spells after a start, or after a quiet stretch, pass at once.
type Budget struct {
	Wakes  int
	Window time.Duration
	Gap    time.Duration

	passed []time.Time // the wakes passed in the last Window, oldest first
}

// forget drops the wakes passed a Window or more before now. A clock gone
// back keeps them until it is a Window past them again: it passes nothing
// more.
func (b *Budget) forget(now time.Time) {
	n := 0
	for n < len(b.passed) && now.Sub(b.passed[n]) >= b.Window {
		n++
	}
	b.passed = b.passed[n:]
}

// Take says whether a wake at now may pass, and counts it when it does.
func (b *Budget) Take(now time.Time) bool {
	b.forget(now)
	if len(b.passed) >= b.Wakes || len(b.passed) > 0 && now.Sub(b.passed[len(b.passed)-1]) < b.Gap {
		return false
	}
	b.passed = append(b.passed, now)
	return true
}

// Spent says whether the wakes of the last Window used the budget up.
func (b *Budget) Spent(now time.Time) bool {
	b.forget(now)
	return len(b.passed) >= b.Wakes
}

// Back is when Take passes a wake again: now where it would at now, else
// when enough wakes left the Window and the Gap since the last one ended.
func (b *Budget) Back(now time.Time) time.Time {
	b.forget(now)
	if b.Wakes <= 0 { // passes nothing: asked again a Window on
		return now.Add(max(b.Window, time.Second))
	}
	back := now
	if n := len(b.passed); n > 0 {
		back = later(back, b.passed[n-1].Add(b.Gap))
	}
	if n := len(b.passed) - b.Wakes; n >= 0 {
		back = later(back, b.passed[n].Add(b.Window))
	}
	return back
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
