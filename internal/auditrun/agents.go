package auditrun

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/omega-monitor/omega-monitor/internal/fsutil"
)

// An agentSetup is what one agent needs to audit in the sandbox: its
// throwaway home (settings that force its extensions off, and without
// bubblewrap its login), and its headless, read-only command line.
type agentSetup struct {
	// home fills the throwaway home and returns the variables to set
	// (NAME=value) beside HOME. login says to copy the operator's login
	// files: only without bubblewrap, where the agent holds its key.
	home func(operatorHome string, environ []string, home, tree string, login bool) ([]string, error)
	argv func(bin, brief string, s *Sandbox) []string
}

var agents = map[string]agentSetup{
	"claude": {home: claudeHome, argv: claudeArgv},
	"codex":  {home: codexHome, argv: codexArgv},
	"gemini": {home: geminiHome, argv: geminiArgv},
}

// Agents names the agents whose headless modes run auditors.
var Agents = []string{"claude", "codex", "gemini"}

// maxCredential is the largest credential or settings file copied.
const maxCredential = 1 << 20

// copyCredential copies the file name from dir into to (0600), when it is a
// regular file there; a missing one is no error (the agent may take its
// key from the environment).
func copyCredential(dir, name, to string) error {
	if dir == "" {
		return nil
	}
	b, err := fsutil.ReadCapped(filepath.Join(dir, name), maxCredential)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("auditrun: the agent's credentials: %w", err)
	}
	if err := os.MkdirAll(to, 0o700); err != nil {
		return fmt.Errorf("auditrun: %w", err)
	}
	if err := os.WriteFile(filepath.Join(to, name), b, 0o600); err != nil {
		return fmt.Errorf("auditrun: %w", err)
	}
	return nil
}

// writeJSON writes v as the file path, 0600, making its directory.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("auditrun: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("auditrun: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("auditrun: %w", err)
	}
	return nil
}

// Claude Code.

// ReadOnlyTools are the only tools a Claude Code auditor gets; WriteTools
// are denied by name as well, in case a setting would allow one.
const (
	ReadOnlyTools = "Read,Grep,Glob"
	WriteTools    = "Bash,Edit,Write,NotebookEdit,WebFetch,WebSearch,Task,Agent,TodoWrite"
)

// claudeSettings are the only settings a Claude Code auditor loads: no
// hook runs, no project MCP server is enabled.
var claudeSettings = map[string]any{
	"disableAllHooks":            true,
	"enableAllProjectMcpServers": false,
}

// claudeHome copies Claude Code's login (~/.claude/.credentials.json, or
// $CLAUDE_CONFIG_DIR's) when told to, and writes claudeSettings as the user
// settings.
func claudeHome(operatorHome string, environ []string, home, tree string, login bool) ([]string, error) {
	from := lookup(environ, "CLAUDE_CONFIG_DIR")
	if from == "" && operatorHome != "" {
		from = filepath.Join(operatorHome, ".claude")
	}
	to := filepath.Join(home, ".claude")
	if !login {
		from = ""
	}
	if err := copyCredential(from, ".credentials.json", to); err != nil {
		return nil, err
	}
	return nil, writeJSON(filepath.Join(to, "settings.json"), claudeSettings)
}

func claudeArgv(bin, brief string, s *Sandbox) []string {
	settings, _ := json.Marshal(claudeSettings)
	// -p: headless. --tools offers the model nothing but the three
	// readers; --allowedTools lets them run without a prompt, and
	// --disallowedTools denies the rest by name. dontAsk refuses
	// whatever is not allowed instead of asking nobody. Only the user
	// settings, which are the sandbox's, load, and --settings says the
	// same again; no MCP server. --safe-mode loads no CLAUDE.md, skill,
	// plugin, hook or custom command: the project's text reaches the
	// auditor only as the files it reads, never as instructions.
	return []string{bin, "-p", brief,
		"--output-format", "text",
		"--tools", ReadOnlyTools,
		"--allowedTools", ReadOnlyTools,
		"--disallowedTools", WriteTools,
		"--permission-mode", "dontAsk",
		"--setting-sources", "user",
		"--settings", string(settings),
		"--strict-mcp-config",
		"--safe-mode",
		"--restricted",
		"--no-session-persistence",
	}
}

// Codex CLI.

// codexHome makes a CODEX_HOME of the sandbox's, which holds nothing but
// a login: without bubblewrap the operator's (auth.json of $CODEX_HOME, or
// ~/.codex), in it one whose API key is the placeholder. No AGENTS.md of
// the operator's, no trust entry, no rule. The operator's config.toml is
// not loaded at all (codexArgv: --ignore-user-config): a -c override
// merges into its tables rather than replacing them, so its MCP servers
// could not be forced off otherwise.
func codexHome(operatorHome string, environ []string, home, tree string, login bool) ([]string, error) {
	from := lookup(environ, "CODEX_HOME")
	if from == "" && operatorHome != "" {
		from = filepath.Join(operatorHome, ".codex")
	}
	to := filepath.Join(home, ".codex")
	if err := os.MkdirAll(to, 0o700); err != nil {
		return nil, fmt.Errorf("auditrun: %w", err)
	}
	if !login {
		placeholder := map[string]any{"auth_mode": "apikey", "OPENAI_API_KEY": Placeholder}
		return []string{"CODEX_HOME=" + to}, writeJSON(filepath.Join(to, "auth.json"), placeholder)
	}
	if err := copyCredential(from, "auth.json", to); err != nil {
		return nil, err
	}
	return []string{"CODEX_HOME=" + to}, nil
}

// codexConfigKeys are the settings an operator may hand a Codex auditor:
// which model, and which provider with its endpoint. Nothing that starts a
// process (MCP servers, hooks, notify, plugins) or trusts a project.
var codexConfigKeys = []string{"model", "openai_base_url", "chatgpt_base_url"}

// CheckCodexConfig says what is wrong with settings for a Codex auditor:
// each must be KEY=VALUE with KEY a model or provider setting.
func CheckCodexConfig(settings []string) error {
	for _, kv := range settings {
		key, _, ok := strings.Cut(kv, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" {
			return fmt.Errorf("auditrun: --codex-config takes KEY=VALUE; got %q", kv)
		}
		top, _, _ := strings.Cut(key, ".")
		if !slices.ContainsFunc(codexConfigKeys, func(k string) bool { return strings.HasPrefix(top, k) }) {
			return fmt.Errorf("auditrun: --codex-config sets only the model and its provider (model*, openai_base_url, chatgpt_base_url); %q would change what an auditor may run", key)
		}
	}
	return nil
}

// CodexNoCommands are the features a Codex auditor runs without: its shell
// tools (shell_tool, and unified_exec's exec_command and write_stdin),
// which run whatever command the model picks, so whatever a repository's
// text steers it to; sub-agents, image viewing and generation, goals. The
// pinned Codex (0.171) then offers the model no tool that runs a command,
// in its plain tool list or in code mode's.
var CodexNoCommands = []string{"shell_tool", "unified_exec", "multi_agent", "view_image", "image_generation", "goals"}

// codexReader is the MCP server setting that gives a Codex auditor its
// only file tools: treeread's, served by the helper over the copy.
func codexReader(helper, tree string) string {
	return "mcp_servers.omega_audit={command=" + tomlString(helper) + ",args=[\"read\"," + tomlString(tree) + "],startup_timeout_sec=30}"
}

func codexArgv(bin, brief string, s *Sandbox) []string {
	// exec: headless, never asks; the read-only sandbox refuses any
	// write and the network; --ephemeral keeps no session files. No user
	// config, no execpolicy rules, no hooks, no plugins (they bundle MCP
	// servers and hooks), no login-shell snapshot (it runs the shell's rc
	// files), no notify command; no AGENTS.md or skill text as
	// instructions. No shell or other command tool, no web search: the
	// copy is read through the helper's read-only file tools.
	argv := []string{bin, "exec",
		"--sandbox", "read-only",
		"--skip-git-repo-check",
		"--ephemeral",
		"--ignore-user-config",
		"--ignore-rules",
		"--disable", "hooks",
		"--disable", "plugins",
		"--disable", "shell_snapshot",
	}
	for _, f := range CodexNoCommands {
		argv = append(argv, "--disable", f)
	}
	argv = append(argv,
		"-c", "notify=[]",
		"-c", "project_doc_max_bytes=0",
		"-c", "skills.include_instructions=false",
		"-c", `web_search="disabled"`,
		"-c", codexReader(s.helper, s.Tree),
		"--color", "never",
	)
	// The operator's model and provider, then the sandbox's base URL for
	// that provider, which wins.
	for _, kv := range append(slices.Clone(s.codexConfig), s.codexSet...) {
		argv = append(argv, "-c", kv)
	}
	return append(argv, "--", brief)
}

// Gemini CLI.

// geminiPolicy denies a Gemini auditor every tool that writes, runs,
// fetches or remembers, above any rule of a lower tier, and the two that
// leave plan mode: headless, Gemini CLI 0.61's own plan policy allows
// exit_plan_mode, which switches a run that is not interactive to YOLO.
// tools.core (GeminiReaders) already offers none of them; the policy names
// them again, in case a release offers one outside it. (Gemini CLI 0.61.0
// loads it without complaint, and names each field of a malformed one.)
const geminiPolicy = `# omega-monitor audit: auditors read, and nothing else.
[[rule]]
toolName = ["write_file", "replace", "run_shell_command", "save_memory", "web_fetch", "exit_plan_mode", "enter_plan_mode",
  "google_web_search", "invoke_agent", "activate_skill", "list_background_processes", "read_background_output"]
decision = "deny"
priority = 999
`

// geminiContext is the context file name Gemini CLI is told to load: one
// no project holds, so that GEMINI.md reaches the auditor only as a file
// it reads, never as instructions.
const geminiContext = "OMEGA-AUDITOR-NO-CONTEXT.md"

// GeminiReaders are the only built-in tools a Gemini auditor has
// (tools.core, an allowlist): no run_shell_command, no writer, no web fetch
// or search, no sub-agent. Gemini CLI 0.61 in YOLO mode offers
// run_shell_command without it, and nothing but these with it.
var GeminiReaders = []string{"read_file", "list_directory", "glob", "grep_search"}

// geminiHome copies Gemini CLI's login files when told to, trusts exactly
// the copy (headless, Gemini CLI refuses a folder it does not trust), and
// writes the user settings: only the reading tools, no hook, no discovery
// or call command, no MCP server command, no skill or sub-agent, no
// context file. The copy holds no .gemini/ and no .env, so no workspace
// setting or environment file can add to them.
func geminiHome(operatorHome string, environ []string, home, tree string, login bool) ([]string, error) {
	to := filepath.Join(home, ".gemini")
	if operatorHome != "" && login {
		for _, name := range []string{"oauth_creds.json", "google_accounts.json", "gemini-credentials.json"} {
			if err := copyCredential(filepath.Join(operatorHome, ".gemini"), name, to); err != nil {
				return nil, err
			}
		}
	}
	settings := map[string]any{
		"hooksConfig":  map[string]any{"enabled": false},
		"tools":        map[string]any{"core": GeminiReaders, "discoveryCommand": "", "callCommand": "", "allowed": []string{}},
		"mcp":          map[string]any{"serverCommand": ""},
		"context":      map[string]any{"fileName": geminiContext},
		"skills":       map[string]any{"enabled": false},
		"experimental": map[string]any{"enableAgents": false},
		"privacy":      map[string]any{"usageStatisticsEnabled": false},
		"general":      map[string]any{"disableAutoUpdate": true, "disableUpdateNag": true},
		"advanced":     map[string]any{"ignoreLocalEnv": true},
	}
	if auth := geminiAuth(operatorHome); auth != nil && login {
		settings["security"] = map[string]any{"auth": auth}
	} else if !login || lookup(environ, "GEMINI_API_KEY") != "" {
		settings["security"] = map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}}
	}
	if err := writeJSON(filepath.Join(to, "settings.json"), settings); err != nil {
		return nil, err
	}
	if err := writeJSON(filepath.Join(to, "trustedFolders.json"), map[string]string{tree: "TRUST_FOLDER"}); err != nil {
		return nil, err
	}
	policy := filepath.Join(home, "gemini-policy.toml")
	if err := os.WriteFile(policy, []byte(geminiPolicy), 0o600); err != nil {
		return nil, fmt.Errorf("auditrun: %w", err)
	}
	return nil, nil
}

// geminiAuth is the auth method of the operator's own Gemini CLI settings
// (security.auth), or nil.
func geminiAuth(operatorHome string) any {
	if operatorHome == "" {
		return nil
	}
	b, err := fsutil.ReadCapped(filepath.Join(operatorHome, ".gemini", "settings.json"), maxCredential)
	if err != nil {
		return nil
	}
	var s struct {
		Security struct {
			Auth map[string]any `json:"auth"`
		} `json:"security"`
	}
	if json.Unmarshal(b, &s) != nil || s.Security.Auth == nil {
		return nil
	}
	return s.Security.Auth
}

func geminiArgv(bin, brief string, s *Sandbox) []string {
	policy := filepath.Join(s.Home, "gemini-policy.toml")
	// --prompt: headless. Plan mode is Gemini CLI's read-only mode: no
	// file changes, no shell; the policy denies the writers, the shell
	// and leaving plan mode by name, at the user and the admin tier
	// (each flag replaces what any settings file would name). No MCP
	// server is allowed by name.
	return []string{bin,
		"--prompt", brief,
		"--approval-mode", "plan",
		"--policy", policy,
		"--admin-policy", policy,
		"--allowed-mcp-server-names", "__none__",
		"--output-format", "text",
	}
}
