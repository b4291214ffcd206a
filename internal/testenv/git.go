package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Git runs git in dir; a failure fails the test.
func Git(t testing.TB, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// WriteFile writes content to path, making its directory.
func WriteFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// AgentWorktree is a clone of an upstream with a branch that has one commit
// (+3 -1), an uncommitted change of a line that commit added, an untracked
// file of 2 lines, an ignored file and a binary file: from the merge base to
// the working tree, +5 -1 in all. The clone's working
// directory path holds a space and a quote.
func AgentWorktree(t testing.TB) string {
	Need(t, "git")
	root := t.TempDir()
	up := filepath.Join(root, "upstream")
	os.Mkdir(up, 0o755)
	Git(t, up, "init", "-q", "-b", "main")
	WriteFile(t, filepath.Join(up, "a.txt"), "one\ntwo\nthree\n")
	WriteFile(t, filepath.Join(up, ".gitignore"), "*.log\n")
	Git(t, up, "add", ".")
	Git(t, up, "commit", "-qm", "start")
	clone := filepath.Join(root, "it's a clone")
	Git(t, root, "clone", "-q", up, clone)
	Git(t, clone, "checkout", "-qb", "agent")
	WriteFile(t, filepath.Join(clone, "a.txt"), "one\nTWO\nthree\nfour\nfive\n") // +3 -1
	WriteFile(t, filepath.Join(clone, "bin.dat"), "\x00\x01\x02")
	Git(t, clone, "add", ".")
	Git(t, clone, "commit", "-qm", "agent work")
	WriteFile(t, filepath.Join(clone, "a.txt"), "one\nTWO\nthree\nfour\nFIVE\n") // +1 -1 uncommitted
	WriteFile(t, filepath.Join(clone, "sub", "new file.go"), "package x\n// new\n")
	WriteFile(t, filepath.Join(clone, "debug.log"), "ignored\nignored\n")
	// Upstream moves on: its own work is not the agent's.
	WriteFile(t, filepath.Join(up, "b.txt"), "upstream\n")
	Git(t, up, "add", ".")
	Git(t, up, "commit", "-qm", "upstream work")
	Git(t, clone, "fetch", "-q")
	return clone
}
