package setup

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	alertpkg "github.com/omega-monitor/omega-monitor/alert"
	"github.com/omega-monitor/omega-monitor/internal/mirror"
	"github.com/omega-monitor/omega-monitor/scripts"
)

// testEnv is an Env in a home of the test's own, with the given variables.
func testEnv(t *testing.T, vars map[string]string) Env {
	t.Helper()
	home := t.TempDir()
	return Env{
		Home:   home,
		State:  filepath.Join(home, "state"),
		Bin:    "/opt/omega/omega-monitor",
		Getenv: func(name string) string { return vars[name] },
	}
}

func install(t *testing.T, env Env, opts Options) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := Install(t.Context(), env, opts, &out)
	return out.String(), err
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func TestInstallFunnel(t *testing.T) {
	t.Parallel()
	env := testEnv(t, nil)
	out, err := install(t, env, Options{})
	if err != nil {
		t.Fatal(err)
	}
	funnel := filepath.Join(env.Home, ".omega", "bin", "omega-alert-send.sh")
	conf := filepath.Join(env.Home, ".omega", "telegram.conf")
	want := "directories: created " + filepath.Join(env.Home, ".omega") + "; created " + filepath.Join(env.Home, ".omega", "bin") + "; created " + env.State + "\n" +
		"alert funnel: installed " + funnel + "\n" +
		"no Telegram config at " + conf + " yet: create it (omega-monitor install --help shows how), mode 0600\n" +
		ChatIDHelp(conf) + "\n"
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("first install (-want +got):\n%s", diff)
	}
	if b, _ := os.ReadFile(funnel); !bytes.Equal(b, scripts.AlertSend) {
		t.Error("the funnel is not the embedded one")
	}
	for path, want := range map[string]os.FileMode{funnel: 0o700, env.omega(): 0o700, env.bin(): 0o700, env.State: 0o700} {
		if got := mode(t, path); got != want {
			t.Errorf("%s has mode %#o, want %#o", path, got, want)
		}
	}

	// Run again, it changes only what differs.
	if err := os.Chmod(env.bin(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(funnel, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = install(t, env, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want = "directories: " + env.bin() + " was mode 0755, now 0700\n" +
		"alert funnel: " + funnel + " was mode 0755, now 0700\n"
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("second install (-want +got):\n%s", diff)
	}
	out, _ = install(t, env, Options{})
	if want := "directories: up to date\nalert funnel: up to date\n"; out != want {
		t.Errorf("third install said %q, want %q", out, want)
	}
}

func TestInstallTelegramConfFromEnv(t *testing.T) {
	t.Parallel()
	conf := filepath.Join(t.TempDir(), "tg.conf")
	env := testEnv(t, map[string]string{"OMEGA_TELEGRAM_CONF": conf})
	out, err := install(t, env, Options{})
	if err != nil || !strings.Contains(out, "no Telegram config at "+conf+" yet") {
		t.Errorf("install: %v\n%s", err, out)
	}
}

func TestInstallStepError(t *testing.T) {
	t.Parallel()
	env := testEnv(t, nil)
	if err := os.WriteFile(env.omega(), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := install(t, env, Options{})
	var step *StepError
	if !errors.As(err, &step) || step.Step != "directories" || !strings.Contains(step.Err.Error(), "is not a directory") {
		t.Errorf("install over a file ~/.omega: %v", err)
	}
	if !strings.HasPrefix(err.Error(), "setup: directories: ") {
		t.Errorf("error %q lacks the package's prefix", err)
	}
}

func TestTestAlert(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	got := filepath.Join(dir, "got")
	ok := filepath.Join(dir, "ok.sh")
	bad := filepath.Join(dir, "bad.sh")
	old := filepath.Join(dir, "old.sh")
	for path, script := range map[string]string{
		ok:  "[ \"$*\" = --stdin ] || exit 2\ncat >" + got,
		bad: "cat >/dev/null\necho 'no route to telegram' >&2\nexit 3",
		old: "printf '%s' \"$1\" >" + got, // the contract before --stdin
	} {
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"+script+"\n"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	out, err := install(t, testEnv(t, map[string]string{"OMEGA_MONITOR_ALERT_SEND": ok}), Options{TestAlert: true})
	if err != nil || !strings.Contains(out, "test alert delivered through "+ok+"\nanswers from the chat: off (") {
		t.Errorf("test alert through %s: %v\n%s", ok, err, out)
	}
	if b, _ := os.ReadFile(got); !strings.HasPrefix(string(b), "<b>omega-monitor</b>: test alert from ") {
		t.Errorf("the funnel was given %q", b)
	}

	_, err = install(t, testEnv(t, map[string]string{"OMEGA_MONITOR_ALERT_SEND": bad}), Options{TestAlert: true})
	var alert *AlertError
	if !errors.As(err, &alert) || alert.Output != "no route to telegram" || alert.Err.Error() != "exit status 3" {
		t.Errorf("test alert through %s: %v", bad, err)
	}

	// A funnel of the old contract exits 0, but has not read the message:
	// the test alert says it was not delivered, and why.
	_, err = install(t, testEnv(t, map[string]string{"OMEGA_MONITOR_ALERT_SEND": old}), Options{TestAlert: true})
	if !errors.As(err, &alert) || !errors.Is(alert.Err, alertpkg.ErrUnread) || !strings.Contains(alert.Output, old+" takes the message as $1") {
		t.Errorf("test alert through %s: %v", old, err)
	}
}

func TestInstallClaude(t *testing.T) {
	t.Parallel()
	env := testEnv(t, map[string]string{"OMEGA_MONITOR_HOME": "set"})
	config := filepath.Join(env.Home, ".claude.json")
	mine := `{"hasCompletedOnboarding":true,"mcpServers":{"other":{"type":"stdio","command":"other","args":[]}}}`
	if err := os.WriteFile(config, []byte(mine), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := install(t, env, Options{Claude: true})
	if err != nil {
		t.Fatal(err)
	}
	command := filepath.Join(env.Home, ".claude", "commands", "monitor.md")
	if want := "claude code: wrote " + command + " (/monitor); registered the MCP server omega-monitor (" + env.Bin + " mcp) in " + config + "\n"; !strings.Contains(out, want) {
		t.Errorf("install said:\n%s\nwant a line %q", out, want)
	}
	text, err := os.ReadFile(command)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(text), env.Bin+" status --once") || !strings.Contains(string(text), claudeMarker) {
		t.Errorf("the command file:\n%s", text)
	}
	for path, want := range map[string]os.FileMode{command: 0o600, config: 0o600, filepath.Dir(command): 0o700} {
		if got := mode(t, path); got != want {
			t.Errorf("%s has mode %#o, want %#o", path, got, want)
		}
	}
	var c struct {
		Onboarded  bool                `json:"hasCompletedOnboarding"`
		MCPServers map[string]mcpEntry `json:"mcpServers"`
	}
	b, _ := os.ReadFile(config)
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	want := mcpEntry{Type: "stdio", Command: env.Bin, Args: []string{"mcp"}, Env: map[string]string{"OMEGA_MONITOR_HOME": env.State}}
	if diff := cmp.Diff(want, c.MCPServers[MCPServerName]); diff != "" || !c.Onboarded || len(c.MCPServers) != 2 {
		t.Errorf("configuration %s (-want +got):\n%s", b, diff)
	}

	out, err = install(t, env, Options{Claude: true, Uninstall: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := "claude code: removed " + command + "; removed the MCP server omega-monitor from " + config + "\n"; out != want {
		t.Errorf("uninstall said %q, want %q", out, want)
	}
	b, _ = os.ReadFile(config)
	if diff := cmp.Diff(mine, string(bytes.Join(bytes.Fields(b), nil))); diff != "" {
		t.Errorf("configuration after uninstall (-want +got):\n%s", diff)
	}
}

func TestInstallClaudeWithoutTheServer(t *testing.T) {
	t.Parallel()
	env := testEnv(t, nil)
	env.FindMCPServer = func() (string, error) { return "", errors.New("not installed") }
	out, err := install(t, env, Options{Claude: true})
	var step *StepError
	if !errors.As(err, &step) || step.Step != "claude code" || out != "" {
		t.Errorf("install --claude without the server: %v, %q", err, out)
	}
	if entries, _ := os.ReadDir(env.Home); len(entries) != 0 {
		t.Errorf("install --claude without the server left %v", entries)
	}
	if _, err := install(t, env, Options{Claude: true, Uninstall: true}); err != nil {
		t.Errorf("uninstall needs no server: %v", err)
	}
}

func TestUninstallAlone(t *testing.T) {
	t.Parallel()
	if _, err := install(t, testEnv(t, nil), Options{Uninstall: true}); err == nil {
		t.Error("uninstall without claude was accepted")
	}
}

// TestInstallClaudeThroughALink: a ~/.claude.json that is a link (a
// dotfiles checkout's) stays a link, and its target gets the entry; a link
// that leads nowhere is refused and left as it is.
func TestInstallClaudeThroughALink(t *testing.T) {
	t.Parallel()
	env := testEnv(t, nil)
	config := filepath.Join(env.Home, ".claude.json")
	dotfiles := filepath.Join(env.Home, "dotfiles")
	if err := os.Mkdir(dotfiles, 0o700); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dotfiles, "claude.json")
	if err := os.WriteFile(target, []byte(`{"theme":"dark"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, config); err != nil {
		t.Fatal(err)
	}
	if _, err := install(t, env, Options{Claude: true}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(config); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("%s is no longer a link: %v", config, err)
	}
	b, _ := os.ReadFile(target)
	if !strings.Contains(string(b), `"theme": "dark"`) || !strings.Contains(string(b), MCPServerName) {
		t.Errorf("the link's target:\n%s", b)
	}

	env = testEnv(t, nil)
	config = filepath.Join(env.Home, ".claude.json")
	if err := os.Symlink(filepath.Join(env.Home, "gone", "claude.json"), config); err != nil {
		t.Fatal(err)
	}
	_, err := install(t, env, Options{Claude: true})
	if err == nil || !strings.Contains(err.Error(), "is a link that leads nowhere") {
		t.Errorf("a dangling link: %v", err)
	}
	if fi, err := os.Lstat(config); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the dangling link was replaced: %v", err)
	}
}

// TestEditConfigKeepsWhatClaudeCodeWrote: Claude Code rewrites its
// configuration as it runs; a write that lands while the entry is being
// added is kept, and the entry is added to it.
func TestEditConfigKeepsWhatClaudeCodeWrote(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), ".claude.json")
	if err := os.WriteFile(path, []byte(`{"numStartups":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	calls := 0
	changed, err := editConfig(path, func(servers map[string]json.RawMessage) (bool, error) {
		calls++
		if calls == 1 { // Claude Code writes meanwhile
			if err := os.WriteFile(path, []byte(`{"numStartups":2,"tipsHistory":{"a":1}}`), 0o600); err != nil {
				return false, err
			}
		}
		servers["x"] = json.RawMessage(`{"command":"x"}`)
		return true, nil
	})
	if err != nil || !changed || calls != 2 {
		t.Fatalf("changed %v, err %v, %d edits; want true, nil, 2", changed, err, calls)
	}
	b, _ := os.ReadFile(path)
	var c map[string]any
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	if c["numStartups"] != 2.0 || c["tipsHistory"] == nil || c["mcpServers"] == nil {
		t.Errorf("Claude Code's write or the entry was lost:\n%s", b)
	}
}

// TestAnswersSaid: the test alert says whether a question will carry its
// options as buttons, and what to change when it will not: a group chat
// without allow_users gets the alerts alone.
func TestAnswersSaid(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ conf, want string }{
		{"bot_token=1:x\nchat_id=42\nanswers=on\n", "answers from the chat: on, in your private chat"},
		{"bot_token=1:x\nchat_id=42\n", "answers from the chat: off; alerts only (answers are off: add the line answers=on to "},
		{"bot_token=1:x\nchat_id=-100123\nanswers=on\n", "answers from the chat: off; alerts only (the chat -100123 is a group, and no one may answer in it: add allow_users="},
		{"bot_token=1:x\nchat_id=-100123\nanswers=on\nallow_users=7,8\n", "answers from the chat: on, in a group, by 2 allowed user(s)"},
		{"bot_token=1:x\nchat_id=42\nanswers=on\n", "answers from the chat: on, in your private chat (omega-monitor watch starts their receiver); free-text replies: off (add free_text=on to "},
		{"bot_token=1:x\nchat_id=42\nanswers=on\nfree_text=on\n", "answers from the chat: on, in your private chat (omega-monitor watch starts their receiver); free-text replies: on (a reply"},
	} {
		home := t.TempDir()
		conf := filepath.Join(home, "telegram.conf")
		if err := os.WriteFile(conf, []byte(c.conf), 0o600); err != nil {
			t.Fatal(err)
		}
		env := Env{Home: home, Getenv: func(k string) string {
			if k == "OMEGA_TELEGRAM_CONF" {
				return conf
			}
			return ""
		}}
		if got := answersSaid(env); !strings.HasPrefix(got, c.want) {
			t.Errorf("%q: %q, want it to start %q", c.conf, got, c.want)
		}
	}
}

// TestChatIDHelpRuns runs the lines ChatIDHelp gives, word for word, with
// curl replaced by one that records its config and answers as getUpdates
// does: the chat ids come out, and the token went to curl's standard
// input, never its command line.
func TestChatIDHelpRuns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	conf := filepath.Join(dir, "it's telegram.conf")
	if err := os.WriteFile(conf, []byte("chat_id=1\nbot_token=123456:AAsecret-token_x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	help := ChatIDHelp(conf)
	_, rest, _ := strings.Cut(help, "then run\n")
	pipeline, _, _ := strings.Cut(rest, "\nand put")
	body := `{"ok":true,"result":[{"update_id":1,"message":{"chat":{"id":-1001234,"type":"group"}}},` +
		`{"update_id":2,"message":{"chat":{"id":987654,"type":"private"}}},{"update_id":3,"message":{"chat":{"id":987654}}}]}`
	script := `curl() { printf '%s\n' "$*" >"$DIR/argv"; cat >"$DIR/config"; printf '%s' "$BODY"; }` + "\n" + pipeline
	cmd := exec.Command("bash", "-c", script)
	cmd.Env = append(os.Environ(), "DIR="+dir, "BODY="+body)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", pipeline, err, out)
	}
	if want := "\"chat\":{\"id\":-1001234\n\"chat\":{\"id\":987654\n"; string(out) != want {
		t.Errorf("the lines printed %q, want %q", out, want)
	}
	config, _ := os.ReadFile(filepath.Join(dir, "config"))
	argv, _ := os.ReadFile(filepath.Join(dir, "argv"))
	if want := `url = "https://api.telegram.org/bot123456:AAsecret-token_x/getUpdates"` + "\n"; string(config) != want || strings.Contains(string(argv), "secret") {
		t.Errorf("curl's config %q (want %q), its arguments %q", config, want, argv)
	}
}

// TestMonitorCommandNotices: /monitor carries the runner matrix's two
// one-line notices word for word, as the mirror package words them, and
// says --once for a board read inside a transcript.
func TestMonitorCommandNotices(t *testing.T) {
	for _, want := range []string{
		"`" + mirror.NoticeSpawned + "`",
		"`" + mirror.NoticeNoSpawn + "`",
		"codex_monitor_agent",
		"`@OMEGA_MONITOR@ status --once`",
		"Inside a transcript always say `--once`",
	} {
		if !strings.Contains(claudeCommand, want) {
			t.Errorf("monitor.md lacks %q", want)
		}
	}
}
