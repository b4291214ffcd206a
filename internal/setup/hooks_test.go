package setup

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omega-monitor/omega-monitor/internal/board"

	"github.com/google/go-cmp/cmp"
)

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestHooksInstallIntoAnEmptyHome: every agent's user file is made, private,
// with our hook under each of its events, and says where; a second run
// changes nothing.
func TestHooksInstallIntoAnEmptyHome(t *testing.T) {
	t.Parallel()
	env := testEnv(t, nil)
	out, err := install(t, env, Options{Hooks: true, HookAgents: HookAgents})
	if err != nil {
		t.Fatal(err)
	}
	claude := filepath.Join(env.Home, ".claude", "settings.json")
	codex := filepath.Join(env.Home, ".codex", "hooks.json")
	toml := filepath.Join(env.Home, ".codex", "config.toml")
	gemini := filepath.Join(env.Home, ".gemini", "settings.json")
	for _, want := range []string{
		"claude hooks: wrote our hook for Notification, PermissionRequest, Stop, StopFailure into " + claude,
		"codex hooks: wrote our hook for PermissionRequest, Stop, Interrupt into " + codex + "; set notify in " + toml,
		"gemini hooks: wrote our hook for Notification, AfterAgent into " + gemini,
		"opencode hooks: wrote our plugin for permission.asked, permission.updated, question.asked, session.idle, session.error into " + filepath.Join(env.Home, ".config", "opencode", "plugin", "omega-monitor-wake.js"),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, f := range []string{claude, codex, toml, gemini} {
		if m := mode(t, f); m != 0o600 {
			t.Errorf("%s: mode %v, want 0600", f, m)
		}
		if m := mode(t, filepath.Dir(f)); m != 0o700 {
			t.Errorf("%s: mode %v, want 0700", filepath.Dir(f), m)
		}
	}
	want := map[string]any{"hooks": map[string]any{}}
	for _, e := range []string{"Notification", "PermissionRequest", "Stop", "StopFailure"} {
		want["hooks"].(map[string]any)[e] = []any{map[string]any{"hooks": []any{
			map[string]any{"type": "command", "command": "'/opt/omega/omega-monitor' wake", "timeout": 10.0}}}}
	}
	if diff := cmp.Diff(want, readJSON(t, claude)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", claude, diff)
	}
	if b, _ := os.ReadFile(toml); !strings.Contains(string(b), "\nnotify = [\"/opt/omega/omega-monitor\",\"wake\"]\n") {
		t.Errorf("%s:\n%s", toml, b)
	}
	if got := HooksInstalled(env.Home, env.getenv); !cmp.Equal(got, map[string]bool{HookClaude: true, HookCodex: true, HookGemini: true, HookOpenCode: true}) {
		t.Errorf("HooksInstalled = %v", got)
	}

	before := map[string]string{}
	for _, f := range []string{claude, codex, toml, gemini} {
		b, _ := os.ReadFile(f)
		before[f] = string(b)
	}
	out, err = install(t, env, Options{Hooks: true, HookAgents: HookAgents})
	if err != nil {
		t.Fatal(err)
	}
	if want := "claude hooks: up to date\ncodex hooks: up to date\ngemini hooks: up to date\nopencode hooks: up to date\n"; out != want {
		t.Errorf("second install said %q, want %q", out, want)
	}
	for f, b := range before {
		if now, _ := os.ReadFile(f); string(now) != b {
			t.Errorf("%s changed on a second install:\n%s", f, now)
		}
	}
}

// TestHooksMergeAndUninstall: the user's own settings, hooks and groups
// stay, an old hook of ours (another path) is replaced, not doubled, and
// uninstall takes out ours alone.
func TestHooksMergeAndUninstall(t *testing.T) {
	t.Parallel()
	env := testEnv(t, map[string]string{"OMEGA_MONITOR_HOME": "/somewhere"})
	claude := filepath.Join(env.Home, ".claude", "settings.json")
	const theirs = `{
  "model": "opus",
  "permissions": {"allow": ["Bash(ls:*)"]},
  "hooks": {
    "Stop": [
      {"matcher": "", "hooks": [
        {"type": "command", "command": "notify-send done"},
        {"type": "command", "command": "'/old/place/omega-monitor' wake"}
      ]}
    ],
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}],
    "Notification": [{"hooks": [{"type": "command", "command": "/usr/bin/omega-monitor wake"}]}]
  }
}`
	writeFile(t, claude, theirs)
	if _, err := install(t, env, Options{Hooks: true, HookAgents: []string{HookClaude}}); err != nil {
		t.Fatal(err)
	}
	got := readJSON(t, claude)
	ours := map[string]any{"hooks": []any{map[string]any{"type": "command", "timeout": 10.0,
		"command": "'/opt/omega/omega-monitor' wake --home '" + env.State + "'"}}}
	hooks := got["hooks"].(map[string]any)
	wantStop := []any{
		map[string]any{"matcher": "", "hooks": []any{map[string]any{"type": "command", "command": "notify-send done"}}},
		ours,
	}
	if diff := cmp.Diff(wantStop, hooks["Stop"]); diff != "" {
		t.Errorf("Stop (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{ours}, hooks["Notification"]); diff != "" {
		t.Errorf("Notification: the old hook of ours is replaced, not doubled (-want +got):\n%s", diff)
	}
	if got["model"] != "opus" || got["permissions"] == nil || hooks["PreToolUse"] == nil {
		t.Errorf("the user's settings were not kept: %v", got)
	}

	// Install kept the user's file as it was.
	if b, _ := os.ReadFile(claude + backupSuffix); string(b) != theirs {
		t.Errorf("the backup is not the file before:\n%s", b)
	}
	out, err := install(t, env, Options{Hooks: true, Uninstall: true, HookAgents: []string{HookClaude}})
	// What changed is shown, a line each; the backup install kept goes.
	if err != nil || !strings.HasPrefix(out, "claude hooks: removed our hooks from "+claude+"; removed "+claude+backupSuffix+", which install had made\n") ||
		!strings.Contains(out, "\n    settings.json: -             \"command\": \"'/opt/omega/omega-monitor' wake") || strings.Contains(out, "settings.json: + ") {
		t.Fatalf("uninstall: %q, %v", out, err)
	}
	if _, err := os.Stat(claude + backupSuffix); err == nil {
		t.Error("the backup install kept is left after uninstall")
	}
	got = readJSON(t, claude)
	want := map[string]any{
		"model":       "opus",
		"permissions": map[string]any{"allow": []any{"Bash(ls:*)"}},
		"hooks": map[string]any{
			"Stop":       []any{map[string]any{"matcher": "", "hooks": []any{map[string]any{"type": "command", "command": "notify-send done"}}}},
			"PreToolUse": []any{map[string]any{"matcher": "Bash", "hooks": []any{map[string]any{"type": "command", "command": "audit.sh"}}}},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after uninstall (-want +got):\n%s", diff)
	}
	if HooksInstalled(env.Home, env.getenv)[HookClaude] {
		t.Error("HooksInstalled says installed after uninstall")
	}
}

// TestHooksKeepTheirPlace: Codex keys the trust a user gave each hook by
// its place (event, group, handler), so a group of ours already as install
// writes it stays where it is, and so do the user's groups after it; one
// that is not (an older path) is replaced, and the new one goes last.
func TestHooksKeepTheirPlace(t *testing.T) {
	t.Parallel()
	env := testEnv(t, nil)
	codex := filepath.Join(env.Home, ".codex", "hooks.json")
	ours := `{"hooks": [{"type": "command", "command": "'/opt/omega/omega-monitor' wake", "timeout": 10}]}`
	old := `{"hooks": [{"type": "command", "command": "'/old/omega-monitor' wake", "timeout": 10}]}`
	theirs := `{"matcher": "", "hooks": [{"type": "command", "command": "tell-me.sh"}]}`
	writeFile(t, codex, `{"hooks": {
  "Stop": [`+ours+`, `+theirs+`],
  "UserPromptSubmit": [`+ours+`],
  "Interrupt": [`+ours+`, `+theirs+`],
  "PermissionRequest": [`+old+`, `+theirs+`]
}}`)
	if _, err := install(t, env, Options{Hooks: true, HookAgents: []string{HookCodex}}); err != nil {
		t.Fatal(err)
	}
	var got map[string]map[string][]any
	if err := json.Unmarshal([]byte(readFileString(t, codex)), &got); err != nil {
		t.Fatal(err)
	}
	var o, th any
	json.Unmarshal([]byte(ours), &o)
	json.Unmarshal([]byte(theirs), &th)
	// UserPromptSubmit, which an older install hooked, loses ours.
	want := map[string][]any{
		"Stop":              {o, th},
		"Interrupt":         {o, th},
		"PermissionRequest": {th, o},
	}
	if diff := cmp.Diff(want, got["hooks"]); diff != "" {
		t.Errorf("hooks (-want +got):\n%s", diff)
	}
	before := readFileString(t, codex)
	if out, err := install(t, env, Options{Hooks: true, HookAgents: []string{HookCodex}}); err != nil || out != "codex hooks: up to date\n" {
		t.Errorf("install again: %q, %v", out, err)
	}
	if now := readFileString(t, codex); now != before {
		t.Errorf("install again changed hooks.json:\n%s", now)
	}
}

func readFileString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestHooksRefuseWhatTheyCannotRead(t *testing.T) {
	t.Parallel()
	env := testEnv(t, nil)
	gemini := filepath.Join(env.Home, ".gemini", "settings.json")
	writeFile(t, gemini, "{ // a comment, not JSON\n}")
	_, err := install(t, env, Options{Hooks: true, HookAgents: []string{HookGemini}})
	if err == nil || !strings.Contains(err.Error(), "not a JSON object, left as it is") {
		t.Errorf("install over a file that is not JSON: %v", err)
	}
	if b, _ := os.ReadFile(gemini); string(b) != "{ // a comment, not JSON\n}" {
		t.Errorf("the file was changed: %s", b)
	}
	claude := filepath.Join(env.Home, ".claude", "settings.json")
	writeFile(t, claude, `{"hooks": {"Stop": "not a list"}}`)
	if _, err := install(t, env, Options{Hooks: true, HookAgents: []string{HookClaude}}); err == nil {
		t.Error("install over hooks.Stop that is not a list: no error")
	}
}

// TestHooksFollowALinkedSettingsFile: a dotfiles checkout's link stays a
// link, its target rewritten.
func TestHooksFollowALinkedSettingsFile(t *testing.T) {
	t.Parallel()
	env := testEnv(t, nil)
	real := filepath.Join(env.Home, "dotfiles", "claude-settings.json")
	writeFile(t, real, `{"theme": "dark"}`)
	link := filepath.Join(env.Home, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(link), 0o700)
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if _, err := install(t, env, Options{Hooks: true, HookAgents: []string{HookClaude}}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link is no longer a link: %v", err)
	}
	if got := readJSON(t, real); got["theme"] != "dark" || got["hooks"] == nil {
		t.Errorf("the link's target: %v", got)
	}
}

// TestCodexNotify: notify goes at the top level (before any table), a
// notify of the user's own is left alone and said, and uninstall removes
// ours alone; $CODEX_HOME is where Codex keeps its user files.
func TestCodexNotify(t *testing.T) {
	t.Parallel()
	codexHome := filepath.Join(t.TempDir(), "codex home")
	env := testEnv(t, map[string]string{"CODEX_HOME": codexHome})
	toml := filepath.Join(codexHome, "config.toml")
	const user = "model = \"o3\"\n\n[projects.\"/w\"]\ntrust_level = \"trusted\"\n"
	writeFile(t, toml, user)
	if _, err := install(t, env, Options{Hooks: true, HookAgents: []string{HookCodex}}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(toml)
	want := "# Added by omega-monitor install --hooks: each turn's end wakes the pane's watcher.\nnotify = [\"/opt/omega/omega-monitor\",\"wake\"]\n" + user
	if diff := cmp.Diff(want, string(b)); diff != "" {
		t.Errorf("config.toml (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(codexHome, "hooks.json")); err != nil {
		t.Errorf("hooks.json not in $CODEX_HOME: %v", err)
	}
	if _, err := install(t, env, Options{Hooks: true, Uninstall: true, HookAgents: []string{HookCodex}}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(toml); string(b) != user {
		t.Errorf("after uninstall:\n%s", b)
	}

	mine := "notify = [\"/usr/local/bin/tell-me\"]\n" + user
	writeFile(t, toml, mine)
	out, err := install(t, env, Options{Hooks: true, HookAgents: []string{HookCodex}})
	if err != nil || !strings.Contains(out, "sets notify to a program of your own: left as it is") {
		t.Errorf("install over the user's notify: %q, %v", out, err)
	}
	if b, _ := os.ReadFile(toml); string(b) != mine {
		t.Errorf("the user's notify was changed:\n%s", b)
	}
}

// TestWakeCommandQuoting: the binary's path, however named, reaches the
// shell as one word, and reads back as ours.
func TestWakeCommandQuoting(t *testing.T) {
	t.Parallel()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	for _, bin := range []string{"/opt/omega/omega-monitor", "/home/o'brien/my tools/omega-monitor", "/x/$(id)/`id`;omega-monitor"} {
		env := Env{Bin: bin, State: "/st ate", Getenv: func(string) string { return "set" }}
		line := wakeCommand(env, bin)
		out, err := exec.Command(sh, "-c", `printf '%s\0' `+line).Output()
		if err != nil {
			t.Fatal(err)
		}
		want := []string{bin, "wake", "--home", "/st ate", ""}
		if diff := cmp.Diff(want, strings.Split(string(out), "\x00")); diff != "" {
			t.Errorf("%q through sh (-want +got):\n%s", line, diff)
		}
		if IsWakeCommand(line) != (filepath.Base(bin) == "omega-monitor") {
			t.Errorf("IsWakeCommand(%q) = %v", line, IsWakeCommand(line))
		}
	}
	for line, want := range map[string]bool{
		"omega-monitor wake":                    true,
		"/usr/bin/omega-monitor wake --home /x": true,
		"omega-monitor wake; rm -rf ~":          false, // more than we write: the user's
		"my-omega-monitor wake":                 false,
		"omega-monitor status":                  false,
		"echo omega-monitor wake":               false,
		"":                                      false,
	} {
		if got := IsWakeCommand(line); got != want {
			t.Errorf("IsWakeCommand(%q) = %v, want %v", line, got, want)
		}
	}
}

func TestHooksSummary(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		installed map[string]bool
		agents    []string
		want      string
	}{
		{nil, nil, ""},
		{map[string]bool{HookClaude: true}, []string{HookClaude}, "hooks (a wake at the agent's own events): claude installed"},
		{map[string]bool{HookClaude: true}, []string{"claude", "gemini", "tern"},
			"hooks (a wake at the agent's own events): claude installed, gemini not installed, tern not installed (omega-monitor install --hooks --gemini --agent tern)"},
		{nil, HookAgents, "hooks (a wake at the agent's own events): claude not installed, codex not installed, gemini not installed, opencode not installed (omega-monitor install --hooks --claude --codex --gemini --opencode)"},
	} {
		if got := HooksSummary(tc.installed, tc.agents); got != tc.want {
			t.Errorf("HooksSummary(%v, %v):\n got %q\nwant %q", tc.installed, tc.agents, got, tc.want)
		}
	}
}

// TestHooksOnlyForAgentsFoundAndUninstallLeavesNoTrace: asked for no agent
// by name, install --hooks writes only for the agents on the machine (a
// user directory, or the program on PATH), and says why it skipped the
// others; uninstall takes out what it wrote and removes the files and
// directories it made, leaving the user's own, whatever the installing
// binary is called.
func TestHooksOnlyForAgentsFoundAndUninstallLeavesNoTrace(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	writeFile(t, filepath.Join(bin, "gemini"), "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(bin, "gemini"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := testEnv(t, map[string]string{"PATH": bin})
	env.Bin = "/opt/omega/om" // not called omega-monitor
	// Claude Code's directory is there, with a file of the user's in it;
	// Codex is nowhere; Gemini CLI is on PATH, its directory not made yet.
	writeFile(t, filepath.Join(env.Home, ".claude", "CLAUDE.md"), "mine\n")
	out, err := install(t, env, Options{Hooks: true, HookAgents: HookAgents, HooksFound: true})
	if err != nil {
		t.Fatal(err)
	}
	codexDir := filepath.Join(env.Home, ".codex")
	for _, want := range []string{
		"claude hooks: wrote our hook",
		"codex hooks: skipped, not on this machine (no " + codexDir + " and no codex on PATH); --codex writes them all the same",
		"gemini hooks: wrote our hook",
		"    settings.json: +     \"Notification\": [",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("install lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(codexDir); err == nil {
		t.Errorf("%s made for an agent not on the machine", codexDir)
	}
	out, err = install(t, env, Options{Hooks: true, Uninstall: true, HookAgents: HookAgents, HooksFound: true})
	if err != nil {
		t.Fatal(err)
	}
	claude, gemini := filepath.Join(env.Home, ".claude", "settings.json"), filepath.Join(env.Home, ".gemini")
	for _, want := range []string{
		"claude hooks: removed our hooks from " + claude + "; removed " + claude + ", which install had made",
		"gemini hooks: removed our hooks from " + filepath.Join(gemini, "settings.json") + "; removed " +
			filepath.Join(gemini, "settings.json") + " and " + gemini + ", which install had made",
		"codex hooks: up to date",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("uninstall lacks %q:\n%s", want, out)
		}
	}
	for _, gone := range []string{claude, gemini, filepath.Join(env.State, createdFile)} {
		if _, err := os.Stat(gone); err == nil {
			t.Errorf("%s left after uninstall", gone)
		}
	}
	if b, err := os.ReadFile(filepath.Join(env.Home, ".claude", "CLAUDE.md")); err != nil || string(b) != "mine\n" {
		t.Errorf("the user's own file: %q, %v", b, err)
	}
}

func TestLineDiff(t *testing.T) {
	for _, c := range []struct {
		before, after string
		want          []string
	}{
		{"a\nb\nc\n", "a\nx\nc\n", []string{"- b", "+ x"}},
		{"", "a\n", []string{"+ a"}},
		{"a\nb\n", "a\nb\n", nil},
		{"a\nb\n", "b\n", []string{"- a"}},
	} {
		if diff := cmp.Diff(c.want, lineDiff([]byte(c.before), []byte(c.after))); diff != "" {
			t.Errorf("%q → %q (-want +got):\n%s", c.before, c.after, diff)
		}
	}
}

// TestWatchedHooksByTheBoardsNames: the board names an agent as classify
// does ("Claude Code"), install by its own name (claude); status reads the
// one through the other. Another host's watcher and an agent without hooks
// of ours are not asked about.
func TestWatchedHooksByTheBoardsNames(t *testing.T) {
	t.Parallel()
	env := testEnv(t, nil)
	if _, err := install(t, env, Options{Hooks: true, HookAgents: []string{HookClaude}}); err != nil {
		t.Fatal(err)
	}
	f := board.Fleet{Watchers: []board.Watcher{
		{Agent: "Claude Code"}, {Agent: "Codex CLI"}, {Agent: "Qwen Code"}, {Agent: "Gemini CLI", Host: "gpu"}, {Agent: "Claude Code"},
	}}
	hooks, line := WatchedHooks(env.Home, env.getenv, f)
	if diff := cmp.Diff(map[string]bool{HookClaude: true, HookCodex: false}, hooks); diff != "" {
		t.Errorf("hooks (-want +got):\n%s", diff)
	}
	want := "hooks (a wake at the agent's own events): claude installed, codex not installed (omega-monitor install --hooks --codex)"
	if line != want {
		t.Errorf("line %q, want %q", line, want)
	}
	for name, want := range map[string]bool{"Claude Code": true, "Codex CLI": false, "Qwen Code": false, "": false, "claude": true} {
		if got := HooksInstalledFor(env.Home, env.getenv, name); got != want {
			t.Errorf("HooksInstalledFor(%q) = %v, want %v", name, got, want)
		}
	}
}
