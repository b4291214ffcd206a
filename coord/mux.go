package coord

import (
	"bytes"
	"context"

	"github.com/omega-monitor/omega-monitor/internal/printable"

	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/digest"
)

// MuxBinary returns the multiplexer to run, by the one rule every command
// follows: the flag's value, else $OMEGA_MONITOR_MUX, else ~/.local/bin/rmux
// where it is executable (rmux is not on a non-interactive PATH), else tmux
// on PATH. Whichever it is gets tmux's command line. getenv is os.Getenv
// outside tests.
func MuxBinary(flag string, getenv func(string) string) (string, error) {
	if flag != "" {
		return checkMux(flag, "--mux")
	}
	if env := getenv("OMEGA_MONITOR_MUX"); env != "" {
		return checkMux(env, "OMEGA_MONITOR_MUX")
	}
	if home := getenv("HOME"); home != "" {
		rmux := filepath.Join(home, ".local", "bin", "rmux")
		if isExecutable(rmux) {
			return rmux, nil
		}
	}
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		return "", errors.New("coord: no multiplexer: ~/.local/bin/rmux is not executable and tmux is not on PATH (set --mux or OMEGA_MONITOR_MUX)")
	}
	return tmux, nil
}

// checkMux makes a named multiplexer absolute, so that a watcher started
// elsewhere runs the same one, and checks that it can run.
func checkMux(path, from string) (string, error) {
	p, err := exec.LookPath(path)
	if err != nil {
		return "", fmt.Errorf("coord: multiplexer from %s: %v", from, err)
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	return p, nil
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// InRmux reports whether this process runs inside an rmux session. rmux
// exports RMUX and RMUX_PANE; it does not set $TMUX, so testing $TMUX would
// say "not in a multiplexer" from inside one.
func InRmux(getenv func(string) string) bool {
	return getenv("RMUX") != "" || getenv("RMUX_PANE") != ""
}

// A Mux runs multiplexer commands, locally or on an ssh host, each under its
// own wall clock.
type Mux struct {
	// Bin is the local multiplexer (MuxBinary). A remote host finds its own
	// by the same rule, on that host (RemoteCommand).
	Bin string
	// SSH holds the options of remote calls; SSH.Timeout is also the wall
	// clock of local ones.
	SSH SSH
}

// Command returns the command that runs the multiplexer with args: Bin
// locally when host is empty, otherwise ssh to the alias host running
// RemoteCommand(args...). It runs in a session of its own (and so a process
// group of its own), and when ctx ends the whole group is killed, and every
// group descended from it (a hung ProxyCommand's), so a grandchild holding a
// pipe cannot keep the caller waiting. Run also ends whatever is left in the
// session once the command is over.
func (m Mux) Command(ctx context.Context, host string, args ...string) *exec.Cmd {
	if host == "" {
		return group(exec.CommandContext(ctx, m.Bin, args...))
	}
	return m.Remote(ctx, host, RemoteCommand(args...))
}

// Remote returns the command that runs remoteCommand (RemoteMux's, say) on
// the alias host over ssh with m.SSH, in a group of its own as Command's.
func (m Mux) Remote(ctx context.Context, host, remoteCommand string) *exec.Cmd {
	return group(exec.CommandContext(ctx, "ssh", m.SSH.Args(host, remoteCommand)...))
}

// RemoteHeld is Remote without ssh's -n: the remote command reads the
// caller's standard input, which a caller that holds it open and writes
// nothing turns into the connection's life: it ends on the host when the
// call's connection ends.
func (m Mux) RemoteHeld(ctx context.Context, host, remoteCommand string) *exec.Cmd {
	args := m.SSH.Args(host, remoteCommand)
	return group(exec.CommandContext(ctx, "ssh", args[1:]...)) // Args begins with -n
}

// group has cmd run in a session of its own, whose every group is killed
// when its context ends.
func group(cmd *exec.Cmd) *exec.Cmd {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Cancel = func() error {
		return killTree(cmd.Process.Pid)
	}
	cmd.WaitDelay = time.Second
	return cmd
}

// A CallError is a multiplexer call that failed.
type CallError struct {
	Host     string        // empty for a local call
	Args     []string      // the multiplexer's arguments
	ExitCode int           // -1 when the call did not exit by itself
	Stderr   string        // what it said, trimmed
	Timeout  time.Duration // the wall clock, when it was what ended the call
	Err      error         // the underlying error
}

func (e *CallError) Error() string {
	where := "local multiplexer"
	if e.Host != "" {
		where = "host " + e.Host
	}
	switch {
	case e.Timeout > 0:
		return fmt.Sprintf("coord: %s: no answer within %v", where, e.Timeout)
	case e.Stderr != "":
		// What a host or a multiplexer said is shown to the operator:
		// no escape sequence of it reaches their terminal.
		return fmt.Sprintf("coord: %s: %s", where, printable.String(lastLine(e.Stderr)))
	default:
		return fmt.Sprintf("coord: %s: %v", where, e.Err)
	}
}

func (e *CallError) Unwrap() error { return e.Err }

// Unreachable reports whether the call never reached the multiplexer: ssh
// could not connect or authenticate (its exit status 255), or the wall clock
// ran out.
func (e *CallError) Unreachable() bool {
	return e.Timeout > 0 || (e.Host != "" && e.ExitCode == 255)
}

// noServer reports whether the multiplexer said that no server runs, which
// means no sessions rather than a failure.
func (e *CallError) noServer() bool {
	return e.ExitCode == 1 && (strings.Contains(e.Stderr, "no server running") ||
		strings.Contains(e.Stderr, "error connecting to"))
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// Run runs the multiplexer with args on host ("" for local) under the wall
// clock m.SSH.Timeout and returns its standard output. A failure is a
// *CallError.
func (m Mux) Run(ctx context.Context, host string, args ...string) ([]byte, error) {
	timeout := m.SSH.timeout()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := m.Command(ctx, host, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if cmd.Process != nil {
		// ssh kills a ProxyCommand it started, but not the children
		// the proxy started: they are left in the session.
		killSession(cmd.Process.Pid)
	}
	if err == nil {
		return stdout.Bytes(), nil
	}
	ce := &CallError{Host: host, Args: args, ExitCode: -1, Stderr: strings.TrimSpace(stderr.String()), Err: err}
	if ctx.Err() == context.DeadlineExceeded {
		ce.Timeout = timeout
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.Exited() {
		ce.ExitCode = exit.ExitCode()
	}
	return stdout.Bytes(), ce
}

// sessionFormat asks list-sessions for names only, one a line.
const sessionFormat = "#{session_name}"

// Sessions lists the sessions on host ("" for local), in the multiplexer's
// order. No running server is no sessions, not an error.
func (m Mux) Sessions(ctx context.Context, host string) ([]string, error) {
	out, err := m.Run(ctx, host, "list-sessions", "-F", sessionFormat)
	if ce := (*CallError)(nil); errors.As(err, &ce) && ce.noServer() {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return ParseSessions(out), nil
}

// ParseSessions reads list-sessions output in sessionFormat: one name a
// line; blank lines and trailing carriage returns are dropped.
func ParseSessions(out []byte) []string {
	var names []string
	for line := range strings.SplitSeq(string(out), "\n") {
		line = strings.TrimRight(line, "\r")
		if line != "" {
			names = append(names, line)
		}
	}
	return names
}

// HasSession reports whether t's session exists, matched exactly. It answers
// false only when the multiplexer says so; a host it cannot reach is an error.
func (m Mux) HasSession(ctx context.Context, t Target) (bool, error) {
	_, err := m.Run(ctx, t.Host, "has-session", "-t", Exact(t.Session))
	if err == nil {
		return true, nil
	}
	var ce *CallError
	if errors.As(err, &ce) && ce.ExitCode == 1 {
		return false, nil
	}
	return false, err
}

// RemoteFindMux is how the remote side finds its multiplexer, in sh: the
// local rule (MuxBinary), read on that host, into $m.
const RemoteFindMux = `m=${OMEGA_MONITOR_MUX:-}; ` +
	`if [ -z "$m" ]; then if [ -x "$HOME/.local/bin/rmux" ]; then m=$HOME/.local/bin/rmux; else m=tmux; fi; fi; `

// remoteMuxScript runs the remote multiplexer with its arguments.
const remoteMuxScript = RemoteFindMux + `exec "$m" "$@"`

// remoteClock runs the script "$2" with the arguments after it under a wall
// clock of "$1" seconds on the remote side too, where the host has coreutils
// timeout, so that a hung multiplexer there does not outlive the call.
const remoteClock = `s=$1 c=$2; shift 2; ` +
	`if command -v timeout >/dev/null 2>&1; then exec timeout -k 2 "$s" sh -c "$c" omega-monitor "$@"; fi; ` +
	`exec sh -c "$c" omega-monitor "$@"`

// RemoteScript is the command line for ssh that runs the sh script with
// args on the remote host, bounded there by secs. Every word is quoted for
// the remote login shell.
func RemoteScript(secs int, script string, args ...string) string {
	return "sh -c " + ShellJoin(append([]string{remoteClock, "omega-monitor", fmt.Sprint(secs), script}, args...)...)
}

// RemoteMux is RemoteCommand bounded on the remote side by secs.
func RemoteMux(secs int, args ...string) string {
	return RemoteScript(secs, remoteMuxScript, args...)
}

// ControlPath is the ssh ControlMaster socket of the watcher whose state
// directory is state: in the directory where the path fits a unix socket
// (about 100 bytes), else under a directory of this user's in the system's
// temporary directory, named by a hash of state.
func ControlPath(state string, uid int) string {
	p := filepath.Join(state, "ssh-control")
	if len(p) <= 100 {
		return p
	}
	sum := digest.Sum256([]byte(state))
	return filepath.Join(os.TempDir(), fmt.Sprintf("omega-monitor-%d", uid), hex.EncodeToString(sum[:8]))
}

// LoopOptions are ssh's options for every call of a poll loop: those of Args,
// and one ControlMaster socket per watcher at control, so that each call
// after the first costs a round trip instead of a handshake. The master
// lingers persist seconds after the last call, so one left by a loop killed
// without a chance to close it ends by itself.
func (s SSH) LoopOptions(control string, persist int) []string {
	args := s.Args("", "")
	args = args[1 : len(args)-3] // neither -n nor "--", alias and command
	return append(args, "-o", "ControlMaster=auto", "-o", "ControlPath="+control, "-o", fmt.Sprintf("ControlPersist=%d", persist))
}

// ClientOptions are LoopOptions for a process beside the loop (the wake
// relay) that uses the loop's ControlMaster and never becomes one: a
// master it started would outlive it, and the loop's stop, which closes
// the loop's own. Without a master it connects on its own, and leaves
// nothing behind when it ends.
func (s SSH) ClientOptions(control string) []string {
	args := s.Args("", "")
	args = args[1 : len(args)-3]
	return append(args, "-o", "ControlMaster=no", "-o", "ControlPath="+control)
}

// KeyCancelled is the multiplexer option a conditional key's other branch
// asks for (IfScript): no one sets it, so the multiplexer exits 1 and
// names it, and that says the key was not sent because the pane was no
// longer as the last check saw it.
const KeyCancelled = "@omega-monitor-key-cancelled"

// ifBody has the multiplexer "$m" run the command "$2" on the pane "$1"
// only while the condition read from standard input holds: if-shell -F
// tests it and runs the command within one command of the multiplexer's,
// so that no key of anyone else's comes between the test and the key. An
// empty standard input sends nothing.
const ifBody = `IFS= read -r c && [ -n "$c" ] && exec "$m" if-shell -F -t "$1" "$c" "$2" 'show-options -gv ` + KeyCancelled + `'`

// IfScript is ifBody for sh -c on this machine, the multiplexer "$0".
const IfScript = `m=$0; ` + ifBody

// RemoteIf is ifBody as RemoteScript runs it on a host, bounded there by
// secs: the pane t and the command cmd are its arguments.
func RemoteIf(secs int, t, cmd string) string {
	return RemoteScript(secs, RemoteFindMux+ifBody, t, cmd)
}
