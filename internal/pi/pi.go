// Package pi runs the real Pi coding agent for tests: the pinned release
// from the npm registry, in a private tmux pane with a HOME of its own,
// pointed at a fake OpenAI-compatible API on loopback (internal/fakeapi's
// Chat Completions) through a provider in its models.json.
//
// It is a test helper. It reaches no API but the fake one and decides
// nothing about what a screen means.
package pi

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

// Version is the pinned Pi release the tests run. .ci/run installs the
// same one into the cache, so that no test downloads it.
const Version = "0.73.1"

// Pin is the npm package that carries Pi at Version.
var Pin = termagent.Pin{
	Package: "@mariozechner/pi-coding-agent", Version: Version, VersionEnv: "OMEGA_PI_VERSION",
	CacheEnv: "OMEGA_PI_CACHE", Cache: "pi",
	Binaries: []string{filepath.Join("node_modules", ".bin", "pi")},
	// "0.73.1"
	VersionOf: func(out string) string { return strings.TrimSpace(out) },
}

// Config says how to start Pi.
type Config struct {
	Binary string
	// API is the fake Chat Completions API's URL (fakeapi.Server.URL).
	API string
	// Width and Height are the pane's size; 100 by 40 when zero.
	Width, Height int
	Name          string
}

// Start starts Pi on the fake API's model. Pi asks no permission before a
// tool: it has no approval dialog.
func Start(t testing.TB, tmux *testenv.TmuxServer, cfg Config) *termagent.Session {
	t.Helper()
	if cfg.Name == "" {
		cfg.Name = "pi"
	}
	home, dir := termagent.Dirs(t)
	conf := filepath.Join(home, ".pi", "agent")
	if err := os.MkdirAll(conf, 0o700); err != nil {
		t.Fatal(err)
	}
	models := map[string]any{"providers": map[string]any{"fake": map[string]any{
		"baseUrl": cfg.API + "/v1", "api": "openai-completions", "apiKey": "omega-monitor-fake-key",
		"compat": map[string]any{"supportsDeveloperRole": false, "supportsReasoningEffort": false},
		"models": []any{map[string]any{"id": fakeapi.ChatModel, "name": "Fake Model", "reasoning": false,
			"contextWindow": 128000, "maxTokens": 4096}},
	}}}
	b, err := json.Marshal(models)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(conf, "models.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	// PI_OFFLINE: no update check, no telemetry, no download of fd or
	// ripgrep.
	return termagent.Start(t, tmux, termagent.Launch{
		Name: cfg.Name, Binary: cfg.Binary, Home: home, Dir: dir,
		Width: cfg.Width, Height: cfg.Height, Env: []string{"PI_OFFLINE=1"},
	})
}

// Idle says Pi waits at its editor, not working: its footer is drawn and
// no spinner line is.
func Idle(screen string) bool {
	return strings.Contains(screen, "%/128k") && !strings.Contains(screen, "Working...") && !strings.Contains(screen, "Retrying (")
}
