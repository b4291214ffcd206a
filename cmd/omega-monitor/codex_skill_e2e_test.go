package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/icmd"

	"github.com/omega-monitor/omega-monitor/internal/board"
	"github.com/omega-monitor/omega-monitor/internal/codex"
	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
	"github.com/omega-monitor/omega-monitor/internal/mirror"
	"github.com/omega-monitor/omega-monitor/internal/setup"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
	"github.com/omega-monitor/omega-monitor/internal/testfleet"
)

// installCodexIn runs omega-monitor install --codex (and args) for a Codex
// whose home is codexHome, named by $CODEX_HOME.
func installCodexIn(t *testing.T, home, codexHome, state string, args ...string) *icmd.Result {
	t.Helper()
	cmd := icmd.Command(omegaMonitor(t), append([]string{"install", "--codex"}, args...)...)
	// The pinned Codex on PATH: install has it read the file it wrote.
	path := filepath.Dir(codex.Pin.Binary(t)) + string(os.PathListSeparator) + os.Getenv("PATH")
	cmd.Env = []string{"HOME=" + home, "CODEX_HOME=" + codexHome, "PATH=" + path, "OMEGA_MONITOR_HOME=" + state}
	return icmd.RunCmd(cmd)
}

// skillPlay plays two models on one fake Responses API: the Codex session
// where the user typed $monitor, and the monitor agent it spawns, told
// apart by the prompt each conversation started with.
type skillPlay struct {
	mu       sync.Mutex
	state    string
	prompt   string // the monitor agent's prompt, as the skill gave it
	skill    bool   // the launcher's turn held the skill's text
	tools    []string
	agent    []string // the tools the monitor agent called
	statuses []board.Fleet
	report   string // the monitor agent's last report
	failed   string
}

func (p *skillPlay) fail(format string, args ...any) (fakeapi.Reply, bool) {
	p.failed = fmt.Sprintf(format, args...)
	return fakeapi.Text("Something went wrong."), true
}

// skillPrompt is the monitor agent's prompt the skill's text carries: what
// its fenced block holds.
func skillPrompt(texts []string) (string, bool) {
	for _, text := range texts {
		if !strings.Contains(text, "omega-monitor install --codex") {
			continue
		}
		_, rest, ok := strings.Cut(text, "~~~text\n")
		prompt, _, ok2 := strings.Cut(rest, "\n~~~")
		return prompt, ok && ok2
	}
	return "", false
}

func (p *skillPlay) reply(turn fakeapi.Turn) (fakeapi.Reply, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	last, result, hasResult := codexCall(turn)
	if hasResult && result.IsError {
		return p.fail("%s failed: %s", last, result.Content)
	}
	if p.prompt != "" && turn.First == p.prompt {
		return p.monitorAgent(last, result, hasResult)
	}
	switch {
	case !hasResult && last == "":
		prompt, ok := skillPrompt(turn.Texts)
		if !ok {
			return p.fail("the turn after $monitor does not hold the skill's text: %q", turn.Texts)
		}
		p.skill, p.prompt, p.tools = true, prompt, turn.Tools
		if !turn.Offers(codexStatusTool) || !turn.Offers(codexSpawn) {
			return p.fail("the tools offered lack the MCP server's or the sub-agents': %v", turn.Tools)
		}
		return fakeapi.Call(codexSpawn, map[string]any{"message": prompt}), true
	case last == codexSpawn:
		var out struct {
			AgentID string `json:"agent_id"`
		}
		if err := json.Unmarshal([]byte(result.Content), &out); err != nil || out.AgentID == "" {
			return p.fail("spawn_agent answered %q: %v", result.Content, err)
		}
		return fakeapi.Call(codexWait, map[string]any{"targets": []string{out.AgentID}, "timeout_ms": 120000}), true
	case last == codexWait:
		if p.report == "" {
			return p.fail("wait_agent came back before the monitor agent reported: %q", result.Content)
		}
		return fakeapi.Text(mirror.NoticeSpawned + "\nThe monitor agent reported: " + p.report), true
	}
	return fakeapi.Reply{}, false
}

// monitorAgent follows the prompt: status, a report; the watchers end
// before the next read, whose report is the last.
func (p *skillPlay) monitorAgent(last string, result fakeapi.ToolResult, hasResult bool) (fakeapi.Reply, bool) {
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
	if len(p.statuses) == 1 {
		for _, name := range []string{"monitor-api", "monitor-web"} {
			loop := filepath.Join(p.state, name, "loop.json")
			if err := os.WriteFile(loop, []byte(`{"pid":2147483000,"start_token":"1","interval_s":60}`), 0o600); err != nil {
				return p.fail("%v", err)
			}
		}
		p.agent = append(p.agent, codexStatusTool)
		return fakeapi.Call(codexStatusTool, map[string]any{}), true
	}
	var needs []string
	for _, w := range p.statuses[0].Watchers {
		if w.State == "QUESTION" {
			needs = append(needs, w.Name+" QUESTION needs a human")
		}
	}
	p.report = "REPORT " + strings.Join(needs, ", ") + "; no watcher is live now: the monitor agent ends."
	return fakeapi.Text(p.report), true
}

// TestCodexMonitorSkillFromInstall: `omega-monitor install --codex`, alone,
// into the CODEX_HOME of the real Codex (whose config.toml already holds
// the user's model, provider and trusted project) makes $monitor work: the
// table added keeps every line of the user's, a second install changes
// nothing, Codex offers the MCP server's tools, $monitor sends the skill,
// the monitor agent's prompt inside it, to the model, which spawns the
// monitor agent with it; that agent reads status, and nothing else, and its
// report reaches the screen with the seed's notice. Uninstall gives the
// user's config.toml back byte for byte.
func TestCodexMonitorSkillFromInstall(t *testing.T) {
	bin := codex.Pin.Binary(t)
	om := omegaMonitor(t)
	t.Parallel()
	realProgram(t)
	state := testfleet.Write(t, time.Now(),
		testfleet.Watcher{Name: "monitor-api", Target: "api", State: "WORKING", Work: "3", Progress: "41", Limit: 5},
		testfleet.Watcher{Name: "monitor-web", Target: "web", State: "QUESTION", Work: "1", Progress: "2", Limit: 5},
	)
	play := &skillPlay{state: state}
	api := fakeapi.NewScriptedResponses(t, play.reply)
	var userConfig []byte
	s := codex.Start(t, testenv.Tmux(t), codex.Config{Binary: bin, API: api.URL, Width: 160, Height: 50,
		Prepare: func(codexHome string) error {
			home := filepath.Dir(codexHome)
			written, err := os.ReadFile(filepath.Join(codexHome, "config.toml"))
			if err != nil {
				return err
			}
			// The user's comments, above and below their settings.
			userConfig = []byte("# my Codex settings, kept byte for byte\n" + string(written) + "\n# trailing words of mine\n")
			if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), userConfig, 0o600); err != nil {
				return err
			}
			res := installCodexIn(t, home, codexHome, state)
			if res.ExitCode != 0 {
				return fmt.Errorf("install --codex: %s%s", res.Stdout(), res.Stderr())
			}
			t.Logf("install --codex:\n%s", res.Stdout())
			after, _ := os.ReadFile(filepath.Join(codexHome, "config.toml"))
			res = installCodexIn(t, home, codexHome, state)
			if again, _ := os.ReadFile(filepath.Join(codexHome, "config.toml")); res.ExitCode != 0 || !strings.Contains(res.Stdout(), "codex: up to date") || string(again) != string(after) {
				return fmt.Errorf("a second install --codex changed something: %s%s", res.Stdout(), res.Stderr())
			}
			return nil
		}})
	codexHome := filepath.Join(s.Launch.Home, ".codex")
	config := filepath.Join(codexHome, "config.toml")
	got, _ := os.ReadFile(config)
	wantTable := "\n# Added by omega-monitor install --codex: the read-only MCP server of $monitor; install --codex --uninstall removes it.\n" +
		"[mcp_servers.omega-monitor]\ncommand = \"" + om + "\"\nargs = [\"mcp\"]\nenv = { \"OMEGA_MONITOR_HOME\" = \"" + state + "\" }\n"
	if diff := cmp.Diff(string(userConfig)+wantTable, string(got)); diff != "" {
		t.Errorf("config.toml after install (-want +got):\n%s", diff)
	}
	if b, _ := os.ReadFile(filepath.Join(codexHome, "skills", "monitor", "SKILL.md")); string(b) != setup.CodexSkill(om) {
		t.Errorf("the skill is not CodexSkill's text:\n%s", b)
	}

	s.WaitFor(t, realTimeout, "the composer", codex.Idle)
	s.Draft(t, "$monitor")
	s.WaitFor(t, realTimeout, "the skill in the $ list", func(screen string) bool { return strings.Contains(screen, "[Skill]") })
	s.Keys(t, "Enter") // inserts the skill's mention
	s.Draft(t, " show the fleet")
	s.Keys(t, "Enter")
	screen := s.WaitFor(t, 2*realTimeout, "the monitor agent's report and the notice", func(screen string) bool {
		play.mu.Lock()
		defer play.mu.Unlock()
		return play.failed != "" || strings.Contains(screen, "The monitor agent reported: REPORT") && strings.Contains(screen, "Codex monitor agent spawned")
	})

	play.mu.Lock()
	defer play.mu.Unlock()
	if play.failed != "" {
		t.Fatalf("%s\nscreen:\n%s", play.failed, screen)
	}
	want, _ := mirror.MonitorAgentPrompt(mirror.ModeFleet, "")
	if diff := cmp.Diff(want, play.prompt); diff != "" {
		t.Errorf("the prompt the skill gave the model (-want +got):\n%s", diff)
	}
	for _, tool := range []string{codexStatusTool, codexMonitorAgentTool, "mcp__omega_monitor__explain", "mcp__omega_monitor__history", "mcp__omega_monitor__logs"} {
		if !contains(play.tools, tool) {
			t.Errorf("Codex did not offer the model %s: %v", tool, play.tools)
		}
	}
	if diff := cmp.Diff([]string{codexStatusTool, codexStatusTool}, play.agent); diff != "" {
		t.Errorf("the monitor agent's calls (-want +got):\n%s", diff)
	}
	var agentTurns int
	for _, turn := range api.Turns() {
		if turn.First != want {
			continue
		}
		agentTurns++
		for _, c := range turn.Calls {
			if c != codexStatusTool {
				t.Errorf("the monitor agent called %s", c)
			}
		}
	}
	if !play.skill {
		t.Errorf("the skill's text never reached the model")
	}
	if agentTurns == 0 {
		t.Errorf("no turn of a sub-agent started from the prompt: spawn_agent did not carry it")
	}
	if !strings.Contains(screen, "monitor-web QUESTION needs a human") {
		t.Errorf("the report did not reach the screen:\n%s", screen)
	}
	t.Logf("screen:\n%s", screen)

	// Codex writes its own tables into config.toml as it runs (after
	// ours): uninstall takes out our lines, and only those.
	before, _ := os.ReadFile(config)
	res := installCodexIn(t, s.Launch.Home, codexHome, state, "--uninstall")
	res.Assert(t, icmd.Success)
	after, _ := os.ReadFile(config)
	if diff := cmp.Diff(strings.Replace(string(before), wantTable[1:], "", 1), string(after)); diff != "" || !strings.HasPrefix(string(after), string(userConfig)) {
		t.Errorf("uninstall took out more or less than our table (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(codexHome, "skills", "monitor")); !os.IsNotExist(err) {
		t.Errorf("uninstall left the skill: %v\n%s", err, res.Stdout())
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
