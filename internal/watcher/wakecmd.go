package watcher

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/board"
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
`

// WakeCommand is the wake command: an agent's hook (silent, exit 0), or,
// with --listen or --relay first, the two ends of a remote target's wakes.
// Only those exact first words choose them; any other argument is the
// hook's (an agent appends what it likes: Codex, a JSON argument).
func WakeCommand(getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer, args []string) int {
	if len(args) > 0 {
		switch args[0] {
		case "--listen":
			return listenCommand(getenv, stdin, stdout, stderr, args[1:])
		case "--relay":
			return relayCommand(stderr, args[1:])
		case "-h", "-help", "--help":
			if len(args) == 1 {
				io.WriteString(stdout, WakeUsage)
				return 0
			}
		}
	}
	home := ""
	if len(args) >= 2 && args[0] == "--home" {
		home = args[1]
	}
	if home == "" {
		home, _ = statedir.Home(getenv)
	}
	Hook(home, getenv, stdin)
	return 0
}

// listenCommand is wake --listen: the host's end, run over ssh by the
// relay. It finds the socket of the multiplexer server of target by the
// host's own rule for its multiplexer, then serves its wakes until the
// connection ends. It exits 0 when the connection ended, 1 when it could
// not listen (said on standard error).
func listenCommand(getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer, args []string) int {
	fs := flag.NewFlagSet("wake --listen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	target := fs.String("target", "", "the pane (%N) or session (=NAME:) the watcher captures")
	home := fs.String("home", "", "the state home")
	if fs.Parse(args) != nil || fs.NArg() != 0 {
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "omega-monitor wake --listen: %v\n", err)
		return 1
	}
	if !listenTarget(*target) {
		return fail(fmt.Errorf("--target %q is neither a pane id nor an exact session", *target))
	}
	if *home == "" {
		h, err := statedir.Home(getenv)
		if err != nil {
			return fail(err)
		}
		*home = h
	}
	mux, err := coord.MuxBinary("", getenv)
	if err != nil {
		return fail(err)
	}
	m := coord.Mux{Bin: mux, SSH: coord.SSH{Timeout: 5 * time.Second}}
	out, err := m.Run(context.Background(), "", "display-message", "-p", "-t", *target, "#{socket_path}")
	socket := strings.TrimSpace(string(out))
	if err != nil {
		return fail(err)
	}
	if !filepath.IsAbs(socket) || strings.ContainsAny(socket, "\n\r") {
		return fail(fmt.Errorf("the multiplexer gave no socket for %s", *target))
	}
	l, err := remotewake.Open(*home, socket)
	if err != nil {
		return fail(err)
	}
	defer l.Close()
	// The connection's end may come as a signal too (a hang-up): the
	// FIFO is removed either way.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGINT, syscall.SIGPIPE)
	done := make(chan error, 1)
	go func() { done <- remotewake.Serve(l, stdin, stdout) }()
	select {
	case err = <-done:
	case <-sigs:
	}
	if err != nil {
		return fail(err)
	}
	return 0
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

// relayCommand is wake --relay: the watcher's end, which the loop of a
// remote target starts beside itself once. It ends when the loop is gone
// or on a signal.
func relayCommand(stderr io.Writer, args []string) int {
	fs := flag.NewFlagSet("wake --relay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	state := fs.String("state", "", "the watcher's state directory")
	timeout := fs.Int("timeout", 20, "how long the listener has to greet, in `seconds`")
	if fs.Parse(args) != nil || fs.NArg() == 0 || *state == "" || *timeout < 1 {
		fmt.Fprintln(stderr, "usage: omega-monitor wake --relay --state DIR [--timeout SECS] -- COMMAND...")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer stop()
	err := NewRelay(*state, fs.Args(), time.Duration(*timeout)*time.Second, stderr).Run(ctx)
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, remotewake.ErrLoopGone) {
		fmt.Fprintf(stderr, "omega-monitor wake --relay: %v\n", err)
		return 1
	}
	return 0
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
		Alive: func() bool {
			token, running := board.SystemProcs{}.StartToken(rec.Pid)
			return running && rec.StartToken != "" && token == rec.StartToken
		},
		Record: func(status, why string) {
			d.WriteRecord(statedir.RemoteWake, statedir.RemoteWakeRecord{Status: status, Why: why, At: time.Now().UTC().Truncate(time.Second)})
		},
		Log: func(msg string) {
			fmt.Fprintf(log, "%s wake relay: %s\n", time.Now().Format("2006-01-02T15:04:05-0700"), msg)
		},
	}
}
