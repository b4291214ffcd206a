package auditrun

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// agentConfig names, by base name, what an agent loads from the directory it
// runs in and can turn into a process or an instruction: settings with MCP
// servers and hooks (.claude/, .codex/, .gemini/, .mcp.json), skills and
// commands (.agents/), and environment files that Gemini CLI loads into its
// own environment (.env: NODE_OPTIONS there runs code). None of them enters
// the copy an auditor reads.
var agentConfig = map[string]string{
	".claude":   "agent settings",
	".codex":    "agent settings",
	".gemini":   "agent settings",
	".agents":   "agent skills",
	".mcp.json": "agent MCP servers",
	".git":      "git metadata (its config runs commands)",
}

// isEnvFile reports whether a base name is an environment file: .env, and
// .env.local and the like. They hold secrets and agents load them.
func isEnvFile(name string) bool { return name == ".env" || strings.HasPrefix(name, ".env.") }

// Limits of the copy.
const (
	// MaxFile is the largest file copied: an auditor reads source and
	// prose, not data sets; a larger file is left out and listed.
	MaxFile = 4 << 20
	// MaxTree is the most the copy may hold; a larger tree is refused.
	MaxTree = 1 << 30
)

// A LeftOut is one entry of the project that the copy does not hold, and
// why.
type LeftOut struct {
	Path   string `json:"path"` // slash-separated, relative to the project
	Reason string `json:"reason"`
}

func (l LeftOut) String() string { return l.Path + " (" + l.Reason + ")" }

// copyTree copies the project at src into dst, which must not exist: its
// directories and regular files, and nothing an agent would load as its own
// configuration, no link, no device, FIFO or socket, no file over MaxFile,
// nothing under skip (the state home when the project holds it); a tree
// whose files pass limit bytes is refused. Files are
// opened beneath src through an os.Root and without following a link, so a
// link swapped in during the walk reads nothing outside. Copied files are
// 0400 and directories 0500 once full: the copy is for reading.
func copyTree(src, dst, skip string, limit int64) ([]LeftOut, error) {
	root, err := os.OpenRoot(src)
	if err != nil {
		return nil, fmt.Errorf("auditrun: %w", err)
	}
	defer root.Close()
	if err := os.Mkdir(dst, 0o700); err != nil {
		return nil, fmt.Errorf("auditrun: %w", err)
	}
	var (
		left  []LeftOut
		total int64
		dirs  []string
	)
	leave := func(rel, why string) { left = append(left, LeftOut{Path: rel, Reason: why}) }
	err = fs.WalkDir(root.FS(), ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			if rel == "." {
				return err
			}
			leave(rel, "unreadable")
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if rel == "." {
			dirs = append(dirs, dst)
			return nil
		}
		name := path.Base(rel)
		full := filepath.Join(src, filepath.FromSlash(rel))
		switch why, ok := agentConfig[name]; {
		case skip != "" && full == skip:
			return fs.SkipDir
		case ok:
			leave(rel, why)
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		case isEnvFile(name):
			leave(rel, "environment file")
			return nil
		}
		target := filepath.Join(dst, filepath.FromSlash(rel))
		switch t := d.Type(); {
		case t.IsDir():
			dirs = append(dirs, target)
			return os.Mkdir(target, 0o700)
		case t&fs.ModeSymlink != 0:
			leave(rel, "symbolic link")
			return nil
		case !t.IsRegular():
			leave(rel, "not a regular file")
			return nil
		}
		n, why, err := copyFile(root, rel, target, limit-total)
		switch {
		case errors.Is(err, errTreeTooLarge):
			return fmt.Errorf("auditrun: the project holds more than %d MiB of files to copy; audit a smaller directory", limit>>20)
		case err != nil:
			return err
		case why != "":
			leave(rel, why)
		}
		total += n
		return nil
	})
	if err != nil {
		return left, err
	}
	// Deepest first, so that a parent is still writable while its
	// children are sealed.
	for _, d := range slices.Backward(dirs) {
		if err := os.Chmod(d, 0o500); err != nil {
			return left, fmt.Errorf("auditrun: %w", err)
		}
	}
	return left, nil
}

var errTreeTooLarge = errors.New("auditrun: tree too large")

// copyFile copies the regular file rel under root to target, 0400. It
// returns the bytes copied, or why the file was left out (not regular once
// opened, over MaxFile, unreadable); errTreeTooLarge when more than room
// is left.
func copyFile(root *os.Root, rel, target string, room int64) (int64, string, error) {
	// O_NONBLOCK: a FIFO swapped in after the walk opens at once
	// instead of waiting for a writer; O_NOFOLLOW: a link swapped in
	// is refused.
	in, err := root.OpenFile(filepath.FromSlash(rel), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return 0, "unreadable", nil
	}
	defer in.Close()
	fi, err := in.Stat()
	switch {
	case err != nil:
		return 0, "unreadable", nil
	case !fi.Mode().IsRegular():
		return 0, "not a regular file", nil
	case fi.Size() > MaxFile:
		return 0, fmt.Sprintf("over %d MiB", MaxFile>>20), nil
	case fi.Size() > room:
		return 0, "", errTreeTooLarge
	}
	out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o400)
	if err != nil {
		return 0, "", fmt.Errorf("auditrun: %w", err)
	}
	n, err := io.Copy(out, io.LimitReader(in, MaxFile))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return n, "", fmt.Errorf("auditrun: copying %s: %w", rel, err)
	}
	return n, "", nil
}

// removeTree removes a tree copyTree made, its sealed directories
// included.
func removeTree(dir string) error {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}
