package classify_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/classify"
)

// ternFile is an operator's file describing Tern with the agent's fields
// given, and rules: each error names the line its agent or rule starts on.
func ternFile(agent string, rules ...string) string {
	if len(rules) == 0 {
		rules = []string{`{"agent": "tern", "name": "w", "region": "above", "pattern": "^  ⠋ ", "verdict": "working"}`}
	}
	return "{\"agents\": [\n  {\"name\": \"Tern\", " + agent + "}\n],\n\"rules\": [\n  " + strings.Join(rules, ",\n  ") + "\n]}"
}

// TestDescriptionFieldsRefused: each field the description format has for
// box shapes, matchers, needs and the rest refuses a value that would not
// read a screen as it says, naming the line and the field.
func TestDescriptionFieldsRefused(t *testing.T) {
	const box = `"box": {"prompt": "^» ?(.*)$"}`
	rule := func(fields string) string {
		return ternFile(box, `{"agent": "tern", "name": "w", "region": "above", "pattern": "^  ⠋ ", "verdict": "working"}`,
			`{"agent": "tern", "name": "r", `+fields+`}`)
	}
	for _, tc := range []struct {
		name, file, want string
	}{
		// Box shapes.
		{"box and boxes", ternFile(box + `, "boxes": [{"prompt": "^» ?(.*)$"}]`),
			`tern.json:2: agent "Tern": both box and boxes: one box, or a list of its shapes`},
		{"a shape with no prompt", ternFile(`"boxes": [{"prompt": "^» ?(.*)$"}, {"top": "^┌"}]`),
			`tern.json:2: agent "Tern": boxes[1] prompt: no pattern`},
		{"inner with no group", ternFile(`"boxes": [{"prompt": "^│ » ?(.*)│$", "inner": "^│.*│$"}]`),
			`tern.json:2: agent "Tern": boxes[0] inner: pattern "^│.*│$" needs exactly one group, a line's content inside the borders; it has 0`},
		{"not_prompt not anchored", ternFile(`"box": {"prompt": "^» ?(.*)$", "not_prompt": "\\d+\\. "}`),
			`tern.json:2: agent "Tern": box not_prompt: pattern "\\d+\\. " is not anchored with ^`},
		{"an empty prompt prefix", ternFile(`"box": {"prompt": "^» ?(.*)$", "prompt_prefixes": ["»", ""]}`),
			`tern.json:2: agent "Tern": prompt_prefixes: an empty prefix, which every line has`},
		{"lead with no top", ternFile(`"box": {"prompt": "^» ?(.*)$", "lead": "^ \\S"}`),
			`tern.json:2: agent "Tern": lead is a line under the top edge: it needs a top`},
		{"gap with no lead", ternFile(`"box": {"top": "^┌", "prompt": "^» ?(.*)$", "gap": 1}`),
			`tern.json:2: agent "Tern": gap is the blank lines under the lead: it needs a lead`},
		{"gap too wide", ternFile(`"box": {"top": "^┌", "lead": "^ \\S", "prompt": "^» ?(.*)$", "gap": 9}`),
			`tern.json:2: agent "Tern": gap must be from 0 to 4`},
		{"last with no bottom", ternFile(`"box": {"prompt": "^» ?(.*)$", "last": true}`),
			`tern.json:2: agent "Tern": a box that ends the screen is told by its bottom line under the prompt: last needs a bottom`},
		{"sides with inner", ternFile(`"box": {"prompt": "^┃ ?(.*)$", "bottom": "^┃  mode", "sides": true, "inner": "^┃(.*)$"}`),
			`tern.json:2: agent "Tern": a box drawn with sides reads every line with prompt: it takes no inner`},
		// The agent's other patterns.
		{"frame_top with no heads", ternFile(box + `, "frame_top": "^─{3,}"`),
			`tern.json:2: agent "Tern": frame_top and heads go together: a frame is told from the transcript by the heads between it and the box`},
		{"heads not anchored", ternFile(box + `, "frame_top": "^─{3,}", "heads": "⏺ "`),
			`tern.json:2: agent "Tern": heads: pattern "⏺ " is not anchored with ^`},
		{"a bad faint placeholder", ternFile(box + `, "faint_placeholders": ["^Try (it$"]`),
			"tern.json:2: agent \"Tern\": faint_placeholders: error parsing regexp: missing closing ): `^Try (it$`"},
		// Matchers.
		{"an unknown kind", rule(`"region": "dialog", "match": {"kind": "menu"}, "verdict": "question"`),
			`tern.json:6: rule "r": match: unknown kind "menu" (want any_line, end_line, edge_line, latest, open_turn, option_menu, continue_menu, picker, picker_over_composer, frameless_menu or onboarding)`},
		{"an option menu with no cursors", rule(`"region": "dialog", "match": {"kind": "option_menu"}, "verdict": "question"`),
			`tern.json:6: rule "r": match: kind option_menu needs cursors, the marks its cursor is drawn with`},
		{"a cursor that is a digit", rule(`"region": "dialog", "match": {"kind": "option_menu", "cursors": ["1"]}, "verdict": "question"`),
			`tern.json:6: rule "r": match: cursor "1": a cursor is a visible mark, no digit`},
		{"a picker with no footer", rule(`"region": "dialog", "match": {"kind": "picker", "cursor": "^ › \\S"}, "verdict": "question"`),
			`tern.json:6: rule "r": match: kind picker needs footer`},
		{"a member the kind does not read", rule(`"region": "turn", "match": {"kind": "latest", "until": "^■ ", "footer": "^x"}, "pattern": "^• ", "verdict": "question"`),
			`tern.json:6: rule "r": match: kind latest takes no footer`},
		{"cursors the kind does not read", rule(`"region": "dialog", "match": {"kind": "picker", "footer": "^x", "cursor": "^ › \\S", "cursors": ["›"]}, "verdict": "question"`),
			`tern.json:6: rule "r": match: kind picker takes no cursors`},
		{"a pattern beside a menu", rule(`"region": "dialog", "match": {"kind": "option_menu", "cursors": ["›"]}, "pattern": "^x", "verdict": "question"`),
			`tern.json:6: rule "r": kind option_menu reads the patterns of match, not pattern`},
		{"last lines as a kind", rule(`"region": "dialog", "match": {"kind": "last_lines"}, "pattern": "^x", "verdict": "question"`),
			`tern.json:6: rule "r": match: the region's last lines are read with "lines": N, not a kind`},
		{"lines beside a match", rule(`"region": "dialog", "lines": 2, "match": {"kind": "edge_line"}, "pattern": "^x", "verdict": "question"`),
			`tern.json:6: rule "r": lines reads the region's last lines for pattern: it takes no match (kind "edge_line")`},
		{"a match pattern not anchored", rule(`"region": "turn", "match": {"kind": "open_turn", "until": "Worked for", "origin": "^>_ "}, "verdict": "look-again"`),
			`tern.json:6: rule "r": match until: pattern "Worked for" is not anchored with ^`},
		{"a match pattern of the wrong type", rule(`"region": "turn", "match": {"kind": "open_turn", "until": 7, "origin": "^>_ "}, "verdict": "look-again"`),
			`tern.json:6: a pattern is a string or {"pattern": "...", "needs": [...]}, not 7`},
		{"a match pattern with a stray member", rule(`"region": "turn", "match": {"kind": "open_turn", "until": {"pattern": "^■ ", "need": ["■"]}, "origin": "^>_ "}, "verdict": "look-again"`),
			`tern.json:6: a pattern is a string or {"pattern": "...", "needs": [...]}: unknown field "need"`},
		{"frameless menu with no heads", rule(`"region": "above", "match": {"kind": "frameless_menu", "cursor": "^❯ 1", "option": "^ *\\d", "question": "^.*\\?$"}, "verdict": "question"`),
			`tern.json:6: rule "r": match: kind frameless_menu needs heads, in match or the agent's`},
		// What a working rule may read.
		{"working from a menu", rule(`"region": "above", "match": {"kind": "option_menu", "cursors": ["›"]}, "verdict": "working"`),
			`tern.json:6: rule "r": a working rule reads lines of live evidence: kind option_menu is a dialog's or a turn's shape (want one of any_line, end_line, edge_line, latest, or "lines": N)`},
		{"working from the turn, not latest", rule(`"region": "turn", "match": {"kind": "edge_line"}, "pattern": "^• ", "verdict": "working"`),
			`tern.json:6: rule "r": a working rule reads only live evidence, region above or below (the live block over the box, the status lines under it), or the turn with kind latest; turn may hold quoted text`},
		// Needs, quoted, first, verdicts.
		{"an empty needs", rule(`"region": "turn", "pattern": "^• ", "needs": [""], "verdict": "hold:interrupt"`),
			`tern.json:6: rule "r": pattern: needs: an empty literal, which every line holds`},
		{"needs that case folding breaks", rule(`"region": "turn", "pattern": "(?i)^• stopped", "needs": ["stopped"], "verdict": "hold:interrupt"`),
			`tern.json:6: rule "r": pattern: needs: "stopped" under (?i) must be ASCII without k or s (their case folds outside ASCII)`},
		{"an empty quoted marker", rule(`"region": "turn", "pattern": "^• ", "verdict": "hold:interrupt", "quoted": [" "]`),
			`tern.json:6: rule "r": quoted: an empty marker`},
		{"first on a question", rule(`"region": "dialog", "pattern": "^x", "verdict": "question", "first": true`),
			`tern.json:6: rule "r": first is said of hold:no-input-box only (a screen that hides the box and asks nothing, read before any dialog)`},
		{"first on another hold", rule(`"region": "turn", "pattern": "^• ", "verdict": "hold:interrupt", "first": true`),
			`tern.json:6: rule "r": first is said of hold:no-input-box only (a screen that hides the box and asks nothing, read before any dialog)`},
		{"an unknown verdict", rule(`"region": "turn", "pattern": "^• ", "verdict": "unsettled"`),
			`tern.json:6: rule "r": unknown verdict "unsettled" (want working, question, look-again or hold:NAME, NAME one of draft, interrupt, keyboard, usage-limit, no-input-box, turn-open)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := classify.ParseLocal([]byte(tc.file), "tern.json")
			got := "no error"
			if err != nil {
				got = strings.TrimPrefix(err.Error(), "classify: ")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s\n%s", diff, tc.file)
			}
		})
	}
}

// tern2 describes an agent with the fields the built-in descriptions use:
// two box shapes, a status line read latest in the turn, a menu, a hold
// read first, a turn left open.
const tern2 = `{"agents": [
  {"name": "Tern",
   "boxes": [
     {"name": "framed", "prompt_prefixes": ["│"], "top": "^┌─+$", "prompt": "^│ » ?(.*)$", "bottom": "^└─+$"},
     {"name": "bare", "prompt_prefixes": ["» "], "prompt": "^» (.*)$", "bottom": "^  ⏎ send$", "last": true}
   ],
   "marks": ["tern · model "], "user_turn": "^» \\S", "faint_placeholders": ["^(?:ask tern|plan a change)$"]}
],
"rules": [
  {"agent": "tern", "name": "Tern's status line, the latest in the turn", "region": "turn",
   "match": {"kind": "latest", "until": {"pattern": "^  ■ ", "needs": ["■"]}}, "pattern": "^  ◇ .*ctrl\\+c to stop\\)$", "needs": ["ctrl+c"],
   "verdict": "working", "quoted": ["◇ Thinking (3s · ctrl+c to stop)"]},
  {"agent": "tern", "name": "Tern's menu", "region": "dialog", "match": {"kind": "option_menu", "cursors": ["➤"]}, "verdict": "question"},
  {"agent": "tern", "name": "Tern's log viewer hides its box", "region": "dialog", "lines": 1, "pattern": "^  q to close the log$",
   "verdict": "hold:no-input-box", "first": true},
  {"agent": "tern", "name": "Tern's turn has no end line yet", "region": "turn", "match": {"kind": "open_turn", "until": "^  ■ ", "origin": "^┌ tern v"},
   "verdict": "look-again"}
]}`

// TestDescriptionFieldsRead: an operator's description reads screens with
// the fields the built-in ones use, as they do.
func TestDescriptionFieldsRead(t *testing.T) {
	local, err := classify.ParseLocal([]byte(tern2), "tern.json")
	if err != nil {
		t.Fatal(err)
	}
	const framed = "\n┌────\n│ » \n└────\n  tern · model x\n"
	type got struct{ State, Agent, Rule, Hold, HoldRule, Unsettled, Draft string }
	for _, tc := range []struct {
		name, screen string
		want         got
	}{
		{"its status line, the latest in the turn", "» fix the tests\n\n  ◇ Testing (3s · ctrl+c to stop)\n  ran 3 of 9\n" + framed,
			got{State: "WORKING", Agent: "Tern", Rule: "Tern's status line, the latest in the turn"}},
		{"its status line above the turn's end", "» fix the tests\n\n  ◇ Testing (3s · ctrl+c to stop)\n  ■ done in 9s\n" + framed,
			got{State: "STALLED", Agent: "Tern", Rule: "no live activity and no dialog: the agent is stopped"}},
		{"a turn with no end line", "» fix the tests\n\n  all nine pass\n" + framed,
			got{State: "STALLED", Agent: "Tern", Rule: "no live activity and no dialog: the agent is stopped", Unsettled: "Tern's turn has no end line yet"}},
		{"the bare box, its faint placeholder", "» fix the tests\n\n  ■ done in 9s\n\n» plan a change\n  ⏎ send\n",
			got{State: "STALLED", Agent: "Tern", Rule: "no live activity and no dialog: the agent is stopped"}},
		{"the bare box, a draft", "» fix the tests\n\n  ■ done in 9s\n\n» and the docs\n  ⏎ send\n",
			got{State: "STALLED", Agent: "Tern", Rule: "no live activity and no dialog: the agent is stopped", Hold: "draft", HoldRule: "a human's draft in the input box", Draft: "and the docs"}},
		{"its menu", "  run rm -rf build?\n  ➤ 1. Yes\n    2. No\n",
			got{State: "QUESTION", Agent: "Tern", Rule: "Tern's menu"}},
		{"its log viewer, read first", "  12:00 build ok\n  ➤ 1. Yes\n    2. No\n  q to close the log\n",
			got{State: "STALLED", Agent: "Tern", Hold: "no-input-box", HoldRule: "Tern's log viewer hides its box"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := classify.ClassifyText(tc.screen, classify.Options{Local: local})
			g := got{r.State.String(), r.Agent, r.Rule, string(r.Hold), r.HoldRule, r.Unsettled, r.Draft}
			if tc.want.Rule == "" {
				g.Rule = ""
			}
			if diff := cmp.Diff(tc.want, g); diff != "" {
				t.Errorf("(-want +got):\n%s\n%s", diff, r.Explain())
			}
		})
	}
}
