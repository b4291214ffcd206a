package muxwake

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/poll"
)

// fakeAlerts stands for the multiplexer's two channels: a test signals
// one, as a hook would, and the listener's Wait returns.
type fakeAlerts struct {
	ch     map[string]chan struct{}
	mu     sync.Mutex
	events []string // what the listener did, in order
}

func newFakeAlerts() *fakeAlerts {
	return &fakeAlerts{ch: map[string]chan struct{}{Silence: make(chan struct{}, 1), Activity: make(chan struct{}, 1)}}
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

// TestListenerArmsOneAlertAtATime: silence wakes the loop and arms the
// next output; output arms the silence again and wakes nothing; a signal
// of the alert not armed (one tmux kept for a channel nobody waited on) is
// ignored; past the budget, a silence wakes nothing and arms nothing,
// which is said once, and once the budget is back the next output is
// armed, never a wake for the silence the budget refused.
func TestListenerArmsOneAlertAtATime(t *testing.T) {
	f := newFakeAlerts()
	var said []string
	l := &Listener{
		Wait: f.wait, Quiet: f.did("quiet"), Drawing: f.did("drawing"), Hush: f.did("hush"),
		Wake:   func() error { f.add("wake"); return nil },
		Alive:  func() bool { return true },
		Log:    func(m string) { f.add("log"); said = append(said, m) },
		Budget: Budget{Wakes: 2, Window: 500 * time.Millisecond},
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- l.Run(ctx) }()

	f.signal(t, Silence, 2)  // quiet, wake
	f.signal(t, Activity, 3) // drawing
	f.signal(t, Silence, 5)  // quiet, wake
	f.signal(t, Silence, 5)  // not armed: nothing
	time.Sleep(50 * time.Millisecond)
	f.signal(t, Activity, 6) // drawing
	f.signal(t, Silence, 8)  // the budget is spent: said, nothing armed
	f.signal(t, Silence, 8)  // not armed: nothing
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if len(f.seen()) >= 9 {
			return poll.Success()
		}
		return poll.Continue("the budget has not come back: %q", f.seen())
	}, poll.WithTimeout(10*time.Second), poll.WithDelay(5*time.Millisecond))
	f.signal(t, Activity, 10) // drawing
	f.signal(t, Silence, 12)  // quiet, wake
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run = %v, want context.Canceled", err)
	}
	want := []string{"quiet", "wake", "drawing", "quiet", "wake", "drawing", "log", "hush", "quiet", "drawing", "quiet", "wake"}
	if diff := cmp.Diff(want, f.seen()); diff != "" {
		t.Errorf("what the listener did (-want +got):\n%s", diff)
	}
	if len(said) != 1 || !strings.Contains(said[0], "budget is spent (2 in 0 min)") {
		t.Errorf("said %q, want the budget's end once", said)
	}
}

// TestListenerSaysASpentBudgetOnce: a budget spent again and again, with
// no wake passed between, is said once.
func TestListenerSaysASpentBudgetOnce(t *testing.T) {
	f := newFakeAlerts()
	l := &Listener{
		Wait: f.wait, Quiet: f.did("quiet"), Drawing: f.did("drawing"), Hush: f.did("hush"),
		Wake:   func() error { f.add("wake"); return nil },
		Alive:  func() bool { return true },
		Log:    func(m string) { f.add("log") },
		Budget: Budget{Wakes: 0, Window: 50 * time.Millisecond},
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- l.Run(ctx) }()
	f.signal(t, Silence, 2) // log, hush
	for n := 4; n <= 10; n += 3 {
		poll.WaitOn(t, func(poll.LogT) poll.Result {
			if len(f.seen()) >= n-1 {
				return poll.Success()
			}
			return poll.Continue("the budget has not come back: %q", f.seen())
		}, poll.WithTimeout(10*time.Second), poll.WithDelay(5*time.Millisecond)) // quiet
		f.signal(t, Activity, n)  // drawing
		f.signal(t, Silence, n+1) // hush
	}
	cancel()
	<-done
	want := []string{"log", "hush", "quiet", "drawing", "hush", "quiet", "drawing", "hush", "quiet", "drawing", "hush"}
	if diff := cmp.Diff(want, f.seen()); diff != "" {
		t.Errorf("what the listener did (-want +got):\n%s", diff)
	}
}

// TestListenerEndsWithItsLoop: a loop gone ends the listener, at the next
// check or at the next wake.
func TestListenerEndsWithItsLoop(t *testing.T) {
	f := newFakeAlerts()
	l := &Listener{
		Wait: f.wait, Quiet: f.did("quiet"), Drawing: f.did("drawing"), Hush: f.did("hush"),
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
		Quiet: func(context.Context) error { return nil }, Drawing: func(context.Context) error { return nil },
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
	if len(said) != 2 { // one for each alert's channel
		t.Errorf("said %q, want one line for each channel", said)
	}
}
