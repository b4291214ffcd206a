package muxwake

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrLoopGone ends a listener whose loop no longer runs.
var ErrLoopGone = errors.New("muxwake: the loop is gone")

// A Listener passes the multiplexer's wakes of one watcher on to its loop,
// within a Budget. It holds no judgement: a wake only ends the loop's
// pause. It keeps one of two alerts armed: the pane's silence, which wakes
// the loop, then the pane's next output, which arms the silence again.
// A silence the budget does not pass arms nothing until the budget is
// back, and then only the next output: what the pane showed meanwhile is
// the regular poll's to see, and a spent budget costs the multiplexer
// nothing.
type Listener struct {
	// Wait returns when the channel of alert (Silence, Activity) is
	// signalled (tmux's wait-for), or with an error when it cannot wait.
	Wait func(ctx context.Context, alert string) error
	// Quiet arms the next output, once the pane fell silent (QuietArgs);
	// Drawing arms the next silence, once it drew again (DrawingArgs);
	// Hush arms neither, while the budget is spent (HushArgs).
	Quiet, Drawing, Hush func(ctx context.Context) error
	// Wake wakes the loop; an error ends the listener (its loop is gone).
	Wake func() error
	// Alive says whether the loop still runs; the listener ends when not.
	Alive func() bool
	// Log says one line in the watcher's log.
	Log func(msg string)
	// Budget bounds the wakes passed on.
	Budget Budget
	// AliveEvery is how often the loop is checked (default 30 s: a loop
	// killed outright is the only one that needs it).
	AliveEvery time.Duration
}

// Run passes wakes on until ctx ends or the loop is gone, and says why it
// stopped.
func (l *Listener) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	signals := make(chan string, 2)
	go l.wait(ctx, Silence, signals)
	go l.wait(ctx, Activity, signals)
	every := l.AliveEvery
	if every <= 0 {
		every = 30 * time.Second
	}
	alive := time.NewTicker(every)
	defer alive.Stop()
	var due <-chan time.Time
	armed := Silence
	said := false // the budget's end, once until a wake passes again
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-alive.C:
			if !l.Alive() {
				return ErrLoopGone
			}
		case <-due:
			// The budget is back: the pane's next output, then its
			// silence, wake the loop again.
			due = nil
			armed = Activity
			if !l.do(ctx, l.Quiet, "cannot arm the next output") {
				armed = Silence
			}
		case alert := <-signals:
			// A signal of the alert not armed is one that came late
			// (tmux keeps one for a channel nobody waits on yet).
			if alert != armed {
				continue
			}
			if alert == Activity {
				armed = Silence
				l.do(ctx, l.Drawing, "cannot arm the silence again")
				continue
			}
			now := time.Now()
			if !l.Budget.Take(now) {
				back := l.Budget.Back(now)
				if l.Budget.Spent(now) && !said {
					said = true
					l.Log(fmt.Sprintf("the wakes' budget is spent (%d in %.0f min): the pane's silences wake nothing until %s, the poll goes on at its interval",
						l.Budget.Wakes, l.Budget.Window.Minutes(), back.Format("15:04:05")))
				}
				armed = ""
				l.do(ctx, l.Hush, "cannot stop the silence alerts")
				due = time.After(back.Sub(now))
				continue
			}
			said = false
			armed = Activity
			if !l.do(ctx, l.Quiet, "cannot arm the next output") {
				armed = Silence
			}
			if err := l.Wake(); err != nil {
				return errors.Join(ErrLoopGone, err)
			}
		}
	}
}

// do runs step, and says why it failed, unless ctx ended.
func (l *Listener) do(ctx context.Context, step func(context.Context) error, what string) bool {
	err := step(ctx)
	if err != nil && ctx.Err() == nil {
		l.Log(what + ": " + err.Error())
	}
	return err == nil
}

// wait waits on the channel of alert again and again, and signals each
// return. A wait that fails (the server gone) is tried again after 1 s,
// doubling to a minute, its trouble said once until a wait works again.
func (l *Listener) wait(ctx context.Context, alert string, signals chan<- string) {
	fails := 0
	for ctx.Err() == nil {
		err := l.Wait(ctx, alert)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			if fails == 0 {
				l.Log("cannot wait for the multiplexer's " + alert + " alerts, trying again: " + err.Error())
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
			l.Log("waiting for the multiplexer's " + alert + " alerts again")
		}
		fails = 0
		select {
		case signals <- alert:
		case <-ctx.Done():
			return
		}
	}
}
