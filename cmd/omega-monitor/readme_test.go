package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/omega-monitor/omega-monitor/internal/demo"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
	"gotest.tools/v3/assert"
	"gotest.tools/v3/icmd"
)

// TestReadmeCounts: the figures the documentation gives for the corpus
// (docs/credibility.md, where the README's section on the golden corpus
// moved) are the corpus's. Whoever adds a case updates the sentence.
func TestReadmeCounts(t *testing.T) {
	const doc = "docs/credibility.md"
	text, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(doc)))
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join("..", "..", "golden")
	for _, c := range []struct {
		sentence *regexp.Regexp
		glob     string
	}{
		{regexp.MustCompile("`golden/panes/` holds (\\d+) captured panes"), filepath.Join(root, "panes", "*.pane")},
		{regexp.MustCompile("`golden/sessions/` holds (\\d+) recorded"), filepath.Join(root, "sessions", "*.txtar")},
		{regexp.MustCompile("holds (\\d+) captures of it"), filepath.Join(root, "real", "*.e.pane")},
		{regexp.MustCompile("\\((\\d+) pane files\\)"), filepath.Join(root, "real", "*.pane")},
	} {
		m := c.sentence.FindSubmatch(text)
		if m == nil {
			t.Errorf("%s has no sentence matching %q", doc, c.sentence)
			continue
		}
		said, _ := strconv.Atoi(string(m[1]))
		files, err := filepath.Glob(c.glob)
		if err != nil {
			t.Fatal(err)
		}
		if said != len(files) {
			t.Errorf("%s says %q, but %s holds %d", doc, m[0], c.glob, len(files))
		}
	}
}

// TestReadmeQuickStart runs the README's quick start word for word, with
// the demo's scripted agent as claude, on a tmux server of its own (the
// default socket, in a private TMUX_TMPDIR): the watcher says where its
// probe ran and what it read, logs -f shows its lines, the board lists it,
// stop ends it and leaves the agent.
func TestReadmeQuickStart(t *testing.T) {
	testenv.EndToEnd(t)
	testenv.Need(t, "tmux", "bash", "timeout")
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	assert.NilError(t, err)
	_, rest, ok := strings.Cut(string(data), "## Quick start\n")
	assert.Assert(t, ok, "README.md has no quick start")
	_, rest, _ = strings.Cut(rest, "```sh\n")
	block, _, _ := strings.Cut(rest, "```")
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(block), "\n") {
		if i := strings.Index(l, "   #"); i >= 0 {
			l = l[:i]
		}
		lines = append(lines, strings.TrimSpace(l))
	}
	assert.Equal(t, len(lines), 5, "the quick start:\n%s", block)

	home := t.TempDir()
	bin := filepath.Join(home, "bin")
	shop := filepath.Join(home, "src", "shop")
	tmuxDir, err := os.MkdirTemp("", "omqs")
	assert.NilError(t, err)
	t.Cleanup(func() { os.RemoveAll(tmuxDir) })
	for dir, files := range map[string]map[string]string{
		shop: {"TODO.md": "- [ ] one\n- [ ] two\n- [ ] three\n- [x] done\n"},
		bin: {
			"claude":        "#!/bin/sh\nexec env AGENT_LOG=" + filepath.Join(home, "received") + " AGENT_WORK=2 bash " + filepath.Join(home, "agent.sh") + "\n",
			"omega-monitor": "#!/bin/sh\nexec " + omegaMonitor(t) + " \"$@\"\n",
		},
		home: {"agent.sh": demo.AgentScript},
	} {
		assert.NilError(t, os.MkdirAll(dir, 0o700))
		for name, text := range files {
			assert.NilError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o700))
		}
	}
	env := []string{"HOME=" + home, "PATH=" + bin + ":" + os.Getenv("PATH"), "TMUX_TMPDIR=" + tmuxDir, "TERM=xterm-256color", "LANG=C.UTF-8"}
	t.Cleanup(func() { icmd.RunCmd(icmd.Command("tmux", "kill-server"), icmd.WithEnv(env...)) })
	step := func(i int, timeout string) *icmd.Result {
		t.Helper()
		cmd := icmd.Command("timeout", timeout, "bash", "-c", lines[i])
		cmd.Env, cmd.Dir = env, t.TempDir()
		res := icmd.RunCmd(cmd)
		t.Logf("$ %s\n%s%s", lines[i], res.Stdout(), res.Stderr())
		return res
	}
	step(0, "20").Assert(t, icmd.Success)
	res := step(1, "60")
	res.Assert(t, icmd.Success)
	for _, want := range []string{"watching shop in monitor-shop", "work probe in ~/src/shop: 3"} {
		assert.Assert(t, strings.Contains(res.Stdout(), want), "the watcher's start said:\n%s", res.Stdout())
	}
	// -f follows until interrupted: the clock stands for the Ctrl-C.
	res = step(2, "8")
	assert.Assert(t, strings.Contains(res.Stdout(), " MONITOR · shop · "), "logs -f printed:\n%s%s", res.Stdout(), res.Stderr())
	res = step(3, "20")
	assert.Assert(t, strings.Contains(res.Stdout(), "shop") && strings.Contains(res.Stdout(), "[live]"), "the board:\n%s", res.Stdout())
	step(4, "60").Assert(t, icmd.Expected{Out: "stopped monitor-shop, the watcher of shop"})
	has := icmd.RunCmd(icmd.Command("tmux", "has-session", "-t", "=shop"), icmd.WithEnv(env...))
	has.Assert(t, icmd.Success)
}
