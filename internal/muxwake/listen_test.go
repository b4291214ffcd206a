package muxwake

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/poll"
)

// fakeAlerts stands for the multiplexer's three channels: a test signals
// one, as a hook would, and the listener's Wait returns.
type fakeAlerts struct {
	ch     map[string]chan struct{}
	mu     sync.Mutex
	events []string // what the listener did, in order
	hears  bool     // what the next step finds: someone can hear
}

func newFakeAlerts() *fakeAlerts {
	return &fakeAlerts{ch: map[string]chan struct{}{Silence: make(chan struct{}, 1), Activity: make(chan struct{}, 1), Heard: make(chan struct{}, 1)}}
}

// step arms alert, or holds it where someone hears ("silence held").
func (f *fakeAlerts) step(_ context.Context, alert string) (bool, error) {
	f.mu.Lock()
	h := f.hears
	f.mu.Unlock()
	if h {
		f.add(alert + " held")
	} else {
		f.add(alert)
	}
	return h, nil
}

func (f *fakeAlerts) hear(h bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hears = h
}

func (f *fakeAlerts) wait(ctx context.Context, alert string) error {
	select {
	case <-f.ch[alert]:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f *fakeAlerts) did(what string) func(context.Context) error {
	return func(context.Context) error { f.add(what); return nil }
}

func (f *fakeAlerts) add(what string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, what)
}

func (f *fakeAlerts) seen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.events...)
}

// signal fires alert and waits until the listener did one more thing.
func (f *fakeAlerts) signal(t *testing.T, alert string, then int) {
	t.Helper()
	f.ch[alert] <- struct{}{}
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if len(f.seen()) >= then {
			return poll.Success()
		}
		return poll.Continue("waiting for %d events, have %q", then, f.seen())
	}, poll.WithTimeout(10*time.Second), poll.WithDelay(5*time.Millisecond))
}

// TestListenerArmsOneAlertAtATime: the silence is armed first; silence
// wakes the loop and arms the next output; output arms the silence again
// and wakes nothing; a signal of the alert not armed (one tmux kept for a
// channel nobody waited on) is ignored; the wake that spends the budget
// arms nothing (said once), so that no alert comes until the budget is
// back, and then the next output is armed, never a wake for a silence
// the budget had no room for; spent again, it is not said again.
func TestListenerArmsOneAlertAtATime(t *testing.T) {
	f := newFakeAlerts()
	var said []string
	l := &Listener{
		Wait: f.wait, Step: f.step, Hush: f.did("hush"),
		Wake:   func() error { f.add("wake"); return nil },
		Alive:  func() bool { return true },
		Log:    func(m string) { f.add("log"); said = append(said, m) },
		Budget: Budget{Wakes: 2, Window: 2 * time.Second},
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- l.Run(ctx) }()

	f.settle(t, 1)           // silence
	f.signal(t, Silence, 3)  // wake, activity
	f.signal(t, Activity, 4) // silence
	f.signal(t, Activity, 4) // not armed: nothing
	time.Sleep(50 * time.Millisecond)
	f.signal(t, Silence, 7) // wake; the budget is spent: said, hush
	f.signal(t, Silence, 7) // not armed: nothing
	time.Sleep(50 * time.Millisecond)
	f.settle(t, 8)           // the budget is back: activity
	f.signal(t, Activity, 9) // silence
	f.signal(t, Silence, 11) // wake, activity
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run = %v, want context.Canceled", err)
	}
	want := []string{"silence", "wake", "activity", "silence", "wake", "log", "hush", "activity", "silence", "wake", "hush"}
	if diff := cmp.Diff(want, f.seen()); diff != "" {
		t.Errorf("what the listener did (-want +got):\n%s", diff)
	}
	if len(said) != 1 || !strings.Contains(said[0], "budget is spent (2 in 0 min)") {
		t.Errorf("said %q, want the budget's end once", said)
	}
}

// settle waits until the listener did n things.
func (f *fakeAlerts) settle(t *testing.T, n int) {
	t.Helper()
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if len(f.seen()) >= n {
			return poll.Success()
		}
		return poll.Continue("waiting for %d events, have %q", n, f.seen())
	}, poll.WithTimeout(10*time.Second), poll.WithDelay(5*time.Millisecond))
}

// TestListenerSaysASpentBudgetOnce: a budget that passes nothing is said
// once, however often it comes back and is found spent again.
func TestListenerSaysASpentBudgetOnce(t *testing.T) {
	f := newFakeAlerts()
	l := &Listener{
		Wait: f.wait, Step: f.step, Hush: f.did("hush"),
		Wake:   func() error { f.add("wake"); return nil },
		Alive:  func() bool { return true },
		Log:    func(m string) { f.add("log") },
		Budget: Budget{Wakes: 0, Window: 50 * time.Millisecond},
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- l.Run(ctx) }()
	f.settle(t, 1)          // silence
	f.signal(t, Silence, 3) // log, hush
	for n := 4; n <= 10; n += 3 {
		f.settle(t, n)             // activity, once the budget is "back"
		f.signal(t, Activity, n+1) // silence
		f.signal(t, Silence, n+2)  // hush
	}
	cancel()
	<-done
	want := []string{"silence", "log", "hush", "activity", "silence", "hush", "activity", "silence", "hush", "activity", "silence", "hush"}
	if diff := cmp.Diff(want, f.seen()); diff != "" {
		t.Errorf("what the listener did (-want +got):\n%s", diff)
	}
}

// TestListenerHoldsWhileHeard: while a client can hear the alerts, the
// steps hold them and the alerts that come late wake nothing; a client's
// coming or going (Heard) makes the listener ask again, and so does each
// check while held (a client that switched away is told to no hook of
// the session); once nobody hears, the alert it wanted is armed, said
// once each way.
func TestListenerHoldsWhileHeard(t *testing.T) {
	f := newFakeAlerts()
	var said []string
	f.hear(true)
	l := &Listener{
		Wait: f.wait, Step: f.step, Hush: f.did("hush"),
		Wake:       func() error { f.add("wake"); return nil },
		Alive:      func() bool { return true },
		Log:        func(m string) { f.add("log"); said = append(said, m) },
		Budget:     Budget{Wakes: 5, Window: time.Hour},
		AliveEvery: time.Hour,
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- l.Run(ctx) }()
	f.settle(t, 2)          // silence held, log
	f.signal(t, Silence, 2) // heard: nothing
	time.Sleep(50 * time.Millisecond)
	f.signal(t, Heard, 3) // still heard: silence held, not said again
	f.hear(false)
	f.signal(t, Heard, 5)   // silence, log
	f.signal(t, Silence, 7) // wake, activity
	f.hear(true)
	f.signal(t, Heard, 9)    // activity held, log
	f.signal(t, Activity, 9) // heard: nothing
	time.Sleep(50 * time.Millisecond)
	f.hear(false)
	f.signal(t, Heard, 11) // activity, log
	cancel()
	<-done
	want := []string{"silence held", "log", "silence held", "silence", "log", "wake", "activity", "activity held", "log", "activity", "log"}
	if diff := cmp.Diff(want, f.seen()); diff != "" {
		t.Errorf("what the listener did (-want +got):\n%s", diff)
	}
	if len(said) != 4 || !strings.HasPrefix(said[0], "held: a client") || !strings.HasPrefix(said[1], "armed again") {
		t.Errorf("said %q, want held and armed again, twice", said)
	}

	// Held, each check asks again; a step that fails is asked again too.
	f = newFakeAlerts()
	f.hear(true)
	fails := 0
	l.Wait, l.Hush, l.Log, l.AliveEvery = f.wait, f.did("hush"), func(m string) { f.add("log") }, 10*time.Millisecond
	l.Step = func(ctx context.Context, alert string) (bool, error) {
		if fails < 2 {
			fails++
			f.add("failed")
			return false, errors.New("no server running")
		}
		return f.step(ctx, alert)
	}
	ctx, cancel = context.WithCancel(context.Background())
	go func() { done <- l.Run(ctx) }()
	f.settle(t, 7) // failed, log, failed, log, silence held, silence held, silence held
	f.hear(false)
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if slices.Contains(f.seen(), "silence") {
			return poll.Success()
		}
		return poll.Continue("not armed again: %q", f.seen())
	}, poll.WithTimeout(10*time.Second), poll.WithDelay(5*time.Millisecond))
	time.Sleep(100 * time.Millisecond) // ten checks
	cancel()
	<-done
	if got := f.seen(); got[0] != "failed" || got[2] != "failed" || got[len(got)-2] != "silence" || got[len(got)-1] != "log" {
		t.Errorf("the listener did not fail first, or went on asking once the silence was armed: %q", got)
	}
}

// TestListenerEndsWithItsLoop: a loop gone ends the listener, at the next
// check or at the next wake.
func TestListenerEndsWithItsLoop(t *testing.T) {
	f := newFakeAlerts()
	l := &Listener{
		Wait: f.wait, Step: f.step, Hush: f.did("hush"),
		Wake:       func() error { return errors.New("no such process") },
		Alive:      func() bool { return false },
		Log:        func(string) {},
		Budget:     Budget{Wakes: 1, Window: time.Minute},
		AliveEvery: 20 * time.Millisecond,
	}
	if err := l.Run(context.Background()); !errors.Is(err, ErrLoopGone) {
		t.Errorf("Run = %v, want ErrLoopGone", err)
	}
	l.AliveEvery = time.Hour
	go func() { f.ch[Silence] <- struct{}{} }()
	if err := l.Run(context.Background()); !errors.Is(err, ErrLoopGone) {
		t.Errorf("Run after a failed wake = %v, want ErrLoopGone", err)
	}
}

// TestListenerSaysAFailedWaitOnce: a wait that keeps failing (the server
// gone) is said once and tried again, not in a spin.
func TestListenerSaysAFailedWaitOnce(t *testing.T) {
	var mu sync.Mutex
	var said []string
	tries := 0
	l := &Listener{
		Wait: func(ctx context.Context, alert string) error {
			mu.Lock()
			defer mu.Unlock()
			if alert == Silence {
				tries++
			}
			return errors.New("no server running")
		},
		Step: func(context.Context, string) (bool, error) { return false, nil }, Hush: func(context.Context) error { return nil },
		Wake: func() error { return nil }, Alive: func() bool { return true },
		Log:    func(m string) { mu.Lock(); said = append(said, m); mu.Unlock() },
		Budget: Budget{Wakes: 1, Window: time.Minute},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
	defer cancel()
	l.Run(ctx)
	mu.Lock()
	defer mu.Unlock()
	if tries < 1 || tries > 3 { // at most: 0 s, 1 s, 3 s
		t.Errorf("%d waits in 2.5 s, want no more than 3 (1 s, then 2 s apart)", tries)
	}
	if len(said) != 3 { // one for each channel
		t.Errorf("said %q, want one line for each channel", said)
	}
}
