package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
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
	state := stateDirectory(t.TempDir())
	dir := filepath.Join(clone, "sub")
	now := time.Date(2026, 3, 10, 14, 0, 0, 0, time.UTC)
	cmd := state.diffWanted(now, dir)
	if cmd == "" {
		t.Fatal("no measure was due for a fresh state")
	}
	output := filepath.Join(t.TempDir(), "diff.out")
	measure := exec.Command("sh", "-c", cmd)
	measured, err := measure.Output()
	if err != nil {
		t.Fatalf("the script: %v", err)
	}
	writeFile(t, output, string(measured))
	// The pane has moved on since: the figure is still the measured
	// directory's.
	if err := state.recordDiff(now, output, "", "/elsewhere"); err != nil {
		t.Fatal(err)
	}
	got := readDiff(t, string(state))
	want := board.Diff{Added: 5, Removed: 1, Base: "origin/HEAD", Dir: dir, At: now}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("diff.json (-want +got):\n%s\nscript output:\n%s", diff, measured)
	}
	// Within five minutes, for the same directory, no measure is due.
	if cmd := state.diffWanted(now.Add(diffEvery-time.Second), dir); cmd != "" {
		t.Errorf("a measure was due again within 5 minutes: %s", cmd)
	}
	if cmd := state.diffWanted(now.Add(diffEvery), dir); cmd == "" {
		t.Error("no measure was due after 5 minutes")
	}
	if cmd := state.diffWanted(now.Add(time.Minute), clone); cmd == "" {
		t.Error("a new directory was not due")
	}
	if cmd := state.diffWanted(now, ""); cmd != "" {
		t.Errorf("a measure was due without a directory: %s", cmd)
	}
}

func TestDiffOfADirectoryThatIsNotAWorktree(t *testing.T) {
	testenv.Need(t, "git")
	state := stateDirectory(t.TempDir())
	plain := t.TempDir()
	measured, err := exec.Command("sh", "-c", diffCommand(plain)).Output()
	if err != nil {
		t.Fatal(err)
	}
	output := filepath.Join(t.TempDir(), "diff.out")
	writeFile(t, output, string(measured))
	if err := state.recordDiff(time.Now(), output, "", "/x"); err != nil {
		t.Fatalf("record: %v", err)
	}
	d := readDiff(t, string(state))
	if d.Error != "not a git worktree" || d.Dir != plain || board.DiffText(&d) != "-" {
		t.Errorf("diff %+v renders %q", d, board.DiffText(&d))
	}
}

// TestDiffRecordedFromEachKindOfAnswer: what the loop hands the tick, each
// way it can go wrong included, is a figure or an error on the board, and
// never a failed poll.
func TestDiffRecordedFromEachKindOfAnswer(t *testing.T) {
	now := time.Date(2026, 3, 10, 14, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name, output, failed string
		want                 board.Diff
	}{
		{"a figure", "dir /w\nbase main\n3\t1\ta.go\n-\t-\tbin\nuntracked 2\n", "", board.Diff{Added: 5, Removed: 1, Base: "main", Dir: "/w"}},
		{"an error the script said", "dir /w\nerror: no such directory\n", "", board.Diff{Error: "no such directory", Dir: "/w"}},
		{"no output", "", "", board.Diff{Error: "diff: no output", Dir: "/pane"}},
		{"garbage", "dir /w\nbase main\nnot numstat\n", "", board.Diff{Error: `diff: unexpected line "not numstat"`, Dir: "/w"}},
		{"a failed command", "", "ssh box: Connection refused\n (exit 255)", board.Diff{Error: "not measured: ssh box: Connection refused (exit 255)", Dir: "/pane"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			state := stateDirectory(t.TempDir())
			output := ""
			if tt.failed == "" {
				output = filepath.Join(t.TempDir(), "diff.out")
				writeFile(t, output, tt.output)
			}
			if err := state.recordDiff(now, output, tt.failed, "/pane"); err != nil {
				t.Fatal(err)
			}
			tt.want.At = now
			if diff := cmp.Diff(tt.want, readDiff(t, string(state))); diff != "" {
				t.Errorf("diff.json (-want +got):\n%s", diff)
			}
		})
	}
	// An output file that is not there is a problem of the poll's line,
	// and nothing is recorded.
	state := stateDirectory(t.TempDir())
	if err := state.recordDiff(now, filepath.Join(string(state), "missing"), "", "/pane"); err == nil {
		t.Error("a missing output was recorded")
	}
	if err := state.recordDiff(now, "", "", "/pane"); err != nil {
		t.Errorf("nothing to record: %v", err)
	}
	if _, err := os.Stat(filepath.Join(string(state), "diff.json")); !os.IsNotExist(err) {
		t.Errorf("diff.json written without a measure: %v", err)
	}
}

// TestTickAsksForTheDiffAndRecordsIt: a framed tick names the pane's
// directory, and asks for a measure (the last action) when one is due; the
// next tick records what the loop hands back, and asks again only once it is
// 5 minutes old.
func TestTickAsksForTheDiffAndRecordsIt(t *testing.T) {
	state := t.TempDir()
	pane := readPane(t, "adv-custom-statusline-working")
	tickAt := func(at string, extra ...string) []string {
		t.Helper()
		var out, errb bytes.Buffer
		args := append([]string{"tick", "--state", state, "--target", "agent", "--frame", "--work", "5", "--now", at}, extra...)
		if code := run(args, strings.NewReader(frameOf(pane)), &out, &errb); code != 0 || strings.Contains(out.String(), "error") {
			t.Fatalf("tick: %d %s %s", code, out.String(), errb.String())
		}
		entries, _ := os.ReadDir(filepath.Join(state, "actions"))
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}
	actions := tickAt("2026-03-10T14:00:00Z")
	if diff := cmp.Diff([]string{"001.diff"}, actions); diff != "" {
		t.Fatalf("actions (-want +got):\n%s", diff)
	}
	cmd, err := os.ReadFile(filepath.Join(state, "actions", "001.diff"))
	if err != nil || string(cmd) != diffCommand("/w") {
		t.Errorf("the diff action holds %q, %v", cmd, err)
	}
	os.Remove(filepath.Join(state, "actions", "001.diff")) // as the loop does
	output := filepath.Join(t.TempDir(), "diff.out")
	writeFile(t, output, "dir /w\nbase main\n2\t0\ta.go\n")
	if actions := tickAt("2026-03-10T14:01:00Z", "--diff-output", output); len(actions) != 0 {
		t.Errorf("asked again right after the measure: %v", actions)
	}
	if d := readDiff(t, state); d.Added != 2 || d.Dir != "/w" {
		t.Errorf("recorded %+v", d)
	}
	if actions := tickAt("2026-03-10T14:06:00Z"); len(actions) != 1 {
		t.Errorf("not asked again after 5 minutes: %v", actions)
	}
	// A measure the loop never ran (it stopped, or its tick failed) is
	// only asked again: no error in the line.
	if actions := tickAt("2026-03-10T14:07:00Z"); len(actions) != 1 {
		t.Errorf("not asked again after a measure left undone: %v", actions)
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
			lines := strings.Split(string(out), "\n")
			if lines[0] != "dir "+dir || len(lines) < 2 || lines[1] != tt.want {
				t.Errorf("first lines %q, want %q", lines[:min(2, len(lines))], []string{"dir " + dir, tt.want})
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

// TestDiffRunsNothingTheRepositoryNames: the watched repository is the
// agent's, so its git configuration is hostile. A clean filter and a
// textconv driver in its .git/config (the filter reached through an
// attribute macro), the same in a nested repository under the pane's
// directory, an untracked link to /dev/zero and a FIFO:
// the measure runs none of the commands, reads neither special file, ends
// at once, and still counts what it can (the filtered file's committed
// change, tree to tree; not its uncommitted one).
func TestDiffRunsNothingTheRepositoryNames(t *testing.T) {
	clone := agentWorktree(t)
	marks := t.TempDir()
	hostile := func(dir, name string) {
		gitRun(t, dir, "config", "filter.evil.clean", "sh -c 'touch "+marks+"/"+name+"-clean; cat'")
		gitRun(t, dir, "config", "filter.evil.smudge", "cat")
		gitRun(t, dir, "config", "diff.evil.textconv", "sh -c 'touch "+marks+"/"+name+"-textconv; cat \"$0\"'")
		gitRun(t, dir, "config", "core.fsmonitor", "sh -c 'touch "+marks+"/"+name+"-fsmonitor'")
	}
	// The filter is committed with its attributes before any file it
	// cleans, so that the commit itself runs it only now, in the test.
	writeFile(t, filepath.Join(clone, ".gitattributes"), "[attr]sneaky filter=evil diff=evil\n*.go sneaky\n")
	writeFile(t, filepath.Join(clone, "f.go"), "package f\n")
	gitRun(t, clone, "add", ".")
	gitRun(t, clone, "commit", "-qm", "filtered file") // committed: +3 (.gitattributes 2, f.go 1)
	hostile(clone, "top")
	nested := filepath.Join(clone, "sub", "nested")
	os.MkdirAll(nested, 0o755)
	gitRun(t, nested, "init", "-q", "-b", "main")
	writeFile(t, filepath.Join(nested, ".gitattributes"), "* filter=evil diff=evil\n")
	writeFile(t, filepath.Join(nested, "n.txt"), "n\n")
	gitRun(t, nested, "add", ".")
	gitRun(t, nested, "commit", "-qm", "n")
	hostile(nested, "nested")
	writeFile(t, filepath.Join(nested, "n.txt"), "n\nmore\n")
	writeFile(t, filepath.Join(clone, "f.go"), "package f\n// uncommitted\n")
	for _, f := range []string{filepath.Join(clone, "f.go"), filepath.Join(nested, "n.txt"), filepath.Join(clone, "a.txt")} {
		future := time.Now().Add(time.Hour)
		os.Chtimes(f, future, future)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(clone, "sub", "zero.txt")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(clone, "sub", "pipe.txt"), 0o600); err != nil {
		t.Fatal(err)
	}

	for _, dir := range []string{filepath.Join(clone, "sub"), nested} {
		start := time.Now()
		out, err := exec.Command("sh", "-c", diffCommand(dir)).Output()
		if err != nil {
			t.Fatalf("the script in %s: %v", dir, err)
		}
		took := time.Since(start)
		d, err := parseDiff(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		t.Logf("%s in %v: %+v\n%s", dir, took, d, out)
		if dir == nested {
			continue // its own repository, with no base: an error line, and nothing ran
		}
		// +5 -1 from agentWorktree, +3 committed here; f.go's uncommitted
		// line is not read (its filter would run).
		if d.Added != 8 || d.Removed != 1 {
			t.Errorf("measured +%d -%d, want +8 -1", d.Added, d.Removed)
		}
	}
	if ran, _ := os.ReadDir(marks); len(ran) > 0 {
		var names []string
		for _, e := range ran {
			names = append(names, e.Name())
		}
		t.Errorf("the measure ran the repository's commands: %q", names)
	}
}
