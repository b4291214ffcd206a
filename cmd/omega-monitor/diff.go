package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/board"
	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/fsutil"
)

const diffUsage = `usage: omega-monitor diff --state DIR [--dir PATH] --script
       omega-monitor diff --state DIR [--dir PATH] --record [--error TEXT] < output

What the agent has written in the watched pane's working directory, in two
steps around the one effect, which the loop carries out (locally, or over its
ssh connection for a remote target):

  --script   prints the command that measures the diff, one line for sh -c
             or for ssh; exits 1, printing nothing, when the last figure is
             younger than 5 minutes and for the same directory
  --record   reads that command's output and writes DIR/diff.json
             (atomically); --error TEXT records why the command failed

The directory is --dir, else the pane's working directory as the last poll's
capture named it (pane_dir in DIR/state.json); without either there is
nothing to measure (--script exits 1).

The figure is +added -removed lines, committed and uncommitted, from the
merge base of HEAD with the upstream default branch to the working tree,
plus the lines of untracked files that git does not ignore. The base is the
first that exists of: upstream/HEAD, origin/HEAD (the remote's default branch
as the clone recorded it), upstream/main, upstream/master, origin/main,
origin/master, main, master. A directory that is not a git worktree, or has
none of them, records an error and the board shows "-".
`

// diffEvery is how often the diff is measured at most: git walks the whole
// worktree, and the figure moves slowly.
const diffEvery = 5 * time.Minute

// diffScript measures the diff in the directory $1, in as few git calls
// as it can: the loop pays a process start for each. It prints "base REF",
// git's numstat lines (added, removed, path), "untracked N" for the lines
// of untracked files, or "error: WHY". It only reads: no index refresh is
// written (--no-optional-locks), and no external diff, text conversion or
// fsmonitor hook of the repository's config runs.
const diffScript = `cd "$1" 2>/dev/null || { echo "error: no such directory"; exit 0; }
g() { git --no-optional-locks -c core.fsmonitor=false "$@"; }
top=$(g rev-parse --show-toplevel 2>/dev/null) && cd "$top" || { echo "error: not a git worktree"; exit 0; }
refs=$(g for-each-ref --format='%(refname)' refs/remotes/upstream/HEAD refs/remotes/origin/HEAD refs/remotes/upstream/main refs/remotes/upstream/master refs/remotes/origin/main refs/remotes/origin/master refs/heads/main refs/heads/master 2>/dev/null)
base='' nl='
'
for r in upstream/HEAD origin/HEAD upstream/main upstream/master origin/main origin/master main master; do
  case $r in */*) ref=refs/remotes/$r ;; *) ref=refs/heads/$r ;; esac
  case "$nl$refs$nl" in *"$nl$ref$nl"*) base=$r; break ;; esac
done
[ -n "$base" ] || { echo "error: no upstream default branch (origin/HEAD, origin/main, main...)"; exit 0; }
mb=$(g merge-base HEAD "$base" 2>/dev/null) || { echo "error: no merge base with $base"; exit 0; }
echo "base $base"
g diff --no-ext-diff --no-textconv --numstat "$mb" -- || { echo "error: git diff failed"; exit 0; }
n=$(g ls-files -z --others --exclude-standard | xargs -0 cat 2>/dev/null | wc -l)
echo "untracked $n"`

// diffCommand is the command line that runs diffScript on dir: for sh -c
// here, or for ssh, whose remote login shell parses it again; every word is
// quoted for that shell.
func diffCommand(dir string) string {
	return "sh -c " + coord.ShellQuote(diffScript) + " omega-monitor " + coord.ShellQuote(dir)
}

// parseDiff reads diffScript's output. Binary files (numstat "-") count
// nothing.
func parseDiff(r io.Reader) (board.Diff, error) {
	var d board.Diff
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	based := false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "error: "):
			return board.Diff{Error: strings.TrimPrefix(line, "error: ")}, nil
		case strings.HasPrefix(line, "base "):
			d.Base, based = strings.TrimPrefix(line, "base "), true
		case strings.HasPrefix(line, "untracked "):
			n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "untracked ")))
			if err != nil {
				return d, fmt.Errorf("diff: untracked count %q", line)
			}
			d.Added += n
		default:
			f := strings.SplitN(line, "\t", 3)
			if len(f) != 3 {
				return d, fmt.Errorf("diff: unexpected line %q", line)
			}
			a, errA := strconv.Atoi(f[0])
			r, errR := strconv.Atoi(f[1])
			if f[0] == "-" && f[1] == "-" {
				continue // binary
			}
			if errA != nil || errR != nil {
				return d, fmt.Errorf("diff: unexpected line %q", line)
			}
			d.Added += a
			d.Removed += r
		}
	}
	if err := sc.Err(); err != nil {
		return d, fmt.Errorf("diff: %w", err)
	}
	if !based {
		return d, errors.New("diff: no output")
	}
	return d, nil
}

func runDiff(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("diff", diffUsage, stderr)
	stateDir := fs.String("state", "", "the watcher's state directory")
	dir := fs.String("dir", "", "the watched pane's working directory")
	script := fs.Bool("script", false, "print the command that measures the diff, when one is due")
	record := fs.Bool("record", false, "record the command's output")
	failed := fs.String("error", "", "the command failed: why")
	nowFlag := fs.String("now", "", "the time, RFC 3339 (for tests)")
	if code, stop := parseFlags(fs, args, stdout, diffUsage); stop {
		return code
	}
	if fs.NArg() > 0 || *stateDir == "" || *script == *record {
		io.WriteString(stderr, diffUsage)
		return 2
	}
	now := time.Now()
	if *nowFlag != "" {
		t, err := time.Parse(time.RFC3339, *nowFlag)
		if err != nil {
			fmt.Fprintf(stderr, "omega-monitor diff: --now %q is not an RFC 3339 time\n", *nowFlag)
			return 2
		}
		now = t
	}
	if *dir == "" {
		*dir = paneDir(*stateDir)
	}
	if *dir == "" {
		if *script {
			return 1
		}
		fmt.Fprintln(stderr, "omega-monitor diff: no directory: no --dir, and no pane_dir in the state")
		return 1
	}
	path := filepath.Join(*stateDir, "diff.json")
	if *script {
		if !diffDue(path, *dir, now) {
			return 1
		}
		fmt.Fprintln(stdout, diffCommand(*dir))
		return 0
	}
	var d board.Diff
	if *failed != "" {
		d.Error = "not measured: " + strings.Join(strings.Fields(*failed), " ")
	} else {
		var err error
		if d, err = parseDiff(io.LimitReader(stdin, 16<<20)); err != nil {
			d = board.Diff{Error: err.Error()}
		}
	}
	d.At, d.Dir = now.UTC(), *dir
	data, err := json.Marshal(d)
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor diff: %v\n", err)
		return 1
	}
	if err := os.MkdirAll(*stateDir, 0o700); err != nil {
		fmt.Fprintf(stderr, "omega-monitor diff: %v\n", err)
		return 1
	}
	if err := writeAtomic(path, append(data, '\n')); err != nil {
		fmt.Fprintf(stderr, "omega-monitor diff: %v\n", err)
		return 1
	}
	return 0
}

// diffDue says whether a measure is due: none yet, one older than
// diffEvery, or one of another directory (the pane moved).
func diffDue(path, dir string, now time.Time) bool {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	var d board.Diff
	if err != nil || json.Unmarshal(data, &d) != nil {
		return true
	}
	return d.Dir != dir || now.Sub(d.At) >= diffEvery || now.Before(d.At)
}

// paneDir is the watched pane's working directory as the last capture named
// it (state.json's pane_dir), or empty.
func paneDir(stateDir string) string {
	data, err := fsutil.ReadCapped(filepath.Join(stateDir, "state.json"), maxStateFile)
	if err != nil {
		return ""
	}
	var s struct {
		PaneDir string `json:"pane_dir"`
	}
	if json.Unmarshal(data, &s) != nil {
		return ""
	}
	return s.PaneDir
}
