package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// TestReadmeCounts: the figures the documentation gives for the corpus
// (docs/credibility.md, where the README's section on the golden corpus
// moved) are the corpus's. Whoever adds a case updates the sentence.
func TestReadmeCounts(t *testing.T) {
	const doc = "docs/credibility.md"
	text, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(doc)))
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join("..", "..", "golden")
	for _, c := range []struct {
		sentence *regexp.Regexp
		glob     string
	}{
		{regexp.MustCompile("`golden/panes/` holds (\\d+) captured panes"), filepath.Join(root, "panes", "*.pane")},
		{regexp.MustCompile("`golden/sessions/` holds (\\d+) recorded"), filepath.Join(root, "sessions", "*.txtar")},
		{regexp.MustCompile("holds (\\d+) captures of it"), filepath.Join(root, "real", "*.e.pane")},
		{regexp.MustCompile("\\((\\d+) pane files\\)"), filepath.Join(root, "real", "*.pane")},
	} {
		m := c.sentence.FindSubmatch(text)
		if m == nil {
			t.Errorf("%s has no sentence matching %q", doc, c.sentence)
			continue
		}
		said, _ := strconv.Atoi(string(m[1]))
		files, err := filepath.Glob(c.glob)
		if err != nil {
			t.Fatal(err)
		}
		if said != len(files) {
			t.Errorf("%s says %q, but %s holds %d", doc, m[0], c.glob, len(files))
		}
	}
}
