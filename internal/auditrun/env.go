package auditrun

import (
	"slices"
	"strings"
)

// passedEnv are the variables every auditor gets from the caller's
// environment, beside HOME and TMPDIR, which point into the sandbox: where
// programs are, the locale, and how to reach the API (proxies, CA files;
// inside bubblewrap the proxies are the sandbox's own, see withProxy).
var passedEnv = []string{
	"PATH", "LANG", "LANGUAGE", "TZ", "USER", "LOGNAME",
	"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY",
	"http_proxy", "https_proxy", "all_proxy", "no_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS",
}

// agentEnv are the prefixes of the variables that configure each agent and
// carry its credentials. Nothing else is handed over: no SSH_AUTH_SOCK, no
// cloud or forge token, no NODE_OPTIONS.
var agentEnv = map[string][]string{
	"claude": {"ANTHROPIC_", "CLAUDE_CODE_", "DISABLE_", "IS_SANDBOX"},
	"codex":  {"OPENAI_", "CODEX_", "AZURE_OPENAI_"},
	"gemini": {"GEMINI_API_KEY", "GEMINI_MODEL", "GOOGLE_"},
}

// setByUs are variables of an agent's prefixes that the sandbox sets
// itself: where the agent's configuration lives must be the throwaway home.
var setByUs = []string{"CODEX_HOME", "CLAUDE_CONFIG_DIR", "GEMINI_CLI_SYSTEM_SETTINGS_PATH",
	"GEMINI_CLI_SYSTEM_DEFAULTS_PATH", "GEMINI_CLI_HOME"}

// scrubEnv returns the environment an auditor of agent runs with: from
// environ, only what passedEnv, the agent's prefixes and keep name, then
// set (NAME=value each), which wins.
func scrubEnv(environ []string, agent string, keep, set []string) []string {
	var out []string
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || slices.Contains(setByUs, name) || slices.ContainsFunc(set, func(s string) bool { return strings.HasPrefix(s, name+"=") }) {
			continue
		}
		if slices.Contains(passedEnv, name) || strings.HasPrefix(name, "LC_") || slices.Contains(keep, name) ||
			slices.ContainsFunc(agentEnv[agent], func(p string) bool { return strings.HasPrefix(name, p) }) {
			out = append(out, kv)
		}
	}
	return append(out, set...)
}

// IsEnvName says whether name is what --keep-env accepts: a variable's
// name, a letter or _ and then letters, digits and _. Checked by hand: a
// pattern compiled at init costs every command's start, each poll's too.
func IsEnvName(name string) bool {
	for i, r := range name {
		letter := r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z'
		if !letter && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return name != ""
}
