package watcher

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/proc"
	"github.com/omega-monitor/omega-monitor/internal/remotewake"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// WakeUsage is the wake command's help.
const WakeUsage = `usage: omega-monitor wake [--home DIR] [PAYLOAD]

What an agent's hook runs (omega-monitor install --hooks writes it): wakes
the watcher of the pane the hook runs in ($TMUX_PANE with $TMUX, or
$RMUX_PANE with $RMUX), so that it polls now instead of at the end of its
interval; on an ssh host, it wakes the watcher on the operator's machine
that listens there (wake --listen). The poll judges the screen as any
other: a wake carries no verdict. A pane no watcher follows wakes nothing.

The hook's payload (standard input, or Codex's notify argument) is read,
at most 1 MiB, and discarded: nothing in it is parsed, stored or opened.
It prints nothing and exits 0 whatever happens, so that a hook of ours
never disturbs the agent.

  --home DIR   the state home (default $OMEGA_MONITOR_HOME, else ~/.omega/monitor)

The watcher of an ssh target runs two more forms itself, never a hook:
  wake --listen --target T [--home DIR]   on the host, over the watcher's
      ssh connection: prints one line a wake of the server of T's panes
  wake --relay --state DIR [--timeout SECS] -- COMMAND...   beside the
      loop: keeps COMMAND (that listener, through ssh) running and wakes
      the loop for the wakes of its own pane

And a watcher started with --mux-wake (auto, the default, or seconds) runs,
beside its loop:
  wake --mux --state DIR --mux-bin PATH --target T --silence SECS
      [--interval SECS] [--auto]   arms tmux's silence alert on T's pane
      while no client is attached to its session (nor to another the
      window is in), wakes the loop when the pane falls silent (within a
      budget of a tenth of the loop's polls), and puts every option and
      hook back at its end; with
      --auto (--mux-wake auto), only where the agent the first
      poll recognised has no hooks of ours (docs/hooks.md, "Without the
      agent's hooks")
  wake --mux --state DIR --host ALIAS [--ssh-config FILE] [--timeout SECS]
      --target T --silence SECS [--interval SECS] [--auto] [-- LISTENER...]
      the same on an ssh host's tmux, over the watcher's connection, and
      the relay of LISTENER as wake --relay
`

// ErrNotListenTarget is Listen's answer to a target that is neither a
// pane id nor the exact form of a session.
var ErrNotListenTarget = errors.New("watcher: the target is neither a pane id nor an exact session")

// Listen is the host's end of a remote target's wakes, run over ssh by the
// relay (wake --listen): it finds the socket of the multiplexer server of
// target by the host's own rule for its multiplexer, then serves its wakes
// on stdout until stdin ends or ctx is done. A nil error is the end of the
// connection.
func Listen(ctx context.Context, home, target string, getenv func(string) string, stdin io.Reader, stdout io.Writer) error {
	if !listenTarget(target) {
		return fmt.Errorf("%w: %q", ErrNotListenTarget, target)
	}
	if home == "" {
		h, err := statedir.Home(getenv)
		if err != nil {
			return err
		}
		home = h
	}
	mux, err := coord.MuxBinary("", getenv)
	if err != nil {
		return err
	}
	m := coord.Mux{Bin: mux, SSH: coord.SSH{Timeout: 5 * time.Second}}
	out, err := m.Run(ctx, "", "display-message", "-p", "-t", target, "#{socket_path}")
	if err != nil {
		return err
	}
	socket := strings.TrimSpace(string(out))
	if !filepath.IsAbs(socket) || strings.ContainsAny(socket, "\n\r") {
		return fmt.Errorf("watcher: the multiplexer gave no socket for %s", target)
	}
	l, err := remotewake.Open(home, socket)
	if err != nil {
		return err
	}
	defer l.Close()
	done := make(chan error, 1)
	go func() { done <- remotewake.Serve(l, stdin, stdout) }()
	select {
	case err = <-done:
		return err
	case <-ctx.Done():
		return nil // the connection's end may come as a signal (a hang-up)
	}
}

// listenTarget says whether t is a target the watcher gives the listener:
// its pinned pane, or the exact form of its session.
func listenTarget(t string) bool {
	if remotewake.IsPaneID(t) {
		return true
	}
	s, ok := strings.CutPrefix(t, "=")
	s, ok2 := strings.CutSuffix(s, ":")
	return ok && ok2 && coord.CheckSession(s) == nil
}

// RunRelay runs the relay of NewRelay until ctx ends or the loop is gone,
// either of which is its end, not an error.
func RunRelay(ctx context.Context, state string, argv []string, timeout time.Duration, log io.Writer) error {
	err := NewRelay(state, argv, timeout, log).Run(ctx)
	if errors.Is(err, context.Canceled) || errors.Is(err, remotewake.ErrLoopGone) {
		return nil
	}
	return err
}

// NewRelay is the relay of the watcher whose state directory is state:
// argv runs the host's listener; the loop is the one loop.json names now,
// proven by its start token; the pane is the one the watcher follows at
// each wake; the relay says where it stands in wake.json and its log
// lines on log (the watcher's log, where the loop sends them).
func NewRelay(state string, argv []string, timeout time.Duration, log io.Writer) *remotewake.Relay {
	d := statedir.Dir(state)
	var rec statedir.LoopRecord
	d.ReadRecord(statedir.Loop, &rec)
	return &remotewake.Relay{
		Argv:    argv,
		Timeout: timeout,
		Follows: func(pane string) bool { return followsPane(d, rec, pane) },
		Wake:    func() error { return Wake(state) },
		Alive:   func() bool { return proc.Alive(rec.Pid, rec.StartToken) },
		Record: func(status, why string) {
			d.WriteRecord(statedir.RemoteWake, statedir.RemoteWakeRecord{Status: status, Why: why, At: time.Now().UTC().Truncate(time.Second)})
		},
		Log: func(msg string) {
			fmt.Fprintf(log, "%s wake relay: %s\n", time.Now().Format("2006-01-02T15:04:05-0700"), msg)
		},
	}
}
