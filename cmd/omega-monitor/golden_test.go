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
	t.Parallel()
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

// TestGoldenAddKeepsNoSecret: the corpus is committed, so a capture that
// shows a key is masked line by line before it is written (rows kept, and
// said), and one whose key is wrapped over lines or boxed, which a line
// cannot mask, is refused with nothing written.
func TestGoldenAddKeepsNoSecret(t *testing.T) {
	t.Parallel()
	const key = "sk-ant-api03-Zx9_fQ2mXk7LpZ0aB3cD4eF5gH6iJ7kL8mN9oP0qR1sT2"
	for _, tc := range []struct {
		name, pane string
		code       int
	}{
		{"inline", "$ export ANTHROPIC_API_KEY=" + key + "\n\n❯ 1. Yes\n  2. No\n\nEsc to cancel\n", 0},
		{"yaml", "  password: hunter2-Correct-Horse\n\n❯ 1. Yes\n  2. No\n\nEsc to cancel\n", 0},
		{"pem", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAq7Bf9Xk2Lm3Np4Qr5St6Uv7Wx8Yz9Ab0Cd1Ef2Gh3Ij4Kl5\n-----END RSA PRIVATE KEY-----\n\n❯ 1. Yes\n  2. No\n", 1},
		{"boxed", "│ export KEY=sk-ant-api03-Zx9_fQ2mXk7Lp │\n│ Z0aB3cD4eF5gH6iJ7kL8mN9oP0qR1sT2 │\n\n❯ 1. Yes\n  2. No\n", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var out, errb bytes.Buffer
			code := run([]string{"golden", "add", "leak", "--want", "QUESTION", "--dir", dir}, strings.NewReader(tc.pane), &out, &errb)
			assert.Equal(t, code, tc.code, errb.String())
			got, err := os.ReadFile(filepath.Join(dir, "leak.pane"))
			if tc.code != 0 {
				assert.Assert(t, os.IsNotExist(err), "a refused case was written")
				assert.Assert(t, strings.Contains(errb.String(), "mask it by hand"), errb.String())
				return
			}
			assert.NilError(t, err)
			for _, secret := range []string{key, "Zx9_fQ2mXk7Lp", "hunter2-Correct-Horse"} {
				assert.Assert(t, !strings.Contains(string(got), secret), "the corpus keeps %q:\n%s", secret, got)
			}
			assert.Equal(t, strings.Count(string(got), "\n"), strings.Count(tc.pane, "\n"), "the rows moved")
			assert.Assert(t, strings.Contains(errb.String(), "masked what looks like a secret on 1 line"), errb.String())
			assert.Assert(t, strings.Contains(out.String(), "the classifier agrees"), out.String())
		})
	}
}
