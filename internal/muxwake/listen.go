package muxwake

import (
	"context"
	"errors"
	"time"
)

// ErrLoopGone ends a listener whose loop no longer runs.
var ErrLoopGone = errors.New("muxwake: the loop is gone")

// A Listener passes the multiplexer's wakes of one watcher on to its loop,
// through a Bucket. It holds no judgement: a wake only ends the loop's
// pause.
type Listener struct {
	// Wait returns when the watcher's channel is signalled (tmux's
	// wait-for), or with an error when it cannot wait.
	Wait func(ctx context.Context) error
	// Clear clears the session's alerts after each wake (ClearArgs), so
	// that the next silence fires again.
	Clear func(ctx context.Context) error
	// Wake wakes the loop; an error ends the listener (its loop is gone).
	Wake func() error
	// Alive says whether the loop still runs; the listener ends when not.
	Alive func() bool
	// Log says one line in the watcher's log.
	Log func(msg string)
	// Bucket bounds the wakes passed on.
	Bucket Bucket
	// AliveEvery is how often the loop is checked (default 2 s).
	AliveEvery time.Duration
}

// Run passes wakes on until ctx ends or the loop is gone, and says why it
// stopped.
func (l *Listener) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	signals := make(chan struct{}, 1)
	go l.wait(ctx, signals)
	every := l.AliveEvery
	if every <= 0 {
		every = 2 * time.Second
	}
	alive := time.NewTicker(every)
	defer alive.Stop()
	var due <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-alive.C:
			if !l.Alive() {
				return ErrLoopGone
			}
			continue
		case <-due:
			due = nil
			if l.Bucket.Fire(time.Now()) {
				if err := l.Wake(); err != nil {
					return errors.Join(ErrLoopGone, err)
				}
			}
		case <-signals:
			if err := l.Clear(ctx); err != nil && ctx.Err() == nil {
				l.Log("cannot clear the session's alerts: " + err.Error())
			}
			if l.Bucket.Offer(time.Now()) {
				if err := l.Wake(); err != nil {
					return errors.Join(ErrLoopGone, err)
				}
			}
		}
		if at, ok := l.Bucket.Due(); ok && due == nil {
			due = time.After(time.Until(at))
		}
	}
}

// wait waits on the channel again and again, and signals each return: one
// pending signal at most, since one wake is as good as many. A wait that
// fails (the server gone) is tried again after 1 s, doubling to a minute,
// its trouble said once until a wait works again.
func (l *Listener) wait(ctx context.Context, signals chan<- struct{}) {
	fails := 0
	for ctx.Err() == nil {
		err := l.Wait(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			if fails == 0 {
				l.Log("cannot wait for the multiplexer's wakes, trying again: " + err.Error())
			}
			fails++
			select {
			case <-ctx.Done():
				return
			case <-time.After(min(time.Second<<min(fails-1, 6), time.Minute)):
			}
			continue
		}
		if fails > 0 {
			l.Log("waiting for the multiplexer's wakes again")
		}
		fails = 0
		select {
		case signals <- struct{}{}:
		default:
		}
	}
}
