package setup

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestHookEventsAsBefore: the events install --hooks writes each agent's
// hook under, the files and the handlers, now its description's, are those
// it wrote when they were this package's code.
func TestHookEventsAsBefore(t *testing.T) {
	before := map[string][]string{
		HookClaude:   {"Notification", "PermissionRequest", "Stop", "StopFailure"},
		HookCodex:    {"PermissionRequest", "Stop", "Interrupt"},
		HookGemini:   {"Notification", "AfterAgent"},
		HookOpenCode: {"permission.asked", "permission.updated", "question.asked", "session.idle", "session.error"},
	}
	home := t.TempDir()
	files := map[string]string{HookClaude: "/.claude/settings.json", HookCodex: "/.codex/hooks.json", HookGemini: "/.gemini/settings.json",
		HookOpenCode: "/.config/opencode/plugin/omega-monitor-wake.js"}
	entries := map[string]map[string]any{
		HookClaude: {"type": "command", "command": "C", "timeout": 10},
		HookCodex:  {"type": "command", "command": "C", "timeout": 10},
		HookGemini: {"type": "command", "command": "C", "name": "omega-monitor-wake", "timeout": 10000},
	}
	specs := hookSpecs(home, func(k string) string { return map[string]string{"CODEX_HOME": "relative"}[k] })
	if diff := cmp.Diff(HookAgents, hookAgents(specs)); diff != "" {
		t.Errorf("the agents, in order (-before +now):\n%s", diff)
	}
	for _, agent := range HookAgents {
		spec, _ := hookSpecOf(specs, agent)
		if diff := cmp.Diff(before[agent], spec.events); diff != "" {
			t.Errorf("%s's events (-before +now):\n%s", agent, diff)
		}
		if spec.file != home+files[agent] {
			t.Errorf("%s's file is %s, before %s", agent, spec.file, home+files[agent])
		}
		if spec.entry == nil {
			continue
		}
		if diff := cmp.Diff(entries[agent], spec.entry("C")); diff != "" {
			t.Errorf("%s's handler (-before +now):\n%s", agent, diff)
		}
	}
	specs = hookSpecs(home, func(k string) string { return map[string]string{"CODEX_HOME": "/ch"}[k] })
	if spec, _ := hookSpecOf(specs, HookCodex); spec.file != "/ch/hooks.json" {
		t.Errorf("Codex's file with CODEX_HOME=/ch is %s, before /ch/hooks.json", spec.file)
	}
}

// ternRules describes an agent the project does not ship, Tern, whose
// hooks are read from $TERN_HOME/conf/settings.json (default ~/.tern) in
// the format Claude Code's settings have.
const ternRules = `{"agents": [{"name": "Tern", "box": {"prompt": "^tern> (.*)$"}, "programs": ["tern"],
  "hooks": {"events": ["Stop", "Asked"], "settings": {"home": "TERN_HOME", "default": ".tern", "file": "conf/settings.json"}, "timeout": 5}}],
 "rules": [{"agent": "tern", "name": "w", "region": "above", "pattern": "^thinking$", "verdict": "working"}]}`

// TestHooksOfADescribedAgent: an agent described in the watchers' rules
// file with hooks has them written by install --hooks --agent, with no
// build: our handler under each of its events, in the file its
// description says, beside the user's own hooks; list and status see them;
// asked for no agent by name, install writes them only where Tern is;
// uninstall takes out ours and leaves the user's.
func TestHooksOfADescribedAgent(t *testing.T) {
	t.Parallel()
	env := testEnv(t, nil)
	ternHome := filepath.Join(env.Home, "th")
	vars := map[string]string{"HOME": env.Home, "OMEGA_MONITOR_HOME": env.State, "TERN_HOME": ternHome}
	env.Getenv = func(k string) string { return vars[k] }
	if err := os.MkdirAll(env.State, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(env.State, "rules.json"), []byte(ternRules), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := install(t, env, Options{Hooks: true, HookAgents: HookSelection(false, false, false, false, ""), HooksFound: true})
	if err != nil || strings.Contains(out, "tern hooks: wrote") || !strings.Contains(out, "tern hooks: skipped, not on this machine (no "+ternHome+"/conf and no tern on PATH); --agent tern writes them all the same") {
		t.Fatalf("install --hooks with no Tern here: %v\n%s", err, out)
	}
	settings := filepath.Join(ternHome, "conf", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o700); err != nil {
		t.Fatal(err)
	}
	theirs := `{"theme": "dark", "hooks": {"Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "notify-send done"}]}]}}`
	if err := os.WriteFile(settings, []byte(theirs), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := install(t, env, Options{Hooks: true, HookAgents: HookSelection(false, false, false, false, "tern")}); err != nil || !strings.Contains(out, "tern hooks: wrote our hook for Stop, Asked into "+settings) {
		t.Fatalf("install --hooks --agent tern: %v\n%s", err, out)
	}
	var got struct {
		Theme string `json:"theme"`
		Hooks map[string][]struct {
			Hooks []map[string]any `json:"hooks"`
		} `json:"hooks"`
	}
	b, err := os.ReadFile(settings)
	if err != nil || json.Unmarshal(b, &got) != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	ours := map[string]any{"type": "command", "command": "'/opt/omega/omega-monitor' wake --home '" + env.State + "'", "timeout": 5.0}
	want := map[string][]map[string]any{
		"Stop":  {{"type": "command", "command": "notify-send done"}, ours},
		"Asked": {ours},
	}
	have := map[string][]map[string]any{}
	for event, groups := range got.Hooks {
		for _, g := range groups {
			have[event] = append(have[event], g.Hooks...)
		}
	}
	if diff := cmp.Diff(want, have); diff != "" || got.Theme != "dark" {
		t.Errorf("Tern's hooks (-want +got):\n%s(theme %q)", diff, got.Theme)
	}
	if installed := HooksInstalled(env.Home, env.Getenv); !installed["tern"] || !HooksInstalledFor(env.Home, env.Getenv, "Tern") {
		t.Errorf("installed %v: Tern's not seen", installed)
	}
	if out, err := install(t, env, Options{Hooks: true, Uninstall: true, HookAgents: []string{"tern"}}); err != nil || !strings.Contains(out, "removed our hooks from "+settings) {
		t.Fatalf("uninstall: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(settings); !strings.Contains(string(b), "notify-send done") || strings.Contains(string(b), "omega-monitor") {
		t.Errorf("after uninstall:\n%s", b)
	}
	if _, err := install(t, env, Options{Hooks: true, HookAgents: []string{"aider"}}); err == nil || !strings.Contains(err.Error(), `no agent "aider" (known: claude, codex, gemini, opencode, tern;`) {
		t.Errorf("install --hooks --agent aider: %v, want no such agent", err)
	}
}
