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
