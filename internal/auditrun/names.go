package auditrun

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Name is the name of a project's audits: its directory's base name, made
// safe as a file and session name (runs of other characters become "-").
func Name(dir string) string {
	var b strings.Builder
	dash := false
	for _, r := range filepath.Base(dir) {
		if r < 128 && (r == '_' || r == '-' || '0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') {
			b.WriteRune(r)
			dash = false
		} else if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	name := strings.Trim(b.String(), "-")
	if name == "" {
		name = "project"
	}
	return name
}

// ProjectDir returns dir as an absolute path to a directory.
func ProjectDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", dir)
	}
	return abs, nil
}

// Prepare completes s for the project dir, as the operator gave it, and
// checks it before anything runs: Check, then Dir made absolute (a
// directory), then Name taken from it unless given, and a given one only
// letters, digits, - and _. Its message names the flag.
func (s *Settings) Prepare(dir string) error {
	if err := s.Check(); err != nil {
		return err
	}
	abs, err := ProjectDir(dir)
	if err != nil {
		return err
	}
	s.Dir = abs
	if s.Name == "" {
		s.Name = Name(abs)
	} else if Name(s.Name) != s.Name {
		return fmt.Errorf("--name may hold only letters, digits, - and _; got %q", s.Name)
	}
	return nil
}
