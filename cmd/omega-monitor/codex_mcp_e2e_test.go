package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/internal/board"
	"github.com/omega-monitor/omega-monitor/internal/codex"
	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
	"github.com/omega-monitor/omega-monitor/internal/mirror"
	"github.com/omega-monitor/omega-monitor/internal/testfleet"
)

// Codex's names of the tools the test's models call: an MCP server's tools
// and the sub-agents' are offered in namespaces.
const (
	codexMonitorAgentTool = "mcp__omega_monitor__codex_monitor_agent"
	codexStatusTool       = "mcp__omega_monitor__status"
	codexSpawn            = "multi_agent_v1__spawn_agent"
	codexWait             = "multi_agent_v1__wait_agent"
)

// monitorAgentPlay plays two models at once on one fake Responses API: the
// Codex session that launches the monitor agent, and the monitor agent it
// spawns, told apart by the prompt each conversation started with.
type monitorAgentPlay struct {
	mu       sync.Mutex
	state    string // the state home, whose watchers end after the first read
	prompt   string // what codex_monitor_agent answered
	notice   string
	statuses []board.Fleet // what each status call of the monitor agent read
	agent    []string      // the tools the monitor agent called, in order
	failed   string
}

func (p *monitorAgentPlay) fail(format string, args ...any) (fakeapi.Reply, bool) {
	p.failed = fmt.Sprintf(format, args...)
	return fakeapi.Text("Something went wrong."), true
}

func (p *monitorAgentPlay) reply(turn fakeapi.Turn) (fakeapi.Reply, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	last, result, hasResult := codexCall(turn)
	if hasResult && result.IsError {
		return p.fail("%s failed: %s", last, result.Content)
	}
	if p.prompt != "" && turn.First == p.prompt {
		return p.monitorAgent(turn, last, result, hasResult)
	}
	switch {
	case !hasResult && strings.Contains(turn.Text, "launch the fleet's monitor agent"):
		if !turn.Offers("mcp__omega_monitor") || !turn.Offers("multi_agent_v1") {
			return p.fail("the tools offered lack the MCP server's or the sub-agents': %v", turn.Tools)
		}
		return fakeapi.Call(codexMonitorAgentTool, map[string]any{"mode": "fleet"}), true
	case last == codexMonitorAgentTool:
		var out struct {
			Prompt        string `json:"prompt"`
			NoticeSpawned string `json:"notice_spawned"`
		}
		if err := json.Unmarshal([]byte(result.Content), &out); err != nil || out.Prompt == "" {
			return p.fail("codex_monitor_agent answered %q: %v", result.Content, err)
		}
		p.prompt, p.notice = out.Prompt, out.NoticeSpawned
		return fakeapi.Call(codexSpawn, map[string]any{"message": out.Prompt}), true
	case last == codexSpawn:
		var out struct {
			AgentID string `json:"agent_id"`
		}
		if err := json.Unmarshal([]byte(result.Content), &out); err != nil || out.AgentID == "" {
			return p.fail("spawn_agent answered %q: %v", result.Content, err)
		}
		return fakeapi.Call(codexWait, map[string]any{"targets": []string{out.AgentID}, "timeout_ms": 120000}), true
	case last == codexWait:
		return fakeapi.Text(p.notice), true
	}
	return fakeapi.Reply{}, false
}

// monitorAgent follows the prompt by the letter, but for the wait between
// reads: status; a live watcher means another read (the test ends the
// watchers in between); none live or quiet, and not degraded, ends it.
func (p *monitorAgentPlay) monitorAgent(turn fakeapi.Turn, last string, result fakeapi.ToolResult, hasResult bool) (fakeapi.Reply, bool) {
	if !hasResult {
		p.agent = append(p.agent, codexStatusTool)
		return fakeapi.Call(codexStatusTool, map[string]any{}), true
	}
	if last != codexStatusTool {
		return p.fail("the monitor agent's last call was %s", last)
	}
	var f board.Fleet
	if err := json.Unmarshal([]byte(result.Content), &f); err != nil {
		return p.fail("status answered %q: %v", result.Content, err)
	}
	p.statuses = append(p.statuses, f)
	live := 0
	for _, w := range f.Watchers {
		if mirror.Liveness(w.Liveness).Observable() {
			live++
		}
	}
	if live == 0 && !f.Degraded {
		return fakeapi.Text("No watcher is live or quiet: the monitor agent ends."), true
	}
	if len(p.statuses) > 1 {
		return p.fail("the watchers still run after they were ended: %+v", f)
	}
	// Both watchers' loops die before the next read.
	for _, name := range []string{"monitor-api", "monitor-web"} {
		loop := filepath.Join(p.state, name, "loop.json")
		if err := os.WriteFile(loop, []byte(`{"pid":2147483000,"start_token":"1","interval_s":60}`), 0o600); err != nil {
			return p.fail("%v", err)
		}
	}
	p.agent = append(p.agent, codexStatusTool)
	return fakeapi.Call(codexStatusTool, map[string]any{}), true
}

// TestCodexLaunchesTheMonitorAgent: the real Codex, with omega-monitor's
// MCP server, is asked to launch the fleet's monitor agent. Its model calls
// codex_monitor_agent, spawns one sub-agent through Codex's own
// spawn_agent with the prompt it got, waits for it, and tells the user the
// seed's line. The sub-agent starts from exactly the canonical prompt,
// calls status and nothing else, and ends once no watcher runs.
func TestCodexLaunchesTheMonitorAgent(t *testing.T) {
	bin := codex.Pin.Binary(t)
	om := omegaMonitor(t)
	t.Parallel()
	state := testfleet.Write(t, time.Now(),
		testfleet.Watcher{Name: "monitor-api", Target: "api", State: "WORKING", Work: "3", Progress: "41", Limit: 5},
		testfleet.Watcher{Name: "monitor-web", Target: "web", State: "QUESTION", Work: "1", Progress: "2", Limit: 5},
	)
	play := &monitorAgentPlay{state: state}
	api := fakeapi.NewScriptedResponses(t, play.reply)
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".codex"), 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "exec", "--skip-git-repo-check", "--ephemeral", "--color", "never", "--sandbox", "read-only",
		"-c", "model=gpt-fake", "-c", "model_provider=fake",
		"-c", `model_providers.fake={name="Fake",base_url="`+api.URL+`/v1",wire_api="responses",env_key="OPENAI_API_KEY",supports_websockets=false,request_max_retries=1,stream_max_retries=1}`,
		"-c", `mcp_servers.omega-monitor={command="`+om+`",args=["mcp"],env={OMEGA_MONITOR_HOME="`+state+`"}}`,
		"--", "launch the fleet's monitor agent")
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"HOME=" + home, "CODEX_HOME=" + filepath.Join(home, ".codex"), "PATH=" + os.Getenv("PATH"),
		"LANG=C.UTF-8", "OPENAI_API_KEY=" + codex.APIKey}
	out, err := runFor(cmd, realTimeout)
	play.mu.Lock()
	defer play.mu.Unlock()
	if err != nil || play.failed != "" {
		t.Fatalf("codex exec: %v; %s\n%s", err, play.failed, out)
	}

	want, _ := mirror.MonitorAgentPrompt(mirror.ModeFleet, "")
	if play.prompt != want {
		t.Errorf("the prompt codex_monitor_agent gave Codex (-want +got):\n%s", cmp.Diff(want, play.prompt))
	}
	var agentTurns, launcherCalls []string
	for _, turn := range api.Turns() {
		if turn.First == want {
			agentTurns = append(agentTurns, turn.Text)
		} else {
			launcherCalls = turn.Calls
		}
	}
	if len(agentTurns) == 0 {
		t.Fatalf("no turn of a sub-agent started from the prompt: spawn_agent did not carry it\n%s", out)
	}
	if diff := cmp.Diff([]string{codexStatusTool, codexStatusTool}, play.agent); diff != "" {
		t.Errorf("the monitor agent's calls (-want +got):\n%s", diff)
	}
	// What Codex's own records say the sub-agent called: the calls of its
	// last turn's conversation.
	for _, turn := range api.Turns() {
		if turn.First == want {
			for _, c := range turn.Calls {
				if c != codexStatusTool {
					t.Errorf("the monitor agent called %s", c)
				}
			}
		}
	}
	if diff := cmp.Diff([]string{codexMonitorAgentTool, codexSpawn, codexWait}, launcherCalls); diff != "" {
		t.Errorf("the launching session's calls (-want +got):\n%s", diff)
	}
	lines := make([][]string, len(play.statuses))
	for i, f := range play.statuses {
		lines[i] = testfleet.Lines(f)
	}
	wantLines := [][]string{
		{"monitor-api api live WORKING work=3 progress=41 nudges 0/5", "monitor-web web live QUESTION work=1 progress=2 nudges 0/5"},
		{"monitor-api api stale WORKING work=3 progress=41 nudges 0/5", "monitor-web web stale QUESTION work=1 progress=2 nudges 0/5"},
	}
	if diff := cmp.Diff(wantLines, lines); diff != "" {
		t.Errorf("what the monitor agent read (-want +got):\n%s", diff)
	}
	if !strings.Contains(out, mirror.NoticeSpawned) {
		t.Errorf("Codex did not tell the user the spawned notice %q:\n%s", mirror.NoticeSpawned, out)
	}
	t.Logf("codex exec:\n%s", out)
}

// codexCall is a turn's last tool call and its result, as the model hears
// it: Codex hands the model a tool's output after its wall time, which is
// taken off.
func codexCall(turn fakeapi.Turn) (last string, result fakeapi.ToolResult, hasResult bool) {
	if n := len(turn.Calls); n > 0 {
		last = turn.Calls[n-1]
	}
	result, hasResult = turn.Result()
	if _, after, ok := strings.Cut(result.Content, "\nOutput:\n"); ok && strings.HasPrefix(result.Content, "Wall time: ") {
		result.Content = after
	}
	return last, result, hasResult
}
