package auditrun

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/omega-monitor/omega-monitor/internal/fsutil"
)

// An auditor in bubblewrap holds no credential. Its agent is given a
// placeholder key and a plain http:// base URL at the sandbox's proxy
// address; the proxy, outside, sends each request on to the real API over
// its own scheme, the placeholder replaced by the operator's key. Whatever
// the repository makes the agent read or print inside, its environment,
// its home and its files hold no key to leak. A login that only the agent
// can refresh (a Claude or ChatGPT subscription, a Google account) cannot
// be kept out that way, and is refused there with what to do instead.

// Placeholder is the key an auditor in bubblewrap holds: its agent wants
// one to start, and the proxy replaces it.
const Placeholder = "omega-audit-placeholder-not-a-key"

// An apiRoute is the agent's API as the proxy reads it (sandboxnet.API):
// where its requests go, the addresses the agent calls the proxy by, and
// the credential header that replaces the placeholder.
type apiRoute struct {
	Base   string   `json:"base"`
	Local  []string `json:"local"`
	Header string   `json:"header,omitempty"`
	Value  string   `json:"value,omitempty"`
	Drop   []string `json:"drop"`
}

// A keyPlan is how one auditor in bubblewrap reaches its API without its
// key: the proxy's route, and what the agent is told instead.
type keyPlan struct {
	route apiRoute
	env   []string // NAME=value set inside: the placeholder, the base URL
	codex []string // -c settings of a Codex auditor: its provider's base URL
}

// keyPlans says how each agent's key is kept out.
var keyPlans = map[string]func(operatorHome string, environ, codexConfig []string) (keyPlan, error){
	"claude": claudeKey, "codex": codexKey, "gemini": geminiKey,
}

// splitBase cuts an http or https base URL into its origin and its path
// (without a trailing slash): by hand, as endpoint reads one, since
// net/url would cost every start of omega-monitor.
func splitBase(raw string) (origin, path string, err error) {
	raw = strings.TrimSpace(raw)
	if _, ok := endpoint(raw); !ok {
		return "", "", fmt.Errorf("auditrun: the API base URL %q is not an http or https URL", raw)
	}
	scheme, rest, _ := strings.Cut(raw, "://")
	authority := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority, path = rest[:i], rest[i:]
	}
	if i := strings.IndexAny(path, "?#"); i >= 0 {
		path = path[:i]
	}
	return strings.ToLower(scheme) + "://" + authority, strings.TrimRight(path, "/"), nil
}

// route returns the proxy's route to the API at base, and the base URL the
// agent is given for it: the sandbox's proxy address, the same path.
func route(base, header, value string, drop ...string) (apiRoute, string, error) {
	origin, path, err := splitBase(base)
	if err != nil {
		return apiRoute{}, "", err
	}
	return apiRoute{Base: origin, Local: []string{sandboxProxy, "localhost:3128"}, Header: header, Value: value, Drop: drop},
		"http://" + sandboxProxy + path, nil
}

// refuseLogin is why a login cannot be used in bubblewrap.
func refuseLogin(what, instead string) error {
	return fmt.Errorf("auditrun: %s cannot be kept out of the sandbox (only the agent itself can refresh or sign with it, so it would be readable inside): "+
		"set %s for the audit, where the sandbox's proxy adds it and the auditor never holds it, or run it with --isolation none", what, instead)
}

// hasFile reports whether dir holds a file name.
func hasFile(dir, name string) bool {
	if dir == "" {
		return false
	}
	_, err := os.Stat(filepath.Join(dir, name))
	return err == nil
}

// claudeDir is where Claude Code keeps its login: $CLAUDE_CONFIG_DIR, or
// ~/.claude.
func claudeDir(operatorHome string, environ []string) string {
	if d := lookup(environ, "CLAUDE_CONFIG_DIR"); d != "" {
		return d
	}
	if operatorHome == "" {
		return ""
	}
	return filepath.Join(operatorHome, ".claude")
}

func claudeKey(operatorHome string, environ, _ []string) (keyPlan, error) {
	if lookup(environ, "CLAUDE_CODE_USE_BEDROCK") != "" || lookup(environ, "CLAUDE_CODE_USE_VERTEX") != "" {
		return keyPlan{}, refuseLogin("Claude Code on Bedrock or Vertex takes cloud credentials, which", "ANTHROPIC_API_KEY")
	}
	base := cmp.Or(lookup(environ, "ANTHROPIC_BASE_URL"), "https://api.anthropic.com")
	name, header, value := "ANTHROPIC_API_KEY", "x-api-key", lookup(environ, "ANTHROPIC_API_KEY")
	if value == "" && lookup(environ, "ANTHROPIC_AUTH_TOKEN") != "" {
		name, header, value = "ANTHROPIC_AUTH_TOKEN", "Authorization", "Bearer "+lookup(environ, "ANTHROPIC_AUTH_TOKEN")
	}
	if value == "" && (lookup(environ, "CLAUDE_CODE_OAUTH_TOKEN") != "" || hasFile(claudeDir(operatorHome, environ), ".credentials.json")) {
		return keyPlan{}, refuseLogin("a Claude Code login", "ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)")
	}
	if value == "" {
		header = "" // no credential at all: the agent says so itself
	}
	r, inside, err := route(base, header, value, "x-api-key", "Authorization")
	if err != nil {
		return keyPlan{}, err
	}
	return keyPlan{route: r, env: []string{name + "=" + Placeholder, "ANTHROPIC_BASE_URL=" + inside}}, nil
}

// codexProvider returns the model provider a Codex auditor's settings
// choose (model_provider=NAME), "openai" when they choose none, and the
// settings of that provider.
func codexProvider(codexConfig []string) (string, []string) {
	name := "openai"
	for _, kv := range codexConfig {
		if k, v, _ := strings.Cut(kv, "="); strings.TrimSpace(k) == "model_provider" {
			name = strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	var own []string
	for _, kv := range codexConfig {
		k, _, _ := strings.Cut(kv, "=")
		if k = strings.TrimSpace(k); k == "model_providers."+name || strings.HasPrefix(k, "model_providers."+name+".") {
			own = append(own, kv)
		}
	}
	return name, own
}

// codexAuthKey is the API key of a Codex login file (auth.json), and
// whether the file holds a ChatGPT login instead.
func codexAuthKey(dir string) (key string, chatGPT bool) {
	if dir == "" {
		return "", false
	}
	b, err := fsutil.ReadCapped(filepath.Join(dir, "auth.json"), maxCredential)
	if err != nil {
		return "", false
	}
	var auth struct {
		Key    string          `json:"OPENAI_API_KEY"`
		Tokens json.RawMessage `json:"tokens"`
	}
	if json.Unmarshal(b, &auth) != nil {
		return "", false
	}
	return auth.Key, auth.Key == "" && len(auth.Tokens) > 0 && string(auth.Tokens) != "null"
}

func codexKey(operatorHome string, environ, codexConfig []string) (keyPlan, error) {
	provider, own := codexProvider(codexConfig)
	if provider != "openai" {
		// A provider of the operator's: its base_url, and the key in the
		// variable its env_key names (none: it takes no key).
		var base, envKey string
		for _, kv := range own {
			if u := baseURLs(kv); len(u) > 0 {
				base = u[len(u)-1]
			}
			if k := settingValues(kv, "env_key"); len(k) > 0 {
				envKey = k[len(k)-1]
			}
		}
		if base == "" {
			return keyPlan{}, fmt.Errorf("auditrun: the Codex provider %q names no base_url in --codex-config", provider)
		}
		var header, value string
		var env []string
		if envKey != "" {
			if lookup(environ, envKey) == "" {
				return keyPlan{}, fmt.Errorf("auditrun: the Codex provider %q takes its key from %s, which is not set", provider, envKey)
			}
			header, value = "Authorization", "Bearer "+lookup(environ, envKey)
			env = append(env, envKey+"="+Placeholder)
		}
		r, inside, err := route(base, header, value, "Authorization")
		if err != nil {
			return keyPlan{}, err
		}
		return keyPlan{route: r, env: env, codex: []string{"model_providers." + provider + ".base_url=" + tomlString(inside)}}, nil
	}
	base := "https://api.openai.com/v1"
	for _, kv := range codexConfig {
		if k, _, _ := strings.Cut(kv, "="); strings.TrimSpace(k) == "openai_base_url" {
			if u := baseURLs(kv); len(u) > 0 && u[0] != "" {
				base = u[0]
			}
		}
	}
	base = cmp.Or(lookup(environ, "OPENAI_BASE_URL"), base)
	key := cmp.Or(lookup(environ, "CODEX_API_KEY"), lookup(environ, "OPENAI_API_KEY"))
	if key == "" {
		from := cmp.Or(lookup(environ, "CODEX_HOME"), filepath.Join(operatorHome, ".codex"))
		var chatGPT bool
		if key, chatGPT = codexAuthKey(from); chatGPT {
			return keyPlan{}, refuseLogin("a ChatGPT login of Codex", "OPENAI_API_KEY (or CODEX_API_KEY, or log Codex in with an API key)")
		}
	}
	header := "Authorization"
	if key == "" {
		header = "" // no credential at all: the agent says so itself
	}
	r, inside, err := route(base, header, "Bearer "+key, "Authorization")
	if err != nil {
		return keyPlan{}, err
	}
	return keyPlan{route: r, env: []string{"CODEX_API_KEY=" + Placeholder, "OPENAI_BASE_URL=" + inside},
		codex: []string{"openai_base_url=" + tomlString(inside)}}, nil
}

func geminiKey(operatorHome string, environ, _ []string) (keyPlan, error) {
	if v := strings.ToLower(lookup(environ, "GOOGLE_GENAI_USE_VERTEXAI")); v == "true" || v == "1" {
		return keyPlan{}, refuseLogin("Gemini CLI on Vertex AI takes Google Cloud credentials, which", "GEMINI_API_KEY")
	}
	key := cmp.Or(lookup(environ, "GEMINI_API_KEY"), lookup(environ, "GOOGLE_API_KEY"))
	var dir string
	if operatorHome != "" {
		dir = filepath.Join(operatorHome, ".gemini")
	}
	if key == "" && (hasFile(dir, "oauth_creds.json") || hasFile(dir, "gemini-credentials.json")) {
		return keyPlan{}, refuseLogin("a Gemini CLI login with a Google account", "GEMINI_API_KEY")
	}
	header := "x-goog-api-key"
	if key == "" {
		header = "" // no credential at all: the agent says so itself
	}
	base := cmp.Or(lookup(environ, "GOOGLE_GEMINI_BASE_URL"), "https://generativelanguage.googleapis.com")
	r, inside, err := route(base, header, key, "x-goog-api-key", "Authorization")
	if err != nil {
		return keyPlan{}, err
	}
	return keyPlan{route: r, env: []string{"GEMINI_API_KEY=" + Placeholder, "GOOGLE_GEMINI_BASE_URL=" + inside}}, nil
}

// secretWords mark the name of a variable that may carry a credential: in
// bubblewrap none is handed over, whichever prefix or --keep-env named it.
var secretWords = []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH"}

// withoutSecrets returns env without the variables whose names may carry a
// credential.
func withoutSecrets(env []string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		name = strings.ToUpper(name)
		return slices.ContainsFunc(secretWords, func(w string) bool { return strings.Contains(name, w) })
	})
}

// tomlString is s as a TOML basic string: JSON's escapes are TOML's.
func tomlString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
