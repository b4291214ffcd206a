package setup

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/omega-monitor/omega-monitor/internal/atomicfile"
)

// agentFound says whether agent is on this machine for env's user: its
// user directory exists, or its program (install's name for it) is on
// PATH. It says what it looked for when not.
func agentFound(env Env, spec hookSpec) (bool, string) {
	dir := filepath.Dir(spec.file)
	if spec.dir != "" {
		dir = spec.dir
	}
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		return true, ""
	}
	prog := spec.agent
	for _, d := range filepath.SplitList(env.getenv("PATH")) {
		if fi, err := os.Stat(filepath.Join(d, prog)); d != "" && err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return true, ""
		}
	}
	return false, fmt.Sprintf("no %s and no %s on PATH", dir, prog)
}

// backupSuffix names the copy of a user's file as it was before install
// changed it.
const backupSuffix = ".omega-monitor.bak"

// keepBackup writes before, the file at path as it was, beside it; a file
// that did not exist has none. It returns where.
func keepBackup(path string, before []byte) (string, error) {
	if before == nil {
		return "", nil
	}
	b := path + backupSuffix
	if err := atomicfile.Write(b, before, 0o600); err != nil {
		return "", fmt.Errorf("no backup of %s: %w", path, err)
	}
	return b, nil
}

// createdFile is the record, in the state home, of the files and
// directories install --hooks made: uninstall removes those it leaves
// empty, and only those.
const createdFile = "hooks-created.json"

type createdRecord struct {
	Paths []string `json:"paths"`
}

func readCreated(state string) createdRecord {
	var r createdRecord
	if b, err := os.ReadFile(filepath.Join(state, createdFile)); err == nil {
		json.Unmarshal(b, &r)
	}
	return r
}

func (r createdRecord) save(state string) error {
	if len(r.Paths) == 0 {
		if err := os.Remove(filepath.Join(state, createdFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(state, 0o700); err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(state, createdFile), append(b, '\n'), 0o600)
}

// made records the paths of those (a file, its directory) that did not
// exist before; missing says which.
func (r *createdRecord) made(paths ...string) {
	for _, p := range paths {
		if !slices.Contains(r.Paths, p) {
			r.Paths = append(r.Paths, p)
		}
	}
}

// removeMade removes path, when install made it and it holds nothing of
// anyone's now (empty says so of its text), and then its directory when
// install made that too and it is empty. It says what went.
func (r *createdRecord) removeMade(path string, empty func([]byte) bool) []string {
	if !slices.Contains(r.Paths, path) {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil || !empty(b) {
		return nil
	}
	var gone []string
	if os.Remove(path) == nil {
		gone = append(gone, path)
		r.Paths = slices.DeleteFunc(r.Paths, func(p string) bool { return p == path })
	}
	dir := filepath.Dir(path)
	if slices.Contains(r.Paths, dir) && os.Remove(dir) == nil { // only an empty one goes
		gone = append(gone, dir)
		r.Paths = slices.DeleteFunc(r.Paths, func(p string) bool { return p == dir })
	}
	return gone
}

// emptyJSON says a settings file holds an empty object.
func emptyJSON(b []byte) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(b, &m) == nil && len(m) == 0
}

// emptyText says a file holds nothing but blanks.
func emptyText(b []byte) bool { return len(bytes.TrimSpace(b)) == 0 }

// maxDiffLines bounds the files lineDiff compares line by line.
const maxDiffLines = 2000

// lineDiff is what changed from before to after, a line each, "+ " added,
// "- " removed (the shortest edit, by the longest common run of lines).
func lineDiff(before, after []byte) []string {
	a, b := splitLines(before), splitLines(after)
	if len(a) > maxDiffLines || len(b) > maxDiffLines {
		return []string{fmt.Sprintf("(%d lines before, %d after: too long to show)", len(a), len(b))}
	}
	// lcs[i][j] is the longest common run of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			out = append(out, "- "+a[i])
			i++
		default:
			out = append(out, "+ "+b[j])
			j++
		}
	}
	return out
}

func splitLines(b []byte) []string {
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
