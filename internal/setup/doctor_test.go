package setup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDoctor: each check says what it found and, when wrong, its fix; a
// home made ready (the funnel installed, a config, the hooks of the agent
// found) has nothing to fix; doctor changes nothing.
func TestDoctor(t *testing.T) {
	t.Parallel()
	mux := filepath.Join(t.TempDir(), "tmux")
	writeFile(t, mux, "#!/bin/sh\necho tmux 9.9\n")
	if err := os.Chmod(mux, 0o755); err != nil {
		t.Fatal(err)
	}
	env := testEnv(t, map[string]string{"OMEGA_MONITOR_MUX": mux})
	said := func() (lines string, bad int) {
		for _, c := range Doctor(t.Context(), env) {
			lines += c.String() + "\n"
			if !c.OK {
				bad++
			}
		}
		return lines, bad
	}
	got, bad := said()
	for _, want := range []string{
		"ok    multiplexer: " + mux + " (tmux 9.9)",
		"ok    state home: " + env.State + " (not made yet",
		"FIX   alerts: no alert funnel at ",
		"ok    answers from the chat: off: no Telegram config at ",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("doctor lacks %q:\n%s", want, got)
		}
	}
	if bad != 1 {
		t.Errorf("%d to fix, want 1:\n%s", bad, got)
	}
	if _, err := os.Stat(env.State); err == nil {
		t.Error("doctor made the state home")
	}

	// An agent here without our hooks; a state home another user can write.
	writeFile(t, filepath.Join(env.Home, ".claude", "CLAUDE.md"), "mine\n")
	if err := os.MkdirAll(env.State, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(env.State, 0o777)
	got, _ = said()
	for _, want := range []string{
		"FIX   claude hooks: not installed", "→ omega-monitor install --hooks --claude",
		"FIX   state home: ", "→ chmod 700 " + env.State,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("doctor lacks %q:\n%s", want, got)
		}
	}

	// Made ready: nothing to fix.
	os.Chmod(env.State, 0o700)
	if _, err := install(t, env, Options{}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(env.Home, ".omega", "telegram.conf"), "bot_token=1:x\nchat_id=42\n")
	os.Chmod(filepath.Join(env.Home, ".omega", "telegram.conf"), 0o600)
	if _, err := install(t, env, Options{Hooks: true, HookAgents: []string{HookClaude}}); err != nil {
		t.Fatal(err)
	}
	if got, bad = said(); bad != 0 || !strings.Contains(got, "ok    claude hooks: installed") || !strings.Contains(got, "ok    alerts: the funnel ") {
		t.Errorf("a home made ready: %d to fix:\n%s", bad, got)
	}
}
