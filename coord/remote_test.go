package coord

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// awkwardWords are arguments that a careless remote command line would
// split, expand, comment out or end early.
var awkwardWords = []string{
	"plain",
	"two words",
	"a; touch pwned",
	"$HOME",
	"${OMEGA_MONITOR_MUX}",
	"$(id)",
	"`id`",
	"'single'",
	`"double"`,
	`back\slash`,
	"#S",
	"#{session_name}",
	"trailing ;",
	"*",
	"~",
	"line\nbreak",
	"",
	"-n",
}

// unquote reads back a word made by ShellQuote, the way a POSIX shell does.
func unquote(s string) (string, bool) {
	var b strings.Builder
	for s != "" {
		switch {
		case strings.HasPrefix(s, `\'`):
			b.WriteByte('\'')
			s = s[2:]
		case s[0] == '\'':
			end := strings.IndexByte(s[1:], '\'')
			if end < 0 {
				return "", false
			}
			b.WriteString(s[1 : 1+end])
			s = s[2+end:]
		default:
			return "", false
		}
	}
	return b.String(), true
}

func FuzzCoordShellQuote(f *testing.F) {
	for _, w := range awkwardWords {
		f.Add(w)
	}
	f.Fuzz(func(t *testing.T, word string) {
		q := ShellQuote(word)
		got, ok := unquote(q)
		if !ok || got != word {
			t.Fatalf("ShellQuote(%q) = %s reads back as %q (ok %v)", word, q, got, ok)
		}
	})
}

func TestCoordShellJoinThroughSh(t *testing.T) {
	sh := testenv.Need(t, "sh")[0]
	script := "printf '%s\\0' " + ShellJoin(awkwardWords...)
	out, err := exec.Command(sh, "-c", script).Output()
	if err != nil {
		t.Fatalf("sh -c %s: %v", script, err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if diff := cmp.Diff(awkwardWords, got); diff != "" {
		t.Errorf("words through sh (-want +got):\n%s", diff)
	}
}

func TestSSHArgs(t *testing.T) {
	got := SSH{Config: "/cfg", Timeout: 8 * time.Second}.Args("box", "CMD")
	want := []string{
		"-n", "-o", "BatchMode=yes", "-o", "ConnectTimeout=4",
		"-o", "ServerAliveInterval=2", "-o", "ServerAliveCountMax=2",
		"-a", "-x", "-o", "ForwardAgent=no", "-o", "ForwardX11=no", "-o", "ForwardX11Trusted=no",
		"-o", "ClearAllForwardings=yes", "-o", "Tunnel=no", "-o", "PermitLocalCommand=no",
		"-F", "/cfg", "--", "box", "CMD",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Args (-want +got):\n%s", diff)
	}
	if got := (SSH{Timeout: time.Second}).Args("box", "CMD"); strings.Contains(strings.Join(got, " "), "-F") || got[4] != "ConnectTimeout=1" {
		t.Errorf("Args with no config and a 1s clock = %q", got)
	}
	// Through a watcher's master, never as one.
	got = SSH{Timeout: time.Second, Control: "/st/ssh-control"}.Args("box", "CMD")
	if diff := cmp.Diff([]string{"-o", "ControlMaster=no", "-o", "ControlPath=/st/ssh-control", "--", "box", "CMD"}, got[len(got)-7:]); diff != "" {
		t.Errorf("Args with Control (-want +got):\n%s", diff)
	}
	m := Mux{SSH: SSH{Timeout: time.Second}}
	if held, shut := m.RemoteHeld(t.Context(), "box", "CMD").Args, m.Remote(t.Context(), "box", "CMD").Args; slices.Contains(held, "-n") ||
		!slices.Equal(held[1:], shut[2:]) || shut[1] != "-n" {
		t.Errorf("RemoteHeld = %q, want Remote's %q without -n", held, shut)
	}
}

// TestSSHForwardsNothing: a host alias whose config forwards the agent,
// a port and X11 and runs a LocalCommand gets none of them on the
// watcher's connection, through a real sshd: the remote side sees no
// agent socket, and the local command leaves no mark.
func TestSSHForwardsNothing(t *testing.T) {
	paths := testenv.Need(t, "ssh-agent")
	cfg := testenv.NewSSHConfig(t)
	testenv.SSHD(t, cfg, "testbox", "OMEGA_MONITOR_MUX="+argvPrinter(t))
	marks := t.TempDir()
	// The forwarding options come before the alias's own block: ssh
	// takes the first value it reads.
	old, err := os.ReadFile(cfg.Path)
	if err != nil {
		t.Fatal(err)
	}
	hostile := "Host testbox\n    ForwardAgent yes\n    ForwardX11 yes\n    RemoteForward 127.0.0.1:0 127.0.0.1:22\n" +
		"    PermitLocalCommand yes\n    LocalCommand touch " + marks + "/local-command-ran\n"
	if err := os.WriteFile(cfg.Path, append([]byte(hostile), old...), 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "agent.sock")
	agent := exec.Command(paths[0], "-D", "-a", sock)
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { agent.Process.Kill(); agent.Wait() })
	for i := 0; i < 100; i++ {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Setenv("SSH_AUTH_SOCK", sock)
	// The control: plain ssh with this config does forward the agent.
	out, err := exec.Command("ssh", "-F", cfg.Path, "-o", "BatchMode=yes", "-n", "testbox", "echo agent=$SSH_AUTH_SOCK").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "agent=/") {
		t.Fatalf("the control did not forward the agent (the test proves nothing): %v\n%s", err, out)
	}
	os.Remove(filepath.Join(marks, "local-command-ran"))

	s := SSH{Config: cfg.Path, Timeout: 10 * time.Second}
	out, err = exec.Command("ssh", s.Args("testbox", "echo agent=$SSH_AUTH_SOCK display=$DISPLAY")...).CombinedOutput()
	if err != nil {
		t.Fatalf("ssh: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "agent= display=" {
		t.Errorf("the remote side saw %q, want no agent and no display", got)
	}
	if _, err := os.Stat(filepath.Join(marks, "local-command-ran")); err == nil {
		t.Error("the LocalCommand ran")
	}
}

// argvPrinter writes a script that prints each of its arguments followed by
// a NUL, standing in for the remote multiplexer.
func argvPrinter(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "argv")
	script := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\0' \"$a\"; done\n"
	if err := os.WriteFile(path, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSSHRemoteCommandWords runs RemoteCommand through a real sshd and the
// remote login shell: every argument must arrive as one word, unchanged.
func TestSSHRemoteCommandWords(t *testing.T) {
	cfg := testenv.NewSSHConfig(t)
	testenv.SSHD(t, cfg, "testbox", "OMEGA_MONITOR_MUX="+argvPrinter(t))
	m := Mux{SSH: SSH{Config: cfg.Path, Timeout: 10 * time.Second}}
	out, err := m.Run(context.Background(), "testbox", awkwardWords...)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if diff := cmp.Diff(awkwardWords, got); diff != "" {
		t.Errorf("arguments as the remote multiplexer saw them (-want +got):\n%s", diff)
	}
}

// TestSSHRemoteTmux drives a real tmux through a real sshd: a '#S' format
// comes back expanded by tmux (so the remote shell did not read it as a
// comment), and text with ';', '$' and quotes is typed literally.
func TestSSHRemoteTmux(t *testing.T) {
	tmux := testenv.Tmux(t)
	tmux.NewSession(t, "agent", "cat")
	cfg := testenv.NewSSHConfig(t)
	testenv.SSHD(t, cfg, "testbox", "OMEGA_MONITOR_MUX="+tmux.Mux)
	m := Mux{SSH: SSH{Config: cfg.Path, Timeout: 10 * time.Second}}
	ctx := context.Background()

	out, err := m.Run(ctx, "testbox", "display-message", "-p", "-t", Exact("agent"), "#S|#{session_name}")
	if err != nil {
		t.Fatalf("display-message: %v", err)
	}
	if got := strings.TrimSpace(string(out)); got != "agent|agent" {
		t.Errorf("remote #S = %q, want %q", got, "agent|agent")
	}

	text := `it's "x"; echo $HOME #S`
	if _, err := m.Run(ctx, "testbox", "send-keys", "-t", Exact("agent"), "-l", "--", text); err != nil {
		t.Fatalf("send-keys: %v", err)
	}
	var pane string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		pane = tmux.Run(t, "capture-pane", "-p", "-t", Exact("agent"))
		if strings.Contains(pane, text) {
			return
		}
	}
	t.Errorf("pane does not show %q literally:\n%s", text, pane)
}
