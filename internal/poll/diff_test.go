package poll

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/internal/board"
	"github.com/omega-monitor/omega-monitor/internal/board/render"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

func readDiff(t *testing.T, state string) board.Diff {
	t.Helper()
	var d board.Diff
	if err := statedir.Dir(state).ReadRecord(statedir.DiffFile, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestDiffMeasuresCommittedAndUncommittedSinceTheMergeBase(t *testing.T) {
	clone := testenv.AgentWorktree(t)
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
	testenv.WriteFile(t, output, string(measured))
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
	measured, err := exec.Command("sh", "-c", DiffCommand(plain)).Output()
	if err != nil {
		t.Fatal(err)
	}
	output := filepath.Join(t.TempDir(), "diff.out")
	testenv.WriteFile(t, output, string(measured))
	if err := state.recordDiff(time.Now(), output, "", "/x"); err != nil {
		t.Fatalf("record: %v", err)
	}
	d := readDiff(t, string(state))
	if d.Error != "not a git worktree" || d.Dir != plain || render.DiffText(&d) != "-" {
		t.Errorf("diff %+v renders %q", d, render.DiffText(&d))
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
				testenv.WriteFile(t, output, tt.output)
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
			testenv.Git(t, dir, "init", "-q", "-b", "agent")
			testenv.WriteFile(t, filepath.Join(dir, "a.txt"), "a\n")
			testenv.Git(t, dir, "add", ".")
			testenv.Git(t, dir, "commit", "-qm", "one")
			for _, r := range tt.refs {
				testenv.Git(t, dir, "update-ref", r, "HEAD")
			}
			out, err := exec.Command("sh", "-c", DiffCommand(dir)).Output()
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
	clone := testenv.AgentWorktree(t)
	cfg := testenv.NewSSHConfig(t)
	testenv.SSHD(t, cfg, "box")
	cmd := exec.Command("ssh", "-F", cfg.Path, "-n", "-o", "BatchMode=yes", "--", "box", DiffCommand(clone))
	measured, err := cmd.Output()
	if err != nil {
		t.Fatalf("ssh: %v", err)
	}
	d, err := parseDiff(bytes.NewReader(measured))
	if err != nil || d.Added != 5 || d.Removed != 1 {
		t.Errorf("over ssh: %+v %v\n%s", d, err, measured)
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
	clone := testenv.AgentWorktree(t)
	marks := t.TempDir()
	hostile := func(dir, name string) {
		testenv.Git(t, dir, "config", "filter.evil.clean", "sh -c 'touch "+marks+"/"+name+"-clean; cat'")
		testenv.Git(t, dir, "config", "filter.evil.smudge", "cat")
		testenv.Git(t, dir, "config", "diff.evil.textconv", "sh -c 'touch "+marks+"/"+name+"-textconv; cat \"$0\"'")
		testenv.Git(t, dir, "config", "core.fsmonitor", "sh -c 'touch "+marks+"/"+name+"-fsmonitor'")
	}
	// The filter is committed with its attributes before any file it
	// cleans, so that the commit itself runs it only now, in the test.
	testenv.WriteFile(t, filepath.Join(clone, ".gitattributes"), "[attr]sneaky filter=evil diff=evil\n*.go sneaky\n")
	testenv.WriteFile(t, filepath.Join(clone, "f.go"), "package f\n")
	testenv.Git(t, clone, "add", ".")
	testenv.Git(t, clone, "commit", "-qm", "filtered file") // committed: +3 (.gitattributes 2, f.go 1)
	hostile(clone, "top")
	nested := filepath.Join(clone, "sub", "nested")
	os.MkdirAll(nested, 0o755)
	testenv.Git(t, nested, "init", "-q", "-b", "main")
	testenv.WriteFile(t, filepath.Join(nested, ".gitattributes"), "* filter=evil diff=evil\n")
	testenv.WriteFile(t, filepath.Join(nested, "n.txt"), "n\n")
	testenv.Git(t, nested, "add", ".")
	testenv.Git(t, nested, "commit", "-qm", "n")
	hostile(nested, "nested")
	testenv.WriteFile(t, filepath.Join(nested, "n.txt"), "n\nmore\n")
	testenv.WriteFile(t, filepath.Join(clone, "f.go"), "package f\n// uncommitted\n")
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
		out, err := exec.Command("sh", "-c", DiffCommand(dir)).Output()
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
