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
	"github.com/omega-monitor/omega-monitor/scripts"
)

const watchUsage = `usage: omega-monitor <target> [flags]
       omega-monitor watch <target> [flags]

Starts a watcher: a detached multiplexer session on this machine, named
monitor-<session> or monitor-<host>-<session> (a fingerprint where that
could be misread), running the poll loop over the target. A target is a
session name, or host:session where host is an ssh config alias. Use the
watch form for a session named like a command (watch list).

flags:
`

// watchFlags are the loop's tuning flags: parsed here to refuse a bad value
// early, then handed to the loop as they were given.
type watchFlags struct {
	workProbe, progressProbe, nudgeText string
	nudgeBudget, interval               int
	mux, sshConfig                      string
}

func newWatchFlagSet(f *watchFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("watch", flag.ContinueOnError)
	fs.StringVar(&f.workProbe, "work-probe", "", "shell `command` printing the amount of work remaining")
	fs.StringVar(&f.progressProbe, "progress-probe", "", "shell `command` printing a monotonic progress count")
	fs.IntVar(&f.nudgeBudget, "nudge-budget", 5, "nudges without progress before escalating")
	fs.IntVar(&f.interval, "interval", 60, "seconds between polls (1 and up)")
	fs.StringVar(&f.nudgeText, "nudge-text", "", "the `text` of a nudge")
	fs.StringVar(&f.mux, "mux", "", "multiplexer binary `path` (default $OMEGA_MONITOR_MUX, ~/.local/bin/rmux, tmux)")
	fs.StringVar(&f.sshConfig, "ssh-config", "", "ssh config `path` (default ~/.ssh/config)")
	return fs
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

	home, err := watcherHome()
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor: %v\n", err)
		return 1
	}
	loop, err := installLoopScript(home)
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor: %v\n", err)
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
	command := loopCommand(self, home, watcher, loop, target, fs, f)
	if _, err := m.Run(ctx, "", "new-session", "-d", "-s", watcher, command); err != nil {
		var ce *coord.CallError
		if errors.As(err, &ce) && strings.Contains(ce.Stderr, "duplicate session") {
			fmt.Fprintf(stderr, "omega-monitor: %s is already watched by %s\n", target, watcher)
			return 1
		}
		fmt.Fprintf(stderr, "omega-monitor: cannot start the watcher %s: %v\n", watcher, err)
		return 1
	}
	fmt.Fprintf(stdout, "watching %s in %s (stop it with: omega-monitor stop %s)\n", target, watcher, target)
	return 0
}

// loopCommand is the shell command line the watcher session runs: the loop
// script with its environment and the flags as they were given, every word
// quoted, because the multiplexer hands the line to a shell.
func loopCommand(self, home, watcher, loop string, target coord.Target, fs *flag.FlagSet, f watchFlags) string {
	words := []string{
		"env",
		"OMEGA_MONITOR_BIN=" + self,
		"OMEGA_MONITOR_HOME=" + home,
		"OMEGA_MONITOR_WATCHER=" + watcher,
		"OMEGA_MONITOR_STATE=" + filepath.Join(home, watcher),
	}
	if mux := os.Getenv("OMEGA_MONITOR_MUX"); mux != "" {
		words = append(words, "OMEGA_MONITOR_MUX="+mux)
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
		words = append(words, "--"+fl.Name, values[fl.Name])
	})
	return "exec " + coord.ShellJoin(words...)
}

// parseWatchArgs reads a watcher's command line, for watch and for the
// loop's own start (loop-env), so that both refuse the same things: one
// target, safe by coord's rules, and every flag's value in range. When ok is
// false the command returns code.
func parseWatchArgs(name string, fs *flag.FlagSet, f *watchFlags, args []string, usage string, stdout, stderr io.Writer) (target coord.Target, code int, ok bool) {
	positional, code, ok := parseInterspersed(fs, args, usage, stdout, stderr)
	if !ok {
		return coord.Target{}, code, false
	}
	if len(positional) != 1 {
		fmt.Fprintf(stderr, "omega-monitor: %s takes one target, got %d\n", name, len(positional))
		writeCommandUsage(stderr, fs, usage)
		return coord.Target{}, 2, false
	}
	target, err := coord.ParseTarget(positional[0])
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor: refusing target %q: %v\n", positional[0], err)
		return coord.Target{}, 2, false
	}
	if err := f.check(); err != nil {
		fmt.Fprintf(stderr, "omega-monitor: %v\n", err)
		return coord.Target{}, 2, false
	}
	return target, 0, true
}

// check refuses a flag value the loop cannot use, and makes --ssh-config
// absolute so that a watcher started elsewhere reads the same file.
func (f *watchFlags) check() error {
	if f.interval < 1 {
		return fmt.Errorf("--interval must be a whole number of seconds, 1 and up; got %d", f.interval)
	}
	if f.nudgeBudget < 0 {
		return fmt.Errorf("--nudge-budget must not be negative; got %d", f.nudgeBudget)
	}
	if strings.ContainsAny(f.nudgeText, "\n\r") {
		return errors.New("--nudge-text must be one line")
	}
	if f.sshConfig != "" {
		abs, err := filepath.Abs(f.sshConfig)
		if err != nil {
			return fmt.Errorf("--ssh-config: %v", err)
		}
		f.sshConfig = abs
	}
	return nil
}

// parseInterspersed parses flags wherever they stand among the positional
// arguments, as in "omega-monitor host:agent --interval 30". It answers
// --help itself. When ok is false the command returns code.
func parseInterspersed(fs *flag.FlagSet, args []string, usage string, stdout, stderr io.Writer) (positional []string, code int, ok bool) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			writeCommandUsage(stdout, fs, usage)
			return nil, 0, false
		}
		if err != nil {
			fmt.Fprintf(stderr, "omega-monitor: %v\n", err)
			writeCommandUsage(stderr, fs, usage)
			return nil, 2, false
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, 0, true
		}
		if rest[0] == "--" {
			return append(positional, rest[1:]...), 0, true
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

func writeCommandUsage(w io.Writer, fs *flag.FlagSet, usage string) {
	var b bytes.Buffer
	b.WriteString(usage)
	fs.SetOutput(&b)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
	w.Write(b.Bytes())
}

// resolveMux resolves the multiplexer binary and the ssh options of a command.
func resolveMux(muxFlag, sshConfig string, timeout time.Duration) (coord.Mux, error) {
	bin, err := coord.MuxBinary(muxFlag, os.Getenv)
	if err != nil {
		return coord.Mux{}, err
	}
	return coord.Mux{Bin: bin, SSH: coord.SSH{Config: sshConfig, Timeout: timeout}}, nil
}

// watcherHome is $OMEGA_MONITOR_HOME, or ~/.omega/monitor.
func watcherHome() (string, error) {
	if h := os.Getenv("OMEGA_MONITOR_HOME"); h != "" {
		return filepath.Abs(h)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no state directory: set OMEGA_MONITOR_HOME (%v)", err)
	}
	return filepath.Join(home, ".omega", "monitor"), nil
}

// installLoopScript writes the embedded loop script to home/bin/omega-monitor.sh,
// only when what is there differs, and atomically, so that a watcher that is
// starting never reads half a script. It returns the script's path.
func installLoopScript(home string) (string, error) {
	dir := filepath.Join(home, "bin")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "omega-monitor.sh")
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, scripts.Loop) {
		return path, os.Chmod(path, 0o700)
	}
	return path, atomicfile.Write(path, scripts.Loop, 0o700)
}

// writeWatcherTarget records, in the watcher's state directory, which target
// it watches: list reads it back for a watcher whose name is a fingerprint.
func writeWatcherTarget(home, watcher string, target coord.Target) error {
	dir := filepath.Join(home, watcher)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, "target"), []byte(target.String()+"\n"))
}

// readWatcherTarget is the target recorded for watcher, if any.
func readWatcherTarget(home, watcher string) (coord.Target, bool) {
	data, err := os.ReadFile(filepath.Join(home, watcher, "target"))
	if err != nil {
		return coord.Target{}, false
	}
	t, err := coord.ParseTarget(strings.TrimSpace(string(data)))
	return t, err == nil && coord.WatcherName(t) == watcher
}
