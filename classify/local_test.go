package classify_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/classify"
)

func TestParseLocalErrorsNameTheLine(t *testing.T) {
	for _, tc := range []struct {
		name, file, want string
	}{
		{"not JSON", "{\n  \"rules\": [\n    {\"agent\": \"codex\",}\n  ]\n}\n", "rules.json:3: "},
		{"unknown member", "{\n  \"rule\": []\n}\n", "rules.json:2: unknown member rule"},
		{"unknown field", "{\"rules\": [\n  {\"agent\": \"codex\", \"name\": \"x\", \"regoin\": \"above\"}\n]}\n", `rules.json:2: unknown field "regoin"`},
		{"unknown agent", "{\"rules\": [\n\n  {\"agent\": \"aider\", \"name\": \"x\"}\n]}\n", `rules.json:3: rule "x": unknown agent "aider"`},
		{"unknown region", "{\"rules\": [\n  {\"agent\": \"codex\", \"name\": \"x\", \"region\": \"top\", \"pattern\": \"^x\", \"verdict\": \"working\"}\n]}", `rules.json:2: rule "x": unknown region "top"`},
		{"bad pattern", "{\"rules\": [\n  {\"agent\": \"codex\", \"name\": \"a\", \"region\": \"above\", \"pattern\": \"^x\", \"verdict\": \"working\"},\n  {\"agent\": \"codex\", \"name\": \"b\", \"region\": \"above\", \"pattern\": \"^(x\", \"verdict\": \"working\"}\n]}", `rules.json:3: rule "b": pattern: error parsing regexp`},
		{"not anchored", "{\"rules\": [\n  {\"agent\": \"gemini\", \"name\": \"x\", \"region\": \"above\", \"pattern\": \"Thinking\", \"verdict\": \"working\"}\n]}", `rules.json:2: rule "x": pattern "Thinking" is not anchored`},
		{"unknown verdict", "{\"rules\": [\n  {\"agent\": \"claude\", \"name\": \"x\", \"region\": \"above\", \"pattern\": \"^x\", \"verdict\": \"hold:nap\"}\n]}", `rules.json:2: rule "x": unknown verdict "hold:nap"`},
		{"wrong type", "{\"rules\": [\n  {\"agent\": \"claude\",\n   \"lines\": \"two\"}\n]}", `rules.json:3: lines must be a int, not a string`},
		{"disable unknown", "{\"rules\": [\n  {\"agent\": \"codex\", \"name\": \"no such rule\", \"disable\": true}\n]}", `rules.json:2: rule "no such rule": Codex CLI has no built-in rule`},
		{"ends early", "{\"rules\": [\n", "rules.json:2: the file ends early"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := classify.ParseLocal([]byte(tc.file), "rules.json")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// codexScreen is a Codex screen whose live block a built-in rule does not
// read: a status line of a release that words it differently.
const codexScreen = `› fix the flaky retry test

• Thinking hard (12s, press esc to stop)

› Ask Codex to do anything

  ? for shortcuts
`

func TestLocalRuleAddsOverridesAndDisables(t *testing.T) {
	local, err := classify.ParseLocal([]byte(`{"rules": [
  {"agent": "codex", "name": "status line of a later release", "region": "above",
   "pattern": "^• \\S.* \\(\\d+s, press esc to stop\\)$", "verdict": "working"},
  {"agent": "codex", "name": "Codex turn with no end line after its last answer (it may be streaming: looked at again)", "disable": true}
]}`), "/home/op/.omega/monitor/rules.json")
	if err != nil {
		t.Fatal(err)
	}
	// The open turn alone reads a Codex screen as WORKING; with it off,
	// the status line is all that says so.
	openOff, err := classify.ParseLocal([]byte(`{"rules": [
  {"agent": "codex", "name": "Codex turn with no end line after its last answer (it may be streaming: looked at again)", "disable": true}
]}`), "rules.json")
	if err != nil {
		t.Fatal(err)
	}
	before := classify.ClassifyText(codexScreen, classify.Options{Local: openOff})
	after := classify.ClassifyText(codexScreen, classify.Options{Local: local})
	if before.State == classify.Working {
		t.Fatalf("the built-in rules already read the screen as WORKING; the test proves nothing")
	}
	if diff := cmp.Diff("WORKING /home/op/.omega/monitor/rules.json:2", after.State.String()+" "+after.Source); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if !strings.Contains(after.Explain(), "rule from: /home/op/.omega/monitor/rules.json:2") {
		t.Errorf("the explanation does not name the file:\n%s", after.Explain())
	}

	// A rule named as a built-in one replaces it; disable turns one off.
	idle := "› fix it\n\n• Done.\n\n  Worked for 3s • 14:02\n\n› Ask Codex to do anything\n\n  ? for shortcuts\n"
	local, err = classify.ParseLocal([]byte(`{"rules": [
  {"agent": "codex", "name": "Codex turn with no end line after its last answer (it may be streaming: looked at again)", "disable": true},
  {"agent": "codex", "name": "Codex conversation interrupted", "region": "above", "pattern": "^  Worked for 3s", "verdict": "hold:interrupt"}
]}`), "rules.json")
	if err != nil {
		t.Fatal(err)
	}
	r := classify.ClassifyText(idle, classify.Options{Local: local})
	if diff := cmp.Diff("interrupt rules.json:3", string(r.Hold)+" "+r.Source); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	open := "› fix it\n\n• Still streaming\n\n› Ask Codex to do anything\n\n  ? for shortcuts\n"
	if r := classify.ClassifyText(open, classify.Options{Local: local}); r.Hold != classify.HoldNone {
		t.Errorf("a disabled rule still holds: %s", r.Explain())
	}
	var from []string
	for _, e := range local.Effective() {
		if e.Agent == "Codex CLI" && e.From != "built-in" {
			from = append(from, e.Name+" "+e.From)
		}
	}
	if diff := cmp.Diff([]string{"Codex conversation interrupted rules.json:3"}, from); diff != "" {
		t.Errorf("effective table (-want +got):\n%s", diff)
	}
}
