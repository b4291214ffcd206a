// Package gemini runs the real Gemini CLI for tests: the pinned release from
// the npm registry, in a private tmux pane with a HOME of its own, pointed at
// a fake Gemini API on loopback (internal/fakeapi) through
// GOOGLE_GEMINI_BASE_URL.
//
// It is a test helper. It reaches no API but the fake one and decides
// nothing about what a screen means.
package gemini

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omega-monitor/omega-monitor/internal/termagent"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// Version is the pinned Gemini CLI release the tests run. .ci/run installs
// the same one into the cache, so that no test downloads it.
const Version = "0.61.0"

// Pin is the npm package that carries Gemini CLI at Version.
var Pin = termagent.Pin{
	Package: "@google/gemini-cli", Version: Version, VersionEnv: "OMEGA_GEMINI_VERSION",
	CacheEnv: "OMEGA_GEMINI_CACHE", Cache: "gemini-cli",
	Binaries: []string{filepath.Join("node_modules", ".bin", "gemini")},
	// "0.61.0"
	VersionOf: func(out string) string { return strings.TrimSpace(out) },
}

// APIKey is the key Gemini CLI is given; the fake API accepts any.
const APIKey = "omega-monitor-fake-gemini-key"

// Config says how to start Gemini CLI.
type Config struct {
	Binary string
	// API is the fake Gemini API's base URL (fakeapi.Server.URL).
	API string
	// Width and Height are the pane's size; 100 by 40 when zero.
	Width, Height int
	// Untrusted leaves the working directory untrusted, so that the trust
	// dialog shows at start.
	Untrusted bool
	// NoKey gives no API key, so that the key entry box shows at start.
	NoKey bool
	Name  string
	// Prepare, when set, runs once HOME and its .gemini/settings.json are
	// written and before Gemini CLI starts, to put in place what it reads
	// at start (hooks).
	Prepare func(home string) error
}

// Start starts Gemini CLI in its default approval mode (it asks before a
// shell command).
func Start(t testing.TB, tmux *testenv.TmuxServer, cfg Config) *termagent.Session {
	t.Helper()
	if cfg.Name == "" {
		cfg.Name = "gemini"
	}
	home, dir := termagent.Dirs(t)
	conf := filepath.Join(home, ".gemini")
	if err := os.MkdirAll(conf, 0o700); err != nil {
		t.Fatal(err)
	}
	writeJSON(t, filepath.Join(conf, "settings.json"), map[string]any{
		"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"privacy":  map[string]any{"usageStatisticsEnabled": false},
		"general":  map[string]any{"disableAutoUpdate": true, "disableUpdateNag": true},
	})
	if !cfg.Untrusted {
		writeJSON(t, filepath.Join(conf, "trustedFolders.json"), map[string]any{dir: "TRUST_FOLDER"})
	}
	if cfg.Prepare != nil {
		if err := cfg.Prepare(home); err != nil {
			t.Fatalf("gemini: preparing %s: %v", home, err)
		}
	}
	env := []string{"GOOGLE_GEMINI_BASE_URL=" + cfg.API}
	if !cfg.NoKey {
		env = append(env, "GEMINI_API_KEY="+APIKey)
	}
	return termagent.Start(t, tmux, termagent.Launch{
		Name: cfg.Name, Binary: cfg.Binary, Home: home, Dir: dir,
		Width: cfg.Width, Height: cfg.Height, Env: env,
	})
}

func writeJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// Idle says Gemini CLI waits at its empty composer, not working.
func Idle(screen string) bool {
	return strings.Contains(screen, "Type your message or @path/to/file") && !strings.Contains(screen, "esc to cancel")
}
