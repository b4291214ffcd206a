package relay

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/pkgerr"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// StartWait bounds how long Start waits for the receiver to take its lock.
const StartWait = 20 * time.Second

// handedOver are the settings of the environment the receiver is started
// with: set to the caller's value or unset, never the multiplexer
// server's own, which would decide which bot and chat answers go through.
var handedOver = []string{"OMEGA_MONITOR_HOME", "OMEGA_TELEGRAM_CONF", "OMEGA_TELEGRAM_API"}

// Start runs `bin serve` (bin is omega-monitor-relay) in the detached
// multiplexer session of its state home (SessionFor), once the config is checked as the receiver
// checks it, so that a receiver that would refuse is not started. It
// waits until the receiver holds its lock, and returns what to tell the
// operator; a receiver that dies at start is an error with what it said.
func Start(ctx context.Context, m coord.Mux, bin string, getenv func(string) string) (string, error) {
	home, err := statedir.Home(getenv)
	if err != nil {
		return "", err
	}
	cfg, err := Load(getenv, getenv("HOME"))
	if err != nil {
		return "", err
	}
	session := SessionFor(home, getenv)
	if running, rec, err := Running(home); err != nil {
		return "", err
	} else if running {
		return "", errorf("the receiver already runs (pid %d, since %s)", rec.Pid, rec.Since.Local().Format(time.DateTime))
	}
	if has, err := m.HasSession(ctx, coord.Target{Session: session}); err != nil {
		return "", err
	} else if has {
		return "", errorf("a session %s is there already, without a receiver holding %s (end it, or omega-monitor relay stop)", session, filepath.Join(home, Dir, LockFile))
	}
	words := []string{"env"}
	for _, name := range handedOver {
		words = append(words, "-u", name)
	}
	if h := getenv("HOME"); h != "" {
		words = append(words, "HOME="+h)
	}
	words = append(words, "OMEGA_MONITOR_HOME="+home, "OMEGA_TELEGRAM_CONF="+cfg.Path)
	if getenv("OMEGA_TELEGRAM_API") != "" {
		words = append(words, "OMEGA_TELEGRAM_API="+cfg.API)
	}
	words = append(words, bin, "serve")
	command := "exec " + coord.ShellJoin(words...)
	// remain-on-exit, set in the same call, keeps the pane of a receiver
	// that dies at start, so that what it said can be read back.
	if _, err := m.Run(ctx, "", "new-session", "-d", "-s", session, command,
		";", "set-option", "-w", "-t", coord.Exact(session), "remain-on-exit", "on"); err != nil {
		return "", errorf("cannot start the session %s: %w", session, err)
	}
	rec, err := awaitStart(ctx, m, home, session, StartWait)
	if err != nil {
		return "", err
	}
	m.Run(ctx, "", "set-option", "-w", "-t", coord.Exact(session), "remain-on-exit", "off")
	return fmt.Sprintf("receiving answers in session %s (pid %d): %s (stop it with: omega-monitor relay stop)", session, rec.Pid, cfg), nil
}

// awaitStart waits until a receiver holds the lock of home (it started in
// session),
// or its pane is dead (it did not: the error says what it said, and the
// session is ended).
func awaitStart(ctx context.Context, m coord.Mux, home, session string, within time.Duration) (RecordFile, error) {
	deadline := time.Now().Add(within)
	pane := coord.Exact(session)
	for {
		if running, rec, err := Running(home); err == nil && running && rec.Alive() {
			return rec, nil
		}
		out, err := m.Run(ctx, "", "display-message", "-p", "-t", pane, "#{pane_dead}")
		if err != nil {
			return RecordFile{}, errorf("the receiver's session %s ended at start, leaving no word", session)
		}
		if strings.TrimSpace(string(out)) == "1" {
			said, _ := m.Run(ctx, "", "capture-pane", "-p", "-t", pane)
			m.Run(ctx, "", "kill-session", "-t", pane)
			return RecordFile{}, errorf("the receiver died at start: %s", lastWords(string(said)))
		}
		if time.Now().After(deadline) {
			return RecordFile{}, errorf("the receiver in session %s has not taken its lock within %v", session, within)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// lastWords is what a dead pane shows, on one line.
func lastWords(screen string) string {
	var words []string
	for _, l := range strings.Split(screen, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "Pane is dead") {
			words = append(words, l)
		}
	}
	if len(words) == 0 {
		return "it said nothing"
	}
	return strings.Join(words[max(0, len(words)-3):], " / ")
}

// ErrNotRunning is Stop's error when no receiver runs.
var ErrNotRunning = errorf("the receiver does not run")

// Stop ends the receiver of the state home home: its session, or, when it
// was started by hand, its process (SIGTERM, only when its start token is
// the one recorded), and waits up to wait for its lock to come free.
func Stop(ctx context.Context, m coord.Mux, home string, getenv func(string) string, wait time.Duration) (string, error) {
	session := SessionFor(home, getenv)
	has, err := m.HasSession(ctx, coord.Target{Session: session})
	if err != nil {
		return "", err
	}
	running, rec, err := Running(home)
	if err != nil {
		return "", err
	}
	switch {
	case has:
		if _, err := m.Run(ctx, "", "kill-session", "-t", coord.Exact(session)); err != nil {
			return "", errorf("cannot end the session %s: %w", session, err)
		}
	case running && rec.Alive():
		if err := syscall.Kill(rec.Pid, syscall.SIGTERM); err != nil {
			return "", errorf("cannot stop the receiver pid %d: %w", rec.Pid, err)
		}
	case running:
		return "", errorf("a receiver holds %s, but it is not the process relay.json names: stop it where it runs", filepath.Join(home, Dir, LockFile))
	default:
		return "", ErrNotRunning
	}
	for deadline := time.Now().Add(wait); ; time.Sleep(100 * time.Millisecond) {
		still, _, err := Running(home)
		if err != nil {
			return "", err
		}
		if !still {
			return "stopped the answer receiver", nil
		}
		if time.Now().After(deadline) {
			return "", errorf("the receiver still holds its lock after %v (pid %d)", wait, rec.Pid)
		}
	}
}

// Status says whether a receiver runs for the state home home, since
// when, its last update, and the config's answer settings (never the
// token). running is false when none runs.
func Status(home string, getenv func(string) string, now time.Time) (report string, running bool, err error) {
	running, rec, err := Running(home)
	if err != nil {
		return "", false, err
	}
	var b strings.Builder
	if running {
		fmt.Fprintf(&b, "receiver: running, pid %d, since %s (%s)\n", rec.Pid, rec.Since.Local().Format(time.DateTime), ago(now, rec.Since))
	} else {
		b.WriteString("receiver: not running (start it with: omega-monitor relay start)\n")
	}
	if !rec.LastUpdate.IsZero() {
		fmt.Fprintf(&b, "last update: %s (%s), update %d\n", rec.LastUpdate.Local().Format(time.DateTime), ago(now, rec.LastUpdate), rec.Offset)
	} else if running {
		b.WriteString("last update: none since it started\n")
	}
	cfg, cerr := LoadConfig(getenv, getenv("HOME"))
	if cerr == nil {
		fmt.Fprintf(&b, "config: %s\n", cfg)
		cerr = cfg.Check()
	}
	if cerr != nil {
		fmt.Fprintf(&b, "config refused: %s\n", pkgerr.Why(cerr))
	}
	entries, _ := os.ReadDir(filepath.Join(home, Dir, Inflight))
	if n := len(entries); n > 0 {
		fmt.Fprintf(&b, "answers in flight: %d\n", n)
	}
	if log := filepath.Join(home, Dir, LogFile); fileThere(log) {
		fmt.Fprintf(&b, "log: %s (omega-monitor relay logs)\n", log)
	}
	return b.String(), running, nil
}

// fileThere says whether path names something, not following a link.
func fileThere(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// ago says how long before now t was, to the second.
func ago(now, t time.Time) string {
	return now.Sub(t).Round(time.Second).String() + " ago"
}

// Ensure starts the receiver as Start does when the config answers
// questions and none runs, for a watcher that starts: it returns what to
// tell the operator, "" when answers are off or a receiver already runs.
func Ensure(ctx context.Context, m coord.Mux, find func() (string, error), getenv func(string) string) (string, error) {
	home, err := statedir.Home(getenv)
	if err != nil {
		return "", err
	}
	if _, err := Load(getenv, getenv("HOME")); err != nil {
		return "", nil // answers off, or no one may answer: alerts only
	}
	if running, _, _ := Running(home); running {
		return "", nil
	}
	bin, err := find()
	if err != nil {
		return "", err
	}
	return Start(ctx, m, bin, getenv)
}

// ErrUsage is Do's answer for a verb it does not know.
var ErrUsage = errorf("want start, stop, status or logs")

// Using is what Do works with: the multiplexer (or why there is none), the
// environment, the time, how long stop waits, and how the receiver's
// binary is found.
type Using struct {
	Mux    coord.Mux
	MuxErr error
	Getenv func(string) string
	Now    time.Time
	Wait   time.Duration
	Find   func() (string, error)
}

// Do carries out the relay verb (start, stop or status; logs is Logs')
// and returns what to print. When no receiver runs, status's report and stop come with
// ErrNotRunning.
func Do(ctx context.Context, verb string, u Using) (string, error) {
	home, err := statedir.Home(u.Getenv)
	if err != nil {
		return "", err
	}
	switch verb {
	case "status":
		report, running, err := Status(home, u.Getenv, u.Now)
		if err == nil && !running {
			err = ErrNotRunning
		}
		return report, err
	case "start", "stop":
	default:
		return "", fmt.Errorf("%w; got %q", ErrUsage, verb)
	}
	if u.MuxErr != nil {
		return "", u.MuxErr
	}
	var said string
	if verb == "start" {
		// The config first: a receiver that would refuse is not
		// started, whether or not its binary is installed.
		if _, err = Load(u.Getenv, u.Getenv("HOME")); err == nil {
			var bin string
			if bin, err = u.Find(); err == nil {
				said, err = Start(ctx, u.Mux, bin, u.Getenv)
			}
		}
	} else {
		said, err = Stop(ctx, u.Mux, home, u.Getenv, u.Wait)
	}
	if err != nil {
		return "", err
	}
	return said + "\n", nil
}
