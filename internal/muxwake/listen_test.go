package muxwake

import (
	"context"
	"errors"
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
// ignored; past the bucket, one wake waits for its token with nothing
// armed, and arms the silence again when it goes.
func TestListenerArmsOneAlertAtATime(t *testing.T) {
	f := newFakeAlerts()
	l := &Listener{
		Wait: f.wait, Quiet: f.did("quiet"), Drawing: f.did("drawing"), Hush: f.did("hush"),
		Wake:   func() error { f.add("wake"); return nil },
		Alive:  func() bool { return true },
		Log:    func(string) {},
		Bucket: Bucket{Cap: 2, Every: 300 * time.Millisecond},
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
	f.signal(t, Silence, 7)  // the bucket is empty: the wake waits, nothing armed
	f.ch[Activity] <- struct{}{}
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if len(f.seen()) >= 9 {
			return poll.Success()
		}
		return poll.Continue("the pending wake has not come: %q", f.seen())
	}, poll.WithTimeout(10*time.Second), poll.WithDelay(5*time.Millisecond))
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run = %v, want context.Canceled", err)
	}
	want := []string{"quiet", "wake", "drawing", "quiet", "wake", "drawing", "hush", "wake", "drawing"}
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
		Bucket:     Bucket{Cap: 1, Every: time.Minute},
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
		Bucket: Bucket{Cap: 1, Every: time.Minute},
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
