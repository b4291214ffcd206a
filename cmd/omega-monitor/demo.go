package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/cmdline"
	"github.com/omega-monitor/omega-monitor/scripts"
)

const demoUsage = `usage: omega-monitor demo [--interval 2] [--keep]

Watches a scripted agent, for a first look without any agent of your own. It
starts a private tmux server (its own socket, none of your sessions), runs a
script there that draws Claude Code screens (it works, stalls, takes a nudge,
stalls again past the nudge budget, then asks for a permission), and runs the
real poll loop on it with a work probe and a budget of 2 nudges. It prints the
MONITOR lines as they come and what arrived in the agent's pane, then stops
everything and removes its files, Ctrl-C included. It takes about half a
minute at the default interval.

flags:
`

// demoBudget is the nudge budget of the demo's watcher.
const demoBudget = 2

// demoDeadline bounds a demo that never reaches its question (a broken
// install), so that it always ends.
const demoDeadline = 3 * time.Minute

func runDemo(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	interval := fs.Int("interval", 2, "seconds between polls")
	keep := fs.Bool("keep", false, "keep the demo's directory (state, history, watcher log) and say where")
	positional, code, ok := cmdline.ParseInterspersed(fs, args, demoUsage, stdout, stderr)
	if !ok {
		return code
	}
	if len(positional) > 0 {
		fmt.Fprintf(stderr, "omega-monitor demo: unexpected argument %q\n", positional[0])
		return 2
	}
	if *interval < 1 {
		fmt.Fprintf(stderr, "omega-monitor demo: --interval must be a whole number of seconds, 1 and up; got %d\n", *interval)
		return 2
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor demo: cannot find this binary: %v\n", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	d, err := newDemo(self, *interval)
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor demo: %v\n", err)
		return 1
	}
	err = d.run(ctx, stdout)
	d.cleanup()
	interrupted := ctx.Err() != nil
	if *keep {
		fmt.Fprintf(stdout, "\nkept %s (state, history.jsonl and watcher.log in %s)\n", d.dir, d.state)
	} else {
		os.RemoveAll(d.dir)
	}
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor demo: %v\n", err)
		return 1
	}
	if interrupted {
		return 130
	}
	return 0
}

// A demo is one run: its directory, its tmux server and its loop.
type demo struct {
	self     string // this binary, the loop's OMEGA_MONITOR_BIN
	interval int
	dir      string // everything the demo writes
	tmux     string
	socket   string
	mux      string // a wrapper that runs tmux on the private socket
	state    string // the watcher's state directory
	received string // what the agent read, one line each
	alerts   string // what the alert funnel was given

	loop     *exec.Cmd
	loopDone chan struct{}
}

func newDemo(self string, interval int) (*demo, error) {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		return nil, errors.New("the demo needs tmux: install it (apt install tmux, brew install tmux) and run it again")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		return nil, errors.New("the demo needs bash on PATH")
	}
	// A short directory: a unix socket path is limited to about 100 bytes.
	dir, err := os.MkdirTemp("", "omega-demo")
	if err != nil {
		return nil, err
	}
	d := &demo{
		self:     self,
		interval: interval,
		dir:      dir,
		tmux:     tmux,
		socket:   filepath.Join(dir, "tmux.sock"),
		mux:      filepath.Join(dir, "mux"),
		state:    filepath.Join(dir, "state", "monitor-agent"),
		received: filepath.Join(dir, "received"),
		alerts:   filepath.Join(dir, "alerts"),
	}
	// -f /dev/null: the user's tmux.conf has no say in what the agent's
	// screen looks like; -u: the screens are UTF-8 whatever the locale.
	wrapper := "#!/bin/sh\nunset TMUX TMUX_PANE\nexec " + coord.ShellJoin(tmux, "-u", "-f", "/dev/null", "-S", d.socket) + " \"$@\"\n"
	funnel := "#!/bin/sh\n# The demo's alert funnel: it keeps each message instead of sending it.\nfor m in \"$@\"; do printf '%s\\n\\036\\n' \"$m\" >>" + coord.ShellQuote(d.alerts) + "; done\n"
	files := []struct {
		name string
		data []byte
		perm os.FileMode
	}{
		{"mux", []byte(wrapper), 0o700},
		{"alert-send.sh", []byte(funnel), 0o700},
		{"agent.sh", []byte(agentScript), 0o600},
		{"omega-monitor.sh", scripts.Loop, 0o700},
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, f.perm); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	if err := os.MkdirAll(d.state, 0o700); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	agent := coord.ShellJoin("env",
		"AGENT_LOG="+d.received,
		"AGENT_WORK=3",
		"AGENT_ASK_AFTER="+strconv.Itoa(demoBudget),
		"AGENT_ASK_IDLE="+strconv.Itoa(2*interval+3),
		bash, filepath.Join(dir, "agent.sh"))
	if out, err := exec.Command(d.mux, "new-session", "-d", "-s", "agent", "-x", "100", "-y", "30", "exec "+agent).CombinedOutput(); err != nil {
		d.cleanup()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting tmux: %v: %s", err, bytes.TrimSpace(out))
	}
	return d, nil
}

// A demoEvent is one thing to show: a line of the loop, or what the agent
// received, or an alert.
type demoEvent struct {
	kind string // "line", "received", "alert", "stderr"
	text string
}

func (d *demo) run(ctx context.Context, stdout io.Writer) error {
	fmt.Fprintf(stdout, "omega-monitor demo: a scripted agent in a private tmux server (%s),\n", d.socket)
	fmt.Fprintf(stdout, "watched every %ds with a work probe (echo 3: work remains) and a nudge budget of %d.\n", d.interval, demoBudget)
	fmt.Fprintf(stdout, "It works, stalls, takes nudges, stalls past the budget, then asks a question. Ctrl-C stops it.\n\n")

	events := make(chan demoEvent, 64)
	if err := d.startLoop(events); err != nil {
		return err
	}
	var wg sync.WaitGroup
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer func() { stopWatch(); wg.Wait() }()
	wg.Go(func() { tailRecords(watchCtx, d.received, "\n", "received", events) })
	wg.Go(func() { tailRecords(watchCtx, d.alerts, "\n\036\n", "alert", events) })

	deadline := time.NewTimer(demoDeadline)
	defer deadline.Stop()
	asked := 0        // MONITOR lines since the question was escalated
	answered := false // something was typed into the dialog
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintf(stdout, "\ninterrupted: stopping the loop and the agent\n")
			return nil
		case <-deadline.C:
			return fmt.Errorf("the agent never reached its question within %v", demoDeadline)
		case <-d.loopDone:
			return errors.New("the loop ended by itself, which it must never do")
		case e := <-events:
			switch e.kind {
			case "line":
				fmt.Fprintln(stdout, e.text)
				if asked > 0 || strings.Contains(e.text, " · QUESTION · ") {
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
					return errors.New("something was typed into the question dialog")
				}
				fmt.Fprintf(stdout, "\nThe question waits for a human: nothing was typed into it. Done.\n")
				return nil
			}
		}
	}
}

// startLoop runs the real loop script on the agent, in a process group of
// its own, its lines sent to events.
func (d *demo) startLoop(events chan<- demoEvent) error {
	cmd := exec.Command("bash", filepath.Join(d.dir, "omega-monitor.sh"), "agent",
		"--interval", strconv.Itoa(d.interval),
		"--nudge-budget", strconv.Itoa(demoBudget),
		"--work-probe", "echo 3",
		"--mux", d.mux)
	cmd.Env = append(os.Environ(),
		"OMEGA_MONITOR_BIN="+d.self,
		"OMEGA_MONITOR_HOME="+filepath.Dir(d.state),
		"OMEGA_MONITOR_WATCHER=monitor-agent",
		"OMEGA_MONITOR_STATE="+d.state,
		"OMEGA_MONITOR_ALERT_SEND="+filepath.Join(d.dir, "alert-send.sh"),
		"OMEGA_MONITOR_TIMEOUT=10",
	)
	cmd.Stdin = nil
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	errOut, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the loop: %v", err)
	}
	d.loop = cmd
	d.loopDone = make(chan struct{})
	var readers sync.WaitGroup
	forward := func(r io.Reader, kind string) {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			events <- demoEvent{kind, sc.Text()}
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
func tailRecords(ctx context.Context, path, sep, kind string, events chan<- demoEvent) {
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
			case events <- demoEvent{kind, rec}:
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

// agentScript draws Claude Code screens (era D: rule, ❯ prompt, rule, and a
// status bar) and reacts to what is typed into it. It works for AGENT_WORK
// seconds under a spinner, then stops on an idle screen and reads a line:
// each line it reads is appended to AGENT_LOG and starts another turn. After
// AGENT_ASK_AFTER lines (0: never), once idle for AGENT_ASK_IDLE seconds, it
// asks for a permission and keeps asking; a key pressed in that dialog is
// logged as "KEY IN DIALOG". AGENT_MODE=idle starts stopped, question starts
// in the dialog, draft starts stopped with a half-typed draft in the box.
//
// It is the demo's agent and the end-to-end tests' agent alike, and runs on
// bash 3.2.
const agentScript = `# omega-monitor demo agent (see agentScript in demo.go)
log=${AGENT_LOG:?AGENT_LOG is required}
work=${AGENT_WORK:-3}
ask_after=${AGENT_ASK_AFTER:-0}
ask_idle=${AGENT_ASK_IDLE:-5}
mode=${AGENT_MODE:-work}
draft=${AGENT_DRAFT:-half a thought I am still typing}
rule=''
for i in 1 2 3 4 5 6 7 8 9 10; do rule=$rule'──────────'; done
body1='⏺ Read 3 files (ctrl+o to expand)'
body2='⏺ The parser is fixed; next, the tests for the ledger.'
body3=''
received=0
tokens=1.2k

# screen LINES...: the whole screen, top to bottom.
screen() {
	printf '\033[H\033[2J'
	printf '%s\n' "$@"
}

# add TEXT: a line of conversation, the oldest one scrolling away.
add() {
	body1=$body2 body2=$body3 body3=$1
}

working() {
	local s
	for ((s = 1; s <= work; s++)); do
		screen "$body1" "$body2" "$body3" '' "✻ Crunching… (${s}s · ↑ ${tokens} tokens)" '' "$rule" '❯ ' "$rule" \
			'  ⏵⏵ accept edits on (shift+tab to cycle) · esc to interrupt'
		sleep 1
	done
	add "⏺ Done: step $((received + 1)) of the plan is in place."
}

# idle [PROMPT]: the stopped screen, the cursor in the input box.
idle() {
	screen "$body1" "$body2" "$body3" '' "✻ Brewed for 12s" '' "$rule" "❯ $1" "$rule" \
		'  ⏵⏵ accept edits on (shift+tab to cycle)'
	printf '\033[8;%dH' $((3 + ${#1}))
}

question() {
	screen "$body1" "$body2" '' "$rule" ' Bash command' '' '   rm -rf build/' '   Remove the build directory' '' \
		' Do you want to proceed?' ' ❯ 1. Yes' '   2. No' '' ' Esc to cancel · Tab to amend'
	while :; do
		if IFS= read -r -n 1 key; then
			printf 'KEY IN DIALOG %s\n' "$key" >>"$log"
		fi
	done
}

case $mode in
question) question ;;
draft)
	idle "$draft"
	while IFS= read -r line; do
		printf '%s\n' "$line" >>"$log"
		idle "$draft$line"
	done
	exit 0
	;;
idle) ;;
*) working ;;
esac
while :; do
	idle ''
	if ((ask_after > 0 && received >= ask_after)); then
		if ! IFS= read -r -t "$ask_idle" line; then
			question
		fi
	else
		IFS= read -r line || exit 0
	fi
	printf '%s\n' "$line" >>"$log"
	received=$((received + 1))
	add "❯ $line"
	working
done
`
