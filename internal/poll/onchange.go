package poll

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/omega-monitor/omega-monitor/alert"
	"github.com/omega-monitor/omega-monitor/internal/procgroup"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/statedir/event"
	"github.com/omega-monitor/omega-monitor/tick"
)

// The environment an on-change command is given: which watcher, which
// target, the state it left and the one it entered, the rule that decided,
// and the probes' figures as the MONITOR line prints them (? unknown).
const (
	EnvWatcher  = "OMEGA_MONITOR_WATCHER"
	EnvTarget   = "OMEGA_MONITOR_TARGET"
	EnvOldState = "OMEGA_MONITOR_OLD_STATE"
	EnvNewState = "OMEGA_MONITOR_NEW_STATE"
	EnvRule     = "OMEGA_MONITOR_RULE"
	EnvWork     = "OMEGA_MONITOR_WORK"
	EnvProgress = "OMEGA_MONITOR_PROGRESS"
	// envCommand hands the command to the process that runs it, so that
	// no shell string is built from it.
	envCommand = "OMEGA_MONITOR_ON_CHANGE_RUN"
)

// A Change is a change of state, as an on-change command is told it.
type Change struct {
	Watcher, Target, From, To, Rule, Work, Progress string
}

func (c Change) environ() []string {
	return []string{
		EnvWatcher + "=" + c.Watcher, EnvTarget + "=" + c.Target,
		EnvOldState + "=" + c.From, EnvNewState + "=" + c.To, EnvRule + "=" + c.Rule,
		EnvWork + "=" + c.Work, EnvProgress + "=" + c.Progress,
	}
}

// changeOf finds the change of state among a poll's events, if any.
func changeOf(dir, target string, events []tick.Event, in tick.Input) (Change, bool) {
	for _, e := range events {
		if e.Name != event.State {
			continue
		}
		c := Change{Watcher: filepath.Base(dir), Target: target, To: e.State, Work: in.Work.String(), Progress: in.Progress.String()}
		c.From, _ = e.Fields["from"].(string)
		c.Rule, _ = e.Fields["rule"].(string)
		if c.From == "" {
			c.From = "NONE" // the watcher's first poll
		}
		return c, true
	}
	return Change{}, false
}

// onChangeBinary is the binary whose on-change command runs the operator's
// command: this one (a test sets another).
var onChangeBinary = os.Executable

// startOnChange starts, and does not wait for, this binary's on-change
// command (omega-monitor on-change, through OnChange), which runs cmd for
// the change c under a clock of timeout seconds: the poll goes on at once,
// whatever the command does. It
// is a session of its own, reading and writing nothing of the loop's, so
// that it holds none of the loop's pipes.
func startOnChange(dir, cmd string, timeout int, c Change) error {
	self, err := onChangeBinary()
	if err != nil {
		return fmt.Errorf("on-change: %w", err)
	}
	run := exec.Command(self, "on-change", "--state", dir, "--timeout", fmt.Sprint(timeout))
	run.Env = append(append(os.Environ(), c.environ()...), envCommand+"="+cmd)
	run.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := run.Start(); err != nil {
		return fmt.Errorf("on-change: %w", err)
	}
	return run.Process.Release()
}

// ErrNoOnChangeCommand is an on-change run whose environment names no
// command: the tick never starts one so.
var ErrNoOnChangeCommand = errors.New("poll: on-change: no command in the environment")

// OnChange runs the operator's command for a change of state (from getenv,
// where the tick put it with the change) with sh -c, in a process group of
// its own that the clock (timeout) kills whole, and says a failure or an
// overrun in the watcher's log (dir). Its error says the command failed, or
// the log could not be written; the poll never waits for it.
func OnChange(dir string, timeout time.Duration, getenv func(string) string) error {
	cmdText := getenv(envCommand)
	if cmdText == "" {
		return ErrNoOnChangeCommand
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", cmdText)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, envCommand+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	procgroup.Set(cmd, time.Second)
	var errb cappedTail
	cmd.Stderr = &errb
	err := cmd.Run()
	procgroup.Kill(cmd) // what it left running in the background
	if err == nil {
		return nil
	}
	why := err.Error()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		why = fmt.Sprintf("no end within %v, killed with its process group", timeout)
	}
	if said := errb.last(); said != "" {
		why += ": " + said
	}
	target := getenv(EnvTarget)
	line := alert.Redact(tick.Line(target, "?", fmt.Sprintf("on-change command failed (%s → %s): %s", getenv(EnvOldState), getenv(EnvNewState), why)))
	if lerr := statedir.Dir(dir).AppendLog(time.Now(), line); lerr != nil {
		return fmt.Errorf("poll: on-change: the watcher's log: %w", lerr)
	}
	return fmt.Errorf("poll: on-change: %s", why)
}

// cappedTail keeps the last 4 KiB written to it.
type cappedTail struct{ b []byte }

func (c *cappedTail) Write(p []byte) (int, error) {
	c.b = append(c.b, p...)
	if len(c.b) > 4<<10 {
		c.b = c.b[len(c.b)-4<<10:]
	}
	return len(p), nil
}

// last is the last line written, one printable line.
func (c *cappedTail) last() string {
	s := strings.TrimSpace(string(c.b))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s)
}
