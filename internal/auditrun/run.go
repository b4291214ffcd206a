package auditrun

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/digest"
	"github.com/omega-monitor/omega-monitor/internal/procgroup"
)

// MaxReport is the most of an auditor's report that is kept: a report is
// text a person reads, and a runaway agent must not fill the disk.
const MaxReport = 1 << 20

// capped keeps the first max bytes written to it and drops the rest, so
// that a chatty process never blocks on a full pipe.
type capped struct {
	buf []byte
	max int
	cut bool
}

func (c *capped) Write(p []byte) (int, error) {
	keep := min(len(p), c.max-len(c.buf))
	c.buf = append(c.buf, p[:keep]...)
	c.cut = c.cut || keep < len(p)
	return len(p), nil
}

// A Result is what one auditor's process did.
type Result struct {
	Stdout, Stderr []byte
	// Cut says the report passed MaxReport and was cut there.
	Cut     bool
	Elapsed time.Duration
	Err     error // nil when it exited 0 in time
}

// Run runs the auditor of brief in the sandbox, with standard input from
// /dev/null, in a process group of its own, under a wall clock of timeout.
// When the clock runs out the whole group is killed, and a grandchild still
// holding the output open is cut off a moment later: nothing it started
// outlives it.
func (s *Sandbox) Run(bin, brief string, timeout time.Duration) Result {
	stdout, stderr := &capped{max: MaxReport}, &capped{max: 64 << 10}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := s.Command(ctx, s.Argv(bin, brief))
	cmd.Stdout, cmd.Stderr = stdout, stderr
	procgroup.Set(cmd, 2*time.Second)
	start := time.Now()
	err := cmd.Run()
	r := Result{Elapsed: time.Since(start)}
	procgroup.Kill(cmd)
	r.Stdout, r.Stderr, r.Cut = stdout.buf, stderr.buf, stdout.cut
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		r.Err = fmt.Errorf("timed out after %v", timeout)
	case errors.As(err, &exit):
		r.Err = fmt.Errorf("%v: %s", err, lastLine(string(stderr.buf), "no message"))
	default:
		r.Err = err
	}
	return r
}

// lastLine returns the last non-empty line of s, or none.
func lastLine(s, none string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if l := strings.TrimSpace(lines[len(lines)-1]); l != "" {
		return l
	}
	return none
}

// HashTree returns every entry under dir but .git's insides and skip (the
// state home, when dir holds it), each with its type, mode and content hash
// (a link's target): the work tree, tracked and untracked, ignored files
// included.
func HashTree(dir, skip string) (map[string]string, error) {
	tree := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() && p != dir && (d.Name() == ".git" || p == skip) {
			return filepath.SkipDir
		}
		h, err := hashEntry(p, d)
		if err != nil {
			return err
		}
		tree[rel] = h
		return nil
	})
	return tree, err
}

// HashGitControl returns what of dir's .git can make git run a command
// (its config and its hooks), hashed as HashTree hashes: an auditor must
// not leave a hook or a filter behind in the real repository.
func HashGitControl(dir string) (map[string]string, error) {
	tree := map[string]string{}
	for _, name := range []string{"config", "hooks"} {
		top := filepath.Join(dir, ".git", name)
		err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if p == top && errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			h, err := hashEntry(p, d)
			if err != nil {
				return err
			}
			tree[filepath.ToSlash(rel)] = h
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return tree, nil
}

// hashEntry is one entry's type, mode and hash; a special file is not
// opened.
func hashEntry(p string, d fs.DirEntry) (string, error) {
	fi, err := d.Info()
	if err != nil {
		return "", err
	}
	switch {
	case d.IsDir():
		return "dir " + fi.Mode().Perm().String(), nil
	case d.Type()&fs.ModeSymlink != 0:
		target, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		return "link " + target, nil
	case d.Type().IsRegular():
		h := digest.New()
		fh, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
		if err != nil {
			return "", err
		}
		_, err = io.Copy(h, fh)
		fh.Close()
		if err != nil {
			return "", err
		}
		return "file " + fi.Mode().Perm().String() + " " + hex.EncodeToString(h.Sum(nil)), nil
	}
	return "special " + fi.Mode().String(), nil
}

// TreeChanges lists what differs between two hashes of a tree, in path
// order.
func TreeChanges(before, after map[string]string) []string {
	var out []string
	for p, h := range before {
		switch a, ok := after[p]; {
		case !ok:
			out = append(out, "removed: "+p)
		case a != h:
			out = append(out, "changed: "+p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			out = append(out, "added: "+p)
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		_, pa, _ := strings.Cut(a, ": ")
		_, pb, _ := strings.Cut(b, ": ")
		return strings.Compare(pa, pb)
	})
	return out
}
