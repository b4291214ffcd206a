package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/icmd"

	"github.com/omega-monitor/omega-monitor/internal/claudecode"
	"github.com/omega-monitor/omega-monitor/internal/companion"
	"github.com/omega-monitor/omega-monitor/internal/setup"
	"github.com/omega-monitor/omega-monitor/internal/testfleet"
)

// mcpServerName is the name install registers the MCP server under.
const mcpServerName = setup.MCPServerName

// installIn runs the built binary's install with HOME set to home.
func installIn(t *testing.T, home, state string, args ...string) *icmd.Result {
	t.Helper()
	cmd := icmd.Command(omegaMonitor(t), append([]string{"install"}, args...)...)
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "OMEGA_MONITOR_HOME=" + state}
	return icmd.RunCmd(cmd)
}

func readConfig(t *testing.T, home string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(home, ".claude.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestInstallClaudeIsIdempotentAndReversible(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	state := filepath.Join(home, "state")
	config := filepath.Join(home, ".claude.json")
	mine := `{"hasCompletedOnboarding":true,"mcpServers":{"other":{"type":"stdio","command":"other","args":[]}},"projects":{"/x":{"a":1}}}`
	if err := os.WriteFile(config, []byte(mine), 0o600); err != nil {
		t.Fatal(err)
	}

	res := installIn(t, home, state, "--claude")
	res.Assert(t, icmd.Success)
	command := filepath.Join(home, ".claude", "commands", "monitor.md")
	if !strings.Contains(res.Stdout(), "alert funnel: installed") || !strings.Contains(res.Stdout(), "claude code: wrote "+command) || !strings.Contains(res.Stdout(), "registered the MCP server omega-monitor") {
		t.Errorf("first install said:\n%s", res.Stdout())
	}
	text, err := os.ReadFile(command)
	if err != nil {
		t.Fatal(err)
	}
	bin, _ := filepath.EvalSymlinks(omegaMonitor(t))
	if !strings.Contains(string(text), bin+" status --once") || strings.Contains(string(text), "@OMEGA_MONITOR@") {
		t.Errorf("the command file does not name the binary %s:\n%s", bin, text)
	}
	c := readConfig(t, home)
	want := map[string]any{
		"omega-monitor": map[string]any{"type": "stdio", "command": bin, "args": []any{"mcp"}, "env": map[string]any{"OMEGA_MONITOR_HOME": state}},
		"other":         map[string]any{"type": "stdio", "command": "other", "args": []any{}},
	}
	if diff := cmp.Diff(want, c["mcpServers"]); diff != "" {
		t.Errorf("mcpServers (-want +got):\n%s", diff)
	}
	if c["hasCompletedOnboarding"] != true || c["projects"] == nil {
		t.Errorf("the user's own keys were lost: %v", c)
	}
	if fi, _ := os.Stat(config); fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600", config, fi.Mode().Perm())
	}

	before, _ := os.ReadFile(config)
	res = installIn(t, home, state, "--claude")
	res.Assert(t, icmd.Expected{Out: "claude code: up to date"})
	if after, _ := os.ReadFile(config); string(after) != string(before) {
		t.Error("a second install rewrote the configuration")
	}

	installIn(t, home, state, "--claude", "--uninstall").Assert(t, icmd.Success)
	if _, err := os.Stat(command); !os.IsNotExist(err) {
		t.Errorf("the command file is still there: %v", err)
	}
	c = readConfig(t, home)
	if diff := cmp.Diff(map[string]any{"other": want["other"]}, c["mcpServers"]); diff != "" {
		t.Errorf("mcpServers after uninstall (-want +got):\n%s", diff)
	}
	installIn(t, home, state, "--uninstall", "--claude").Assert(t, icmd.Expected{Out: "claude code: up to date"})
	if _, err := os.Stat(filepath.Join(home, ".omega", "bin", "omega-alert-send.sh")); err != nil {
		t.Errorf("--claude --uninstall took the alert funnel too: %v", err)
	}
}

func TestInstallClaudeLeavesWhatIsNotOurs(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	state := filepath.Join(home, "state")
	command := filepath.Join(home, ".claude", "commands", "monitor.md")
	if err := os.MkdirAll(filepath.Dir(command), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(command, []byte("my own /monitor\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	installIn(t, home, state, "--claude").Assert(t, icmd.Expected{ExitCode: 1, Err: "is not ours (no install marker); move it away first"})
	installIn(t, home, state, "--claude", "--uninstall").Assert(t, icmd.Expected{ExitCode: 1, Err: "is not ours (no install marker); left in place"})
	if b, _ := os.ReadFile(command); string(b) != "my own /monitor\n" {
		t.Errorf("the user's command file changed: %q", b)
	}
	os.Remove(command)

	config := filepath.Join(home, ".claude.json")
	for _, bad := range []string{`[1,2]`, `{"mcpServers":[1]}`, `{"mcpServers":{"omega-monitor":{"command":"/usr/bin/other","args":["serve"]}}}`} {
		if err := os.WriteFile(config, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		res := installIn(t, home, state, "--claude", "--uninstall")
		if res.ExitCode != 1 || !strings.Contains(res.Stderr(), "omega-monitor install: claude code: ") {
			t.Errorf("uninstall over %s: exit %d, %s", bad, res.ExitCode, res.Stderr())
		}
		if b, _ := os.ReadFile(config); string(b) != bad {
			t.Errorf("uninstall changed %s into %s", bad, b)
		}
	}
	installIn(t, home, state, "--claude", "extra").Assert(t, icmd.Expected{ExitCode: 2, Err: `unexpected argument "extra"`})
	installIn(t, home, state, "--nope").Assert(t, icmd.Expected{ExitCode: 2})
	installIn(t, home, state, "--uninstall").Assert(t, icmd.Expected{ExitCode: 2, Err: "--uninstall goes with --claude, --codex or --hooks"})
}

// TestInstallClaudeWithoutTheMCPServer checks that install --claude with no
// omega-monitor-mcp beside the binary or on PATH says so and installs
// nothing at all, rather than register a server Claude Code cannot start;
// install alone, and --claude --uninstall, need no server.
func TestInstallClaudeWithoutTheMCPServer(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	state := filepath.Join(home, "state")
	lone := loneBinary(t)
	install := func(args ...string) *icmd.Result {
		cmd := icmd.Command(lone, append([]string{"install"}, args...)...)
		cmd.Env = []string{"HOME=" + home, "PATH=" + t.TempDir(), "OMEGA_MONITOR_HOME=" + state}
		return icmd.RunCmd(cmd)
	}
	res := install("--claude")
	want := "omega-monitor install: claude code: the MCP server omega-monitor-mcp is not installed: not at " +
		filepath.Join(filepath.Dir(lone), companion.MCPServer) + " nor on PATH; install omega-monitor's binaries from a checkout with " + companion.InstallAll + "\n"
	res.Assert(t, icmd.Expected{ExitCode: 1})
	if res.Stderr() != want || res.Stdout() != "" {
		t.Errorf("install --claude: stdout %q, stderr %q; want stderr %q", res.Stdout(), res.Stderr(), want)
	}
	if entries, _ := os.ReadDir(home); len(entries) != 0 {
		t.Errorf("install --claude without its server left %v in the home", entries)
	}
	install().Assert(t, icmd.Success)
	install("--claude", "--uninstall").Assert(t, icmd.Expected{Out: "claude code: up to date"})
}

// claudeIn runs the real Claude Code's CLI with HOME set to home.
func claudeIn(t *testing.T, claude, home string, args ...string) string {
	t.Helper()
	cmd := exec.Command(claude, args...)
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "TMPDIR=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("claude %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestInstallClaudeSeenByClaudeCode checks the registration with the real
// Claude Code: it is the entry `claude mcp add --scope user` writes, and
// `claude mcp list` starts the server, which answers.
func TestInstallClaudeSeenByClaudeCode(t *testing.T) {
	t.Parallel()
	claude := claudecode.Binary(t)
	home := t.TempDir()
	state := testfleet.Home(t)
	bin, _ := filepath.EvalSymlinks(omegaMonitor(t))

	byHand := t.TempDir()
	claudeIn(t, claude, byHand, "mcp", "add", "--scope", "user", "omega-monitor", "-e", "OMEGA_MONITOR_HOME="+state, "--", bin, "mcp")
	installIn(t, home, state, "--claude").Assert(t, icmd.Success)
	if diff := cmp.Diff(readConfig(t, byHand)["mcpServers"], readConfig(t, home)["mcpServers"]); diff != "" {
		t.Errorf("install --claude and claude mcp add differ (-by hand +installed):\n%s", diff)
	}
	res := installIn(t, byHand, state, "--claude")
	if res.ExitCode != 0 || strings.Contains(res.Stdout(), "registered") {
		t.Errorf("install --claude over claude mcp add's entry: exit %d, %s%s", res.ExitCode, res.Stdout(), res.Stderr())
	}

	out := claudeIn(t, claude, home, "mcp", "list")
	if !strings.Contains(string(out), "omega-monitor: "+bin+" mcp") || !strings.Contains(string(out), "Connected") {
		t.Errorf("claude mcp list does not show the server connected:\n%s", out)
	}
}
