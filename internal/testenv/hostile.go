package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A HostileHost is a real sshd on 127.0.0.1 (as SSHD starts) that does not
// run what it is asked: every session runs one script of the test's
// (sshd's ForceCommand), which logs the command it was given and answers
// it as the test set, as a host taken over by an attacker would. A
// command the test set no answer for runs as given, so that the rest of
// the watcher's calls (the multiplexer's, the wake listener's) still work.
type HostileHost struct {
	dir string
}

// hostileShell is the script every session of a HostileHost runs. Its
// command is in $SSH_ORIGINAL_COMMAND; the log keeps each one whole,
// followed by a line of one record separator (a command may hold line
// breaks).
const hostileShell = `#!/bin/sh
d=@DIR@
printf '%s\n\036\n' "$SSH_ORIGINAL_COMMAND" >>"$d/commands"
if [ -f "$d/answer" ]; then
	w=$(cat "$d/when")
	case $SSH_ORIGINAL_COMMAND in *"$w"*) exec /bin/sh "$d/answer" ;; esac
fi
exec /bin/sh -c "$SSH_ORIGINAL_COMMAND"
`

// HostileSSHD starts a HostileHost reached as alias through cfg; env is
// as SSHD's. It answers nothing yet: every command runs as given.
func HostileSSHD(t testing.TB, cfg *SSHConfig, alias string, env ...string) *HostileHost {
	t.Helper()
	h := &HostileHost{dir: t.TempDir()}
	shell := filepath.Join(h.dir, "shell")
	if err := os.WriteFile(shell, []byte(strings.Replace(hostileShell, "@DIR@", shQuote(h.dir), 1)), 0o700); err != nil {
		t.Fatalf("testenv: %v", err)
	}
	sshdWith(t, cfg, alias, shell, env)
	return h
}

// Answer makes the host answer, from now on, every command that holds the
// text when with the sh script answer instead of running it; the script
// finds the command it stands for in $SSH_ORIGINAL_COMMAND (and may run
// it, to answer around what it prints). An empty answer runs every
// command as given again.
func (h *HostileHost) Answer(t testing.TB, when, answer string) {
	t.Helper()
	if answer == "" {
		if err := os.Remove(filepath.Join(h.dir, "answer")); err != nil && !os.IsNotExist(err) {
			t.Fatalf("testenv: %v", err)
		}
		return
	}
	if err := os.WriteFile(filepath.Join(h.dir, "when"), []byte(when), 0o600); err != nil {
		t.Fatalf("testenv: %v", err)
	}
	// Renamed into place: a session starting now reads the old answer
	// or the new one, never half of one.
	tmp := filepath.Join(h.dir, "answer.new")
	if err := os.WriteFile(tmp, []byte(answer), 0o600); err != nil {
		t.Fatalf("testenv: %v", err)
	}
	if err := os.Rename(tmp, filepath.Join(h.dir, "answer")); err != nil {
		t.Fatalf("testenv: %v", err)
	}
}

// Commands returns every command the host was given, in order, each as
// ssh passed it (the first is SSHD's check that it lets the user in).
func (h *HostileHost) Commands(t testing.TB) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(h.dir, "commands"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatalf("testenv: %v", err)
	}
	var out []string
	for c := range strings.SplitSeq(string(data), "\n\x1e\n") {
		if c != "" {
			out = append(out, c)
		}
	}
	return out
}
