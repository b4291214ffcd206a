package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A TmuxServer is a tmux server on a private socket, so that a test never
// touches the user's sessions. The server starts with its first session and
// is killed when the test ends.
type TmuxServer struct {
	// Socket is the server's socket, for tmux -S.
	Socket string
	// Mux is an executable wrapper that runs tmux -S Socket with its own
	// arguments: give it wherever a multiplexer binary is expected (--mux,
	// OMEGA_MONITOR_MUX).
	Mux string

	tmux string
}

// Tmux returns a private tmux server. The socket lives in a short
// directory of its own, because a unix socket path is limited to about 100
// bytes and t.TempDir() paths grow with the test's name.
func Tmux(t testing.TB) *TmuxServer {
	t.Helper()
	EndToEnd(t)
	tmux := Need(t, "tmux")[0]
	dir, err := os.MkdirTemp("", "omt")
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	s := &TmuxServer{
		Socket: filepath.Join(dir, "s"),
		Mux:    filepath.Join(dir, "mux"),
		tmux:   tmux,
	}
	wrapper := fmt.Sprintf("#!/bin/sh\nunset TMUX\nexec %s -S %s \"$@\"\n", shQuote(tmux), shQuote(s.Socket))
	if err := os.WriteFile(s.Mux, []byte(wrapper), 0o700); err != nil {
		t.Fatalf("testenv: %v", err)
	}
	t.Cleanup(func() {
		s.kill()
		os.RemoveAll(dir)
	})
	return s
}

// kill stops the server, if one runs, and waits until its process is gone,
// so that no test leaves a tmux server behind.
func (s *TmuxServer) kill() {
	out, err := s.Cmd("display-message", "-p", "#{pid}").Output()
	if err != nil {
		return // no server
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	s.Cmd("kill-server").Run()
	if err != nil {
		return
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if !alive(pid) {
			return
		}
	}
	syscall.Kill(pid, syscall.SIGKILL)
}

// Cmd returns the command tmux -S Socket args..., for the test to run.
func (s *TmuxServer) Cmd(args ...string) *exec.Cmd {
	cmd := exec.Command(s.tmux, append([]string{"-S", s.Socket}, args...)...)
	cmd.Env = withoutTmux(os.Environ())
	return cmd
}

// Run runs tmux with args and returns its output; a failure fails the test.
func (s *TmuxServer) Run(t testing.TB, args ...string) string {
	t.Helper()
	out, err := s.Cmd(args...).CombinedOutput()
	if err != nil {
		t.Fatalf("testenv: tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// NewSession starts a detached session named name running command (a shell
// command line; empty means a shell).
func (s *TmuxServer) NewSession(t testing.TB, name, command string) {
	t.Helper()
	args := []string{"new-session", "-d", "-s", name, "-x", "120", "-y", "40"}
	if command != "" {
		args = append(args, command)
	}
	s.Run(t, args...)
}

// Sessions returns the names of the server's sessions (none when no server
// runs).
func (s *TmuxServer) Sessions(t testing.TB) []string {
	t.Helper()
	out, err := s.Cmd("list-sessions", "-F", "#{session_name}").Output()
	if err != nil {
		return nil
	}
	var names []string
	for _, line := range strings.Split(string(out), "\n") {
		if line != "" {
			names = append(names, line)
		}
	}
	return names
}

func withoutTmux(env []string) []string {
	kept := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "TMUX=") && !strings.HasPrefix(kv, "TMUX_PANE=") {
			kept = append(kept, kv)
		}
	}
	return kept
}

// shQuote single-quotes a word for sh: coord.ShellQuote, copied, since
// coord's tests import this package.
func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// alive reports whether pid runs. A zombie does not: the server daemonized,
// so its parent is whatever reaps orphans here, which may take its time.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // no /proc (macOS): the signal test is all there is
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(rest, "Z")
}
