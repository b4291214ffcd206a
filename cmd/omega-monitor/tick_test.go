package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
	"gotest.tools/v3/assert"
	"gotest.tools/v3/fs"
)

func readPane(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "golden", "panes", name+".pane"))
	assert.NilError(t, err)
	return string(b)
}

// tickOnce runs the tick command and returns its stdout, stderr and code.
func tickOnce(t *testing.T, pane string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(append([]string{"tick", "--now", "2026-01-05T09:00:00Z"}, args...), strings.NewReader(pane), &out, &errb)
	return out.String(), errb.String(), code
}

func TestTickNudgesAndHandsOver(t *testing.T) {
	dir := fs.NewDir(t, "tick")
	state := filepath.Join(dir.Path(), "w")
	out, errs, code := tickOnce(t, readPane(t, "GOLDEN-stalled-real"), "--state", state, "--target", "agent", "--work", "7", "--nudge-text", "keep going")
	assert.Equal(t, code, 0, errs)
	assert.Equal(t, out, "MONITOR · agent · STALLED · work=7 · progress=? · nudged (1/5) · no progress probe: the nudge budget cannot reset\n")
	nudge, err := os.ReadFile(filepath.Join(state, "actions", "001.nudge"))
	assert.NilError(t, err)
	assert.Equal(t, string(nudge), "keep going")
	ledgerText, err := os.ReadFile(filepath.Join(state, "ledger"))
	assert.NilError(t, err)
	assert.Assert(t, strings.HasSuffix(string(ledgerText), "\nkeep going\n"), "the nudge is in the ledger before it is handed over")
	for path, want := range map[string]os.FileMode{
		state: 0o700, filepath.Join(state, "state.json"): 0o600, filepath.Join(state, "history.jsonl"): 0o600,
		filepath.Join(state, "ledger"): 0o600, filepath.Join(state, "actions", "001.nudge"): 0o600,
	} {
		assert.Equal(t, mode(t, path), want, path)
	}
	// The next poll drops the action the shell never carried out.
	out, _, _ = tickOnce(t, readPane(t, "GOLDEN-question-real"), "--state", state, "--target", "agent")
	assert.Assert(t, strings.Contains(out, "QUESTION · escalated to the operator, NOT answered"), out)
	assert.Assert(t, strings.Contains(out, "dropped 1 stale action(s)"), out)
	entries, err := os.ReadDir(filepath.Join(state, "actions"))
	assert.NilError(t, err)
	for _, e := range entries {
		assert.Assert(t, strings.HasSuffix(e.Name(), ".alert"), "a question hands over only alerts: %s", e.Name())
	}
}

func TestTickCorruptStateIsKeptAside(t *testing.T) {
	dir := fs.NewDir(t, "tick", fs.WithDir("w", fs.WithFile("state.json", "{not json"),
		fs.WithFile("history.jsonl", `{"event":"nudge"}`+"\n")))
	state := dir.Join("w")
	out, _, code := tickOnce(t, readPane(t, "GOLDEN-stalled-real"), "--state", state, "--target", "agent", "--work", "7")
	assert.Equal(t, code, 0)
	assert.Assert(t, strings.Contains(out, "nudged (1/5)"), out)
	assert.Assert(t, strings.Contains(out, "error: state file corrupt, kept as state.json.corrupt-20260105T090000Z, started fresh"), out)
	kept, err := os.ReadFile(filepath.Join(state, "state.json.corrupt-20260105T090000Z"))
	assert.NilError(t, err)
	assert.Equal(t, string(kept), "{not json")
	history, err := os.ReadFile(filepath.Join(state, "history.jsonl"))
	assert.NilError(t, err)
	assert.Assert(t, strings.HasPrefix(string(history), `{"event":"nudge"}`+"\n"), "an earlier history line was lost")
	var s map[string]any
	data, err := os.ReadFile(filepath.Join(state, "state.json"))
	assert.NilError(t, err)
	assert.NilError(t, json.Unmarshal(data, &s))
}

func TestTickUnusableStateDirectory(t *testing.T) {
	// A state "directory" that is a file: nothing can be saved, and above
	// all no nudge goes out, since it could not be recorded first.
	dir := fs.NewDir(t, "tick", fs.WithFile("w", "a file"))
	out, _, code := tickOnce(t, readPane(t, "GOLDEN-stalled-real"), "--state", dir.Join("w"), "--target", "agent", "--work", "7")
	assert.Equal(t, code, 0)
	assert.Assert(t, strings.Contains(out, "not nudged (the echo ledger could not record it)"), out)
	assert.Assert(t, strings.Contains(out, "error: state directory:"), out)
	assert.Assert(t, strings.Contains(out, "error: state not saved:"), out)
}

func TestTickFullDisk(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		if testenv.InCI() {
			t.Fatal("CI has no /dev/full to stand for a full disk")
		}
		t.Skip("no /dev/full here")
	}
	dir := fs.NewDir(t, "tick", fs.WithDir("w", fs.WithFile("history.jsonl", `{"event":"state"}`+"\n")))
	state := dir.Join("w")
	// The history of the first poll lands; then every write to it fails
	// as on a full disk.
	history := filepath.Join(state, "history.jsonl")
	assert.NilError(t, os.Remove(history))
	assert.NilError(t, os.Symlink("/dev/full", history))
	out, _, code := tickOnce(t, readPane(t, "GOLDEN-stalled-real"), "--state", state, "--target", "agent", "--work", "7")
	assert.Equal(t, code, 0)
	assert.Assert(t, strings.Contains(out, "error: history not written:"), out)
	assert.Assert(t, strings.Contains(out, "no space left on device"), out)
	// The next poll is defined: it reads the state saved by this one.
	out, _, _ = tickOnce(t, readPane(t, "GOLDEN-stalled-real"), "--state", state, "--target", "agent", "--work", "7")
	assert.Assert(t, strings.Contains(out, "nudged (2/5)"), out)
}

func TestTickUsage(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--state", "x"},
		{"--state", "x", "--target", "a:b:c"},
		{"--state", "x", "--target", "a", "--nudge-budget", "-1"},
		{"--state", "x", "--target", "a", "--nudge-text", "two\nlines"},
		{"--state", "x", "--target", "a", "extra"},
		{"--state", "x", "--target", "a", "--now", "yesterday"},
	} {
		_, errs, code := tickOnce(t, "", args...)
		if code != 2 || errs == "" {
			t.Errorf("tick %q: code %d, stderr %q; want 2 and a message", args, code, errs)
		}
	}
	var out bytes.Buffer
	assert.Equal(t, run([]string{"tick", "--help"}, nil, &out, &out), 0)
	assert.Assert(t, strings.Contains(out.String(), "usage: omega-monitor tick"))
}

func TestShellWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"--nudge-budget 3", []string{"--nudge-budget", "3"}},
		{`--nudge-text 'keep going; it is "fine"'`, []string{"--nudge-text", `keep going; it is "fine"`}},
		{`--nudge-text "say \"hi\" \$x"`, []string{"--nudge-text", `say "hi" $x`}},
		{"a\\ b # a comment\nc", []string{"a b", "c"}},
		{"''", []string{""}},
	}
	for _, tt := range tests {
		got, err := shellWords(tt.in)
		assert.NilError(t, err)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("shellWords(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
	for _, bad := range []string{"'open", `"open`} {
		if _, err := shellWords(bad); err == nil {
			t.Errorf("shellWords(%q) gave no error", bad)
		}
	}
}

func TestTickAgentStatusVetoesANudge(t *testing.T) {
	dir := fs.NewDir(t, "tick", fs.WithFile("1337.json",
		`{"pid":1337,"tmux":"agent:@0.%0","status":"busy","version":"2.1.332","updatedAt":1767603570000}`))
	state := dir.Join("w")
	args := []string{"--state", state, "--target", "agent", "--work", "7", "--agent-status", dir.Join("1337.json"), "--pane", "agent:@0.%0", "--explain"}
	out, errs, code := tickOnce(t, readPane(t, "GOLDEN-stalled-real"), args...)
	assert.Equal(t, code, 0)
	assert.Assert(t, strings.Contains(out, "not nudged: the agent's own status says busy, though the screen reads STALLED"), out)
	assert.Assert(t, strings.Contains(errs, "witness:  says busy"), errs)
	entries, err := os.ReadDir(filepath.Join(state, "actions"))
	assert.NilError(t, err)
	assert.Equal(t, len(entries), 0, "a vetoed nudge was handed over")
	history, err := os.ReadFile(filepath.Join(state, "history.jsonl"))
	assert.NilError(t, err)
	assert.Assert(t, strings.Contains(string(history), `"event":"disagreement"`), string(history))
	// The same file for another pane changes nothing: the screen decides.
	args[len(args)-2] = "agent:@1.%4"
	out, errs, _ = tickOnce(t, readPane(t, "GOLDEN-stalled-real"), args...)
	assert.Assert(t, strings.Contains(out, "nudged (1/5)"), out)
	assert.Assert(t, strings.Contains(errs, "no status file names pane"), errs)
}
