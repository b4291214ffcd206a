package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/poll"

	"github.com/omega-monitor/omega-monitor/board"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// gitRun runs git in dir; a failure fails the test.
func gitRun(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// agentWorktree is a clone of an upstream with a branch that has one commit
// (+3 -1), an uncommitted change of a line that commit added, an untracked
// file of 2 lines, an ignored file and a binary file: from the merge base to
// the working tree, +5 -1 in all. The clone's working
// directory path holds a space and a quote.
func agentWorktree(t *testing.T) string {
	testenv.Need(t, "git")
	root := t.TempDir()
	up := filepath.Join(root, "upstream")
	os.Mkdir(up, 0o755)
	gitRun(t, up, "init", "-q", "-b", "main")
	writeFile(t, filepath.Join(up, "a.txt"), "one\ntwo\nthree\n")
	writeFile(t, filepath.Join(up, ".gitignore"), "*.log\n")
	gitRun(t, up, "add", ".")
	gitRun(t, up, "commit", "-qm", "start")
	clone := filepath.Join(root, "it's a clone")
	gitRun(t, root, "clone", "-q", up, clone)
	gitRun(t, clone, "checkout", "-qb", "agent")
	writeFile(t, filepath.Join(clone, "a.txt"), "one\nTWO\nthree\nfour\nfive\n") // +3 -1
	writeFile(t, filepath.Join(clone, "bin.dat"), "\x00\x01\x02")
	gitRun(t, clone, "add", ".")
	gitRun(t, clone, "commit", "-qm", "agent work")
	writeFile(t, filepath.Join(clone, "a.txt"), "one\nTWO\nthree\nfour\nFIVE\n") // +1 -1 uncommitted
	writeFile(t, filepath.Join(clone, "sub", "new file.go"), "package x\n// new\n")
	writeFile(t, filepath.Join(clone, "debug.log"), "ignored\nignored\n")
	// Upstream moves on: its own work is not the agent's.
	writeFile(t, filepath.Join(up, "b.txt"), "upstream\n")
	gitRun(t, up, "add", ".")
	gitRun(t, up, "commit", "-qm", "upstream work")
	gitRun(t, clone, "fetch", "-q")
	return clone
}

func TestDiffMeasuresCommittedAndUncommittedSinceTheMergeBase(t *testing.T) {
	clone := agentWorktree(t)
	state := t.TempDir()
	now := "2026-03-10T14:00:00Z"
	var out, errb bytes.Buffer
	if code := run([]string{"diff", "--state", state, "--dir", filepath.Join(clone, "sub"), "--script", "--now", now}, nil, &out, &errb); code != 0 {
		t.Fatalf("diff --script: %d %s", code, errb.String())
	}
	measured, err := exec.Command("sh", "-c", strings.TrimSpace(out.String())).Output()
	if err != nil {
		t.Fatalf("the script: %v", err)
	}
	if code := run([]string{"diff", "--state", state, "--dir", filepath.Join(clone, "sub"), "--record", "--now", now}, bytes.NewReader(measured), &out, &errb); code != 0 {
		t.Fatalf("diff --record: %d %s", code, errb.String())
	}
	got := readDiff(t, state)
	want := board.Diff{Added: 5, Removed: 1, Base: "origin/HEAD", Dir: filepath.Join(clone, "sub"), At: time.Date(2026, 3, 10, 14, 0, 0, 0, time.UTC)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("diff.json (-want +got):\n%s\nscript output:\n%s", diff, measured)
	}
	// Within five minutes, for the same directory, no measure is due.
	if code := run([]string{"diff", "--state", state, "--dir", filepath.Join(clone, "sub"), "--script", "--now", "2026-03-10T14:04:59Z"}, nil, &out, &errb); code != 1 {
		t.Errorf("a measure was due again within 5 minutes: %d", code)
	}
	out.Reset()
	if code := run([]string{"diff", "--state", state, "--dir", clone, "--script", "--now", "2026-03-10T14:01:00Z"}, nil, &out, &errb); code != 0 || out.Len() == 0 {
		t.Errorf("a new directory was not due: %d", code)
	}
}

func TestDiffOfADirectoryThatIsNotAWorktree(t *testing.T) {
	testenv.Need(t, "git")
	state := t.TempDir()
	measured, err := exec.Command("sh", "-c", diffCommand(t.TempDir())).Output()
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"diff", "--state", state, "--dir", "/x", "--record"}, bytes.NewReader(measured), &out, &errb); code != 0 {
		t.Fatalf("record: %d %s", code, errb.String())
	}
	d := readDiff(t, state)
	if d.Error != "not a git worktree" || board.DiffText(&d) != "-" {
		t.Errorf("diff %+v renders %q", d, board.DiffText(&d))
	}
}

// TestDiffBasePreference: the base is the first of the list that exists,
// whichever others exist too; a branch that shares a name with a remote's
// is the local one.
func TestDiffBasePreference(t *testing.T) {
	testenv.Need(t, "git")
	for _, tt := range []struct {
		refs []string // besides the branch checked out, "agent"
		want string
	}{
		{nil, "error: no upstream default branch (origin/HEAD, origin/main, main...)"},
		{[]string{"refs/heads/master"}, "base master"},
		{[]string{"refs/heads/master", "refs/heads/main"}, "base main"},
		{[]string{"refs/heads/main", "refs/remotes/origin/master"}, "base origin/master"},
		{[]string{"refs/remotes/origin/master", "refs/remotes/origin/main"}, "base origin/main"},
		{[]string{"refs/remotes/origin/main", "refs/remotes/upstream/master"}, "base upstream/master"},
		{[]string{"refs/remotes/upstream/main", "refs/remotes/origin/HEAD", "refs/heads/main"}, "base origin/HEAD"},
		{[]string{"refs/remotes/origin/HEAD", "refs/remotes/upstream/HEAD"}, "base upstream/HEAD"},
		{[]string{"refs/tags/main", "refs/heads/mainline"}, "error: no upstream default branch (origin/HEAD, origin/main, main...)"},
	} {
		t.Run(strings.Join(tt.refs, ","), func(t *testing.T) {
			dir := t.TempDir()
			gitRun(t, dir, "init", "-q", "-b", "agent")
			writeFile(t, filepath.Join(dir, "a.txt"), "a\n")
			gitRun(t, dir, "add", ".")
			gitRun(t, dir, "commit", "-qm", "one")
			for _, r := range tt.refs {
				gitRun(t, dir, "update-ref", r, "HEAD")
			}
			out, err := exec.Command("sh", "-c", diffCommand(dir)).Output()
			if err != nil {
				t.Fatal(err)
			}
			if got, _, _ := strings.Cut(string(out), "\n"); got != tt.want {
				t.Errorf("first line %q, want %q", got, tt.want)
			}
		})
	}
}

// For a remote target the same command runs through ssh: the remote login
// shell parses it once more, and the directory's quote must survive.
func TestDiffOverSSH(t *testing.T) {
	clone := agentWorktree(t)
	cfg := testenv.NewSSHConfig(t)
	testenv.SSHD(t, cfg, "box")
	cmd := exec.Command("ssh", "-F", cfg.Path, "-n", "-o", "BatchMode=yes", "--", "box", diffCommand(clone))
	measured, err := cmd.Output()
	if err != nil {
		t.Fatalf("ssh: %v", err)
	}
	d, err := parseDiff(bytes.NewReader(measured))
	if err != nil || d.Added != 5 || d.Removed != 1 {
		t.Errorf("over ssh: %+v %v\n%s", d, err, measured)
	}
}

func readDiff(t *testing.T, state string) board.Diff {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(state, "diff.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d board.Diff
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// The loop measures the diff of the watched pane's working directory, which
// it learns from the capture frame: locally, and on an ssh host over the
// loop's own connection; the board shows the figure.
func TestLoopRecordsTheDiffOfThePanesWorktree(t *testing.T) {
	clone := agentWorktree(t)
	s := testenv.Tmux(t)
	cfg := testenv.NewSSHConfig(t)
	testenv.SSHD(t, cfg, "box", "OMEGA_MONITOR_MUX="+s.Mux, "LANG=C.UTF-8")
	s.Run(t, "new-session", "-d", "-s", "agent", "-c", clone, "-x", "120", "-y", "40", "sleep 600")
	for _, target := range []string{"agent", "box:agent"} {
		t.Run(target, func(t *testing.T) {
			r := startLoop(t, loopOptions{target: target, flags: []string{"--ssh-config", cfg.Path, "--interval", "1", "--mux", s.Mux}})
			defer r.stop()
			path := filepath.Join(r.state, "diff.json")
			poll.WaitOn(t, func(poll.LogT) poll.Result {
				if _, err := os.Stat(path); err != nil {
					return poll.Continue("no diff.json yet")
				}
				return poll.Success()
			}, poll.WithTimeout(60*time.Second), poll.WithDelay(100*time.Millisecond))
			d := readDiff(t, r.state)
			if d.Added != 5 || d.Removed != 1 || d.Dir != clone || d.Base != "origin/HEAD" || d.Error != "" {
				t.Errorf("diff.json: %+v", d)
			}
			f, err := board.Census(filepath.Dir(r.state), time.Now(), board.Options{})
			if err != nil || len(f.Watchers) != 1 || board.DiffText(f.Watchers[0].Diff) != "+5 -1" || f.Fleet.Added != 5 {
				t.Errorf("the board: %+v %v", f.Watchers, err)
			}
		})
	}
}
