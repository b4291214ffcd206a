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
// the loop, then the pane's next output, which arms the silence again;
// and neither while a client can hear them, which the clients' comings
// and goings (Heard) tell it. A wake that spends the budget arms nothing
// until the budget is back, and then only the next output: what the pane
// showed meanwhile is the regular poll's to see, and a spent budget costs
// the multiplexer nothing, nor the listener a call.
type Listener struct {
	// Wait returns when the channel of alert (Silence, Activity, Heard)
	// is signalled (tmux's wait-for), or with an error when it cannot
	// wait.
	Wait func(ctx context.Context, alert string) error
	// Step arms alert (Silence or Activity) where nobody can hear it,
	// holds both where someone can, and says which (StepArgs); Hush
	// holds both (HushArgs).
	Step func(ctx context.Context, alert string) (heard bool, err error)
	Hush func(ctx context.Context) error
	// Wake wakes the loop; an error ends the listener (its loop is gone).
	Wake func() error
	// Alive says whether the loop still runs; the listener ends when not.
	Alive func() bool
	// Log says one line in the watcher's log.
	Log func(msg string)
	// Budget bounds the wakes passed on.
	Budget Budget
	// AliveEvery is how often the loop is checked (default 30 s: a loop
	// killed outright is the only one that needs it), and, while someone
	// can hear the alerts, how often the listener asks again (a client
	// that switched to another session is told to no hook of this one).
	AliveEvery time.Duration
}

// Run passes wakes on until ctx ends or the loop is gone, and says why it
// stopped.
func (l *Listener) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	signals := make(chan string, 3)
	for _, c := range []string{Silence, Activity, Heard} {
		go l.wait(ctx, c, signals)
	}
	every := l.AliveEvery
	if every <= 0 {
		every = 30 * time.Second
	}
	alive := time.NewTicker(every)
	defer alive.Stop()
	var due <-chan time.Time
	want := Silence // the alert armed, or to arm once nobody hears; "" while the budget is spent
	heard := false  // someone can hear: nothing is armed
	said := false   // the budget's end, once until a wake passes and leaves some
	step := func(alert string) {
		want = alert
		h, err := l.Step(ctx, alert)
		if err != nil {
			if ctx.Err() == nil {
				l.Log("cannot arm the " + alert + " alert, asking again later: " + err.Error())
			}
			h = true // not known to be armed: asked again at the next check
		}
		switch {
		case h && !heard && err == nil:
			l.Log("held: a client attached to the session, or to another one the window is linked in, would hear the alerts; the poll goes on at its interval")
		case !h && heard:
			l.Log("armed again: nobody can hear the alerts")
		}
		heard = h
	}
	step(Silence)
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-alive.C:
			if !l.Alive() {
				return ErrLoopGone
			}
			if heard && want != "" {
				step(want)
			}
		case <-due:
			// The budget is back: the pane's next output, then its
			// silence, wake the loop again.
			due = nil
			step(Activity)
		case alert := <-signals:
			switch {
			case alert == Heard:
				if want != "" {
					step(want)
				}
			case heard || alert != want:
				// An alert not armed is one that came late (tmux keeps
				// a signal for a channel nobody waits on yet).
			case alert == Activity:
				step(Silence)
			default:
				now := time.Now()
				passed := l.Budget.Take(now)
				if passed {
					if err := l.Wake(); err != nil {
						return errors.Join(ErrLoopGone, err)
					}
				}
				if passed && !l.Budget.Spent(now) {
					said = false
					step(Activity)
					continue
				}
				// Spent, or too soon after the last: nothing is armed
				// until the budget passes a wake again.
				back := l.Budget.Back(now)
				if l.Budget.Spent(now) && !said {
					said = true
					l.Log(fmt.Sprintf("the wakes' budget is spent (%d in %.0f min): the pane's silences wake nothing until %s, the poll goes on at its interval",
						l.Budget.Wakes, l.Budget.Window.Minutes(), back.Format("15:04:05")))
				}
				want = ""
				if err := l.Hush(ctx); err != nil && ctx.Err() == nil {
					l.Log("cannot stop the alerts: " + err.Error())
				}
				due = time.After(back.Sub(now))
			}
		}
	}
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
