// Package codex runs the real Codex CLI for tests: the pinned release from
// the npm registry (its native binary), in a private tmux pane with a HOME
// and CODEX_HOME of its own, pointed at a fake Responses API on loopback
// (internal/fakeapi) as a custom model provider.
//
// It is a test helper. It reaches no API but the fake one and decides
// nothing about what a screen means.
package codex

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/omega-monitor/omega-monitor/internal/termagent"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// Version is the pinned Codex CLI release the tests run. .ci/run installs
// the same one into the cache, so that no test downloads it.
const Version = "0.171.0"

// Pin is the npm package that carries Codex CLI at Version.
var Pin = termagent.Pin{
	Package: "@openai/codex", Version: Version, VersionEnv: "OMEGA_CODEX_VERSION",
	CacheEnv: "OMEGA_CODEX_CACHE", Cache: "codex",
	Binaries: []string{
		filepath.Join("node_modules", "@openai", "codex-linux-x64", "vendor", triple(), "bin", "codex"),
		filepath.Join("node_modules", ".bin", "codex"),
	},
	// "codex-cli 0.171.0"
	VersionOf: func(out string) string { return strings.TrimPrefix(out, "codex-cli ") },
}

func triple() string {
	if runtime.GOARCH == "arm64" {
		return "aarch64-unknown-linux-musl"
	}
	return "x86_64-unknown-linux-musl"
}

// APIKey is the key Codex is given; the fake API accepts any.
const APIKey = "sk-omega-monitor-fake-key-0000"

// Config says how to start Codex.
type Config struct {
	Binary string
	// API is the fake Responses API's base URL (fakeapi.Server.URL).
	API string
	// Width and Height are the pane's size; 100 by 40 when zero.
	Width, Height int
	// Untrusted leaves the working directory untrusted, so that the trust
	// dialog shows at start.
	Untrusted bool
	// Retries is how often Codex retries a failed request; 1 when zero.
	Retries int
	Name    string
	// Env holds more NAME=value entries for Codex's environment.
	Env []string
	// Prepare, when set, runs once CODEX_HOME and its config.toml are
	// written and before Codex starts, to put in place what it reads at
	// start (hooks.json, a notify).
	Prepare func(codexHome string) error
}

// Start starts Codex with -a on-request (it asks before a command that
// wants to leave the sandbox) and --no-daemon (no app-server outlives it).
func Start(t testing.TB, tmux *testenv.TmuxServer, cfg Config) *termagent.Session {
	t.Helper()
	if cfg.Retries == 0 {
		cfg.Retries = 1
	}
	if cfg.Name == "" {
		cfg.Name = "codex"
	}
	home, dir := termagent.Dirs(t)
	codexHome := filepath.Join(home, ".codex")
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		t.Fatal(err)
	}
	var conf strings.Builder
	fmt.Fprintf(&conf, "model = %q\nmodel_provider = \"fake\"\ncheck_for_update_on_startup = false\n\n", "gpt-fake")
	fmt.Fprintf(&conf, "[model_providers.fake]\nname = \"Fake\"\nbase_url = %q\nwire_api = \"responses\"\nenv_key = \"OPENAI_API_KEY\"\nsupports_websockets = false\nrequest_max_retries = %d\nstream_max_retries = %d\n\n",
		cfg.API+"/v1", cfg.Retries, cfg.Retries)
	if cfg.Untrusted {
		// Codex asks about trust only for a folder under version control.
		if err := exec.Command("git", "init", "-q", dir).Run(); err != nil {
			t.Fatalf("codex: git init: %v", err)
		}
	} else {
		fmt.Fprintf(&conf, "[projects.%q]\ntrust_level = \"trusted\"\n", dir)
	}
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(conf.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if cfg.Prepare != nil {
		if err := cfg.Prepare(codexHome); err != nil {
			t.Fatalf("codex: preparing %s: %v", codexHome, err)
		}
	}
	return termagent.Start(t, tmux, termagent.Launch{
		Name: cfg.Name, Binary: cfg.Binary, Args: []string{"--no-daemon", "-a", "on-request"},
		Home: home, Dir: dir, Width: cfg.Width, Height: cfg.Height,
		Env: append([]string{"CODEX_HOME=" + codexHome, "OPENAI_API_KEY=" + APIKey}, cfg.Env...),
	})
}

// Idle says Codex waits at its empty composer.
func Idle(screen string) bool {
	return strings.Contains(screen, "› Ask Codex to do anything") || strings.Contains(screen, "? for shortcuts")
}
