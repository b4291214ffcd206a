package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

// codexNewStatus is a Codex screen whose status line a later release words
// differently, so that no built-in rule reads it: drawn after a turn's end
// line (a turn with no end reads WORKING by itself).
const codexNewStatus = "› fix the flaky retry test\n\n• Fixed the retry.\n\n─ Worked for 12s ─────────────────────────────\n\n" +
	"• Thinking hard (12s, press esc to stop)\n\n› Ask Codex to do anything\n\n  ? for shortcuts\n"

const goodRules = `{"rules": [
  {"agent": "codex", "name": "status line of a later release", "region": "above",
   "pattern": "^• \\S.* \\(\\d+s, press esc to stop\\)$", "verdict": "working"}
]}
`

func TestRulesCheckListExplain(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	env := newTestEnv("OMEGA_MONITOR_HOME=" + home)
	good := filepath.Join(home, "rules.json")
	assert.NilError(t, os.WriteFile(good, []byte(goodRules), 0o600))
	bad := filepath.Join(t.TempDir(), "bad.json")
	assert.NilError(t, os.WriteFile(bad, []byte("{\"rules\": [\n  {\"agent\": \"codex\", \"name\": \"x\", \"region\": \"abov\", \"pattern\": \"^x\", \"verdict\": \"working\"}\n]}\n"), 0o600))

	var out, errb bytes.Buffer
	assert.Equal(t, env.run([]string{"rules", "check", good}, nil, &out, &errb), 0, errb.String())
	out.Reset()
	assert.Equal(t, env.run([]string{"rules", "check", bad}, nil, &out, &errb), 1)
	assert.Equal(t, errb.String(), "omega-monitor rules: "+bad+":2: rule \"x\": unknown region \"abov\" (want above, below, dialog, box, turn or frame)\n")
	errb.Reset()
	assert.Equal(t, env.run([]string{"rules", "check"}, nil, &out, &errb), 2)

	out.Reset()
	assert.Equal(t, env.run([]string{"rules", "list"}, nil, &out, &errb), 0)
	var mine string
	for l := range strings.Lines(out.String()) {
		if strings.Contains(l, "status line of a later release") {
			mine = strings.Join(strings.Fields(l), " ")
		}
	}
	assert.Equal(t, mine, "Codex CLI WORKING above status line of a later release "+good+":2")
	assert.Assert(t, strings.Contains(out.String(), "Codex approval footer"), out.String())

	// classify reads the watchers' rules file, and --explain names it.
	out.Reset()
	errb.Reset()
	assert.Equal(t, env.run([]string{"classify", "--explain"}, strings.NewReader(codexNewStatus), &out, &errb), 0)
	assert.Equal(t, out.String(), "WORKING\n")
	assert.Assert(t, strings.Contains(errb.String(), "rule from: "+good+":2"), errb.String())
}

// TestRulesBadFileNeverStopsAWatcher: a tick with a bad rules file still
// judges the screen with the built-in rules, and says so once.
func TestRulesBadFileNeverStopsAWatcher(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	env := newTestEnv("OMEGA_MONITOR_HOME=" + home)
	assert.NilError(t, os.WriteFile(filepath.Join(home, "rules.json"), []byte("{\"rules\": [\n  {\"agent\": \"codex\",\n"), 0o600))
	state := filepath.Join(home, "monitor-agent")
	var said int
	for i := range 3 {
		var out, errb bytes.Buffer
		code := env.run([]string{"tick", "--state", state, "--target", "agent", "--work", "3", "--nudge-budget", "0"}, strings.NewReader(codexNewStatus), &out, &errb)
		assert.Equal(t, code, 0, errb.String())
		assert.Assert(t, strings.Contains(out.String(), " · STALLED · "), "tick %d: %s", i, out.String())
		if strings.Contains(out.String()+errb.String(), "the built-in rules apply") {
			said++
			assert.Assert(t, strings.Contains(out.String()+errb.String(), "rules.json:3: the file ends early"), out.String()+errb.String())
		}
	}
	assert.Equal(t, said, 1, "the bad rules file must be reported once")
}

func TestGoldenAddWithRules(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rules := filepath.Join(t.TempDir(), "rules.json")
	assert.NilError(t, os.WriteFile(rules, []byte(goodRules), 0o600))
	var out, errb bytes.Buffer
	code := run([]string{"golden", "add", "codex-new-status", "--want", "WORKING", "--rules", rules, "--dir", dir}, strings.NewReader(codexNewStatus), &out, &errb)
	assert.Equal(t, code, 0, errb.String())
	assert.Assert(t, strings.Contains(out.String(), "the classifier agrees"), out.String())
	kept, err := os.ReadFile(filepath.Join(dir, "codex-new-status.rules.json"))
	assert.NilError(t, err)
	assert.Equal(t, string(kept), goodRules)

	// A bad rules file adds nothing.
	bad := filepath.Join(t.TempDir(), "bad.json")
	assert.NilError(t, os.WriteFile(bad, []byte("{\"rule\": []}"), 0o600))
	code = run([]string{"golden", "add", "other", "--want", "WORKING", "--rules", bad, "--dir", dir}, strings.NewReader(codexNewStatus), &out, &errb)
	assert.Equal(t, code, 1)
	_, err = os.Stat(filepath.Join(dir, "other.pane"))
	assert.Assert(t, os.IsNotExist(err))
}
