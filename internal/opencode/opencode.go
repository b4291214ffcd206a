// Package opencode runs the real OpenCode for tests: the pinned release from
// the npm registry (opencode-ai), in a private tmux pane with a HOME of its
// own, pointed at a fake OpenAI-compatible API on loopback (internal/fakeapi's
// Chat Completions) through a custom provider in its opencode.json, asking
// before a shell command or an edit.
//
// It reaches no network but the fake API: its update check, its model list
// fetch, sharing and language server downloads are turned off; the
// dependency it installs into its config directory at start is written
// there beforehand as installed; and any other request goes through a proxy
// on a closed loopback port.
//
// It is a test helper. It decides nothing about what a screen means.
package opencode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
	"github.com/omega-monitor/omega-monitor/internal/termagent"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// Version is the pinned OpenCode release the tests run. .ci/run installs
// the same one into the cache, so that no test downloads it.
const Version = "1.18.33"

// Pin is the npm package that carries OpenCode at Version.
var Pin = termagent.Pin{
	Package: "opencode-ai", Version: Version, VersionEnv: "OMEGA_OPENCODE_VERSION",
	CacheEnv: "OMEGA_OPENCODE_CACHE", Cache: "opencode",
	Binaries: []string{filepath.Join("node_modules", ".bin", "opencode")},
	// "1.18.33"
	VersionOf: func(out string) string { return strings.TrimSpace(out) },
}

// Config says how to start OpenCode.
type Config struct {
	Binary string
	// API is the fake Chat Completions API's URL (fakeapi.Server.URL).
	API string
	// Width and Height are the pane's size; 100 by 40 when zero.
	Width, Height int
	Name          string
	// Prepare, when set, runs once HOME and its .config/opencode are
	// written, before OpenCode starts: a test installs our plugin there.
	Prepare func(home string) error
}

// Start starts OpenCode on the fake API's model, asking before a shell
// command or an edit (its own default runs them unasked).
func Start(t testing.TB, tmux *testenv.TmuxServer, cfg Config) *termagent.Session {
	t.Helper()
	if cfg.Name == "" {
		cfg.Name = "opencode"
	}
	home, dir := termagent.Dirs(t)
	conf := filepath.Join(home, ".config", "opencode")
	if err := os.MkdirAll(filepath.Join(conf, "node_modules"), 0o700); err != nil {
		t.Fatal(err)
	}
	settings := map[string]any{
		"autoupdate": false, "share": "disabled", "model": "fake/" + fakeapi.ChatModel,
		"permission": map[string]any{"bash": "ask", "edit": "ask"},
		"provider": map[string]any{"fake": map[string]any{
			"npm": "@ai-sdk/openai-compatible", "name": "Fake",
			"options": map[string]any{"baseURL": cfg.API + "/v1", "apiKey": "omega-monitor-fake-key"},
			"models":  map[string]any{fakeapi.ChatModel: map[string]any{"name": "Fake model", "tool_call": true}},
		}},
	}
	// At start OpenCode installs its plugin package into each config
	// directory from the npm registry unless the directory's lock file
	// says it is there: the lock says so.
	dep := map[string]any{"@opencode-ai/plugin": Pin.Release()}
	for name, v := range map[string]any{
		"opencode.json":     settings,
		"package.json":      map[string]any{"dependencies": dep},
		"package-lock.json": map[string]any{"lockfileVersion": 3, "packages": map[string]any{"": map[string]any{"dependencies": dep}}},
	} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(conf, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if cfg.Prepare != nil {
		if err := cfg.Prepare(home); err != nil {
			t.Fatal(err)
		}
	}
	return termagent.Start(t, tmux, termagent.Launch{
		Name: cfg.Name, Binary: cfg.Binary, Home: home, Dir: dir,
		Width: cfg.Width, Height: cfg.Height, Env: []string{
			"OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_SHARE=1",
			"OPENCODE_DISABLE_LSP_DOWNLOAD=1",
			// Whatever else it would fetch fails at once.
			"HTTP_PROXY=http://127.0.0.1:9", "HTTPS_PROXY=http://127.0.0.1:9", "NO_PROXY=127.0.0.1,localhost",
		},
	})
}

// Idle says OpenCode waits at its input with no turn running: its box's
// bottom edge is drawn and no spinner is under it.
func Idle(screen string) bool {
	return strings.Contains(screen, "╹▀▀▀") && !strings.Contains(screen, "⬝") && !strings.Contains(screen, "■") &&
		!strings.Contains(screen, "Permission required")
}
