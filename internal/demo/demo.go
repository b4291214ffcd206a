// Package demo is omega-monitor's first look: it watches a scripted agent in
// a private tmux server with the real poll loop, and prints what happens. It
// starts a tmux server on a socket of its own (none of the user's sessions),
// runs AgentScript there, which draws Claude Code screens, runs the loop
// script on it with a work probe and a nudge budget, prints the MONITOR
// lines, what arrived in the agent's pane and the alerts, then stops
// everything and removes its files.
//
// It is not the watcher: it judges nothing and sends nothing itself, and
// runs the omega-monitor binary it is given for every tick, as a real
// watcher does. Flags, signals and exit codes are the command's.
package demo

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/scripts"
)

// budget is the nudge budget of the demo's watcher.
const budget = 2

// deadline bounds a demo that never reaches its question (a broken
// install), so that it always ends.
const deadline = 3 * time.Minute

// Config is what a demo runs with.
type Config struct {
	// Bin is the omega-monitor binary the loop runs for each tick
	// (OMEGA_MONITOR_BIN).
	Bin string
	// Interval is the number of seconds between polls, 1 and up.
	Interval int
	// Keep keeps the demo's directory (state, history, watcher log) and
	// says where, rather than remove it.
	Keep bool
	// TempDir is where the demo makes its directory; empty means the
	// default directory for temporary files, as for os.MkdirTemp.
	TempDir string
	// Env is the loop's environment, to which the demo adds its own
	// variables; nil means os.Environ().
	Env []string
}

// Run runs one demo: it prints its story to stdout until the agent's
// question has waited two polls unanswered, or ctx ends, and then stops the
// loop and the tmux server, and removes its directory unless cfg.Keep. It
// returns nil when the demo ran to its end, ctx.Err() when ctx ended it
// first, and otherwise the error that ended it.
func Run(ctx context.Context, cfg Config, stdout io.Writer) error {
	if cfg.Interval < 1 {
		return fmt.Errorf("demo: the interval must be a whole number of seconds, 1 and up; got %d", cfg.Interval)
	}
	d, err := start(cfg)
	if err != nil {
		return err
	}
	err = d.run(ctx, stdout)
	d.cleanup()
	interrupted := ctx.Err()
	if cfg.Keep {
		fmt.Fprintf(stdout, "\nkept %s (state, history.jsonl and watcher.log in %s)\n", d.dir, d.state)
	} else {
		os.RemoveAll(d.dir)
	}
	if err != nil {
		return err
	}
	return interrupted
}

// A demo is one run: its directory, its tmux server and its loop.
type demo struct {
	bin      string // the loop's OMEGA_MONITOR_BIN
	interval int
	env      []string // the loop's environment before the demo's variables
	dir      string   // everything the demo writes
	socket   string
	mux      string // a wrapper that runs tmux on the private socket
	state    string // the watcher's state directory
	received string // what the agent read, one line each
	alerts   string // what the alert funnel was given

	loop     *exec.Cmd
	loopDone chan struct{}
}

// start writes the demo's files and starts its tmux server with the agent.
func start(cfg Config) (*demo, error) {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		return nil, errors.New("demo: the demo needs tmux: install it (apt install tmux, brew install tmux) and run it again")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		return nil, errors.New("demo: the demo needs bash on PATH")
	}
	// A short directory: a unix socket path is limited to about 100 bytes.
	dir, err := os.MkdirTemp(cfg.TempDir, "omega-demo")
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	d := &demo{
		bin:      cfg.Bin,
		interval: cfg.Interval,
		env:      cfg.Env,
		dir:      dir,
		socket:   filepath.Join(dir, "tmux.sock"),
		mux:      filepath.Join(dir, "mux"),
		state:    filepath.Join(dir, "state", "monitor-agent"),
		received: filepath.Join(dir, "received"),
		alerts:   filepath.Join(dir, "alerts"),
	}
	if d.env == nil {
		d.env = os.Environ()
	}
	// -f /dev/null: the user's tmux.conf has no say in what the agent's
	// screen looks like; -u: the screens are UTF-8 whatever the locale.
	wrapper := "#!/bin/sh\nunset TMUX TMUX_PANE\nexec " + coord.ShellJoin(tmux, "-u", "-f", "/dev/null", "-S", d.socket) + " \"$@\"\n"
	funnel := "#!/bin/sh\n# The demo's alert funnel: it keeps the message (on its standard input, --stdin) instead of sending it.\n{ cat; printf '\\n\\036\\n'; } >>" + coord.ShellQuote(d.alerts) + "\n"
	files := []struct {
		name string
		data []byte
		perm os.FileMode
	}{
		{"mux", []byte(wrapper), 0o700},
		{"alert-send.sh", []byte(funnel), 0o700},
		{"agent.sh", []byte(AgentScript), 0o600},
		{"omega-monitor.sh", scripts.Loop, 0o700},
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, f.perm); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("demo: %w", err)
		}
	}
	if err := os.MkdirAll(d.state, 0o700); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("demo: %w", err)
	}
	agent := coord.ShellJoin("env",
		"AGENT_LOG="+d.received,
		"AGENT_WORK=3",
		"AGENT_ASK_AFTER="+strconv.Itoa(budget),
		"AGENT_ASK_IDLE="+strconv.Itoa(2*d.interval+3),
		bash, filepath.Join(dir, "agent.sh"))
	if out, err := exec.Command(d.mux, "new-session", "-d", "-s", "agent", "-x", "100", "-y", "30", "exec "+agent).CombinedOutput(); err != nil {
		d.cleanup()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("demo: starting tmux: %w: %s", err, bytes.TrimSpace(out))
	}
	return d, nil
}

// An event is one thing to show: a line of the loop, or what the agent
// received, or an alert.
type event struct {
	kind string // "line", "received", "alert", "stderr"
	text string
}

func (d *demo) run(ctx context.Context, stdout io.Writer) error {
	fmt.Fprintf(stdout, "omega-monitor demo: a scripted agent in a private tmux server (%s),\n", d.socket)
	fmt.Fprintf(stdout, "watched every %ds with a work probe (echo 3: work remains) and a nudge budget of %d.\n", d.interval, budget)
	fmt.Fprintf(stdout, "It works, stalls, takes nudges, stalls past the budget, then asks a question. Ctrl-C stops it.\n\n")

	events := make(chan event, 64)
	if err := d.startLoop(events); err != nil {
		return err
	}
	var wg sync.WaitGroup
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer func() { stopWatch(); wg.Wait() }()
	wg.Go(func() { tailRecords(watchCtx, d.received, "\n", "received", events) })
	wg.Go(func() { tailRecords(watchCtx, d.alerts, "\n\036\n", "alert", events) })

	timeout := time.NewTimer(deadline)
	defer timeout.Stop()
	asked := 0        // MONITOR lines since the question was escalated
	answered := false // something was typed into the dialog
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintf(stdout, "\ninterrupted: stopping the loop and the agent\n")
			return nil
		case <-timeout.C:
			return fmt.Errorf("demo: the agent never reached its question within %v", deadline)
		case <-d.loopDone:
			return errors.New("demo: the loop ended by itself, which it must never do")
		case e := <-events:
			switch e.kind {
			case "line":
				fmt.Fprintln(stdout, e.text)
				if asked > 0 || strings.Contains(e.text, " · QUESTION · escalated") {
					asked++
				}
			case "received":
				fmt.Fprintf(stdout, "    arrived in the agent's pane: %q\n", e.text)
				answered = answered || strings.HasPrefix(e.text, "KEY IN DIALOG")
			case "alert":
				fmt.Fprintf(stdout, "    alert for the operator: %s\n", alertSummary(e.text))
			case "stderr":
				fmt.Fprintf(stdout, "    loop: %s\n", e.text)
			}
			if asked >= 2 {
				d.showPane(stdout)
				if answered {
					return errors.New("demo: something was typed into the question dialog")
				}
				fmt.Fprintf(stdout, "\nThe question waits for a human: nothing was typed into it. Done.\n")
				fmt.Fprint(stdout, NextStep)
				return nil
			}
		}
	}
}

// NextStep is what the demo says last: the first steps with a real agent.
const NextStep = `
Next, with your own agent in tmux (say a session shop):
    omega-monitor shop --once      a dry run: what the watcher would make of its screen
    omega-monitor shop             watch it; omega-monitor logs shop -f shows its lines
    omega-monitor doctor           what alerts to your phone need, and how to set them up
`

// startLoop runs the real loop script on the agent, in a process group of
// its own, its lines sent to events.
func (d *demo) startLoop(events chan<- event) error {
	cmd := exec.Command("bash", filepath.Join(d.dir, "omega-monitor.sh"), "agent",
		"--interval", strconv.Itoa(d.interval),
		"--nudge-budget", strconv.Itoa(budget),
		"--work-probe", "echo 3",
		"--mux", d.mux)
	cmd.Env = append(d.env[:len(d.env):len(d.env)],
		"OMEGA_MONITOR_BIN="+d.bin,
		"OMEGA_MONITOR_HOME="+filepath.Dir(d.state),
		"OMEGA_MONITOR_WATCHER=monitor-agent",
		"OMEGA_MONITOR_STATE="+d.state,
		"OMEGA_MONITOR_ALERT_SEND="+filepath.Join(d.dir, "alert-send.sh"),
		"OMEGA_MONITOR_TIMEOUT=10",
	)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	errOut, err := cmd.StderrPipe()
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("demo: starting the loop: %w", err)
	}
	d.loop = cmd
	d.loopDone = make(chan struct{})
	var readers sync.WaitGroup
	forward := func(r io.Reader, kind string) {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			events <- event{kind, sc.Text()}
		}
	}
	readers.Go(func() { forward(out, "line") })
	readers.Go(func() { forward(errOut, "stderr") })
	go func() {
		readers.Wait()
		cmd.Wait()
		close(d.loopDone)
	}()
	return nil
}

// showPane prints the agent's screen as it is now.
func (d *demo) showPane(stdout io.Writer) {
	out, err := exec.Command(d.mux, "capture-pane", "-p", "-t", coord.Exact("agent")).Output()
	if err != nil {
		return
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	fmt.Fprintf(stdout, "\nThe agent's screen now:\n")
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			fmt.Fprintf(stdout, "    │ %s\n", l)
		}
	}
}

// cleanup stops the loop (its whole process group) and the tmux server, and
// waits until both are gone.
func (d *demo) cleanup() {
	if d.loop != nil && d.loop.Process != nil {
		pgid := d.loop.Process.Pid
		syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-d.loopDone:
		case <-time.After(5 * time.Second):
			syscall.Kill(-pgid, syscall.SIGKILL)
			<-d.loopDone
		}
		// Whatever the loop left in its group (it leaves nothing when
		// it stops cleanly).
		syscall.Kill(-pgid, syscall.SIGKILL)
	}
	out, err := exec.Command(d.mux, "display-message", "-p", "#{pid}").Output()
	exec.Command(d.mux, "kill-server").Run()
	if err != nil {
		return // no server
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		return
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if syscall.Kill(pid, 0) != nil {
			return
		}
	}
	syscall.Kill(pid, syscall.SIGKILL)
}

// tailRecords follows a file that grows by records ending in sep, sending
// each complete record to events until ctx ends.
func tailRecords(ctx context.Context, path, sep, kind string, events chan<- event) {
	var done int
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		data, _ := os.ReadFile(path)
		for done < len(data) {
			i := strings.Index(string(data[done:]), sep)
			if i < 0 {
				break
			}
			rec := string(data[done : done+i])
			done += i + len(sep)
			select {
			case events <- event{kind, rec}:
			case <-ctx.Done():
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Compiled on first use: a pattern at package init costs every subcommand's start.
var htmlTag = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`<[^>]*>`) })

// alertSummary is the first line of an HTML alert as plain text.
func alertSummary(html string) string {
	first, _, _ := strings.Cut(strings.TrimSpace(html), "\n")
	first = htmlTag().ReplaceAllString(first, "")
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&quot;", `"`, "&amp;", "&").Replace(first)
}
