// Package copilot runs the real GitHub Copilot CLI for tests: the pinned
// release from the npm registry, in a private tmux pane with a HOME of its
// own, pointed at a fake OpenAI-compatible API on loopback (internal/fakeapi's
// Chat Completions) in its BYOK mode (COPILOT_PROVIDER_BASE_URL), which
// needs no GitHub account.
//
// It is a test helper. It reaches no API but the fake one and decides
// nothing about what a screen means.
package copilot

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

// Version is the pinned Copilot CLI release the tests run. .ci/run
// installs the same one into the cache, so that no test downloads it.
const Version = "1.0.102"

// Pin is the npm package that carries Copilot CLI at Version.
var Pin = termagent.Pin{
	Package: "@github/copilot", Version: Version, VersionEnv: "OMEGA_COPILOT_VERSION",
	CacheEnv: "OMEGA_COPILOT_CACHE", Cache: "copilot",
	Binaries: []string{filepath.Join("node_modules", ".bin", "copilot")},
	// "GitHub Copilot CLI 1.0.102." and a line more
	VersionOf: func(out string) string {
		for f := range strings.FieldsSeq(out) {
			if v := strings.TrimSuffix(f, "."); len(v) > 0 && v[0] >= '0' && v[0] <= '9' && strings.Count(v, ".") == 2 {
				return v
			}
		}
		return ""
	},
}

// Config says how to start Copilot CLI.
type Config struct {
	Binary string
	// API is the fake Chat Completions API's URL (fakeapi.Server.URL).
	API string
	// Width and Height are the pane's size; 100 by 40 when zero.
	Width, Height int
	// Untrusted leaves the working directory untrusted, so that the trust
	// dialog shows at start.
	Untrusted bool
	Name      string
}

// Start starts Copilot CLI in its default mode (it asks before a command
// that writes).
func Start(t testing.TB, tmux *testenv.TmuxServer, cfg Config) *termagent.Session {
	t.Helper()
	if cfg.Name == "" {
		cfg.Name = "copilot"
	}
	home, dir := termagent.Dirs(t)
	conf := filepath.Join(home, ".copilot")
	if err := os.MkdirAll(conf, 0o700); err != nil {
		t.Fatal(err)
	}
	state := map[string]any{"firstLaunchAt": "2026-01-01T00:00:00.000Z", "appTipShown": true}
	if !cfg.Untrusted {
		state["trustedFolders"] = []string{dir}
	}
	b, err := json.Marshal(state)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(conf, "config.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return termagent.Start(t, tmux, termagent.Launch{
		Name: cfg.Name, Binary: cfg.Binary, Home: home, Dir: dir,
		Width: cfg.Width, Height: cfg.Height, Env: []string{
			"COPILOT_PROVIDER_BASE_URL=" + cfg.API + "/v1", "COPILOT_PROVIDER_API_KEY=omega-monitor-fake-key",
			"COPILOT_MODEL=" + fakeapi.ChatModel, "COPILOT_AUTO_UPDATE=false",
		},
	})
}

// Idle says Copilot CLI waits at its empty input, not working.
func Idle(screen string) bool {
	return strings.Contains(screen, "Interactive · ") && !strings.Contains(screen, "Working")
}
