package classify_test

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/probe"
)

// Tern is an agent the project does not ship: its screens are read only
// through the description in testdata/tern.rules.json.
const (
	ternBox = "┌──────────────────────────────┐\n│ » %s│\n└──────────────────────────────┘\n  tern · model m-1 · /help\n"

	ternWorking = "Tern v0.3 · ~/proj\n\n» fix the flaky test in ingest\n  ◆ Reading ingest/loader.go\n  ◆ Running go test ./ingest/...\n  ⠋ thinking · 12s · ctrl+c to stop\n\n"

	ternIdle = "Tern v0.3 · ~/proj\n\n» fix the flaky test in ingest\n  ◆ Reading ingest/loader.go\n  The test raced on the clock; it now takes one.\n  ✓ done in 40s\n\n"

	// The spinner's words quoted in an answer, then the turn's end: the
	// transcript says them, the live block does not.
	ternQuoted = "Tern v0.3 · ~/proj\n\n» what does your spinner say?\n  It draws a line such as:\n  ⠋ thinking · 12s · ctrl+c to stop\n  under the task while it works.\n  ✓ done in 2s\n\n"

	ternStopped = "Tern v0.3 · ~/proj\n\n» rewrite the loader\n  ◆ Reading ingest/loader.go\n  ✗ stopped by you\n\n"

	ternAsks = "Tern v0.3 · ~/proj\n\n» clean the build\n  Allow tern to run `rm -rf build`?\n  [y] yes   [n] no   [a] always\n  y/n/a · esc to cancel\n"
)

func ternScreen(transcript, typed string) string {
	return transcript + strings.Replace(ternBox, "%s", typed+strings.Repeat(" ", 28-len([]rune(typed))), 1)
}

func ternRules(t *testing.T) *classify.Local {
	t.Helper()
	data, err := os.ReadFile("testdata/tern.rules.json")
	if err != nil {
		t.Fatal(err)
	}
	local, err := classify.ParseLocal(data, "tern.rules.json")
	if err != nil {
		t.Fatal(err)
	}
	return local
}

// TestDescribedAgent: an agent described by hand is read as the built-in
// ones are: WORKING only from its live block, a question from its dialog
// at the bottom of the screen, holds from its turn, a human's draft kept,
// its placeholder no draft; and, without its description, its screen is
// no agent's.
func TestDescribedAgent(t *testing.T) {
	local := ternRules(t)
	type got struct{ State, Agent, Hold, Draft, Source string }
	for _, tc := range []struct {
		name, screen string
		want         got
	}{
		{"working", ternScreen(ternWorking, ""), got{State: "WORKING", Agent: "Tern", Source: "tern.rules.json:12"}},
		{"idle after a turn", ternScreen(ternIdle, ""), got{State: "STALLED", Agent: "Tern"}},
		{"its placeholder is no draft", ternScreen(ternIdle, "type a task, or /help"), got{State: "STALLED", Agent: "Tern"}},
		{"a human's draft holds", ternScreen(ternIdle, "also the eu bucket"), got{State: "STALLED", Agent: "Tern", Hold: "draft", Draft: "also the eu bucket"}},
		{"the spinner quoted in an answer is no work", ternScreen(ternQuoted, ""), got{State: "STALLED", Agent: "Tern"}},
		{"stopped by the operator", ternScreen(ternStopped, ""), got{State: "STALLED", Agent: "Tern", Hold: "interrupt", Source: "tern.rules.json:16"}},
		{"its permission prompt", ternAsks, got{State: "QUESTION", Agent: "Tern", Source: "tern.rules.json:14"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := classify.ClassifyText(tc.screen, classify.Options{Local: local})
			g := got{State: r.State.String(), Agent: r.Agent, Hold: string(r.Hold), Draft: r.Draft, Source: r.Source}
			if diff := cmp.Diff(tc.want, g); diff != "" {
				t.Errorf("(-want +got):\n%s\n%s", diff, r.Explain())
			}
			if without := classify.ClassifyText(tc.screen, classify.Options{}); without.Agent != "" {
				t.Errorf("without the description the screen reads as %s's", without.Agent)
			}
		})
	}
}

// TestDescribedAgentRefused: a description that could read an idle agent
// as busy, type over a draft, or shadow an agent already known is refused,
// with the line it is on.
func TestDescribedAgentRefused(t *testing.T) {
	const working = `,
  "rules": [{"agent": "tern", "name": "w", "region": "above", "pattern": "^  ⠋ ", "verdict": "working"}]}`
	agentFile := func(fields string) string {
		return "{\"agents\": [\n  {\"name\": \"Tern\", " + fields + "}\n]" + working
	}
	box := `"box": {"prompt": "^» ?(.*)$"}`
	for _, tc := range []struct {
		name, file, want string
	}{
		{"no name", "{\"agents\": [\n  {\"box\": {\"prompt\": \"^» (.*)$\"}}\n]}", "tern.rules.json:2: an agent needs a name"},
		{"a built-in's name", "{\"agents\": [\n  {\"name\": \"codex\", \"box\": {\"prompt\": \"^» (.*)$\"}}\n]}", `tern.rules.json:2: agent "codex": the name of an agent already known`},
		{"a built-in's full name", "{\"agents\": [\n  {\"name\": \"Claude Code\", \"box\": {\"prompt\": \"^» (.*)$\"}}\n]}", `agent "Claude Code": the name of an agent already known`},
		{"twice", "{\"agents\": [\n  {\"name\": \"Tern\", " + box + "},\n  {\"name\": \"tern\", " + box + "}\n]" + working, `tern.rules.json:3: agent "tern": the name of an agent already known`},
		{"no prompt", agentFile(`"box": {"top": "^┌"}`), `tern.rules.json:2: agent "Tern": box prompt: no pattern`},
		{"a prompt with no group", agentFile(`"box": {"prompt": "^» .*$"}`), `agent "Tern": box prompt: pattern "^» .*$" needs exactly one group`},
		{"a prompt not anchored", agentFile(`"box": {"prompt": "» (.*)$"}`), `agent "Tern": box prompt: pattern "» (.*)$" is not anchored`},
		{"a bad mark", agentFile(box + `, "marks": ["tern (model"]`), `agent "Tern": marks: error parsing regexp`},
		{"an unknown field", agentFile(box + `, "spinner": "^⠋"`), `tern.rules.json:2: unknown field "spinner"`},
		{"sides with a top", agentFile(`"box": {"top": "^┌", "prompt": "^┃ ?(.*)$", "bottom": "^┃  mode", "sides": true}`), `agent "Tern": a box drawn with sides`},
		{"sides with no bottom", agentFile(`"box": {"prompt": "^┃ ?(.*)$", "sides": true}`), `agent "Tern": a box drawn with sides reaches up through its bordered lines from its bottom edge: it needs a bottom`},
		{"status lines out of bounds", agentFile(box + `, "status_lines": 99`), `agent "Tern": status_lines must be from 0 to`},
		{"programs empty", agentFile(box + `, "programs": []`), `tern.rules.json:2: agent "Tern": programs: from 1 to 8 names, not 0`},
		{"too many programs", agentFile(box + `, "programs": ["a", "b", "c", "d", "e", "f", "g", "h", "i"]`), `programs: from 1 to 8 names, not 9`},
		{"a program's path", agentFile(box + `, "programs": ["/usr/bin/tern"]`), `programs: "/usr/bin/tern" is not a plain program name`},
		{"a program in capitals", agentFile(box + `, "programs": ["Tern"]`), `programs: "Tern" is not a plain program name`},
		{"a program with a space", agentFile(box + `, "programs": ["tern x"]`), `programs: "tern x" is not a plain program name`},
		{"a program's name too long", agentFile(box + `, "programs": ["` + strings.Repeat("t", 65) + `"]`), `is not a plain program name`},
		{"a program's name starting with a dot", agentFile(box + `, "programs": [".tern"]`), `programs: ".tern" is not a plain program name`},
		{"a script's extension", agentFile(box + `, "programs": ["tern.js"]`), `programs: "tern.js": a program is named without its .js or .exe`},
		{"a shell", agentFile(box + `, "programs": ["tern", "bash"]`), `programs: "bash" runs other programs than an agent`},
		{"an interpreter", agentFile(box + `, "programs": ["node"]`), `programs: "node" runs other programs than an agent`},
		{"programs not a list", agentFile(box + `, "programs": "tern"`), `tern.rules.json:2: programs must be a []string, not a string`},
		{"a title mark not anchored", agentFile(box + `, "title": {"busy": ["⠋"]}`), `agent "Tern": title busy: pattern "⠋" is not anchored`},
		{"a bad title mark", agentFile(box + `, "title": {"waiting": ["^tern (asks"]}`), `agent "Tern": title waiting: error parsing regexp`},
		{"an empty title mark", agentFile(box + `, "title": {"idle": [""]}`), `agent "Tern": title idle: no pattern`},
		{"a witness of no known kind", agentFile(box + `, "witness": "tern-log"`), `tern.rules.json:2: agent "Tern": witness: "tern-log" is not a kind of file the watcher reads (one of claude-status, codex-log, qwen-chat, events)`},
		{"a witness as a path", agentFile(box + `, "witness": "~/.tern/status.json"`), `agent "Tern": witness: "~/.tern/status.json" is not a kind of file the watcher reads`},
		{"a witness not a name", agentFile(box + `, "witness": {"kind": "qwen-chat"}`), `tern.rules.json:2: witness must be a string`},
		{"an events log without its witness", agentFile(box + `, "events": {"default": ".tern", "path": "logs/*.jsonl", "type": "type", "time": "at", "dir": "cwd", "busy": ["ask"], "idle": ["done"]}`), `agent "Tern": witness "events" and events go together`},
		{"the witness events without its log", agentFile(box + `, "witness": "events"`), `agent "Tern": witness "events" and events go together`},
		{"an events home not a variable", agentFile(box + `, "witness": "events", ` + strings.Replace(`"events": {"default": ".tern", "path": "logs/*.jsonl", "type": "type", "time": "at", "dir": "cwd", "busy": ["ask"], "idle": ["done"]}`, `"default"`, `"home": "$(rm -rf ~)", "default"`, 1)), `agent "Tern": events: home: "$(rm -rf ~)" is not a variable's name`},
		{"an events home starting with a digit", agentFile(box + `, "witness": "events", ` + strings.Replace(`"events": {"default": ".tern", "path": "logs/*.jsonl", "type": "type", "time": "at", "dir": "cwd", "busy": ["ask"], "idle": ["done"]}`, `"default"`, `"home": "1TERN", "default"`, 1)), `events: home: "1TERN" is not a variable's name`},
		{"an events default outside the home", agentFile(box + `, "witness": "events", ` + strings.Replace(`"events": {"default": ".tern", "path": "logs/*.jsonl", "type": "type", "time": "at", "dir": "cwd", "busy": ["ask"], "idle": ["done"]}`, `".tern"`, `"../../etc"`, 1)), `agent "Tern": events: default: "../../etc": ".." is not a name of a folder or file here`},
		{"an events default absolute", agentFile(box + `, "witness": "events", ` + strings.Replace(`"events": {"default": ".tern", "path": "logs/*.jsonl", "type": "type", "time": "at", "dir": "cwd", "busy": ["ask"], "idle": ["done"]}`, `".tern"`, `"/etc"`, 1)), `events: default: "/etc": "" is not a name`},
		{"an events default with a star", agentFile(box + `, "witness": "events", ` + strings.Replace(`"events": {"default": ".tern", "path": "logs/*.jsonl", "type": "type", "time": "at", "dir": "cwd", "busy": ["ask"], "idle": ["done"]}`, `".tern"`, `".t*"`, 1)), `events: default: ".t*": ".t*" is not a name`},
		{"an events path going up", agentFile(box + `, "witness": "events", ` + strings.Replace(`"events": {"default": ".tern", "path": "logs/*.jsonl", "type": "type", "time": "at", "dir": "cwd", "busy": ["ask"], "idle": ["done"]}`, `"logs/*.jsonl"`, `"*/../../*.jsonl"`, 1)), `events: path: "*/../../*.jsonl": ".." is not a name`},
		{"an events path with a shell's quote", agentFile(box + `, "witness": "events", ` + strings.Replace(`"events": {"default": ".tern", "path": "logs/*.jsonl", "type": "type", "time": "at", "dir": "cwd", "busy": ["ask"], "idle": ["done"]}`, `"logs/*.jsonl"`, `"logs/'$(id)'.jsonl"`, 1)), `events: path: "logs/'$(id)'.jsonl"`},
		{"an events path any deep", agentFile(box + `, "witness": "events", ` + strings.Replace(`"events": {"default": ".tern", "path": "logs/*.jsonl", "type": "type", "time": "at", "dir": "cwd", "busy": ["ask"], "idle": ["done"]}`, `"logs/*.jsonl"`, `"logs/**/x.jsonl"`, 1)), `events: path: "logs/**/x.jsonl": "**" is not a name`},
		{"an events path too deep", agentFile(box + `, "witness": "events", ` + strings.Replace(`"events": {"default": ".tern", "path": "logs/*.jsonl", "type": "type", "time": "at", "dir": "cwd", "busy": ["ask"], "idle": ["done"]}`, `"logs/*.jsonl"`, `"a/b/c/d/e/f/g.jsonl"`, 1)), `events: path: "a/b/c/d/e/f/g.jsonl": from 1 to 6 names`},
		{"an events field not a name", agentFile(box + `, "witness": "events", ` + strings.Replace(`"events": {"default": ".tern", "path": "logs/*.jsonl", "type": "type", "time": "at", "dir": "cwd", "busy": ["ask"], "idle": ["done"]}`, `"time": "at"`, `"time": "at[0]"`, 1)), `agent "Tern": events: time: "at[0]" is not a field`},
		{"an events field empty", agentFile(box + `, "witness": "events", ` + strings.Replace(`"events": {"default": ".tern", "path": "logs/*.jsonl", "type": "type", "time": "at", "dir": "cwd", "busy": ["ask"], "idle": ["done"]}`, `"dir": "cwd"`, `"dir": ""`, 1)), `events: dir: "" is not a field`},
		{"an events field too deep", agentFile(box + `, "witness": "events", ` + strings.Replace(`"events": {"default": ".tern", "path": "logs/*.jsonl", "type": "type", "time": "at", "dir": "cwd", "busy": ["ask"], "idle": ["done"]}`, `"dir": "cwd"`, `"dir": "a.b.c.d.e"`, 1)), `events: dir: "a.b.c.d.e" is not a field`},
		{"an event said twice", agentFile(box + `, "witness": "events", ` + strings.Replace(`"events": {"default": ".tern", "path": "logs/*.jsonl", "type": "type", "time": "at", "dir": "cwd", "busy": ["ask"], "idle": ["done"]}`, `"idle": ["done"]`, `"idle": ["done", "ask"]`, 1)), `agent "Tern": events: "ask" is named twice`},
		{"an event's type not a name", agentFile(box + `, "witness": "events", ` + strings.Replace(`"events": {"default": ".tern", "path": "logs/*.jsonl", "type": "type", "time": "at", "dir": "cwd", "busy": ["ask"], "idle": ["done"]}`, `"idle": ["done"]`, `"idle": ["done now"]`, 1)), `events: "done now" is not an event's type`},
		{"an events log that never says idle", agentFile(box + `, "witness": "events", ` + strings.Replace(`"events": {"default": ".tern", "path": "logs/*.jsonl", "type": "type", "time": "at", "dir": "cwd", "busy": ["ask"], "idle": ["done"]}`, `, "idle": ["done"]`, ``, 1)), `events: busy or waiting, and idle`},
		{"an events log that only says idle", agentFile(box + `, "witness": "events", ` + strings.Replace(`"events": {"default": ".tern", "path": "logs/*.jsonl", "type": "type", "time": "at", "dir": "cwd", "busy": ["ask"], "idle": ["done"]}`, `"busy": ["ask"], `, ``, 1)), `events: busy or waiting, and idle`},
		{"an unknown events field", agentFile(box + `, "witness": "events", ` + strings.Replace(`"events": {"default": ".tern", "path": "logs/*.jsonl", "type": "type", "time": "at", "dir": "cwd", "busy": ["ask"], "idle": ["done"]}`, `"busy"`, `"working"`, 1)), `tern.rules.json:2: unknown field "working"`},
		{"an agent's name with no letter", "{\"agents\": [\n  {\"name\": \"…\", " + box + `, "witness": "events", "events": {"default": ".tern", "path": "logs/*.jsonl", "type": "type", "time": "at", "dir": "cwd", "busy": ["ask"], "idle": ["done"]}}` + "\n]}", `agent "…": events: the agent's name "…" has no letter or digit`},
		{"two agents' logs by one key", "{\"agents\": [\n  {\"name\": \"Tern\", " + box + `, "witness": "events", "events": {"default": ".tern", "path": "logs/*.jsonl", "type": "type", "time": "at", "dir": "cwd", "busy": ["ask"], "idle": ["done"]}},` + "\n  {\"name\": \"TERN!\", " + box + `, "witness": "events", "events": {"default": ".tern", "path": "logs/*.jsonl", "type": "type", "time": "at", "dir": "cwd", "busy": ["ask"], "idle": ["done"]}}` + "\n]" + working,
			`tern.rules.json:3: agent "TERN!": events: its logs would go by "tern", as Tern's do`},
		{"an account home not a variable", agentFile(box + `, "account": {"home": "X;Y", "file": "a.json", "field": "id"}`), `agent "Tern": account: home: "X;Y" is not a variable's name`},
		{"an account file outside the home", agentFile(box + `, "account": {"file": "../../etc/shadow", "field": "id"}`), `agent "Tern": account: file: "../../etc/shadow": ".." is not a name`},
		{"an account file absolute", agentFile(box + `, "account": {"file": "/etc/shadow", "field": "id"}`), `account: file: "/etc/shadow": "" is not a name`},
		{"an account with no field", agentFile(box + `, "account": {"file": "a.json", "field": ""}`), `account: field: "" is not a field`},
		{"an account field not a name", agentFile(box + `, "account": {"file": "a.json", "field": "a[0]"}`), `account: field: "a[0]" is not a field`},
		{"an account default going up", agentFile(box + `, "account": {"default": "..", "file": "a.json", "field": "id"}`), `account: default: "..": ".." is not a name`},
		{"a title state unknown", agentFile(box + `, "title": {"asking": ["^?"]}`), `tern.rules.json:2: unknown field "asking"`},
		{"hooks not in a settings file", agentFile(box + `, "programs": ["tern"], "hooks": {"events": ["Stop"]}`), `tern.rules.json:2: agent "Tern": hooks: settings: install --hooks writes an agent's hooks into its settings file`},
		{"hooks of an agent without programs", agentFile(box + `, "hooks": {"events": ["Stop"], "settings": {"default": ".tern", "file": "settings.json"}}`), `agent "Tern": hooks: the agent needs programs`},
		{"hooks with no events", agentFile(box + `, "hooks": {"events": []}`), `agent "Tern": hooks: events: from 1 to 16 names, not 0`},
		{"hooks' settings with no events", agentFile(box + `, "programs": ["tern"], "hooks": {"settings": {"default": ".tern", "file": "settings.json"}}`), `agent "Tern": hooks: settings, timeout and name go with events`},
		{"a hook event not a name", agentFile(box + `, "hooks": {"events": ["Stop; rm -rf ~"]}`), `agent "Tern": hooks: events: "Stop; rm -rf ~" is not an event's name`},
		{"hooks' settings outside the home", agentFile(box + `, "programs": ["tern"], "hooks": {"events": ["Stop"], "settings": {"default": "..", "file": "x"}}`), `agent "Tern": hooks: settings: default: "..": ".." is not a name`},
		{"hooks' settings file a glob", agentFile(box + `, "programs": ["tern"], "hooks": {"events": ["Stop"], "settings": {"default": ".tern", "file": "*.json"}}`), `hooks: settings: file: "*.json": "*.json" is not a name`},
		{"hooks' settings file absolute", agentFile(box + `, "programs": ["tern"], "hooks": {"events": ["Stop"], "settings": {"default": ".tern", "file": "/etc/passwd"}}`), `hooks: settings: file: "/etc/passwd": "" is not a name`},
		{"hooks' home not a variable", agentFile(box + `, "programs": ["tern"], "hooks": {"events": ["Stop"], "settings": {"home": "A B", "default": ".tern", "file": "s.json"}}`), `hooks: settings: home: "A B" is not a variable's name`},
		{"a hook's timeout below zero", agentFile(box + `, "programs": ["tern"], "hooks": {"events": ["Stop"], "settings": {"default": ".tern", "file": "s.json"}, "timeout": -1}`), `hooks: timeout: from 0 (none) to 3600000`},
		{"a hook's timeout past an hour", agentFile(box + `, "programs": ["tern"], "hooks": {"events": ["Stop"], "settings": {"default": ".tern", "file": "s.json"}, "timeout": 3600001}`), `hooks: timeout: from 0 (none) to 3600000`},
		{"a hook's name not a name", agentFile(box + `, "programs": ["tern"], "hooks": {"events": ["Stop"], "settings": {"default": ".tern", "file": "s.json"}, "name": "a\"b"}`), `hooks: name: "a\"b" is not a handler's name`},
		{"no working rule", "{\"agents\": [\n  {\"name\": \"Tern\", " + box + "}\n]}", `tern.rules.json:2: agent "Tern": no working rule names it`},
		{"a working rule read in the transcript", "{\"agents\": [\n  {\"name\": \"Tern\", " + box + "}\n],\n\"rules\": [\n  {\"agent\": \"tern\", \"name\": \"w\", \"region\": \"turn\", \"pattern\": \"^  ⠋ \", \"verdict\": \"working\"}\n]}",
			`tern.rules.json:5: rule "w": a working rule reads only live evidence, region above or below`},
		{"a rule for an agent described nowhere", "{\"rules\": [\n  {\"agent\": \"tern\", \"name\": \"w\", \"region\": \"above\", \"pattern\": \"^x\", \"verdict\": \"working\"}\n]}", `tern.rules.json:2: rule "w": unknown agent "tern"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := classify.ParseLocal([]byte(tc.file), "tern.rules.json")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestWitnessOf: the built-in descriptions name the kind of file each
// agent's own word is read from, where it keeps one; an operator's names
// one of the same kinds.
func TestWitnessOf(t *testing.T) {
	l, err := classify.ParseLocal([]byte(`{"agents": [{"name": "Tern", "box": {"prompt": "^tern> ?(.*)$"}, "witness": "qwen-chat"}],
		"rules": [{"agent": "tern", "name": "w", "region": "above", "pattern": "^tern works$", "verdict": "working"}]}`), "tern.json")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, a := range l.Agents() {
		kind, known := classify.WitnessOf(l, a.Name)
		if !known {
			t.Errorf("%s: not known", a.Name)
		}
		got[a.Name] = kind
	}
	want := map[string]string{"Claude Code": "claude-status", "Codex CLI": "codex-log", "Qwen Code": "qwen-chat", "Tern": "qwen-chat",
		"Gemini CLI": "", "Copilot CLI": "events:copilot-cli", "OpenCode": "", "Pi": ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("witness kinds (-want +got):\n%s", diff)
	}
	if _, known := classify.WitnessOf(nil, "Tern"); known {
		t.Error("Tern is known without its file")
	}
}

// TestBuiltinDescriptions: the agents the project ships as data parse as
// an operator's file does, each with a working rule, and are listed as
// built in.
func TestBuiltinDescriptions(t *testing.T) {
	var names []string
	for _, a := range (*classify.Local)(nil).Agents() {
		if a.From != "built-in" {
			t.Errorf("%s is from %s, want built-in", a.Name, a.From)
		}
		names = append(names, a.Name)
	}
	if diff := cmp.Diff([]string{"Claude Code", "Codex CLI", "Gemini CLI", "Copilot CLI", "OpenCode", "Pi", "Qwen Code"}, names); diff != "" {
		t.Errorf("built-in agents (-want +got):\n%s", diff)
	}
	// A described built-in is named in rules as any other: an operator's
	// file adds to it, and cannot describe it again.
	if _, err := classify.ParseLocal([]byte(`{"rules": [{"agent": "pi", "name": "x", "region": "below", "pattern": "^x", "verdict": "working"}]}`), "r.json"); err != nil {
		t.Errorf("a rule for Pi: %v", err)
	}
	if _, err := classify.ParseLocal([]byte(`{"agents": [{"name": "Pi", "box": {"prompt": "^(.*)$"}}]}`), "r.json"); err == nil || !strings.Contains(err.Error(), "already known") {
		t.Errorf("Pi described again: %v", err)
	}
}

// TestQwenRefusedToolIsNotProse: Qwen Code marks a tool the operator
// refused with "-" before the tool's name, a hold; an answer's own list,
// drawn at the same margin, is no such mark, and an idle Qwen under it is
// nudged as any other.
func TestQwenRefusedToolIsNotProse(t *testing.T) {
	box := "\n" + strings.Repeat("─", 80) + "\n>   Type your message or @path/to/file\n" + strings.Repeat("─", 80) +
		"\n  ➜ work · fake-model\n  ⏸ Ask permissions (shift + tab to cycle)\n"
	for _, tc := range []struct {
		name, turn, hold string
	}{
		{"a refused tool", "  > now run the command\n\n  ◆︎ I will run a command.\n  - Shell touch marker (Leave a marker file)\n", "interrupt"},
		{"an answer's list", "  > what changed?\n\n  ◆︎ Two things:\n  - Fixed the parser\n  - Added a retry to the loader\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := classify.ClassifyText(tc.turn+box, classify.Options{})
			if r.Agent != "Qwen Code" || r.State != classify.Stalled || string(r.Hold) != tc.hold {
				t.Errorf("read %s %s hold %q, want Qwen Code STALLED hold %q\n%s", r.Agent, r.State, r.Hold, tc.hold, r.Explain())
			}
		})
	}
}

// TestSidesBox: OpenCode draws its input as a side border with no top edge
// and its mode line inside the border ("sides": true, the mode line its
// bottom). The box reaches up through every bordered line, so the block
// over it is the transcript's; what a human typed on any line of it is a
// draft, wrapped lines joined; its placeholder and its mode line are none.
func TestSidesBox(t *testing.T) {
	screen := func(lines ...string) string {
		box := append([]string{"  ┃"}, lines...)
		return "  ┃\n  ┃  fix the loader\n  ┃\n\n     Done: the loader is fixed.\n\n     ▣  Build · Fake model · 1.5s\n\n" +
			strings.Join(box, "\n") + "\n  ┃\n  ┃  Build · Fake model Fake\n  ╹" + strings.Repeat("▀", 60) + "\n   ~/proj                     13  ctrl+p commands\n"
	}
	type got struct{ State, Agent, Hold, Draft, Evidence string }
	for _, tc := range []struct {
		name, screen string
		want         got
	}{
		{"an empty box", screen("  ┃"), got{"STALLED", "OpenCode", "", "", "▣  Build · Fake model · 1.5s"}},
		{"its placeholder, wrapped", screen(`  ┃  Ask anything… "What is the`, `  ┃  tech stack of this project?"`), got{"STALLED", "OpenCode", "", "", "▣  Build · Fake model · 1.5s"}},
		{"a draft", screen("  ┃  also the eu bucket"), got{"STALLED", "OpenCode", "draft", "also the eu bucket", "▣  Build · Fake model · 1.5s"}},
		{"a draft on two lines, one with the mode line's dot", screen("  ┃  also the eu bucket", "  ┃  then a · b"), got{"STALLED", "OpenCode", "draft", "also the eu bucket then a · b", "▣  Build · Fake model · 1.5s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := classify.ClassifyText(tc.screen, classify.Options{})
			g := got{r.State.String(), r.Agent, string(r.Hold), r.Draft, strings.TrimSpace(r.Evidence.Text)}
			if diff := cmp.Diff(tc.want, g); diff != "" {
				t.Errorf("(-want +got):\n%s\n%s", diff, r.Explain())
			}
		})
	}
}

// TestSidesDialog: OpenCode draws its permission dialog in place of its
// box, with the same side border: the dialog relayed is that bordered
// block, verbatim, and none of the transcript above it.
func TestSidesDialog(t *testing.T) {
	for _, name := range []string{"opencode-80-approval", "opencode-40-approval"} {
		t.Run(name, func(t *testing.T) {
			pane, err := os.ReadFile("../golden/real-opencode/" + name + ".pane")
			if err != nil {
				t.Fatal(err)
			}
			r := classify.ClassifyText(string(pane), classify.Options{})
			if r.State != classify.Question || r.Dialog == nil {
				t.Fatalf("read %s with dialog %v, want a QUESTION with its dialog\n%s", r.State, r.Dialog, r.Explain())
			}
			q := r.Dialog.Question
			for _, want := range []string{"△ Permission required", "$ touch omega-bash-ran", "Allow once   Allow always   Reject"} {
				if !strings.Contains(q, want) {
					t.Errorf("the dialog relayed lacks %q:\n%s", want, q)
				}
			}
			for _, not := range []string{"now run the command", "I will run a command.", "▣"} {
				if strings.Contains(q, not) {
					t.Errorf("the dialog relayed holds the transcript's %q:\n%s", not, q)
				}
			}
		})
	}
}

// TestPrograms: every built-in agent runs as the programs probe knew it
// by before they were data, and an agent an operator describes as its
// own; any agent ("") runs as any of them.
func TestPrograms(t *testing.T) {
	local := ternRules(t)
	for _, tc := range []struct {
		agent string
		want  []string
	}{
		{"Claude Code", []string{"claude"}},
		{"Codex CLI", []string{"codex"}},
		{"Gemini CLI", []string{"gemini"}},
		{"Pi", []string{"pi"}},
		{"Copilot CLI", []string{"copilot"}},
		{"Qwen Code", []string{"qwen"}},
		{"OpenCode", []string{"opencode"}},
		{"Tern", []string{"tern"}},
		{"", []string{"claude", "codex", "gemini", "copilot", "opencode", "pi", "qwen", "tern"}},
		{"Nobody", nil},
	} {
		if diff := cmp.Diff(tc.want, classify.Programs(local, tc.agent)); diff != "" {
			t.Errorf("Programs(%q) (-want +got):\n%s", tc.agent, diff)
		}
	}
	if got := classify.Programs(nil, "Tern"); got != nil {
		t.Errorf("without its description Tern runs as %q, want nothing", got)
	}
}

// TestTitleSays: the title marks of the built-in agents say what their
// titles said before they were data; an operator's described agent's say
// what its description gives, and only with it; a title too long is read
// only at its start, and cut there between runes.
func TestTitleSays(t *testing.T) {
	local := ternRules(t)
	long := strings.Repeat("é", 200) // 400 bytes
	for _, tc := range []struct {
		local        *classify.Local
		agent, title string
		want         string
	}{
		{nil, "Codex CLI", "[ ! ] Action Required | please escalate | work", "waiting"},
		{nil, "Codex CLI", "[ . ] Action Required | please escalate | work", "waiting"},
		{nil, "Codex CLI", "[ ? ] Action Required | please escalate | work", ""},
		{nil, "Codex CLI", "⠴ please escalate | work", "busy"},
		{nil, "Codex CLI", "\u2800 please escalate | work", ""}, // the blank braille glyph
		{nil, "Codex CLI", "please escalate ⠴ | work", ""},
		{nil, "Gemini CLI", "✋  Action Required (work)", "waiting"},
		{nil, "Gemini CLI", "✦  Working… (work)", "busy"},
		{nil, "Gemini CLI", "◇  Ready (work)", "idle"},
		{nil, "Gemini CLI", "work ✋", ""},
		{nil, "Claude Code", "✳ Claude Code", ""},
		{nil, "Claude Code", "[ ! ] Action Required", ""}, // another agent's word
		{nil, "", "✋  Action Required (work)", ""},
		{local, "Tern", "tern ? rm -rf build", "waiting"},
		{local, "Tern", "tern ⠙ fixing the loader", "busy"},
		{local, "Tern", "tern · ~/proj", "idle"},
		{local, "Tern", "vim loader.go", ""},
		{nil, "Tern", "tern ⠙ fixing the loader", ""},
		{local, "Codex CLI", "⠴ please escalate | work", "busy"},
		{local, "Tern", long + "tern ⠙ ", ""},
		{local, "Tern", "tern ? " + long, "waiting"},
		{local, "Tern", "tern · " + long[1:], "idle"}, // cut inside a rune
	} {
		if got := classify.TitleSays(tc.local, tc.agent, tc.title); got != tc.want {
			t.Errorf("TitleSays(%q, %.40q) = %q, want %q", tc.agent, tc.title, got, tc.want)
		}
	}
}

// TestEventsLogs: Copilot CLI's events log is data in its description, as
// probe's tests read it; an operator's description adds its agent's, whose
// witness is its own kind.
func TestEventsLogs(t *testing.T) {
	copilot := probe.EventsLog{Agent: "Copilot CLI", Key: "copilot-cli", Home: "COPILOT_HOME", Default: ".copilot",
		Path: "session-state/*/events.jsonl", Type: []string{"type"}, Time: []string{"timestamp"}, Dir: []string{"data", "context", "cwd"},
		Says: map[string]string{
			"user.message": "busy", "assistant.turn_start": "busy", "assistant.message": "busy", "tool.execution_start": "busy",
			"permission.completed": "busy", "permission.requested": "waiting", "assistant.turn_end": "idle", "abort": "idle",
			"session.start": "", "session.usage_record": "", "session.model_change": "", "assistant.usage": "", "tool.execution_update": "",
		}}
	if diff := cmp.Diff([]probe.EventsLog{copilot}, classify.EventsLogs(nil)); diff != "" {
		t.Errorf("built-in events logs (-want +got):\n%s", diff)
	}
	l, err := classify.ParseLocal([]byte(`{"agents": [{"name": "Tern 2", "box": {"prompt": "^tern> ?(.*)$"}, "witness": "events",
		"events": {"default": ".tern", "path": "logs/*.jsonl", "type": "e.kind", "time": "at", "dir": "cwd", "waiting": ["ask"], "idle": ["done"]}}],
		"rules": [{"agent": "tern 2", "name": "w", "region": "above", "pattern": "^tern works$", "verdict": "working"}]}`), "tern.json")
	if err != nil {
		t.Fatal(err)
	}
	tern := probe.EventsLog{Agent: "Tern 2", Key: "tern-2", Default: ".tern", Path: "logs/*.jsonl", Type: []string{"e", "kind"},
		Time: []string{"at"}, Dir: []string{"cwd"}, Says: map[string]string{"ask": "waiting", "done": "idle"}}
	if diff := cmp.Diff([]probe.EventsLog{copilot, tern}, classify.EventsLogs(l)); diff != "" {
		t.Errorf("events logs with the file's (-want +got):\n%s", diff)
	}
	if kind, _ := classify.WitnessOf(l, "Tern 2"); kind != probe.EventsKind("tern-2") {
		t.Errorf("Tern 2's witness is %q, want its events log's", kind)
	}
}

// TestAccountOf: the agents whose own files name the account they are
// signed in with say where, in their descriptions; the others say nothing.
func TestAccountOf(t *testing.T) {
	want := map[string]classify.LocalAccount{
		"Claude Code": {Home: "CLAUDE_CONFIG_DIR", File: ".claude.json", Field: "oauthAccount.accountUuid"},
		"Codex CLI":   {Home: "CODEX_HOME", Default: ".codex", File: "auth.json", Field: "tokens.account_id"},
		"Gemini CLI":  {Home: "GEMINI_CLI_HOME", File: ".gemini/google_accounts.json", Field: "active"},
	}
	for _, a := range (*classify.Local)(nil).Agents() {
		got, ok := classify.AccountOf(nil, a.Name)
		if w, named := want[a.Name]; ok != named || got != w {
			t.Errorf("%s: %+v (%v), want %+v (%v)", a.Name, got, ok, w, named)
		}
	}
}
