package watcher

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/muxwake"
	"github.com/omega-monitor/omega-monitor/internal/printable"
	"github.com/omega-monitor/omega-monitor/internal/proc"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// MaxMuxWake is the longest silence --mux-wake takes, in seconds.
const MaxMuxWake = 300

// muxCallTimeout bounds each multiplexer call of the mux wakes but the
// wait itself.
const muxCallTimeout = 5 * time.Second

// muxRemoteTimeout bounds each such call to an ssh host, a connect
// included where the watcher's connection is down.
const muxRemoteTimeout = 10 * time.Second

// muxWaitSecs bounds a wait on an ssh host, on the host's clock: the wait
// is then made again, and a wait-for that a killed watcher left there
// ends by itself.
const muxWaitSecs = 300

// remoteWait is the host's wait on the channel "$1": tmux's wait-for,
// ended as soon as the standard input ends (the watcher's end of the
// connection gone), so that a stopped watcher leaves no wait behind.
const remoteWait = coord.RemoteFindMux + `exec 3<&0; "$m" wait-for "$1" & w=$!; ` +
	`{ read -r _ <&3; kill "$w"; } & r=$!; wait "$w"; s=$?; kill "$r" 2>/dev/null; exit "$s"`

// muxAnswerMax is the most a host may answer to one call: a longer answer
// is refused, never read on.
const muxAnswerMax = 64 << 10

// muxWakeShare is the share of the loop's regular polls that the
// multiplexer's wakes may add, in looks: a tenth.
const muxWakeShare = 10

// muxWakeLooks is the most looks one of the multiplexer's wakes costs: its
// own, and the second look a question takes before it is paged (the tick
// takes a wake of the multiplexer's as settled: poll.Readings.MuxWoken).
const muxWakeLooks = 2

// muxWakeBudget is the budget of the multiplexer's wakes of a loop polling
// every interval: in any window of an hour (of muxWakeShare*muxWakeLooks
// intervals, where that is longer), at most as many wakes as cost a tenth
// of the window's regular polls (three an hour at --interval 60), never
// two closer than 2 s. All may pass at once: the first question of a
// quiet stretch is paged in seconds; then the poll goes on at its interval
// until the window frees one.
func muxWakeBudget(interval time.Duration) muxwake.Budget {
	per := muxWakeShare * muxWakeLooks * max(interval, time.Second) // the regular polls' time that earns one wake
	window := max(time.Hour, per)
	return muxwake.Budget{Wakes: int(window / per), Window: window, Gap: 2 * time.Second}
}

// MuxWakeUsage is wake --mux's usage.
const MuxWakeUsage = "usage: omega-monitor wake --mux --state DIR {--mux-bin PATH | --host ALIAS [--ssh-config FILE] [--timeout SECS] [-- LISTENER...]}\n" +
	"       --target T --silence SECS [--interval SECS] [--auto]"

// ErrMuxWakeUsage is MuxWakeFlags.Check's error for arguments wake --mux
// does not take; it reads as the usage.
var ErrMuxWakeUsage = errors.New(MuxWakeUsage)

// MuxWakeFlags are the settings of wake --mux, which the loop of a watcher
// started with --mux-wake runs beside itself: the command binds them to
// its flags (FlagSet), checks them (Check) and runs them (Run).
type MuxWakeFlags struct {
	State, Mux, Target, Host, SSHConfig string
	Silence, Interval, Timeout          int
	Auto                                bool
}

// FlagSet is the flag set of wake --mux, bound to f; its errors go to
// stderr.
func (f *MuxWakeFlags) FlagSet(stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("wake --mux", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.State, "state", "", "the watcher's state `dir`ectory")
	fs.StringVar(&f.Mux, "mux-bin", "", "the multiplexer `binary`")
	fs.StringVar(&f.Target, "target", "", "the pane (%N) or session (=NAME:) the watcher captures")
	fs.IntVar(&f.Silence, "silence", 0, "`seconds` of no output that wake the loop")
	fs.IntVar(&f.Interval, "interval", 60, "the loop's interval, in `seconds`")
	fs.StringVar(&f.Host, "host", "", "the ssh `alias` of the target's host")
	fs.StringVar(&f.SSHConfig, "ssh-config", "", "ssh's config `file`")
	fs.IntVar(&f.Timeout, "timeout", defaultCallTimeout, "the relay's wall clock, in `seconds`")
	fs.BoolVar(&f.Auto, "auto", false, "arm only where the agent has no hooks of ours installed")
	return fs
}

// Check says whether f, with listener the words after its flags, is a
// wake --mux it runs: the local multiplexer, or an ssh host that could
// not read as an option of ssh's, with a listener to relay only there;
// ErrMuxWakeUsage when not.
func (f *MuxWakeFlags) Check(listener []string) error {
	if local := f.Host == ""; local && (f.Mux == "" || len(listener) != 0) || !local && coord.CheckHost(f.Host) != nil ||
		f.State == "" || f.Target == "" || f.Silence < 1 || f.Silence > MaxMuxWake || f.Interval < 1 || f.Timeout < 1 {
		return ErrMuxWakeUsage
	}
	return nil
}

// Run is wake --mux, checked: it arms the multiplexer's silence alert on
// the watched pane (muxwake.Arm), wakes the loop for each, and puts
// everything back when the loop is stopped or gone or a signal ends it.
// With a host, the multiplexer is the ssh host's, over the watcher's
// connection, and listener, when given, is the host's wake listener,
// relayed as wake --relay does. With Auto, a local target's are armed only
// where hooked says the agent its loop's first poll recognised has no
// hooks of ours.
func (f *MuxWakeFlags) Run(listener []string, stderr io.Writer, hooked func(agent string) bool) {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer stop()
	m := coord.Mux{Bin: f.Mux, SSH: coord.SSH{Timeout: muxCallTimeout}}
	if f.Host != "" {
		m = remoteMux(f.State, f.SSHConfig)
		if len(listener) > 0 {
			go RunRelay(ctx, f.State, listener, time.Duration(f.Timeout)*time.Second, stderr)
		}
	}
	if !f.Auto || f.Host != "" { // a host's hooks are not read from here
		hooked = nil
	}
	RunMuxWake(ctx, m, f.Host, f.State, f.Target, f.Silence, time.Duration(f.Interval)*time.Second, hooked, stderr)
}

// remoteMux calls the multiplexer of an ssh host for the mux wakes of the
// watcher whose state directory is state, through its ControlMaster.
func remoteMux(state, sshConfig string) coord.Mux {
	return coord.Mux{SSH: coord.SSH{Config: sshConfig, Timeout: muxRemoteTimeout, Control: coord.ControlPath(state, os.Getuid())}}
}

// RunMuxWake arms the multiplexer's wakes of the watcher whose state
// directory is state, on target's pane (of host's multiplexer, "" for the
// local one), passes them on to its loop until
// ctx ends or the loop is gone, then disarms them. A record a killed
// predecessor left is undone first. Where arming fails (a multiplexer
// without these commands, hooks of the user's in the way), it says so
// once in log and waits for its end, so that the loop, which starts it
// again when it is gone, does not try again at every poll. With hooked,
// it first waits for the loop's first poll, and arms nothing where hooked
// says the agent recognised there has hooks of ours installed.
func RunMuxWake(ctx context.Context, m coord.Mux, host, state, target string, silence int, interval time.Duration, hooked func(agent string) bool, log io.Writer) {
	d := statedir.Dir(state)
	say := func(msg string) {
		fmt.Fprintf(log, "%s mux wake: %s\n", time.Now().Format("2006-01-02T15:04:05-0700"), msg)
	}
	var calls atomic.Int64 // the listener's own calls of the multiplexer
	counted := muxRunner(m, host)
	run := func(ctx context.Context, args ...string) (string, error) {
		calls.Add(1)
		return counted(ctx, args...)
	}
	var loop statedir.LoopRecord
	d.ReadRecord(statedir.Loop, &loop)
	alive := func() bool { return proc.Alive(loop.Pid, loop.StartToken) }
	if err := DisarmMuxWake(ctx, m, host, state); err != nil {
		say(err.Error())
	}
	if hooked != nil {
		agent, ok := firstLook(ctx, d, loop.StartedAt, alive)
		if !ok {
			return
		}
		if agent != "" && hooked(agent) {
			say("not armed (--mux-wake auto): " + printable.String(agent) + "'s hooks of ours are installed, and wake this watcher")
			idle(ctx, alive)
			return
		}
	}
	channel, index := muxwake.Name(state)
	rec, err := func() (muxwake.Record, error) {
		s, err := muxwake.Locate(ctx, run, target)
		if err != nil {
			return muxwake.Record{}, err
		}
		return muxwake.Arm(ctx, run, s, channel, index, silence, func(r muxwake.Record) error {
			return d.WriteRecord(statedir.MuxWake, r)
		})
	}()
	if err != nil {
		say("not armed, the poll stays as it was: " + err.Error())
		if err := DisarmMuxWake(context.WithoutCancel(ctx), m, host, state); err != nil {
			say(err.Error())
		}
		idle(ctx, alive)
		return
	}
	say(fmt.Sprintf("armed: %s wakes this watcher after %ds of silence (window %s, session %s), while no client can hear its alerts", rec.Pane, silence, rec.Window, rec.Session))
	l := &muxwake.Listener{
		Wait: muxWaiter(m, host, rec),
		Step: func(ctx context.Context, alert string) (bool, error) {
			out, err := run(ctx, muxwake.StepArgs(rec, alert)...)
			if err != nil {
				return true, err
			}
			return muxwake.Hears(out)
		},
		Hush: func(ctx context.Context) error {
			_, err := run(ctx, muxwake.HushArgs(rec)...)
			return err
		},
		Wake:   func() error { return muxWoke(state) },
		Alive:  alive,
		Log:    say,
		Budget: muxWakeBudget(interval),
	}
	err = l.Run(ctx)
	if err := DisarmMuxWake(context.WithoutCancel(ctx), m, host, state); err != nil {
		say(err.Error())
	} else {
		say(fmt.Sprintf("disarmed: every option is as it was (%d multiplexer calls of the listener's, its waits apart)", calls.Load()))
	}
	if !errors.Is(err, context.Canceled) && !errors.Is(err, muxwake.ErrLoopGone) {
		say(err.Error())
	}
}

// muxWoke wakes the loop of the watcher whose state directory is state for
// the multiplexer, marking the wake as its own first (statedir.MuxWoke),
// so that the poll it brings takes the screen as settled.
func muxWoke(state string) error {
	if err := os.WriteFile(statedir.Dir(state).Path(statedir.MuxWoke), nil, 0o600); err != nil {
		return fmt.Errorf("watcher: mux wake: %w", err)
	}
	return Wake(state)
}

// firstLook waits for the first poll of the loop started at since, and
// returns the agent the state says it recognised ("" for none); false
// when ctx ended or the loop is gone first.
func firstLook(ctx context.Context, d statedir.Dir, since time.Time, alive func() bool) (string, bool) {
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for n := 0; ; n++ {
		var st struct {
			LastPoll time.Time `json:"last_poll"`
			Agent    string    `json:"agent"`
		}
		if d.ReadRecord(statedir.State, &st) == nil && !st.LastPoll.IsZero() && !st.LastPoll.Before(since) {
			return st.Agent, true
		}
		if n%60 == 59 && !alive() {
			return "", false
		}
		select {
		case <-ctx.Done():
			return "", false
		case <-t.C:
		}
	}
}

// idle waits until ctx ends or the loop is gone.
func idle(ctx context.Context, alive func() bool) {
	t := time.NewTicker(30 * time.Second)
	defer t.Stop()
	for alive() {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// DisarmMuxWake undoes what the mux wakes of the watcher whose state
// directory is state changed on host's multiplexer ("" for the local
// one), as its record says, and removes the record;
// no record is nothing to do. A record that cannot be undone now (the
// server does not answer) is kept for the next start or stop.
func DisarmMuxWake(ctx context.Context, m coord.Mux, host, state string) error {
	d := statedir.Dir(state)
	var rec muxwake.Record
	err := d.ReadRecord(statedir.MuxWake, &rec)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil: // nothing of it is passed to the multiplexer
		os.Remove(d.Path(statedir.MuxWake))
		return fmt.Errorf("watcher: mux wake: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 3*muxCallTimeout)
	defer cancel()
	err = muxwake.Disarm(ctx, muxRunner(m, host), rec)
	if ce := (*coord.CallError)(nil); errors.As(err, &ce) && ce.Unreachable() {
		// The watcher's connection may be closing under the calls as
		// the loop stops: once more, on a connection of their own.
		time.Sleep(time.Second)
		err = muxwake.Disarm(ctx, muxRunner(m, host), rec)
	}
	if err == nil || errors.Is(err, muxwake.ErrNotOurs) {
		os.Remove(d.Path(statedir.MuxWake))
	}
	return err
}

// muxRunner runs m's multiplexer for muxwake: the local one, or host's
// over ssh, bounded in time on both sides and in the size of its answer.
func muxRunner(m coord.Mux, host string) muxwake.Runner {
	if host == "" {
		return func(ctx context.Context, args ...string) (string, error) {
			out, err := m.Run(ctx, "", args...)
			return string(out), err
		}
	}
	return func(ctx context.Context, args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(ctx, m.SSH.Timeout)
		defer cancel()
		cmd := m.Remote(ctx, host, coord.RemoteMux(int(m.SSH.Timeout/time.Second)-1, args...))
		var out, errs boundedBuffer
		cmd.Stdout, cmd.Stderr = &out, &errs
		err := cmd.Run()
		switch {
		case out.over || errs.over:
			return "", fmt.Errorf("watcher: mux wake: host %s answered more than %d bytes to %s", host, muxAnswerMax, args[0])
		case err == nil:
			return out.b.String(), nil
		}
		ce := &coord.CallError{Host: host, Args: args, ExitCode: -1, Stderr: strings.TrimSpace(errs.b.String()), Err: err}
		if exit := (*exec.ExitError)(nil); errors.As(err, &exit) && exit.Exited() {
			ce.ExitCode = exit.ExitCode()
		}
		if ctx.Err() == context.DeadlineExceeded || ce.ExitCode == 124 { // 124: the host's clock
			ce.Timeout = m.SSH.Timeout
		}
		return "", ce
	}
}

// muxWaiter waits for the channel of rec's alert on m's multiplexer: the
// local one, or host's over ssh, where each wait lasts muxWaitSecs at most
// and is made again, and starts a second after the last at the soonest,
// so that a host whose waits return at once costs no busy loop.
func muxWaiter(m coord.Mux, host string, rec muxwake.Record) func(context.Context, string) error {
	if host == "" {
		return func(ctx context.Context, alert string) error {
			cmd := m.Command(ctx, "", "wait-for", muxwake.ChannelOf(rec, alert))
			cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, nil, nil
			return cmd.Run()
		}
	}
	var last [3]time.Time // each channel's own: one goroutine waits on each
	return func(ctx context.Context, alert string) error {
		i := 0
		switch alert {
		case muxwake.Activity:
			i = 1
		case muxwake.Heard:
			i = 2
		}
		for {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Until(last[i].Add(time.Second))):
			}
			last[i] = time.Now()
			cmd := m.RemoteHeld(ctx, host, coord.RemoteScript(muxWaitSecs, remoteWait, muxwake.ChannelOf(rec, alert)))
			var errs boundedBuffer
			cmd.Stdout, cmd.Stderr = nil, &errs
			held, err := cmd.StdinPipe() // never written: closed by Run's end
			if err != nil {
				return err
			}
			err = cmd.Run()
			held.Close()
			if err == nil || ctx.Err() != nil {
				return err
			}
			code := -1
			if exit := (*exec.ExitError)(nil); errors.As(err, &exit) {
				code = exit.ExitCode()
			}
			if code == 124 {
				continue // the host's clock ended the wait: wait again
			}
			return &coord.CallError{Host: host, Args: []string{"wait-for"}, ExitCode: code, Stderr: strings.TrimSpace(errs.b.String()), Err: err}
		}
	}
}

// A boundedBuffer keeps up to muxAnswerMax bytes of what a host writes,
// and refuses the rest, which ends the call.
type boundedBuffer struct {
	b    bytes.Buffer
	over bool
}

func (w *boundedBuffer) Write(p []byte) (int, error) {
	if w.b.Len()+len(p) > muxAnswerMax {
		w.over = true
		return 0, errors.New("watcher: mux wake: the answer is too long")
	}
	return w.b.Write(p)
}
