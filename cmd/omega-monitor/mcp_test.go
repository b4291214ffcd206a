package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"gotest.tools/v3/icmd"

	"github.com/omega-monitor/omega-monitor/internal/board"
	"github.com/omega-monitor/omega-monitor/internal/companion"
	"github.com/omega-monitor/omega-monitor/internal/testfleet"
)

// TestMCPOverStdio runs omega-monitor mcp as a client would: a subprocess
// spoken to on its stdin and stdout, the server it runs found beside it.
func TestMCPOverStdio(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(omegaMonitor(t), "mcp")
	cmd.Env = os.Environ()
	statusOverStdio(t, cmd)
}

// statusOverStdio connects to the server cmd starts, with the fixed fleet's
// home added to its environment, and checks what its status tool answers.
func statusOverStdio(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	cmd.Env = append(cmd.Env, "OMEGA_MONITOR_HOME="+testfleet.Home(t))
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().ServerInfo.Name; got != mcpServerName {
		t.Errorf("server name %q, registered as %q", got, mcpServerName)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "status"})
	if err != nil {
		t.Fatal(err)
	}
	var out string
	if len(res.Content) == 1 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			out = tc.Text
		}
	}
	var got board.Fleet
	if err := json.Unmarshal([]byte(out), &got); res.IsError || err != nil {
		t.Fatalf("status over stdio = %s (%v), want the board's census", out, err)
	}
	if diff := cmp.Diff(testfleet.HomeLines, testfleet.Lines(got)); diff != "" || got.Fleet.Running != 2 {
		t.Errorf("status over stdio: %d running, watchers (-want +got):\n%s", got.Fleet.Running, diff)
	}
}

// loneBinary is the built omega-monitor in a directory of its own, with no
// MCP server beside it: a hard link where it can be, so that no file is
// written and run at once (a parallel test's fork holding the written file
// open makes the run fail with "text file busy"), else a copy.
func loneBinary(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "omega-monitor")
	if os.Link(omegaMonitor(t), path) == nil {
		return path
	}
	b, err := os.ReadFile(omegaMonitor(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestMCPWithoutItsServer checks that omega-monitor mcp with no
// omega-monitor-mcp beside it or on PATH says so in one line, naming where
// it looked and how to install them, and exits 1; --help too, since the
// help is the server's. A symlink to the binary is resolved: the server is
// looked for beside the binary, not beside the link.
func TestMCPWithoutItsServer(t *testing.T) {
	t.Parallel()
	lone := loneBinary(t)
	link := filepath.Join(t.TempDir(), "omega-monitor")
	if err := os.Symlink(lone, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(filepath.Dir(omegaMonitor(t)), companion.MCPServer), filepath.Join(filepath.Dir(link), companion.MCPServer)); err != nil {
		t.Fatal(err)
	}
	want := "omega-monitor: mcp: the MCP server omega-monitor-mcp is not installed: not at " +
		filepath.Join(filepath.Dir(lone), companion.MCPServer) + " nor on PATH; install omega-monitor's binaries from a checkout with " +
		"CGO_ENABLED=0 go install -trimpath -ldflags='-s -w' ./cmd/...\n"
	for _, bin := range []string{lone, link} {
		cmd := icmd.Command(bin, "mcp")
		cmd.Env = []string{"PATH=" + t.TempDir(), "HOME=" + t.TempDir()}
		res := icmd.RunCmd(cmd)
		res.Assert(t, icmd.Expected{ExitCode: 1})
		if res.Stderr() != want || res.Stdout() != "" {
			t.Errorf("%s mcp: stdout %q, stderr %q; want stderr %q", bin, res.Stdout(), res.Stderr(), want)
		}
		// Its help needs no server: it is this binary's own.
		cmd = icmd.Command(bin, "mcp", "--help")
		cmd.Env = []string{"PATH=" + t.TempDir(), "HOME=" + t.TempDir()}
		icmd.RunCmd(cmd).Assert(t, icmd.Expected{ExitCode: 0, Out: "usage: omega-monitor mcp"})
	}
}

// TestMCPServerOnPath checks that omega-monitor mcp with no server beside
// it runs the one on PATH, arguments and environment passed through.
func TestMCPServerOnPath(t *testing.T) {
	t.Parallel()
	cmd := icmd.Command(loneBinary(t), "mcp", "--help")
	cmd.Env = []string{"PATH=" + filepath.Dir(omegaMonitor(t))}
	res := icmd.RunCmd(cmd)
	res.Assert(t, icmd.Expected{Out: "usage: omega-monitor mcp\n"})

	served := exec.Command(loneBinary(t), "mcp")
	served.Env = []string{"PATH=" + filepath.Dir(omegaMonitor(t))}
	served.Stderr = io.Discard
	statusOverStdio(t, served)
}
