package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/internal/claudecode"
	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
	"github.com/omega-monitor/omega-monitor/mirror"
)

// End-to-end tests of /monitor and the MCP server with the real Claude Code
// as the client: `omega-monitor install --claude` prepares Claude Code's
// HOME before it starts, and a scripted fake Messages API plays the model.

// startClaudeInstalled starts the pinned Claude Code, bypassing permission
// prompts, with omega-monitor installed into its HOME for the fleet under
// state.
func startClaudeInstalled(t *testing.T, api *fakeapi.Scripted, state string) *claudecode.Session {
	t.Helper()
	omegaMonitor(t)
	bin := claudecode.Binary(t)
	t.Parallel()
	s := claudecode.Start(t, testenv.Tmux(t), claudecode.Config{
		Binary: bin, API: api.URL, Mode: claudecode.Bypass,
		Env: []string{"OMEGA_MONITOR_HOME=" + state, "CLAUDE_CODE_ENABLE_TODO_TOOLS=1"},
		Prepare: func(home string) error {
			res := installIn(t, home, state, "--claude")
			if res.ExitCode != 0 {
				return fmt.Errorf("install --claude: %s%s", res.Stdout(), res.Stderr())
			}
			return nil
		},
	})
	// Claude Code writes to its HOME until it exits: end it, and wait for
	// that, before the test's directories go.
	pid := s.Status(t).PID
	t.Cleanup(func() {
		s.Tmux.Cmd("kill-session", "-t", "="+s.Name).Run()
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if syscall.Kill(pid, 0) != nil {
				return
			}
		}
		t.Logf("Claude Code (pid %d) still runs 30s after its session ended", pid)
	})
	return s
}

const mcpStatusTool = "mcp__omega-monitor__status"

// TestClaudeCallsTheMCPStatus has the fake model call the omega MCP
// server's status tool; what Claude Code sends back must hold every
// watcher's name and state.
func TestClaudeCallsTheMCPStatus(t *testing.T) {
	state := testFleetHome(t)
	api := fakeapi.NewScripted(t, func(turn fakeapi.Turn) (fakeapi.Reply, bool) {
		last := ""
		if len(turn.Calls) > 0 {
			last = turn.Calls[len(turn.Calls)-1]
		}
		switch {
		case len(turn.Results) > 0 && last == "ToolSearch":
			return fakeapi.Call(mcpStatusTool, map[string]any{}), true
		case len(turn.Results) > 0:
			return fakeapi.Text("The fleet is read."), true
		case strings.Contains(turn.Text, "check the fleet") && turn.Offers(mcpStatusTool):
			return fakeapi.Call(mcpStatusTool, map[string]any{}), true
		case strings.Contains(turn.Text, "check the fleet") && turn.Offers("ToolSearch"):
			return fakeapi.Call("ToolSearch", map[string]any{"query": "select:" + mcpStatusTool, "max_results": 1}), true
		}
		return fakeapi.Reply{}, false
	})
	s := startClaudeInstalled(t, api, state)
	since := time.Now()
	s.Type(t, "please check the fleet")
	s.Stable(t, realTimeout, "idle", since, func(screen string) bool { return strings.Contains(screen, "The fleet is read.") })
	var result *fakeapi.ToolResult
	for _, turn := range api.Turns() {
		if n := len(turn.Calls); n > 0 && turn.Calls[n-1] == mcpStatusTool && len(turn.Results) == 1 {
			result = &turn.Results[0]
		}
	}
	if result == nil || result.IsError {
		t.Fatalf("no tool_result of %s reached the API: %+v", mcpStatusTool, result)
	}
	var got fleetCensus
	if err := json.Unmarshal([]byte(result.Content), &got); err != nil {
		t.Fatalf("the tool_result is not the census: %v\n%s", err, result.Content)
	}
	var states []string
	for _, w := range got.Watchers {
		states = append(states, w.Name+" "+string(w.Liveness)+" "+w.State)
	}
	want := []string{"monitor-box-api live QUESTION", "monitor-old gone WORKING", "monitor-proj live STALLED"}
	if diff := cmp.Diff(want, states); diff != "" {
		t.Errorf("watchers in the tool_result (-want +got):\n%s", diff)
	}
}

// commandBin is where the expanded /monitor command says the binary is.
var commandBin = regexp.MustCompile("omega-monitor is at `([^`]+)`")

// TestClaudeMonitorCommandMirrorsTheFleet types /monitor status into a real
// session. The fake model reads the expanded command as a model would: it
// runs the mirror plan the command names with Bash, then applies each of the
// plan's TaskCreate calls through Claude Code's own TaskCreate tool.
func TestClaudeMonitorCommandMirrorsTheFleet(t *testing.T) {
	state := testFleetHome(t)
	var plan []mirror.Call
	api := fakeapi.NewScripted(t, func(turn fakeapi.Turn) (fakeapi.Reply, bool) {
		last := ""
		if n := len(turn.Calls); n > 0 {
			last = turn.Calls[n-1]
		}
		if m := commandBin.FindStringSubmatch(turn.Text); m != nil && len(turn.Results) == 0 {
			return fakeapi.Call("Bash", map[string]any{
				"command":     m[1] + " mirror-plan --runner claude < /dev/null",
				"description": "Plan the task mirror"}), true
		}
		switch {
		case len(turn.Results) == 0:
			return fakeapi.Reply{}, false
		case last == "Bash":
			for _, line := range strings.Split(turn.Results[0].Content, "\n") {
				var c mirror.Call
				if json.Unmarshal([]byte(line), &c) == nil && c.Call == mirror.TaskCreate {
					plan = append(plan, c)
				}
			}
			if !turn.Offers("TaskCreate") {
				return fakeapi.Call("ToolSearch", map[string]any{"query": "select:TaskCreate,TaskUpdate,TaskList", "max_results": 3}), true
			}
		}
		done := 0
		for _, c := range turn.Calls {
			if c == "TaskCreate" {
				done++
			}
		}
		if done < len(plan) {
			c := plan[done]
			return fakeapi.Call("TaskCreate", map[string]any{"subject": c.Title, "description": c.Description}), true
		}
		return fakeapi.Text("The fleet is mirrored."), true
	})
	s := startClaudeInstalled(t, api, state)
	since := time.Now()
	s.Type(t, "/monitor status")
	s.Stable(t, realTimeout, "idle", since, func(screen string) bool { return strings.Contains(screen, "The fleet is mirrored.") })

	turns := api.Turns()
	installed, err := os.ReadFile(filepath.Join(s.Home, ".claude", "commands", "monitor.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, body, _ := strings.Cut(strings.TrimPrefix(string(installed), "---\n"), "---\n")
	want := strings.TrimSpace(strings.ReplaceAll(body, "$ARGUMENTS", "status"))
	if got := strings.TrimSpace(turns[0].Text); got != want {
		t.Errorf("the first turn's text is not the installed command expanded:\n%s", cmp.Diff(want, got))
	}

	var titles, created []string
	for _, c := range plan {
		titles = append(titles, c.Title)
	}
	for _, turn := range turns {
		if n := len(turn.Calls); n > 0 && turn.Calls[n-1] == "TaskCreate" {
			if len(turn.Results) != 1 || turn.Results[0].IsError {
				t.Errorf("TaskCreate failed: %+v", turn.Results)
				continue
			}
			created = append(created, turn.Results[0].Content)
		}
	}
	wantTitles := []string{"monitor-box-api [needs you] box:api", "monitor-proj [watching] proj"}
	if diff := cmp.Diff(wantTitles, titles); diff != "" {
		t.Errorf("the plan's titles (-want +got):\n%s", diff)
	}
	if len(created) != len(wantTitles) {
		t.Fatalf("Claude Code created %d tasks (%q), want %d", len(created), created, len(wantTitles))
	}
	for i, title := range wantTitles {
		if !strings.Contains(created[i], title) {
			t.Errorf("Claude Code's TaskCreate answered %q, not naming %q", created[i], title)
		}
	}
}
