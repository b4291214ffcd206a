package poll

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/omega-monitor/omega-monitor/internal/capture"
	"github.com/omega-monitor/omega-monitor/probe"
)

// TestAccountOf: the account of a local Claude Code pane is read from the
// .claude.json of its own process's CLAUDE_CONFIG_DIR, so that two agents
// of one machine signed in with two accounts read as two; where the pane's
// process is not the agent's, the watcher's environment says where; a pane
// whose processes are not known, an agent whose description names no
// account file, and a file with no account read as none.
func TestAccountOf(t *testing.T) {
	dir := t.TempDir()
	a, b, home := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "home")
	for folder, id := range map[string]string{a: "aaaa-1", b: "bbbb-2", home: "cccc-3"} {
		if err := os.Mkdir(folder, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(folder, ".claude.json"), []byte(`{"oauthAccount": {"accountUuid": "`+id+`"}}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A process named as Claude Code's is, with the account's folder in
	// its own environment.
	claude := filepath.Join(dir, "claude")
	if err := os.Symlink("/bin/sleep", claude); err != nil {
		t.Fatal(err)
	}
	start := func(configDir string) probe.Process {
		t.Helper()
		cmd := exec.Command(claude, "30")
		cmd.Env = []string{"HOME=" + home, "CLAUDE_CONFIG_DIR=" + configDir}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return probe.Process{PID: cmd.Process.Pid, Comm: "claude", Args: []string{claude, "30"}}
	}
	pane := func(procs ...probe.Process) capture.Capture {
		return capture.Capture{Foreground: probe.Foreground{Known: true, Procs: procs}}
	}
	watcher := []string{"HOME=" + home}
	inA, inB := accountOf(pane(start(a)), nil, "Claude Code", watcher), accountOf(pane(start(b)), nil, "Claude Code", watcher)
	want := map[string]string{
		"a": probe.AccountKey([]byte(`{"oauthAccount": {"accountUuid": "aaaa-1"}}`), []string{"oauthAccount", "accountUuid"}),
		"b": probe.AccountKey([]byte(`{"oauthAccount": {"accountUuid": "bbbb-2"}}`), []string{"oauthAccount", "accountUuid"}),
		"c": probe.AccountKey([]byte(`{"oauthAccount": {"accountUuid": "cccc-3"}}`), []string{"oauthAccount", "accountUuid"}),
	}
	if inA != want["a"] || inB != want["b"] || inA == inB {
		t.Errorf("two panes of two accounts: %q and %q, want %q and %q", inA, inB, want["a"], want["b"])
	}
	shell := probe.Process{PID: os.Getpid(), Comm: "bash", Args: []string{"bash"}}
	if got := accountOf(pane(shell), nil, "Claude Code", watcher); got != want["c"] {
		t.Errorf("a pane without the agent's process: %q, want the watcher's environment's %q", got, want["c"])
	}
	for name, got := range map[string]string{
		"processes not known": accountOf(capture.Capture{}, nil, "Claude Code", watcher),
		"no account file":     accountOf(pane(shell), nil, "Pi", watcher),
		"no HOME":             accountOf(pane(shell), nil, "Claude Code", nil),
		"a file without one":  accountOf(pane(shell), nil, "Claude Code", []string{"HOME=" + dir}),
	} {
		if got != "" {
			t.Errorf("%s: %q, want none", name, got)
		}
	}
	if localAccount(capture.Capture{}, nil, "box:agent") != nil {
		t.Error("an ssh host's pane read for an account here")
	}
}
