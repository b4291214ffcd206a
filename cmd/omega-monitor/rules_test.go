package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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

// TestAgentsCheckDescriptionFields: agents check takes the fields the
// built-in descriptions use, and names the line and the field of a bad
// one; a built-in description checks as an operator's file.
func TestAgentsCheckDescriptionFields(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := newTestEnv("OMEGA_MONITOR_HOME=" + dir)
	const agent = `{"agents": [
  {"name": "Tern", "note": "a made-up agent",
   "boxes": [{"name": "framed", "prompt_prefixes": ["│"], "top": "^┌─+$", "prompt": "^│ » ?(.*)$", "bottom": "^└─+$"},
             {"name": "bare", "prompt": "^» (.*)$", "bottom": "^  ⏎ send$", "last": true}],
   "faint_placeholders": ["^ask tern$"], "frame_top": "^─{3,}", "heads": "^[◇■] "}
],
"rules": [
  {"agent": "tern", "name": "status", "region": "turn", "match": {"kind": "latest", "until": {"pattern": "^  ■ ", "needs": ["■"]}},
   "pattern": "^  ◇ .*ctrl\\+c to stop\\)$", "verdict": "working", "quoted": ["◇ x (1s · ctrl+c to stop)"]},
  RULE
]}
`
	for _, tc := range []struct {
		name, rule string
		code       int
		stderr     string
	}{
		{"a menu", `{"agent": "tern", "name": "menu", "region": "dialog", "match": {"kind": "option_menu", "cursors": ["➤"]}, "verdict": "question"}`, 0, ""},
		{"a picker with no footer", `{"agent": "tern", "name": "picker", "region": "dialog", "match": {"kind": "picker", "cursor": "^ ➤ \\S"}, "verdict": "question"}`,
			1, `:10: rule "picker": match: kind picker needs footer`},
		{"work read from a menu", `{"agent": "tern", "name": "menu", "region": "below", "match": {"kind": "option_menu", "cursors": ["➤"]}, "verdict": "working"}`,
			1, `:10: rule "menu": a working rule reads lines of live evidence: kind option_menu is a dialog's or a turn's shape (want one of any_line, end_line, edge_line, latest, or "lines": N)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".json")
			assert.NilError(t, os.WriteFile(file, []byte(strings.Replace(agent, "RULE", tc.rule, 1)), 0o600))
			var out, errb bytes.Buffer
			code := env.run([]string{"agents", "check", file}, nil, &out, &errb)
			want := ""
			if tc.stderr != "" {
				want = "omega-monitor agents: " + file + tc.stderr + "\n"
			}
			if diff := cmp.Diff(struct {
				Code   int
				Stderr string
			}{tc.code, want}, struct {
				Code   int
				Stderr string
			}{code, errb.String()}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	var out, errb bytes.Buffer
	assert.Equal(t, env.run([]string{"agents", "check", "../../classify/agents/claude-code.json"}, nil, &out, &errb), 1)
	assert.Assert(t, strings.Contains(errb.String(), `agent "Claude Code": the name of an agent already known`), errb.String())
}
