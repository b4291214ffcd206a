package auditrun

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"
	"gotest.tools/v3/fs"

	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// spy is a stand-in auditor that reports what it can reach: the operator's
// secrets, the real project, a write to its copy, its environment.
const spy = `#!/bin/bash
echo "home=$HOME pwd=$PWD"
cat "$OPERATOR/.netrc" 2>/dev/null && echo "read the operator's .netrc"
cat "$PROJECT/main.go" 2>/dev/null && echo "read the real project"
ls -A "$PROJECT" 2>/dev/null | sed 's/^/real project holds: /'
(echo x >> main.go) 2>/dev/null && echo "wrote its copy"
(echo x > new.txt) 2>/dev/null && echo "added to its copy"
echo "credentials: $(cat "$HOME/.claude/.credentials.json" 2>/dev/null)"
env | sort | sed 's/^/env: /'
`

func spyConfig(t *testing.T, isolation string) (Config, string) {
	t.Helper()
	testenv.Need(t, "bash")
	dir, _ := hostileProject(t)
	operator := fs.NewDir(t, "operator",
		fs.WithFile(".netrc", "machine example.com password hunter2\n"),
		fs.WithDir(".claude-alt", fs.WithFile(".credentials.json", `{"token":"t"}`, fs.WithMode(0o600)))).Path()
	bin := filepath.Join(fs.NewDir(t, "bin").Path(), "claude")
	assert.NilError(t, os.WriteFile(bin, []byte(spy), 0o700))
	runDir := t.TempDir()
	return Config{
		Dir: dir, RunDir: runDir, StateHome: filepath.Join(dir, ".omega", "monitor"),
		Agent: "claude", Bin: bin, Isolation: isolation,
		KeepEnv: []string{"MY_PROVIDER_KEY"},
		Environ: []string{
			"HOME=" + operator, "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8",
			"OPERATOR=" + operator, "PROJECT=" + dir,
			"SSH_AUTH_SOCK=/tmp/ssh-agent.sock", "AWS_SECRET_ACCESS_KEY=aws", "GITHUB_TOKEN=gh",
			"NODE_OPTIONS=--require /tmp/evil.js", "OPENAI_API_KEY=not-claude's",
			"ANTHROPIC_API_KEY=sk-ant-test", "ANTHROPIC_BASE_URL=http://127.0.0.1:1",
			"CLAUDE_CONFIG_DIR=" + filepath.Join(operator, ".claude-alt"),
			"MY_PROVIDER_KEY=kept", "TMPDIR=/tmp/operator",
		},
	}, operator
}

func envOf(out string) []string {
	var env []string
	for _, l := range strings.Split(out, "\n") {
		if kv, ok := strings.CutPrefix(l, "env: "); ok {
			name, _, _ := strings.Cut(kv, "=")
			if name != "_" && name != "SHLVL" && name != "PWD" && name != "OLDPWD" {
				env = append(env, kv)
			}
		}
	}
	return env
}

// TestSandboxBwrap: inside bubblewrap the auditor reads neither the
// operator's home nor the real project, cannot change its copy, and has
// only its agent's variables and its own home.
func TestSandboxBwrap(t *testing.T) {
	testenv.Need(t, "bwrap")
	c, _ := spyConfig(t, IsolateBwrap)
	s, err := Prepare(c)
	assert.NilError(t, err)
	defer s.Remove()
	assert.Equal(t, s.Isolation, "bwrap")
	r := s.Run(c.Bin, "BRIEF", 30*time.Second)
	out := string(r.Stdout)
	t.Logf("stdout:\n%s\nstderr:\n%s", out, r.Stderr)
	assert.NilError(t, r.Err)
	for _, bad := range []string{"read the operator's .netrc", "read the real project", "real project holds", "wrote its copy", "added to its copy", "hunter2"} {
		assert.Assert(t, !strings.Contains(out, bad), "the auditor %s", bad)
	}
	assert.Assert(t, strings.Contains(out, "home="+s.Home+" pwd="+s.Tree), out)
	assert.Assert(t, strings.Contains(out, `credentials: {"token":"t"}`), out)
	want := []string{
		"ANTHROPIC_API_KEY=sk-ant-test", "ANTHROPIC_BASE_URL=http://127.0.0.1:1",
		"HOME=" + s.Home, "LANG=C.UTF-8", "MY_PROVIDER_KEY=kept", "PATH=" + os.Getenv("PATH"),
		"TMPDIR=" + filepath.Join(c.RunDir, "tmp"),
	}
	if d := cmp.Diff(want, envOf(out)); d != "" {
		t.Errorf("the auditor's environment (-want +got):\n%s", d)
	}
	// Nothing of the run is left but what the caller keeps.
	assert.NilError(t, s.Remove())
	left, _ := os.ReadDir(c.RunDir)
	assert.Equal(t, len(left), 0, "%v", left)
}

// TestSandboxWithoutBwrap: with no OS sandbox the auditor still runs in
// its copy, with the throwaway home and the scrubbed environment.
func TestSandboxWithoutBwrap(t *testing.T) {
	c, _ := spyConfig(t, IsolateNone)
	s, err := Prepare(c)
	assert.NilError(t, err)
	defer s.Remove()
	assert.Equal(t, s.Isolation, "none")
	r := s.Run(c.Bin, "BRIEF", 30*time.Second)
	out := string(r.Stdout)
	assert.NilError(t, r.Err)
	assert.Assert(t, strings.Contains(out, "home="+s.Home+" pwd="+s.Tree), out)
	env := envOf(out)
	for _, gone := range []string{"SSH_AUTH_SOCK", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "NODE_OPTIONS", "OPENAI_API_KEY", "CLAUDE_CONFIG_DIR", "OPERATOR", "PROJECT"} {
		assert.Assert(t, !slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, gone+"=") }), "%s reached the auditor: %q", gone, env)
	}
}

// TestSandboxRefusesBwrapWhereThereIsNone: --isolation bwrap on a machine
// without it refuses, and leaves nothing behind.
func TestSandboxRefusesBwrapWhereThereIsNone(t *testing.T) {
	c, _ := spyConfig(t, IsolateBwrap)
	c.Environ = append(c.Environ, "PATH=/nowhere")
	t.Setenv("PATH", t.TempDir())
	_, err := Prepare(c)
	assert.ErrorContains(t, err, "--isolation bwrap: bubblewrap (bwrap) is not installed")
	left, _ := os.ReadDir(c.RunDir)
	assert.Equal(t, len(left), 0, "%v", left)
}

func TestBwrapArgvHidesBeforeItShows(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"home/op/.nvm/bin", "home/op/shop", "tmp/run/home", "tmp/run/tmp", "tmp/run/tree"} {
		assert.NilError(t, os.MkdirAll(filepath.Join(root, d), 0o700))
	}
	p := func(s string) string { return filepath.Join(root, s) }
	got := bwrapArgv(bwrapPlan{
		hide:  []string{p("home"), p("tmp"), p("home/op/shop"), p("missing"), ""},
		tools: []string{p("home/op/.nvm/bin"), p("home/op"), "/usr/bin", "relative/bin"},
		write: []string{p("tmp/run/home"), p("tmp/run/tmp")},
		read:  p("tmp/run/tree"),
	})
	want := []string{"bwrap", "--die-with-parent", "--new-session",
		"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
		"--tmpfs", p("tmp"), "--tmpfs", p("home"),
		"--ro-bind", p("home/op/.nvm/bin"), p("home/op/.nvm/bin"),
		"--bind", p("tmp/run/home"), p("tmp/run/home"), "--bind", p("tmp/run/tmp"), p("tmp/run/tmp"),
		"--ro-bind", p("tmp/run/tree"), p("tmp/run/tree"), "--chdir", p("tmp/run/tree"), "--"}
	got = slices.DeleteFunc(got, func(s string) bool { return strings.HasSuffix(s, ".sock") })
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("bwrap argv (-want +got):\n%s", d)
	}
}
