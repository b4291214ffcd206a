package answer_test

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
	"github.com/omega-monitor/omega-monitor/answer"
	"github.com/omega-monitor/omega-monitor/classify"
)

// A corpusMenu is a Menu read from a QUESTION pane of the corpus.
type corpusMenu struct {
	questionPane
	m answer.Menu
}

func corpusMenus(t *testing.T) []corpusMenu {
	t.Helper()
	var out []corpusMenu
	for _, p := range questionPanes(t) {
		if m, ok := answer.Read(p.r); ok {
			out = append(out, corpusMenu{p, m})
		}
	}
	if len(out) < 100 {
		t.Fatalf("only %d menus in the corpus", len(out))
	}
	return out
}

// apply moves a menu's cursor as the keys would, one option a key, and
// fails on a key that is not a move or leaves the menu.
func apply(t *testing.T, m answer.Menu, keys []string) answer.Menu {
	t.Helper()
	at := answer.Highlighted(m)
	for _, k := range keys {
		switch k {
		case "Down", "Right":
			at++
		case "Up", "Left":
			at--
		default:
			t.Fatalf("Moves returned %q, which is not a move", k)
		}
		if at < 1 || at > len(m.Options) {
			t.Fatalf("the keys %v leave the menu of %d options", keys, len(m.Options))
		}
	}
	return withCursor(m, at)
}

// withCursor returns a copy of m with the cursor on option pos.
func withCursor(m answer.Menu, pos int) answer.Menu {
	m.Options = slices.Clone(m.Options)
	for i := range m.Options {
		m.Options[i].Cursor = i+1 == pos
	}
	return m
}

// TestMovesReachEveryOption: for every menu of the corpus, with its cursor
// on each option in turn, the moves to each option bring the cursor there,
// and are never Enter.
func TestMovesReachEveryOption(t *testing.T) {
	for _, c := range corpusMenus(t) {
		for from := range c.m.Options {
			m := withCursor(c.m, from+1)
			for pos := 1; pos <= len(m.Options); pos++ {
				keys, err := answer.Moves(m, pos)
				if err != nil {
					t.Fatalf("%s: Moves(%d → %d): %v", c.twin(), from+1, pos, err)
				}
				if got := answer.Highlighted(apply(t, m, keys)); got != pos {
					t.Errorf("%s: from %d the keys %v reach %d, want %d", c.twin(), from+1, keys, got, pos)
				}
			}
		}
	}
}

func TestMovesRefuses(t *testing.T) {
	m := answer.Menu{Options: []answer.Option{{Pos: 1, Label: "Yes", Cursor: true}, {Pos: 2, Label: "No"}}}
	for _, pos := range []int{0, -1, 3} {
		if keys, err := answer.Moves(m, pos); err == nil {
			t.Errorf("Moves(%d) = %v, want an error: no such option", pos, keys)
		}
	}
	m.Options[0].Cursor = false
	if keys, err := answer.Moves(m, 2); !errors.Is(err, answer.ErrNoCursor) {
		t.Errorf("Moves with no cursor = %v, %v; want ErrNoCursor", keys, err)
	}
	if got := answer.Highlighted(m); got != 0 {
		t.Errorf("Highlighted with no cursor = %d, want 0", got)
	}
}

// TestKey: the key follows every text of the dialog and nothing else.
func TestKey(t *testing.T) {
	base := answer.Menu{
		Agent:    "Claude Code",
		Question: " Bash command\n\n   rm -rf build/\n╌╌╌╌╌╌╌╌\n Do you want to proceed?",
		Options: []answer.Option{
			{Pos: 1, Label: "Yes", Number: 1, Cursor: true},
			{Pos: 2, Label: "Yes, and don't ask again for rm commands in /work/app", Number: 2, Widens: true},
			{Pos: 3, Label: "No", Number: 3, Description: "and say why"},
		},
		Esc: true, EscAction: "cancel",
	}
	change := func(f func(m *answer.Menu)) answer.Menu {
		m := base
		m.Options = slices.Clone(base.Options)
		f(&m)
		return m
	}
	same := map[string]answer.Menu{
		"cursor moved":        withCursor(base, 3),
		"no cursor":           withCursor(base, 0),
		"question re-wrapped": change(func(m *answer.Menu) { m.Question = strings.ReplaceAll(m.Question, " ", "\n  ") }),
		"rule drawn wider":    change(func(m *answer.Menu) { m.Question = strings.ReplaceAll(m.Question, "╌", "╌╌") }),
		"label re-wrapped":    change(func(m *answer.Menu) { m.Options[1].Label = strings.Replace(m.Options[1].Label, " in ", "\nin  ", 1) }),
		"hint and flags": change(func(m *answer.Menu) {
			m.Esc, m.EscAction, m.Notes, m.Options[1].Widens, m.Options[0].FreeText = false, "", true, false, true
		}),
		"numbers and positions":    change(func(m *answer.Menu) { m.Options[0].Number, m.Options[2].Pos = 0, 9 }),
		"step (it is in Question)": change(func(m *answer.Menu) { m.Step = "Question 1/2" }),
	}
	for name, m := range same {
		if m.Key() != base.Key() {
			t.Errorf("%s changed the key", name)
		}
	}
	differs := map[string]answer.Menu{
		"agent":                change(func(m *answer.Menu) { m.Agent = "Codex CLI" }),
		"a word of question":   change(func(m *answer.Menu) { m.Question = strings.Replace(m.Question, "build/", "src/", 1) }),
		"above":                change(func(m *answer.Menu) { m.Above = "? Shell rm -rf /" }),
		"a label":              change(func(m *answer.Menu) { m.Options[2].Label = "No!" }),
		"a description":        change(func(m *answer.Menu) { m.Options[2].Description = "and say what" }),
		"label to description": change(func(m *answer.Menu) { m.Options[2].Label, m.Options[2].Description = "No and", "say why" }),
		"options swapped":      change(func(m *answer.Menu) { m.Options[0], m.Options[2] = m.Options[2], m.Options[0] }),
		"an option dropped":    change(func(m *answer.Menu) { m.Options = m.Options[:2] }),
		"an option added":      change(func(m *answer.Menu) { m.Options = append(m.Options, answer.Option{Pos: 4, Label: "Later"}) }),
	}
	keys := map[string]string{base.Key(): "base"}
	for name, m := range differs {
		k := m.Key()
		if other, ok := keys[k]; ok {
			t.Errorf("%s gives the key of %s", name, other)
		}
		keys[k] = name
	}
}

// TestWidthsShareAKey: one dialog captured at several pane widths (the
// hand-built pairs at 40 and 80 columns, the real captures at 60, 100 and
// 120 or 160) has one key, however the pane wrapped its lines; and dialogs
// that differ have different keys.
func TestWidthsShareAKey(t *testing.T) {
	var groups [][]string
	for _, g := range [][]string{
		{"panes/codex-ask-footer-wrap-%s", "40", "80"},
		{"panes/codex-ask-freeform-%s", "40", "80"},
		{"panes/codex-ask-long-option-%s", "40", "80"},
		{"real/claude-manual-%s-long-permission", "60", "100", "160"},
		{"%s", "real/claude-auto-60-question", "real/claude-auto-100-question", "real/claude-auto-160-question",
			"real/claude-bypass-60-question", "real/claude-bypass-100-question", "real/claude-bypass-160-question",
			"real/claude-manual-60-question", "real/claude-manual-100-question", "real/claude-manual-160-question",
			// The cursor on "Type something." opens its field, drawn
			// empty: the same dialog.
			"panes/claude-332-100-ask-field-open", "panes/claude-332-60-ask-field-open"},
		// Words typed into the field, the cursor on it or moved off it.
		{"panes/claude-332-100-ask-field-%s", "typed", "typed-away"},
		{"real-codex/codex-%s-approval", "60", "120", "0.169-60", "0.169-120"},
		// The cursor moved to "None of the above": the same dialog.
		{"%s", "real-codex/codex-60-plan-question", "real-codex/codex-120-plan-question", "real-codex/codex-0.169-60-plan-question",
			"real-codex/codex-0.169-120-plan-question", "panes/codex-171-100-notes-none", "panes/codex-171-60-notes-none"},
		{"real-codex/codex-%s-plan-questions", "60", "120", "0.169-60", "0.169-120"},
		{"real-gemini/gemini-%s-loop", "60", "120"},
		// The same approval cut at 40 columns, its box's right edges gone.
		{"%s", "real-gemini/gemini-60-approval", "panes/gemini-approval-clipped-right-edge"},
		// The same question, its footer wrapped by a narrower pane.
		{"panes/claude-d-%s", "esc-question", "question-narrow-footer-wrap"},
		// OpenCode's approval at two widths, its hints beside the buttons
		// or under them, in the corpus's copies and the real captures.
		{"%s", "panes/opencode-1-18-33-40-approval-e", "panes/opencode-1-18-33-80-approval-e",
			"real-opencode/opencode-40-approval.e", "real-opencode/opencode-80-approval.e"},
	} {
		var names []string
		for _, w := range g[1:] {
			names = append(names, fmt.Sprintf(g[0], w))
		}
		groups = append(groups, names)
	}
	byName := make(map[string]answer.Menu)
	for _, c := range corpusMenus(t) {
		byName[c.dir+"/"+c.name] = c.m
	}
	groupOf := make(map[string]int)
	for i, g := range groups {
		want, ok := byName[g[0]]
		if !ok {
			t.Fatalf("%s yields no menu", g[0])
		}
		for _, name := range g[1:] {
			m, ok := byName[name]
			if !ok {
				t.Fatalf("%s yields no menu", name)
			}
			if m.Key() != want.Key() {
				t.Errorf("%s and %s show one dialog but have different keys", g[0], name)
			}
		}
		groupOf[want.Key()] = i
	}
	// Every other pair of the corpus's dialogs differs in some text (a
	// path, a command, an option): a key shared outside a group is a
	// collision, or a group this list misses.
	seen := make(map[string]string)
	for name, m := range byName {
		name = strings.TrimSuffix(name, ".e")
		k := m.Key()
		if i, ok := groupOf[k]; ok {
			if !slices.Contains(groups[i], name) && !slices.Contains(groups[i], name+".e") {
				t.Errorf("%s has the key of %s's group, which does not list it", name, groups[i][0])
			}
			continue
		}
		if other, ok := seen[k]; ok && other != name {
			t.Errorf("%s and %s have one key", name, other)
		}
		seen[k] = name
	}
}

// lineOf returns the index of the pane line that draws option o: the lowest
// line starting, after borders, indent and a cursor glyph, with its number
// (or, unnumbered, its label), and the rune index where that text starts.
func lineOf(lines []string, o answer.Option) (line, at int) {
	prefix := o.Label
	if o.Number > 0 {
		prefix = fmt.Sprintf("%d. ", o.Number)
	}
	for i := len(lines) - 1; i >= 0; i-- {
		r := []rune(lines[i])
		j := 0
		for j < len(r) && (r[j] == ' ' || r[j] == '│' || strings.ContainsRune("❯›●>", r[j])) {
			j++
		}
		if strings.HasPrefix(string(r[j:]), prefix) {
			return i, j
		}
	}
	return -1, -1
}

// glyphAt returns the rune index of the cursor glyph on a line, or -1.
func glyphAt(line string) int {
	for i, r := range []rune(line) {
		if strings.ContainsRune("❯›●>", r) {
			return i
		}
		if r != ' ' && r != '│' {
			return -1
		}
	}
	return -1
}

// plainMenus are the corpus's menus, their panes as text without escape
// sequences (as classify reads them), which a test can edit. A .e capture
// is left out: its text is its twin's.
func plainMenus(t *testing.T) []corpusMenu {
	var out []corpusMenu
	for _, c := range corpusMenus(t) {
		if strings.HasSuffix(c.name, ".e") {
			continue
		}
		var text []string
		for _, l := range classify.ParseScreen(c.pane).Lines {
			text = append(text, l.Text)
		}
		c.pane = []byte(strings.Join(text, "\n") + "\n")
		// A menu lit by colour alone (OpenCode's buttons) has no cursor
		// in its text: buttons_test.go edits its colours instead.
		if _, ok := answer.Read(classify.Classify(classify.ParseScreen(c.pane), classify.Options{})); !ok {
			continue
		}
		out = append(out, c)
	}
	return out
}

// TestCursorMovedInThePane moves the cursor glyph in each menu's pane to
// every other option, as the agent redraws it after an arrow key, and reads
// the pane again: the same dialog (its key and labels), the cursor where it
// was put.
func TestCursorMovedInThePane(t *testing.T) {
	n := 0
	for _, c := range plainMenus(t) {
		// A wrapped row of words typed into "Type something." sits right
		// above the rule over "4. Chat about this": with the cursor put
		// on 4, classify cuts the dialog at that rule, and the menu is
		// refused (its numbers start at 4), not misread.
		if strings.HasPrefix(c.twin(), "panes/claude-332-60-ask-field-typed") {
			continue
		}
		lines := strings.Split(string(c.pane), "\n")
		from, _ := lineOf(lines, c.m.Options[answer.Highlighted(c.m)-1])
		if from < 0 || glyphAt(lines[from]) < 0 {
			t.Fatalf("%s: the cursor's line is not found in the pane", c.twin())
		}
		col := glyphAt(lines[from])
		for _, o := range c.m.Options {
			// Copilot CLI at 40 columns draws its last option's number a
			// column left of the others', with no room for the cursor
			// before it; that option opens a text field, and no button
			// moves the cursor there.
			if o.Cursor || c.m.Agent == "Copilot CLI" && o.FreeText {
				continue
			}
			to, _ := lineOf(lines, o)
			moved := slices.Clone(lines)
			src, dst := []rune(moved[from]), []rune(moved[to])
			if to < 0 || col >= len(dst) || dst[col] != ' ' {
				t.Fatalf("%s: option %d's line has no room for the cursor at column %d: %q", c.twin(), o.Pos, col, moved[to])
			}
			dst[col], src[col] = src[col], ' '
			moved[from], moved[to] = string(src), string(dst)
			r := classify.Classify(classify.ParseScreen([]byte(strings.Join(moved, "\n"))), classify.Options{})
			m, err := answer.Inspect(r)
			if err != nil {
				t.Errorf("%s, cursor on %d: %v", c.twin(), o.Pos, err)
				continue
			}
			n++
			if got := answer.Highlighted(m); got != o.Pos {
				t.Errorf("%s: cursor drawn on %d, Highlighted says %d", c.twin(), o.Pos, got)
			}
			if m.Key() != c.m.Key() {
				t.Errorf("%s: moving the cursor to %d changed the key", c.twin(), o.Pos)
			}
			if diff := cmp.Diff(withCursor(c.m, o.Pos), m); diff != "" {
				t.Errorf("%s, cursor on %d (-want +got):\n%s", c.twin(), o.Pos, diff)
			}
		}
	}
	t.Logf("%d cursor moves read back", n)
}

// TestLabelChangedInThePane changes one letter of each option's label in
// its pane (a letter for a letter, so that no column moves): the dialog read again has
// that label changed, and another key.
func TestLabelChangedInThePane(t *testing.T) {
	for _, c := range plainMenus(t) {
		lines := strings.Split(string(c.pane), "\n")
		for _, o := range c.m.Options {
			i, at := lineOf(lines, o)
			if i < 0 {
				t.Fatalf("%s: option %d's line is not found", c.twin(), o.Pos)
			}
			r := []rune(lines[i])
			if o.Number > 0 {
				at += len(fmt.Sprint(o.Number)) + 2
			}
			// The label's last letter on this line, before a column gap:
			// its first words are what tells Codex's answer line from its
			// composer.
			end := at
			for j := at; j < len(r) && !(r[j] == ' ' && j+1 < len(r) && r[j+1] == ' '); j++ {
				if unicode.IsLetter(r[j]) {
					end = j
				}
			}
			if r[end] == 'Q' {
				r[end] = 'W'
			} else {
				r[end] = 'Q'
			}
			changed := slices.Clone(lines)
			changed[i] = string(r)
			res := classify.Classify(classify.ParseScreen([]byte(strings.Join(changed, "\n"))), classify.Options{})
			m, err := answer.Inspect(res)
			if err != nil {
				t.Errorf("%s, option %d changed: %v", c.twin(), o.Pos, err)
				continue
			}
			if m.Key() == c.m.Key() {
				t.Errorf("%s: changing option %d's label (%q → %q) kept the key", c.twin(), o.Pos, o.Label, m.Options[o.Pos-1].Label)
			}
			for j, p := range m.Options {
				if (p.Label == c.m.Options[j].Label) != (j+1 != o.Pos) {
					t.Errorf("%s: option %d changed, option %d reads %q (was %q)", c.twin(), o.Pos, j+1, p.Label, c.m.Options[j].Label)
				}
			}
		}
	}
}

// The idle screens of each agent, captured from the real programs, that
// the prose test writes an answer into, just above the input box.
var idle = []struct {
	agent, pane, head string
}{
	{"Claude Code", "../golden/real/claude-manual-100-done.pane", "⏺ This is the dialog it drew:"},
	{"Codex CLI", "../golden/real-codex/codex-120-ran-command.pane", "• This is the dialog it drew:"},
	{"Gemini CLI", "../golden/real-gemini/gemini-120-ran-command.pane", "✦ This is the dialog it drew:"},
}

// TestProseIsNoMenu writes every menu of the corpus, as its agent drew it
// (its question line and its option lines, cursor and all), into an
// agent's answer: indented under the answer's head, or at the margin with
// or without the head above it, over each agent's idle input box; and
// under the head where the box is not drawn. None of these is a dialog the
// agent drew, and none yields a Menu, whatever classify says of them.
func TestProseIsNoMenu(t *testing.T) {
	menus := plainMenus(t)
	questions := 0
	for _, tmpl := range idle {
		data, err := os.ReadFile(tmpl.pane)
		if err != nil {
			t.Fatal(err)
		}
		screen := classify.ParseScreen(data)
		r := classify.Classify(screen, classify.Options{})
		if r.Agent != tmpl.agent || !r.HasBox {
			t.Fatalf("%s: read as %q, box %v; want %s's idle box", tmpl.pane, r.Agent, r.HasBox, tmpl.agent)
		}
		var text []string
		for _, l := range screen.Lines {
			text = append(text, l.Text)
		}
		body, box := text[:len(r.Body)], text[len(r.Body):]
		for _, c := range menus {
			quoted := append([]string{lastLine(c.r.Dialog.Question)}, c.r.Dialog.Options...)
			variants := map[string][]string{
				"indented under the head":    append([]string{"", tmpl.head}, indented(quoted)...),
				"at the margin under a head": append([]string{"", tmpl.head, ""}, quoted...),
				"at the margin, no head":     append([]string{""}, quoted...),
				"under the head, no box":     nil,
				"the head glued, no box":     nil,
			}
			for name, prose := range variants {
				var pane []string
				switch name {
				case "under the head, no box":
					pane = concat(body, []string{"", tmpl.head}, indented(quoted))
				case "the head glued, no box":
					pane = concat(body, []string{"", tmpl.head}, quoted)
				default:
					pane = concat(body, prose, []string{""}, box)
				}
				res := classify.Classify(classify.ParseScreen([]byte(strings.Join(pane, "\n")+"\n")), classify.Options{})
				if res.State == classify.Question {
					questions++
				}
				if m, ok := answer.Read(res); ok {
					t.Errorf("%s's menu %s in %s's answer, %s: read as a Menu (%s)\n%s", c.r.Agent, c.twin(), tmpl.agent, name, res.Rule, render(m))
				}
			}
		}
	}
	t.Logf("classify read %d of the quoted menus as a QUESTION; none yields a Menu", questions)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n "), "\n")
	return lines[len(lines)-1]
}

func indented(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = "  " + l
	}
	return out
}

func concat(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// TestEntriesProven: every entry of an agent's label tables flags an option
// of some menu of the corpus (each names its pane in agents.go), so no
// entry is a guess.
func TestEntriesProven(t *testing.T) {
	menus := corpusMenus(t)
	prefixed := func(agent, prefix string, flag func(answer.Option) bool) bool {
		for _, c := range menus {
			for _, o := range c.m.Options {
				if c.m.Agent == agent && strings.HasPrefix(o.Label, prefix) && flag(o) {
					return true
				}
			}
		}
		return false
	}
	refused := questionPanes(t)
	for _, agent := range []string{"Claude Code", "Codex CLI", "Gemini CLI", "Qwen Code", "Copilot CLI"} {
		widens, freeText, checkboxes := answer.Entries(agent)
		for _, p := range widens {
			if !prefixed(agent, p, func(o answer.Option) bool { return o.Widens }) {
				t.Errorf("%s: no pane of the corpus shows a widening option %q", agent, p)
			}
		}
		for _, p := range freeText {
			if !prefixed(agent, p, func(o answer.Option) bool { return o.FreeText }) {
				t.Errorf("%s: no pane of the corpus shows a free-text option %q", agent, p)
			}
		}
		// A checkbox refuses the whole menu: proven by a refused pane
		// whose options start so.
		proven := len(checkboxes) == 0
		for _, p := range refused {
			if _, err := answer.Inspect(p.r); p.r.Agent == agent && errors.Is(err, answer.ErrMultiSelect) {
				proven = true
			}
		}
		if !proven {
			t.Errorf("%s: no pane of the corpus shows a multi-select list", agent)
		}
	}
}
