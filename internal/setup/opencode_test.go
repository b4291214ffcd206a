package setup

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/poll"
)

// TestOpenCodePluginInstallAndUninstall: install writes our plugin,
// private, into OpenCode's plugin directory (made for it), says so, and a
// second run changes nothing; uninstall removes the plugin and the
// directory it made, and nothing else.
func TestOpenCodePluginInstallAndUninstall(t *testing.T) {
	t.Parallel()
	env := testEnv(t, map[string]string{"OMEGA_MONITOR_HOME": "/state home"})
	conf := filepath.Join(env.Home, ".config", "opencode")
	writeFile(t, filepath.Join(conf, "opencode.json"), "{}\n")
	out, err := install(t, env, Options{Hooks: true, HookAgents: []string{HookOpenCode}})
	if err != nil {
		t.Fatal(err)
	}
	plugin := filepath.Join(conf, "plugin", "omega-monitor-wake.js")
	if want := "opencode hooks: wrote our plugin for permission.asked, permission.updated, question.asked, session.idle, session.error into " + plugin; !strings.Contains(out, want) {
		t.Errorf("install said:\n%s\nwant %q", out, want)
	}
	b, err := os.ReadFile(plugin)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `const argv = ["/opt/omega/omega-monitor","wake","--home","`+env.State+`"];`) {
		t.Errorf("the plugin does not run the wake with the state home:\n%s", b)
	}
	if m := mode(t, plugin); m != 0o600 {
		t.Errorf("plugin mode %v, want 0600", m)
	}
	if m := mode(t, filepath.Dir(plugin)); m != 0o700 {
		t.Errorf("plugin directory mode %v, want 0700", m)
	}
	if !HooksInstalled(env.Home, env.getenv)[HookOpenCode] {
		t.Error("HooksInstalled says OpenCode's plugin is not installed")
	}
	if out, err := install(t, env, Options{Hooks: true, HookAgents: []string{HookOpenCode}}); err != nil || out != "opencode hooks: up to date\n" {
		t.Errorf("second install: %q, %v", out, err)
	}
	out, err = install(t, env, Options{Hooks: true, Uninstall: true, HookAgents: []string{HookOpenCode}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "opencode hooks: removed our plugin " + plugin + " and " + filepath.Dir(plugin) + ", which install had made\n"; out != want {
		t.Errorf("uninstall said %q, want %q", out, want)
	}
	if _, err := os.Stat(filepath.Dir(plugin)); err == nil {
		t.Error("the plugin directory install made is left")
	}
	if b, err := os.ReadFile(filepath.Join(conf, "opencode.json")); err != nil || string(b) != "{}\n" {
		t.Errorf("the user's config: %q, %v", b, err)
	}
	if HooksInstalled(env.Home, env.getenv)[HookOpenCode] {
		t.Error("HooksInstalled says OpenCode's plugin is installed after uninstall")
	}
}

// TestOpenCodePluginLeavesOthersAlone: in our plugin's place, a file of the
// user's, a link, a directory or a huge file is left as it is by install
// and uninstall alike; the user's other plugins stay; XDG_CONFIG_HOME moves
// the directory, as it moves OpenCode's.
func TestOpenCodePluginLeavesOthersAlone(t *testing.T) {
	t.Parallel()
	huge := append([]byte(openCodeMark), bytes.Repeat([]byte("x"), 8<<20)...)
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, path string)
	}{
		{"a file of the user's", func(t *testing.T, path string) { writeFile(t, path, "export const Mine = async () => ({})\n") }},
		{"a link to our plugin's text", func(t *testing.T, path string) {
			target := filepath.Join(t.TempDir(), "elsewhere.js")
			writeFile(t, target, string(openCodePluginText([]string{"/x", "wake"})))
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
		}},
		{"a directory", func(t *testing.T, path string) {
			if err := os.MkdirAll(path, 0o700); err != nil {
				t.Fatal(err)
			}
		}},
		{"a huge file with our mark", func(t *testing.T, path string) { writeFile(t, path, string(huge)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			xdg := t.TempDir()
			env := testEnv(t, map[string]string{"XDG_CONFIG_HOME": xdg})
			dir := filepath.Join(xdg, "opencode", "plugin")
			path := filepath.Join(dir, "omega-monitor-wake.js")
			writeFile(t, filepath.Join(dir, "theirs.js"), "export const Theirs = async () => ({})\n")
			tc.plant(t, path)
			fi, _ := os.Lstat(path)
			for _, uninstall := range []bool{false, true} {
				out, err := install(t, env, Options{Hooks: true, Uninstall: uninstall, HookAgents: []string{HookOpenCode}})
				if err == nil && !strings.Contains(out, "left as it is") {
					t.Errorf("uninstall %v said %q, want the file left as it is", uninstall, out)
				}
				now, _ := os.Lstat(path)
				if now == nil || now.Mode() != fi.Mode() || now.Size() != fi.Size() {
					t.Errorf("uninstall %v: the file in our plugin's place changed", uninstall)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "theirs.js")); err != nil {
				t.Errorf("the user's plugin: %v", err)
			}
			if HooksInstalled(env.Home, env.getenv)[HookOpenCode] {
				t.Error("HooksInstalled counts a file that is not ours")
			}
		})
	}
}

// TestOpenCodePluginRunsTheWake runs our plugin in node, as OpenCode (bun)
// loads it: it exports one plugin; an event that wakes runs the program
// with exactly its argv, without a shell, whatever the path holds, and with
// the pane's environment; an event's own text never reaches it; other
// events run nothing.
func TestOpenCodePluginRunsTheWake(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("node is not on PATH")
		}
		t.Skip("node is not on PATH")
	}
	t.Parallel()
	dir := filepath.Join(t.TempDir(), `a b$(touch pwned)'"`)
	record := filepath.Join(t.TempDir(), "argv")
	bin := filepath.Join(dir, "omega-monitor")
	writeFile(t, bin, "#!/bin/sh\nprintf '%s\\n' \"$@\" \"pane=$TMUX_PANE\" >> '"+record+"'\n")
	if err := os.Chmod(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	plugin := filepath.Join(t.TempDir(), "plugin.mjs")
	if err := os.WriteFile(plugin, openCodePluginText([]string{bin, "wake", "--home", "/s t$HOME"}), 0o600); err != nil {
		t.Fatal(err)
	}
	script := `
const m = await import(process.argv[1]);
console.log(Object.keys(m).join(","));
const hooks = await m.OmegaMonitorWake({});
for (const type of ["session.status", "message.updated", "tui.prompt.append"]) {
  await hooks.event({ event: { type, properties: { text: "$(touch pwned2)" } } });
}
await hooks.event({ event: { type: "permission.asked", properties: { id: "x; touch pwned3" } } });
await hooks.event({});
await hooks.event({ event: null });
`
	cmd := exec.Command(node, "--input-type=module", "-e", script, plugin)
	cmd.Env = append(os.Environ(), "TMUX_PANE=%7")
	cmd.Dir = t.TempDir()
	got, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, got)
	}
	if strings.TrimSpace(string(got)) != "OmegaMonitorWake" {
		t.Errorf("the plugin exports %q, want OmegaMonitorWake alone", got)
	}
	want := []string{"wake", "--home", "/s t$HOME", "pane=%7"}
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		b, _ := os.ReadFile(record)
		if lines := strings.Split(strings.TrimSpace(string(b)), "\n"); slices.Equal(lines, want) {
			return poll.Success()
		}
		return poll.Continue("the program's record: %q", b)
	}, poll.WithTimeout(30*time.Second))
	for _, d := range []string{filepath.Dir(dir), cmd.Dir} {
		if m, _ := filepath.Glob(filepath.Join(d, "pwned*")); len(m) > 0 {
			t.Errorf("a shell ran: %v", m)
		}
	}
}
