package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/omega-monitor/omega-monitor/internal/expect"
)

func TestGoldenAdd(t *testing.T) {
	dir := t.TempDir()
	pane := "────\n❯ 1. Yes\n  2. No\n\nEsc to cancel"
	var out, errb bytes.Buffer
	code := run([]string{"golden", "add", "perm", "--want", "STALLED", "--work", " 3 ", "--why", "misread", "--dir", dir}, strings.NewReader(pane), &out, &errb)
	assert.Equal(t, code, 0, errb.String())
	assert.Assert(t, strings.Contains(out.String(), "the classifier reads QUESTION"), out.String())
	got, err := os.ReadFile(filepath.Join(dir, "perm.pane"))
	assert.NilError(t, err)
	assert.Equal(t, string(got), pane+"\n")
	w, err := expect.Read(filepath.Join(dir, "perm.want"))
	assert.NilError(t, err)
	assert.DeepEqual(t, w, expect.Want{State: "STALLED", Work: " 3 ", HasWork: true, Why: "misread"})

	// Never overwrites, and refuses bad words.
	for _, args := range [][]string{
		{"golden", "add", "perm", "--want", "QUESTION", "--dir", dir},
		{"golden", "add", "Bad Name", "--want", "QUESTION", "--dir", dir},
		{"golden", "add", "x", "--want", "MAYBE", "--dir", dir},
		{"golden", "add", "x", "--want", "WORKING", "--hold", "draft", "--dir", dir},
		{"golden", "nothing"},
		{"golden", "add", "x", "--want", "QUESTION", "--dir", filepath.Join(dir, "missing")},
	} {
		errb.Reset()
		code := run(args, strings.NewReader(pane), &out, &errb)
		assert.Assert(t, code != 0 && errb.Len() > 0, "%q: code %d", args, code)
	}
	got, _ = os.ReadFile(filepath.Join(dir, "perm.pane"))
	assert.Equal(t, string(got), pane+"\n", "an existing case was overwritten")
}

// TestGoldenAddOutsideACheckout: without --dir, outside a checkout, golden
// add refuses instead of creating ./golden/panes.
func TestGoldenAddOutsideACheckout(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	var out, errb bytes.Buffer
	code := run([]string{"golden", "add", "x", "--want", "QUESTION"}, strings.NewReader("pane\n"), &out, &errb)
	assert.Equal(t, code, 1)
	assert.Assert(t, strings.Contains(errb.String(), "no corpus directory golden/panes here"), errb.String())
	_, err := os.Stat(filepath.Join(dir, "golden"))
	assert.Assert(t, os.IsNotExist(err), "golden/ was created")
}
