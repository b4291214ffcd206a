package auditrun

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"
)

// TestAgentArgv: each agent's headless, read-only command line in the
// sandbox, as the pinned releases accept it (the real-agent tests run
// each).
func TestAgentArgv(t *testing.T) {
	s := &Sandbox{Home: "/run/home", Tree: "/run/tree", helper: "/bin/omega-monitor-sandbox", codexConfig: []string{"model=m"},
		codexSet: []string{`openai_base_url="http://127.0.0.1:3128/v1"`}}
	settings, _ := json.Marshal(claudeSettings)
	tests := []struct {
		agent string
		want  []string
	}{
		{"claude", []string{"/bin/claude", "-p", "BRIEF", "--output-format", "text", "--tools", "Read,Grep,Glob",
			"--allowedTools", "Read,Grep,Glob", "--disallowedTools", "Bash,Edit,Write,NotebookEdit,WebFetch,WebSearch,Task,Agent,TodoWrite",
			"--permission-mode", "dontAsk", "--setting-sources", "user", "--settings", string(settings),
			"--strict-mcp-config", "--safe-mode", "--restricted", "--no-session-persistence"}},
		{"codex", []string{"/bin/codex", "exec", "--sandbox", "read-only", "--skip-git-repo-check", "--ephemeral",
			"--ignore-user-config", "--ignore-rules", "--disable", "hooks", "--disable", "plugins", "--disable", "shell_snapshot",
			"--disable", "shell_tool", "--disable", "unified_exec", "--disable", "multi_agent", "--disable", "view_image",
			"--disable", "image_generation", "--disable", "goals",
			"-c", "notify=[]", "-c", "project_doc_max_bytes=0", "-c", "skills.include_instructions=false", "-c", `web_search="disabled"`,
			"-c", `mcp_servers.omega_audit={command="/bin/omega-monitor-sandbox",args=["read","/run/tree"],startup_timeout_sec=30}`,
			"--color", "never", "-c", "model=m", "-c", `openai_base_url="http://127.0.0.1:3128/v1"`, "--", "BRIEF"}},
		{"gemini", []string{"/bin/gemini", "--prompt", "BRIEF", "--approval-mode", "plan",
			"--policy", "/run/home/gemini-policy.toml", "--admin-policy", "/run/home/gemini-policy.toml",
			"--allowed-mcp-server-names", "__none__", "--output-format", "text"}},
	}
	for _, tt := range tests {
		s.agent = agents[tt.agent]
		if d := cmp.Diff(tt.want, s.Argv("/bin/"+tt.agent, "BRIEF")); d != "" {
			t.Errorf("%s (-want +got):\n%s", tt.agent, d)
		}
	}
}

func TestCheckCodexConfig(t *testing.T) {
	for _, ok := range [][]string{nil, {"model=gpt-5"}, {"model_provider=x", `model_providers.x={name="X",base_url="http://127.0.0.1/v1"}`}, {"openai_base_url=https://example.com/v1"}} {
		assert.NilError(t, CheckCodexConfig(ok))
	}
	for _, bad := range []string{"mcp_servers.evil.command=id", "notify=[\"id\"]", "hooks.x=1", `projects={"/"={trust_level="trusted"}}`, "model", "=x", "features.plugins=true", "sandbox_mode=danger-full-access"} {
		assert.Assert(t, CheckCodexConfig([]string{bad}) != nil, "accepted %q", bad)
	}
}
