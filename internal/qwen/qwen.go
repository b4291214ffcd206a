// Package qwen runs the real Qwen Code for tests: the pinned release from
// the npm registry, in a private tmux pane with a HOME of its own, pointed
// at a fake OpenAI-compatible API on loopback (internal/fakeapi's Chat
// Completions) through OPENAI_BASE_URL, in its default approval mode (it
// asks before a shell command).
//
// It is a test helper. It reaches no API but the fake one and decides
// nothing about what a screen means.
package qwen

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
	"github.com/omega-monitor/omega-monitor/internal/termagent"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// Version is the pinned Qwen Code release the tests run. .ci/run installs
// the same one into the cache, so that no test downloads it.
const Version = "0.24.4"

// Pin is the npm package that carries Qwen Code at Version.
var Pin = termagent.Pin{
	Package: "@qwen-code/qwen-code", Version: Version, VersionEnv: "OMEGA_QWEN_VERSION",
	CacheEnv: "OMEGA_QWEN_CACHE", Cache: "qwen-code",
	Binaries: []string{filepath.Join("node_modules", ".bin", "qwen")},
	// "0.24.4"
	VersionOf: func(out string) string { return strings.TrimSpace(out) },
}

// Config says how to start Qwen Code.
type Config struct {
	Binary string
	// API is the fake Chat Completions API's URL (fakeapi.Server.URL).
	API string
	// Width and Height are the pane's size; 100 by 40 when zero.
	Width, Height int
	Name          string
}

// Start starts Qwen Code in its default approval mode: it asks before a
// shell command (its own default, auto, lets a model judge).
func Start(t testing.TB, tmux *testenv.TmuxServer, cfg Config) *termagent.Session {
	t.Helper()
	if cfg.Name == "" {
		cfg.Name = "qwen"
	}
	home, dir := termagent.Dirs(t)
	return termagent.Start(t, tmux, termagent.Launch{
		Name: cfg.Name, Binary: cfg.Binary, Args: []string{"--approval-mode", "default"}, Home: home, Dir: dir,
		Width: cfg.Width, Height: cfg.Height, Env: []string{
			"OPENAI_API_KEY=omega-monitor-fake-key", "OPENAI_BASE_URL=" + cfg.API + "/v1",
			"OPENAI_MODEL=" + fakeapi.ChatModel, "NO_UPDATE_NOTIFIER=1",
		},
	})
}

// Idle says Qwen Code waits at its empty input, not working.
func Idle(screen string) bool {
	return strings.Contains(screen, "Type your message or @path/to/file") && strings.Contains(screen, "➜ ") &&
		!strings.Contains(screen, "Enter to steer") && !strings.Contains(screen, "esc to cancel")
}
