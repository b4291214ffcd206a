package remotewake

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/printable"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// Where a relay stands, as it records it (statedir.RemoteWake).
const (
	Listening = statedir.WakeListening // the host's listener runs: its hooks wake the watcher
	Absent    = statedir.WakeAbsent    // no omega-monitor on the host
	Old       = statedir.WakeOld       // an omega-monitor on the host that does not listen
	Down      = statedir.WakeDown      // the listener ended; started again after a backoff
)

// Intervals of a relay.
const (
	// Gap is the least time between two wakes the relay passes on.
	Gap = time.Second
	// Retry is how long a relay waits before it asks again a host that
	// has no omega-monitor, or one that cannot listen: one may be
	// installed meanwhile.
	Retry = 10 * time.Minute
	// steady is how long a listener must have run for its end to be a
	// new trouble rather than one more of the same: the backoff starts
	// again from its first step.
	steady = time.Minute
	// aliveEvery is how often the relay checks that its loop still runs.
	aliveEvery = 2 * time.Second
)

// A Relay keeps the listener of a remote target's host running over the
// watcher's ssh connection and turns the wakes it prints for the watcher's
// pane into wakes of the loop. It holds no judgement of the screen: a wake
// only ends the loop's pause.
type Relay struct {
	// Argv runs the listener on the host (ListenCommand, through ssh and
	// the watcher's ControlMaster).
	Argv []string
	// Timeout is how long the listener has to greet once started.
	Timeout time.Duration
	// Follows says whether pane is the one the watcher watches now.
	Follows func(pane string) bool
	// Wake wakes the loop; an error ends the relay (its loop is gone).
	Wake func() error
	// Alive says whether the loop still runs; the relay ends when not.
	Alive func() bool
	// Record keeps where the relay stands, for the tick and the board.
	Record func(status, why string)
	// Log says one line in the watcher's log.
	Log func(msg string)
	// Gap spaces the wakes passed on (default Gap); Retry is the wait
	// after a host without a listener (default Retry).
	Gap, Retry time.Duration
}

// ErrLoopGone ends a relay whose loop no longer runs.
var ErrLoopGone = errors.New("remotewake: the loop is gone")

// Run keeps the listener running until ctx ends or the loop is gone, and
// returns why it stopped.
func (r *Relay) Run(ctx context.Context) error {
	gate := &Gate{Gap: cmpOr(r.Gap, Gap)}
	status, fails, said := "", 0, ""
	for {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !r.Alive() {
			return ErrLoopGone
		}
		start := time.Now()
		out := r.session(ctx, gate, func() {
			if status != Listening {
				status, said = Listening, ""
				r.Record(Listening, "")
				r.Log("listening for the hooks on the host")
			}
		})
		gate.Drop()
		if out.dropped > 0 {
			r.Log(fmt.Sprintf("dropped %d line(s) from the host that were not wakes", out.dropped))
		}
		if out.err != nil {
			return out.err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var wait time.Duration
		switch {
		case !out.greeted && (out.code == 126 || out.code == 127):
			wait = cmpOr(r.Retry, Retry)
			if status != Absent {
				status = Absent
				r.Record(Absent, out.why)
				r.Log(fmt.Sprintf("no omega-monitor on the host: its hooks cannot wake this watcher, which polls as before (asked again every %v)", wait))
			}
		case !out.greeted && (out.code == 0 || out.code == 2):
			// An omega-monitor from before wake --listen: its wake
			// takes the words for a hook's and exits 0, and one from
			// before wake takes them for a target and refuses them (2).
			wait = cmpOr(r.Retry, Retry)
			if status != Old {
				status = Old
				r.Record(Old, out.why)
				r.Log(fmt.Sprintf("the host's omega-monitor does not listen for hooks (an older one?): this watcher polls as before (asked again every %v)", wait))
			}
		default:
			if out.greeted && time.Since(start) >= steady {
				fails = 0
			}
			wait = Backoff(fails)
			fails++
			if status != Down {
				status = Down
				r.Record(Down, out.why)
			}
			// A trouble that lasts (a session gone, a host down) is
			// said once, not at every try.
			if out.why != said {
				said = out.why
				r.Log(fmt.Sprintf("the host's listener ended (%s); started again after a backoff (%v now, at most %v)", out.why, wait, Backoff(6)))
			}
		}
		if err := r.sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// sleep waits d, or less when ctx ends or the loop is gone.
func (r *Relay) sleep(ctx context.Context, d time.Duration) error {
	end := time.Now().Add(d)
	for {
		left := time.Until(end)
		if left <= 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(min(left, aliveEvery)):
		}
		if !r.Alive() {
			return ErrLoopGone
		}
	}
}

// An outcome is how one listener ended.
type outcome struct {
	greeted bool   // it said Hello
	code    int    // its exit status; -1 when it did not exit by itself
	why     string // why it ended, printable, one line
	dropped int    // the lines it printed that were neither Hello nor a wake
	err     error  // the relay must end (the loop is gone)
}

// session runs one listener until it ends, passing on the wakes of the
// watcher's pane through gate, and calls greeted when it says Hello.
func (r *Relay) session(ctx context.Context, gate *Gate, greeted func()) outcome {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.Argv[0], r.Argv[1:]...)
	cmd.WaitDelay = 2 * time.Second
	// Its standard input stays open while the relay runs: when the relay
	// is gone, ssh sees it end and so does the listener on the host.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return outcome{code: -1, why: err.Error()}
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return outcome{code: -1, why: err.Error()}
	}
	var stderr tail
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return outcome{code: -1, why: err.Error()}
	}

	lines := make(chan string)
	var dropped int
	read := make(chan struct{})
	go func() {
		defer close(read)
		lr := NewLineReader(stdout)
		defer func() { dropped += lr.Dropped }()
		for {
			line, err := lr.Line()
			if err != nil {
				return
			}
			select {
			case lines <- line:
			case <-ctx.Done():
				return
			}
		}
	}()

	out := outcome{code: -1}
	hello := time.NewTimer(cmpOr(r.Timeout, 20*time.Second))
	defer hello.Stop()
	alive := time.NewTicker(aliveEvery)
	defer alive.Stop()
	var due <-chan time.Time
	ended, eof := false, false
	drop := func() {
		if out.dropped++; out.dropped == 1 {
			r.Log("dropped a line from the host that is not a wake (any more are counted when its listener ends)")
		}
	}
	for !ended {
		select {
		case line := <-lines:
			if !out.greeted {
				if line == Hello {
					out.greeted = true
					hello.Stop()
					greeted()
				} else {
					drop()
				}
				continue
			}
			pane, ok := ParseWake(line)
			if !ok {
				drop()
				continue
			}
			if !r.Follows(pane) {
				continue
			}
			if gate.Offer(time.Now()) {
				if err := r.Wake(); err != nil {
					out.err = ErrLoopGone
					ended = true
				}
			} else if at, ok := gate.Due(); ok && due == nil {
				due = time.After(time.Until(at))
			}
		case <-due:
			due = nil
			if gate.Fire(time.Now()) {
				if err := r.Wake(); err != nil {
					out.err = ErrLoopGone
					ended = true
				}
			}
		case <-hello.C:
			out.why = fmt.Sprintf("no greeting within %v", cmpOr(r.Timeout, 20*time.Second))
			ended = true
		case <-alive.C:
			if !r.Alive() {
				out.err = ErrLoopGone
				ended = true
			}
		case <-read:
			ended, eof = true, true
		case <-ctx.Done():
			ended = true
		}
	}
	// Whatever ended the session, the listener goes with it: one that
	// closed its output has a moment to exit by itself, with its status.
	stdin.Close()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	if !eof {
		cancel()
	}
	var werr error
	select {
	case werr = <-waited:
	case <-time.After(3 * time.Second):
		cancel()
		werr = <-waited
	}
	<-read
	out.dropped += dropped
	var exit *exec.ExitError
	switch {
	case werr == nil:
		out.code = 0
	case errors.As(werr, &exit) && exit.Exited():
		out.code = exit.ExitCode()
	}
	if out.why == "" {
		out.why = stderr.last()
	}
	if out.why == "" && out.code == 255 {
		out.why = "the ssh connection ended"
	}
	if out.why == "" {
		out.why = fmt.Sprintf("exit status %d", out.code)
	}
	return out
}

// A tail keeps the end of what a process said on standard error.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 1024 {
		t.buf = t.buf[len(t.buf)-1024:]
	}
	return len(p), nil
}

// last is the last non-blank line said, printable, at most 200 bytes.
func (t *tail) last() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimSpace(string(t.buf))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	s = printable.String(strings.TrimSpace(s))
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

func cmpOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
