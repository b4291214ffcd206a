package poll

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/board"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// The diff of the watched pane's working directory: what the agent has
// written there, +added -removed lines, committed and uncommitted, from the
// merge base of HEAD with the upstream default branch to the working tree,
// plus the lines of untracked files that git does not ignore. The base is
// the first that exists of: upstream/HEAD, origin/HEAD (the remote's default
// branch as the clone recorded it), upstream/main, upstream/master,
// origin/main, origin/master, main, master. A directory that is not a git
// worktree, or has none of them, records an error and the board shows "-".
//
// The tick asks for a measure when one is due (a NNN.diff action: the
// command, for sh -c or for ssh), the loop runs it, locally or over its ssh
// connection, and the next tick records what it printed in DIR/diff.json
// (--diff-output FILE, or --diff-error TEXT when it failed).

// diffEvery is how often the diff is measured at most: git walks the whole
// worktree, and the figure moves slowly.
const diffEvery = 5 * time.Minute

// diffScript measures the diff in the directory $1, in as few git calls
// as it can: the loop pays a process start for each. It prints "dir DIR"
// (the directory measured, for the tick that records it), "base REF",
// git's numstat lines (added, removed, path), "untracked N" for the lines
// of untracked files, or "error: WHY".
//
// The repository is the agent's, so its configuration is hostile: git must
// run nothing it names. No index refresh is written (--no-optional-locks);
// no fsmonitor hook, external diff or text conversion runs; no submodule is
// entered (its own config would be read). A clean filter runs whenever git
// reads a working-tree file whose attributes name one, so the working tree
// is compared only on the paths no filter is specified for
// (:(attr:!filter), and those where it is unset); a path with a filter
// counts its committed changes only, tree to tree, where no filter runs.
// Untracked files are counted without git and without following anything:
// regular files only, never a link (to /dev/zero, say), the first MiB of
// each.
const diffScript = `printf 'dir %s\n' "$1"
cd "$1" 2>/dev/null || { echo "error: no such directory"; exit 0; }
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
d() { g diff --no-ext-diff --no-textconv --ignore-submodules=all --numstat "$@"; }
d "$mb" -- ':(attr:!filter)' ':(attr:-filter)' || { echo "error: git diff failed"; exit 0; }
d "$mb" HEAD -- . ':(exclude,attr:!filter)' ':(exclude,attr:-filter)' || { echo "error: git diff failed"; exit 0; }
n=$(g ls-files -z --others --exclude-standard | xargs -0 sh -c 'for f do [ -f "$f" ] && [ ! -h "$f" ] && head -c 1048576 -- "$f"; done; :' omega-monitor | wc -l)
echo "untracked $n"`

// DiffCommand is the command line that runs diffScript on dir: for sh -c
// here, or for ssh, whose remote login shell parses it again; every word is
// quoted for that shell.
func DiffCommand(dir string) string {
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
		case strings.HasPrefix(line, "dir ") && !based:
			d.Dir = strings.TrimPrefix(line, "dir ")
		case strings.HasPrefix(line, "error: "):
			return board.Diff{Error: strings.TrimPrefix(line, "error: "), Dir: d.Dir}, nil
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

// recordDiff writes DIR/diff.json from what the last poll's diff command
// printed (the file output) or why it failed; dir is the pane's directory
// as this poll knows it, for a command that could not say which it measured.
// Without either, there is nothing to record.
func (d stateDirectory) recordDiff(now time.Time, output, failed, dir string) error {
	var m board.Diff
	switch {
	case failed != "":
		m.Error = "not measured: " + strings.Join(strings.Fields(failed), " ")
	case output != "":
		f, err := os.Open(output)
		if err != nil {
			return fmt.Errorf("diff not recorded: %v", err)
		}
		defer f.Close()
		if m, err = parseDiff(io.LimitReader(f, 16<<20)); err != nil {
			m = board.Diff{Error: err.Error(), Dir: m.Dir}
		}
	default:
		return nil
	}
	if m.Dir == "" {
		m.Dir = dir
	}
	m.At = now.UTC()
	data, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("diff not recorded: %v", err)
	}
	if err := writeAtomic(d.path(statedir.DiffFile), append(data, '\n')); err != nil {
		return fmt.Errorf("diff not recorded: %v", err)
	}
	return nil
}

// diffWanted is the command that measures dir when a measure is due, else
// empty.
func (d stateDirectory) diffWanted(now time.Time, dir string) string {
	if dir == "" || !diffDue(d.path(statedir.DiffFile), dir, now) {
		return ""
	}
	return DiffCommand(dir)
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
