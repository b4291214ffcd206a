package remotewake

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// A relayWorld is a relay whose "listener" is a shell script standing in
// for what a host may print (the real one runs in the end-to-end tests,
// over a real sshd); it records the wakes passed on, the statuses and the
// log lines.
type relayWorld struct {
	r      *Relay
	wakes  atomic.Int32
	alive  atomic.Bool
	mu     sync.Mutex
	status []string
	logs   []string
}

func newRelay(t *testing.T, script string) *relayWorld {
	t.Helper()
	sh := testenv.Need(t, "sh")[0]
	w := &relayWorld{}
	w.alive.Store(true)
	w.r = &Relay{
		Argv:    []string{sh, "-c", script},
		Timeout: 5 * time.Second,
		Follows: func(pane string) bool { return pane == "%3" },
		Wake:    func() error { w.wakes.Add(1); return nil },
		Alive:   w.alive.Load,
		Record: func(status, why string) {
			w.mu.Lock()
			w.status = append(w.status, status)
			w.mu.Unlock()
		},
		Log: func(msg string) {
			w.mu.Lock()
			w.logs = append(w.logs, msg)
			w.mu.Unlock()
		},
		Gap:   time.Hour, // a burst is one wake, and the pending one never comes
		Retry: 100 * time.Millisecond,
	}
	return w
}

// run runs the relay until until says so (checked every 50 ms) or 30 s,
// then stops it and returns Run's error.
func (w *relayWorld) run(t *testing.T, until func() bool) error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.r.Run(ctx) }()
	deadline := time.Now().Add(30 * time.Second)
	for !until() && time.Now().Before(deadline) {
		select {
		case err := <-done:
			cancel()
			return err
		case <-time.After(50 * time.Millisecond):
		}
	}
	cancel()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the relay did not end within 10s of its context")
		return nil
	}
}

func (w *relayWorld) statuses() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.status...)
}

func (w *relayWorld) logged() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.logs, "\n")
}

// TestRelayTakesOnlyItsWakes: of what the host prints, only the exact wake
// lines of the watcher's pane wake the loop; a burst of them is one wake
// within the gap; everything else (before and after the greeting) is
// dropped and counted, never echoed.
func TestRelayTakesOnlyItsWakes(t *testing.T) {
	hostile := []string{
		"wake %3",                  // before the greeting
		"wake %4",                  // another pane
		"wake %3 ",                 // a space
		"wake %3\r",                // a carriage return
		"WAKE %3",                  // case
		"wake %30000000000",        // not a pane id
		"\x1b]0;owned\x07wake %3",  // an escape sequence
		"wake %3; touch /tmp/pwnd", // a command
		strings.Repeat("A", 5000),  // a long line
		"nudge %3",                 // no such word
	}
	var b strings.Builder
	b.WriteString("printf '%s\\n' " + shellQuote(hostile[0]) + "\n")
	b.WriteString("echo " + shellQuote(Hello) + "\n")
	for _, h := range hostile[1:] {
		b.WriteString("printf '%s\\n' " + shellQuote(h) + "\n")
	}
	for range 20 {
		b.WriteString("echo 'wake %3'\n")
	}
	b.WriteString("printf '\\000\\377garbage'\nexec sleep 600\n")
	w := newRelay(t, b.String())
	var asked []string // the panes of the lines read as wakes
	w.r.Follows = func(pane string) bool {
		w.mu.Lock()
		asked = append(asked, pane)
		w.mu.Unlock()
		return pane == "%3"
	}
	err := w.run(t, func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return len(asked) == 21
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Run: %v, want context.Canceled", err)
	}
	want := []string{"%4"}
	for range 20 {
		want = append(want, "%3")
	}
	w.mu.Lock()
	if diff := cmp.Diff(want, asked); diff != "" {
		t.Errorf("lines read as wakes (-want +got):\n%s", diff)
	}
	w.mu.Unlock()
	if got := w.wakes.Load(); got != 1 {
		t.Errorf("%d wakes, want 1: a burst within the gap is one", got)
	}
	if diff := cmp.Diff([]string{Listening}, w.statuses()); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	if strings.Contains(w.logged(), "owned") || strings.Contains(w.logged(), "pwnd") {
		t.Errorf("the log echoes what the host printed:\n%s", w.logged())
	}
}

// TestRelayHostsWithoutAListener: a host without omega-monitor (exit 127),
// one whose omega-monitor does not listen (an older one: exit 0 without a
// greeting), and a listener that never greets or keeps failing; each is
// said once, the relay asks again, and nothing wakes the loop.
func TestRelayHostsWithoutAListener(t *testing.T) {
	for _, tc := range []struct {
		name   string
		script string
		status string
		said   string
	}{
		{"no omega-monitor", "echo 'sh: omega-monitor: not found' >&2; exit 127", Absent, "no omega-monitor on the host"},
		{"an older omega-monitor", "sleep 0.1; exit 0", Old, "does not listen for hooks"},
		{"one from before wake", "echo 'omega-monitor: unknown flag --listen' >&2; exit 2", Old, "does not listen for hooks"},
		{"a listener that fails", "echo 'omega-monitor wake --listen: no server running' >&2; exit 1", Down, "no server running"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newRelay(t, tc.script)
			runs := filepath.Join(t.TempDir(), "runs")
			w.r.Argv[2] = "echo >>" + shellQuote(runs) + "; " + tc.script
			w.run(t, func() bool {
				b, _ := os.ReadFile(runs)
				return strings.Count(string(b), "\n") >= 2
			})
			if got := w.statuses(); len(got) != 1 || got[0] != tc.status {
				t.Errorf("statuses %q, want [%s] once", got, tc.status)
			}
			if !strings.Contains(w.logged(), tc.said) {
				t.Errorf("log:\n%s\nwant it to say %q", w.logged(), tc.said)
			}
			if n := strings.Count(w.logged(), tc.said); n != 1 {
				t.Errorf("said %d times, want once:\n%s", n, w.logged())
			}
			if got := w.wakes.Load(); got != 0 {
				t.Errorf("%d wakes, want none", got)
			}
		})
	}

	t.Run("no greeting", func(t *testing.T) {
		w := newRelay(t, "exec sleep 600")
		w.r.Timeout = 200 * time.Millisecond
		w.run(t, func() bool { return strings.Contains(w.logged(), "no greeting within") })
		if !strings.Contains(w.logged(), "no greeting within 200ms") {
			t.Errorf("log:\n%s", w.logged())
		}
	})
}

// TestRelayEndsWithItsLoop: a relay whose loop is gone ends, and so does
// its listener, whichever way it learns it: its check, or a wake refused.
func TestRelayEndsWithItsLoop(t *testing.T) {
	for _, how := range []string{"alive", "wake"} {
		t.Run(how, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "pid")
			script := "echo $$ >" + shellQuote(pidFile) + "; echo " + shellQuote(Hello) + "; sleep 1; echo 'wake %3'; exec sleep 600"
			w := newRelay(t, script)
			if how == "wake" {
				w.r.Wake = func() error { return errors.New("its loop does not run") }
			} else {
				w.r.Follows = func(string) bool { return false }
				go func() {
					for !strings.Contains(w.logged(), "listening") {
						time.Sleep(50 * time.Millisecond)
					}
					w.alive.Store(false)
				}()
			}
			err := w.run(t, func() bool { return false })
			if !errors.Is(err, ErrLoopGone) {
				t.Errorf("Run: %v, want ErrLoopGone", err)
			}
			b, _ := os.ReadFile(pidFile)
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			if pid <= 0 {
				t.Fatal("the listener never ran")
			}
			if err := syscall.Kill(pid, 0); err == nil {
				t.Errorf("the listener (pid %d) outlived its relay", pid)
			}
		})
	}
}

// TestRelayRestartsItsListener: a listener that ends is started again, and
// its wakes come through again.
func TestRelayRestartsItsListener(t *testing.T) {
	runs := filepath.Join(t.TempDir(), "runs")
	w := newRelay(t, "echo >>"+shellQuote(runs)+"; echo "+shellQuote(Hello)+"; echo 'wake %3'; exit 0")
	w.r.Gap = time.Millisecond
	w.run(t, func() bool { return w.wakes.Load() >= 2 })
	if got := w.wakes.Load(); got < 2 {
		t.Errorf("%d wakes, want one from each listener", got)
	}
	got := w.statuses()
	if len(got) > 3 {
		got = got[:3]
	}
	if diff := cmp.Diff([]string{Listening, Down, Listening}, got); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	if !strings.Contains(w.logged(), "started again after a backoff (1s now") {
		t.Errorf("log:\n%s", w.logged())
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
