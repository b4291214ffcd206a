package probe_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/probe"
)

// before are the programs each agent ran as when probe held them in a
// map, before they were its description's: the built-ins must still be
// found by exactly these.
var before = map[string][]string{
	"Claude Code": {"claude"},
	"Codex CLI":   {"codex"},
	"Gemini CLI":  {"gemini"},
	"Pi":          {"pi"},
	"Copilot CLI": {"copilot"},
	"Qwen Code":   {"qwen"},
	"OpenCode":    {"opencode"},
}

// TestBuiltinAgentsFoundAsBefore: each built-in agent's process is found
// by its name, its executable's or its script's (an interpreter's first
// argument), in any case and without .js or .exe, and no other agent's
// process is taken for it.
func TestBuiltinAgentsFoundAsBefore(t *testing.T) {
	shell := probe.Process{PID: 10, Start: "1", Comm: "bash", Args: []string{"-bash"}}
	for agent, programs := range before {
		for _, prog := range programs {
			for _, p := range []probe.Process{
				{PID: 20, Start: "2", Comm: prog, Args: []string{"/opt/bin/" + prog, "--yes"}},
				{PID: 21, Start: "2", Comm: "node", Args: []string{"node", "/usr/lib/node_modules/x/" + prog + ".js"}},
				{PID: 22, Start: "2", Comm: "node-main", Args: []string{"/usr/bin/node", "/opt/" + prog + ".mjs"}},
				{PID: 23, Start: "2", Comm: prog + ".exe"},
			} {
				fg := probe.Foreground{Known: true, Procs: []probe.Process{shell, p}}
				got, ok := fg.Agent(classify.Programs(nil, agent))
				if !ok || got.PID != p.PID {
					t.Errorf("%s: Agent found %v, %v in %s, want pid %d", agent, got, ok, fg.Says(), p.PID)
				}
				if why := fg.NotAgent(agent, classify.Programs(nil, agent)); why != "" {
					t.Errorf("%s: NotAgent says %q", agent, why)
				}
				if _, ok := fg.Agent(classify.Programs(nil, "")); !ok {
					t.Errorf("%s: any agent's programs do not find %s", agent, fg.Says())
				}
				for other := range before {
					if _, ok := fg.Agent(classify.Programs(nil, other)); ok && other != agent {
						t.Errorf("%s's process %s taken for %s's", agent, p.Name(), other)
					}
				}
			}
		}
	}
}

// TestDescribedAgentFound: an agent an operator describes with its
// programs has its process found, where before it had none; without
// programs, or with the screen of another agent, no process is its.
func TestDescribedAgentFound(t *testing.T) {
	const file = `{"agents": [
  {"name": "Tern", "box": {"prompt": "^» ?(.*)$"}, "programs": ["tern", "tern-cli"]},
  {"name": "Quill", "box": {"prompt": "^¶ ?(.*)$"}}
],
"rules": [
  {"agent": "tern", "name": "w", "region": "above", "pattern": "^  ⠋ ", "verdict": "working"},
  {"agent": "quill", "name": "w", "region": "above", "pattern": "^  ⠋ ", "verdict": "working"}
]}`
	local, err := classify.ParseLocal([]byte(file), "tern.rules.json")
	if err != nil {
		t.Fatal(err)
	}
	tern := probe.Process{PID: 31, Start: "5", Comm: "node", Args: []string{"node", "/home/u/.npm/bin/tern-cli.js"}}
	fg := probe.Foreground{Known: true, Procs: []probe.Process{{PID: 30, Start: "4", Comm: "zsh"}, tern}}
	got, ok := fg.Agent(classify.Programs(local, "Tern"))
	if diff := cmp.Diff(tern, got); !ok || diff != "" {
		t.Errorf("Tern's process not found (found %v) (-want +got):\n%s", ok, diff)
	}
	for _, tc := range []struct {
		agent string
		local *classify.Local
		want  string
	}{
		{"Tern", local, ""},
		{"Tern", nil, "the pane's foreground process is zsh (pid 30), node (pid 31), not Tern"},
		{"Quill", local, "the pane's foreground process is zsh (pid 30), node (pid 31), not Quill"},
		{"Claude Code", local, "the pane's foreground process is zsh (pid 30), node (pid 31), not Claude Code"},
	} {
		if diff := cmp.Diff(tc.want, fg.NotAgent(tc.agent, classify.Programs(tc.local, tc.agent))); diff != "" {
			t.Errorf("NotAgent(%q) (-want +got):\n%s", tc.agent, diff)
		}
	}
}
