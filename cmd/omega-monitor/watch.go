package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/atomicfile"
	"github.com/omega-monitor/omega-monitor/internal/cmdline"
	"github.com/omega-monitor/omega-monitor/internal/fsutil"
	"github.com/omega-monitor/omega-monitor/scripts"
	"github.com/omega-monitor/omega-monitor/statedir"
)

const watchUsage = `usage: omega-monitor <target> [flags]
       omega-monitor watch <target> [flags]

Starts a watcher: a detached multiplexer session on this machine, named
monitor-<session> or monitor-<host>-<session> (a fingerprint where that
could be misread), running the poll loop over the target. A target is a
session name, or host:session where host is an ssh config alias. Use the
watch form for a session named like a command (watch list).

The probes run on this machine (not on the target's host), in --probe-dir.
The watcher's files are in $OMEGA_MONITOR_HOME/<watcher>/ (default
~/.omega/monitor/<watcher>/): monitor.log holds every MONITOR line
(omega-monitor logs TARGET prints it), watcher.log the loop's own log,
state.json and history.jsonl what it decided.

Environment, handed to the watcher as set here: OMEGA_MONITOR_HOME,
OMEGA_MONITOR_MUX, OMEGA_MONITOR_TIMEOUT (each call's clock, seconds, default
20), OMEGA_MONITOR_ALERT_SEND (the alert funnel, default
~/.omega/bin/omega-alert-send.sh), OMEGA_TELEGRAM_CONF (default
~/.omega/telegram.conf), OMEGA_TELEGRAM_API, OMEGA_ALERT_TRIES,
OMEGA_ALERT_DEADLINE, OMEGA_ALERT_BACKOFF, OMEGA_ALERT_TIMEOUT.

flags:
`

// watchFlags are the loop's tuning flags: parsed here to refuse a bad value
// early, then handed to the loop as they were given.
type watchFlags struct {
	workProbe, progressProbe, nudgeText string
	nudgeTextSet                        bool // --nudge-text was given, even empty
	nudgeBudget, interval               int
	mux, sshConfig, probeDir            string
}

func newWatchFlagSet(f *watchFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("watch", flag.ContinueOnError)
	fs.StringVar(&f.workProbe, "work-probe", "", "shell `command` printing the amount of work remaining")
	fs.StringVar(&f.progressProbe, "progress-probe", "", "shell `command` printing a monotonic progress count")
	fs.IntVar(&f.nudgeBudget, "nudge-budget", 5, "`N` nudges without progress before escalating (0 to 1000)")
	fs.IntVar(&f.interval, "interval", 60, "`seconds` between polls (1 to 86400)")
	fs.StringVar(&f.nudgeText, "nudge-text", "", "the `text` of a nudge")
	fs.StringVar(&f.mux, "mux", "", "multiplexer binary `path` (default $OMEGA_MONITOR_MUX, ~/.local/bin/rmux, tmux)")
	fs.StringVar(&f.sshConfig, "ssh-config", "", "ssh config `path` (default ~/.ssh/config)")
	fs.StringVar(&f.probeDir, "probe-dir", "", "the `dir`ectory the probes run in (default: the current directory)")
	return fs
}

// parsed records what parsing alone cannot tell: whether --nudge-text was
// given at all, since an empty one is refused rather than ignored.
func (f *watchFlags) parsed(fs *flag.FlagSet) {
	fs.Visit(func(fl *flag.Flag) {
		if fl.Name == "nudge-text" {
			f.nudgeTextSet = true
		}
	})
}

func runWatch(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	var f watchFlags
	fs := newWatchFlagSet(&f)
	target, code, ok := parseWatchArgs("watch", fs, &f, args, watchUsage, stdout, stderr)
	if !ok {
		return code
	}
	m, err := resolveMux(f.mux, f.sshConfig, coord.DefaultTimeout)
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor: %v\n", err)
		return 1
	}
	if f.mux != "" {
		f.mux = m.Bin // absolute, so the loop finds the same one
	}

	ctx := context.Background()
	watcher := coord.WatcherName(target)
	watched, err := m.HasSession(ctx, coord.Target{Session: watcher})
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor: %v\n", err)
		return 1
	}
	if watched {
		fmt.Fprintf(stderr, "omega-monitor: %s is already watched by %s (stop it with: omega-monitor stop %s)\n", target, watcher, target)
		return 1
	}
	exists, err := m.HasSession(ctx, target)
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor: cannot check %s: %v\n", target, err)
		return 1
	}
	if !exists {
		where := "here"
		if !target.Local() {
			where = "on " + target.Host
		}
		fmt.Fprintf(stderr, "omega-monitor: no session %s %s (omega-monitor list shows what is watchable)\n", target.Session, where)
		return 1
	}

	home, err := statedir.Home()
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor: %v\n", err)
		return 1
	}
	loop, err := installLoopScript(home)
	if err == nil {
		err = checkLoopVersion(loop) // another watch may have rewritten it since
	}
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor: %v\n", err)
		return 1
	}
	// A loop started by hand, or an old one still cleaning up, holds
	// the state directory: two loops would type into one pane in turns.
	if free, h, err := lockFree(filepath.Join(home, watcher)); err != nil || !free {
		if err != nil {
			fmt.Fprintf(stderr, "omega-monitor: %v\n", err)
		} else {
			fmt.Fprintf(stderr, "omega-monitor: %s is already watched: its state directory is held by %s\n", target, h)
		}
		return 1
	}
	if err := writeWatcherTarget(home, watcher, target); err != nil {
		fmt.Fprintf(stderr, "omega-monitor: %v\n", err)
		return 1
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor: cannot find this binary: %v\n", err)
		return 1
	}
	settings, _ := envSettings(os.Getenv) // checked with the flags
	command := loopCommand(self, home, watcher, loop, target, fs, f, settings)
	// The loop runs in the probe directory: the probes are its children.
	// remain-on-exit, set in the same call, keeps the pane of a loop that
	// dies at start, so that what it said can be read back.
	if _, err := m.Run(ctx, "", "new-session", "-d", "-s", watcher, "-c", f.probeDir, command,
		";", "set-option", "-w", "-t", coord.Exact(watcher), "remain-on-exit", "on"); err != nil {
		var ce *coord.CallError
		if errors.As(err, &ce) && strings.Contains(ce.Stderr, "duplicate session") {
			fmt.Fprintf(stderr, "omega-monitor: %s is already watched by %s\n", target, watcher)
			return 1
		}
		fmt.Fprintf(stderr, "omega-monitor: cannot start the watcher %s: %v\n", watcher, err)
		return 1
	}
	started, why := awaitStart(ctx, m, watcher, filepath.Join(home, watcher), startWait)
	if !started {
		fmt.Fprintf(stderr, "omega-monitor: the watcher of %s died at start: %s\n", target, why)
		return 1
	}
	m.Run(ctx, "", "set-option", "-w", "-t", coord.Exact(watcher), "remain-on-exit", "off")
	fmt.Fprintf(stdout, "watching %s in %s (stop it with: omega-monitor stop %s)%s\n", target, watcher, target, why)
	return 0
}

// startWait bounds how long watch waits for a new loop to take its lock.
const startWait = 20 * time.Second

// awaitStart waits until the new watcher's loop holds its state directory
// (it has started), or its pane is dead (it has not: why is what it said,
// and the session is ended). A loop that says nothing within startWait is
// taken as started, and why says so.
func awaitStart(ctx context.Context, m coord.Mux, watcher, state string, within time.Duration) (started bool, why string) {
	deadline := time.Now().Add(within)
	pane := coord.Exact(watcher)
	for {
		if free, _, err := lockFree(state); err == nil && !free {
			return true, ""
		}
		out, err := m.Run(ctx, "", "display-message", "-p", "-t", pane, "#{pane_dead}")
		if err != nil {
			return false, "its session ended, leaving no word (is bash installed?)"
		}
		if strings.TrimSpace(string(out)) == "1" {
			said, _ := m.Run(ctx, "", "capture-pane", "-p", "-t", pane)
			m.Run(ctx, "", "kill-session", "-t", coord.Exact(watcher))
			return false, deadPaneWords(string(said))
		}
		if time.Now().After(deadline) {
			return true, fmt.Sprintf(" (its loop has not confirmed within %v: see omega-monitor logs)", within)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// deadPaneWords is what a dead pane shows, on one line, without the
// multiplexer's own "Pane is dead" notice.
func deadPaneWords(screen string) string {
	var words []string
	for _, l := range strings.Split(screen, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "Pane is dead") {
			continue
		}
		words = append(words, l)
	}
	if len(words) == 0 {
		return "it said nothing"
	}
	if len(words) > 5 {
		words = words[len(words)-5:]
	}
	return strings.Join(words, " / ")
}

// loopCommand is the shell command line the watcher session runs: the loop
// script with its environment and the flags as they were given, every word
// quoted, because the multiplexer hands the line to a shell. Every setting
// of envSettingList is handed over explicitly, set to the caller's value or
// unset: the multiplexer server's own environment must not decide where the
// watcher's alerts go.
func loopCommand(self, home, watcher, loop string, target coord.Target, fs *flag.FlagSet, f watchFlags, settings map[string]string) string {
	words := []string{"env"}
	for _, s := range envSettingList {
		if _, ok := settings[s.name]; !ok {
			words = append(words, "-u", s.name)
		}
	}
	// HOME too: ~/.omega (the funnel, its config) is the caller's.
	if h := os.Getenv("HOME"); h != "" {
		words = append(words, "HOME="+h)
	}
	words = append(words,
		"OMEGA_MONITOR_BIN="+self,
		"OMEGA_MONITOR_HOME="+home,
		"OMEGA_MONITOR_WATCHER="+watcher,
		"OMEGA_MONITOR_STATE="+filepath.Join(home, watcher),
	)
	if mux := os.Getenv("OMEGA_MONITOR_MUX"); mux != "" {
		words = append(words, "OMEGA_MONITOR_MUX="+mux)
	}
	for _, s := range envSettingList {
		if v, ok := settings[s.name]; ok {
			words = append(words, s.name+"="+v)
		}
	}
	words = append(words, loop, target.String())
	values := map[string]string{
		"work-probe":     f.workProbe,
		"progress-probe": f.progressProbe,
		"nudge-budget":   strconv.Itoa(f.nudgeBudget),
		"interval":       strconv.Itoa(f.interval),
		"nudge-text":     f.nudgeText,
		"mux":            f.mux,
		"ssh-config":     f.sshConfig,
	}
	fs.Visit(func(fl *flag.Flag) {
		if v, ok := values[fl.Name]; ok {
			words = append(words, "--"+fl.Name, v)
		}
	})
	// Always: the probes' directory is where watch ran, not the loop's.
	if f.probeDir != "" {
		words = append(words, "--probe-dir", f.probeDir)
	}
	return "exec " + coord.ShellJoin(words...)
}

// parseWatchArgs reads a watcher's command line, for watch and for the
// loop's own start (loop-env), so that both refuse the same things: one
// target, safe by coord's rules, and every flag's value in range. When ok is
// false the command returns code.
func parseWatchArgs(name string, fs *flag.FlagSet, f *watchFlags, args []string, usage string, stdout, stderr io.Writer) (target coord.Target, code int, ok bool) {
	positional, code, ok := cmdline.ParseInterspersed(fs, args, usage, stdout, stderr)
	if !ok {
		return coord.Target{}, code, false
	}
	if len(positional) != 1 {
		fmt.Fprintf(stderr, "omega-monitor: %s takes one target, got %d\n", name, len(positional))
		cmdline.WriteUsage(stderr, fs, usage)
		return coord.Target{}, 2, false
	}
	target, err := coord.ParseTarget(positional[0])
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor: refusing target %q: %v\n", positional[0], err)
		return coord.Target{}, 2, false
	}
	f.parsed(fs)
	if f.probeDir == "" {
		wd, err := os.Getwd()
		if err != nil {
			fmt.Fprintf(stderr, "omega-monitor: no current directory for the probes (give --probe-dir): %v\n", err)
			return coord.Target{}, 2, false
		}
		f.probeDir = wd
	}
	if err := f.check(os.Getenv); err != nil {
		fmt.Fprintf(stderr, "omega-monitor: %v\n", err)
		return coord.Target{}, 2, false
	}
	return target, 0, true
}

// resolveMux resolves the multiplexer binary and the ssh options of a command.
func resolveMux(muxFlag, sshConfig string, timeout time.Duration) (coord.Mux, error) {
	bin, err := coord.MuxBinary(muxFlag, os.Getenv)
	if err != nil {
		return coord.Mux{}, err
	}
	return coord.Mux{Bin: bin, SSH: coord.SSH{Config: sshConfig, Timeout: timeout}}, nil
}

// installLoopScript writes the embedded loop script, stamped with this
// binary's version, to home/bin/omega-monitor.sh, only when what is there
// differs, and atomically, so that a watcher that is starting never reads
// half a script. It returns the script's path.
func installLoopScript(home string) (string, error) {
	dir := filepath.Join(home, "bin")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "omega-monitor.sh")
	script := stampedLoop()
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, script) {
		return path, os.Chmod(path, 0o700)
	}
	return path, atomicfile.Write(path, script, 0o700)
}

// loopVersionMark starts the line that stamps a loop script with the version
// of the binary that wrote it.
const loopVersionMark = "# omega-monitor-version: "

// stampedLoop is the embedded loop with its version line after the first.
func stampedLoop() []byte {
	first, rest, _ := bytes.Cut(scripts.Loop, []byte("\n"))
	var b bytes.Buffer
	b.Write(first)
	b.WriteString("\n" + loopVersionMark + cmdline.Version() + "\n")
	b.Write(rest)
	return b.Bytes()
}

// errUnstamped is wrapped by checkLoopVersion for a script without a stamp.
var errUnstamped = errors.New("no version stamp")

// checkLoopVersion refuses a loop script written by a binary of another
// version (or by none): the loop and the binary it calls share contracts
// (flags, action files, state), so they must come from one build.
func checkLoopVersion(path string) error {
	data, err := fsutil.ReadCapped(path, 1<<20)
	if err != nil {
		return err
	}
	_, rest, _ := bytes.Cut(data, []byte("\n"))
	line, _, _ := bytes.Cut(rest, []byte("\n"))
	v, ok := bytes.CutPrefix(line, []byte(loopVersionMark))
	switch {
	case !ok:
		return fmt.Errorf("the loop script %s carries no version; this binary is %s: %w", path, cmdline.Version(), errUnstamped)
	case string(v) != cmdline.Version():
		return fmt.Errorf("the loop script %s is of version %s, this binary is %s; refusing to run a loop of another version", path, v, cmdline.Version())
	}
	return nil
}

// writeWatcherTarget records, in the watcher's state directory, which target
// it watches: list reads it back for a watcher whose name is a fingerprint.
func writeWatcherTarget(home, watcher string, target coord.Target) error {
	dir := filepath.Join(home, watcher)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, statedir.Target), []byte(target.String()+"\n"))
}

// readWatcherTarget is the target recorded for watcher, if any.
func readWatcherTarget(home, watcher string) (coord.Target, bool) {
	data, err := os.ReadFile(filepath.Join(home, watcher, statedir.Target))
	if err != nil {
		return coord.Target{}, false
	}
	t, err := coord.ParseTarget(strings.TrimSpace(string(data)))
	return t, err == nil && coord.WatcherName(t) == watcher
}
