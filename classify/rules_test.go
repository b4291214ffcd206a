package classify

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// tablePatterns returns every pattern in the agents' tables and the shared
// rules, reached through unexported fields and matcher interfaces alike, and
// the package's structural patterns.
func tablePatterns(t testing.TB) []*pattern {
	t.Helper()
	var out []*pattern
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if v.IsNil() {
				return
			}
			if p, ok := v.Interface().(*pattern); ok {
				out = append(out, p)
				return
			}
			walk(v.Elem())
		case reflect.Struct:
			if !v.CanAddr() { // a struct held in an interface: copy it
				c := reflect.New(v.Type()).Elem()
				c.Set(v)
				v = c
			}
			for i := range v.NumField() {
				f := v.Field(i)
				// Reach unexported fields through their address.
				walk(reflect.NewAt(f.Type(), f.Addr().UnsafePointer()).Elem())
			}
		case reflect.Slice, reflect.Array:
			for i := range v.Len() {
				walk(v.Index(i))
			}
		}
	}
	for _, a := range agents() {
		walk(reflect.ValueOf(a).Elem())
	}
	rules := shared()
	walk(reflect.ValueOf(&rules).Elem())
	// The structural patterns outside the tables: dialog edges and lines,
	// box borders, transcript chrome, runners' failure lines, reset times.
	out = append(out, borders, edge, optionLine, cursorLine, footerLine, pickerFooter, completedTask, chrome, resetClock, resetIn)
	out = append(out, failureSignals...)
	if len(out) < 30 {
		t.Errorf("found %d patterns in the tables; the walk missed some", len(out))
	}
	return out
}

// TestEveryPatternCompiles compiles each rule's pattern now, since patterns
// otherwise compile when first used and a typo would wait for the screen
// that reaches it.
func TestEveryPatternCompiles(t *testing.T) {
	for _, p := range tablePatterns(t) {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("pattern %q: %v", p.expr, r)
				}
			}()
			p.re()
		}()
	}
}

// TestEveryPatternAnchored fails on a pattern that could match anywhere in a
// line without saying why: prose quoting a marker matches an unanchored
// pattern, and `^a|b` anchors only its first branch.
func TestEveryPatternAnchored(t *testing.T) {
	for _, p := range tablePatterns(t) {
		if p.free == "" && !anchored(p.expr) {
			t.Errorf("pattern %q is not anchored at the start of every branch; anchor it where the agent draws the structure, or mark it free(expr, why)", p.expr)
		}
	}
}

func TestAnchored(t *testing.T) {
	tests := []struct {
		expr string
		want bool
	}{
		{`^a`, true},
		{`^a|b`, false},
		{`^a|^b`, true},
		{`^(?:a|b)`, true},
		{`(?i)^a`, true},
		{`(^a)|(^b)`, true},
		{`a`, false},
		{`\bEsc to cancel\b`, false},
		{`(?:^a|b)c`, false},
		{`(`, false},
	}
	for _, tt := range tests {
		if got := anchored(tt.expr); got != tt.want {
			t.Errorf("anchored(%q) = %v, want %v", tt.expr, got, tt.want)
		}
	}
}

// TestByHandAgreesWithTheExpression: a pattern matched by hand answers as
// its regular expression does, on every line of every golden pane and on
// variants of its own lines (holding them, quoting them, cut short).
func TestByHandAgreesWithTheExpression(t *testing.T) {
	var lines []string
	for _, dir := range []string{"panes", "real", "real-codex", "real-gemini"} {
		files, _ := filepath.Glob(filepath.Join("..", "golden", dir, "*.pane"))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range ParseScreen(data).Lines {
				lines = append(lines, l.Text)
			}
		}
	}
	if len(lines) < 1000 {
		t.Fatalf("only %d golden lines", len(lines))
	}
	n := 0
	for _, p := range tablePatterns(t) {
		if p.byHand == nil && p.need == nil {
			continue
		}
		n++
		expr := regexp.MustCompile(p.expr)
		probes := append(slices.Clone(handLines), lines...)
		for _, l := range lines {
			if expr.MatchString(l) {
				probes = append(probes, l+" ", " "+l, l[:len(l)-1], "› "+l, l+l, strings.ToLower(l))
			}
		}
		for _, s := range probes {
			if got, want := p.MatchString(s), expr.MatchString(s); got != want {
				t.Errorf("%s on %q: %v, its expression says %v", p.expr, s, got, want)
			}
			if got, want := p.FindStringSubmatch(s), expr.FindStringSubmatch(s); !slices.Equal(got, want) {
				t.Errorf("%s: FindStringSubmatch(%q) = %q, its expression says %q", p.expr, s, got, want)
			}
		}
	}
	if n < 2 {
		t.Fatalf("%d patterns matched by hand in the tables, want the rule line and Codex's placeholders", n)
	}
}

// handLines are lines at the edges of the patterns matched by hand: each
// is near a line that matches and differs from it in one place.
var handLines = []string{
	"", "───", "──", "─── label ───", "───" + strings.Repeat("x", 40) + "─", "───" + strings.Repeat("x", 41) + "─", "─── x", "x───",
	"Tip: x", "   Tip: ", " \tTip: ", "tmux focus-events off", "Type your message or @path/to/file", "Type your message or @path/to/file ",
	// prompts and their drafts
	"❯", "❯ ", "❯  draft", "> draft", "!", "! ls", "❯draft", "❯ a\nb", "❯\n", " ❯ x", "❯ \xff",
	// options, with and without the cursor
	"❯ 1. Yes", "  2. No", "❯1. Yes", "❯ 12.  x", "❯ 1.", "❯ 1. ", "❯ 1.\tx", "  ❯  3. \xffx", "> 1. x", "1. x", "1.x", "a1. x", "› 2. x", "● 2. x", "❯ x. y",
	// hint lines
	"Enter to select · ↑/↓ to navigate · Esc to cancel", "  Enter to select", "   Enter to select", "Enter to selected",
	"↑/↓ to navigate · Enter to select", "a · b · Enter to select · c", " · Enter to select", "a· Enter to select", "a ·  Enter to select",
	"a  · Enter to select", "Enter to select more · Enter to select", "a · Enter to select·", "x\n · Enter to select", "·· Enter to select",
	// spinners and heads
	"✻ Thinking…", "✶ Compiling… (38s · esc to interrupt)", "✻ Brewed for 60s", "* Working… ()", "* Working… (", "* Working… )", "· x… (a) b",
	"✳ …", "✳ x…\n", "✳  x…", "✳ \xff…", "⏺ Bash(ls)", "● x", "∴ Thinking", "> 1", "> a", "❯ \t", "✢ \n",
	// the effort indicator, tips, the placeholder, the banner
	"  ◐ medium · /effort", "◐ medium · /effort", "  ● high · /effort ", "  ○  low · /effort", "  ○ lo w · /effort", "  ○ \xff · /effort",
	"  ⎿  Tip: x", "⎿ Tip: ", "⎿Tip: ", "  ⎿  Tips: ",
	`Try "fix lint errors"`, `Try ""`, `Try "`, `Try "a"b"`, `Try "a" `,
	"╭───╮", "╭╮", "╭─╮ x", "╭─x╮",
	// the literals the richer expressions need (pattern.needs), in other cases
	"● Thinking… (12s · ↓ 300 tokens)", "● Thinking…(12s)", "✻ Waiting for 2 background agents to finish", "✻ Waiting for 2 background",
	"✻ Baking… retrying in 5s · attempt 4/10", "✻ Baking… Retrying in 5s · attempt 4/10", "  ⎿  API Error (529 overloaded) · Retrying in 12 seconds… (attempt 6/10)",
	"  esc to interrupt", "  ESC TO INTERRUPT", "  eſc to interrupt", "  esc to interrupt ", "  ⏵⏵ accept edits on · Esc To Interrupt · x",
	"  ⎿  Interrupted by user", "  ⎿  interrupted by user", "  ⎿  Interrupted · What should Claude do instead?", "● Declined to answer Claude's questions:",
	"Claude usage limit reached", "  ⎿  Claude uſage limit reached", "5-hour limit reached ∙ resets 9pm", "You've hit your LIMIT · resets 10pm",
	"you've hit your weekly limit", "you've hit your limits", "Press Ctrl-C again to exit", "  Press Ctrl-D again to exit", "Press Ctrl-X again to exit",
	" ✻ Welcome to Claude Code", "│ Claude Code v2.0", "Claude Code v", "123456789012Claude Code v1", "1234567890123Claude Code v1", "12\nClaude Code v1",
}

// FuzzByHand holds every pattern matched by hand to its expression, on
// any line.
func FuzzByHand(f *testing.F) {
	for _, s := range handLines {
		f.Add(s)
	}
	var hand []*pattern
	var exprs []*regexp.Regexp
	for _, p := range tablePatterns(f) {
		if p.byHand != nil || p.need != nil {
			hand, exprs = append(hand, p), append(exprs, regexp.MustCompile(p.expr))
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		for i, p := range hand {
			if got, want := p.MatchString(s), exprs[i].MatchString(s); got != want {
				t.Fatalf("%q by hand on %q: %v, the expression says %v", p.expr, s, got, want)
			}
			if got, want := p.FindStringSubmatch(s), exprs[i].FindStringSubmatch(s); !slices.Equal(got, want) {
				t.Fatalf("%q by hand on %q: groups %q, the expression says %q", p.expr, s, got, want)
			}
		}
	})
}

func FuzzRuleLine(f *testing.F) {
	for _, s := range []string{"───", "─── Plan ───", "──x─", "───\xff─", "───" + strings.Repeat("é", 40) + "─"} {
		f.Add(s)
	}
	expr := regexp.MustCompile(ruleLine)
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := isRuleLine(s), expr.MatchString(s); got != want {
			t.Fatalf("isRuleLine(%q) = %v, the expression says %v", s, got, want)
		}
	})
}

// TestFastPathsUsed: every expression with a matcher by hand is read by a
// built-in description, and gets its matcher there; one no description
// reads any more (its JSON was edited) is dead code, and its screens now
// compile the expression.
func TestFastPathsUsed(t *testing.T) {
	used := map[string]bool{}
	for _, p := range tablePatterns(t) {
		if fastPaths()[p.expr] != nil {
			used[p.expr] = true
			if p.byHand == nil {
				t.Errorf("%q is read without its matcher by hand", p.expr)
			}
		}
	}
	for expr := range fastPaths() {
		if !used[expr] {
			t.Errorf("no description reads %q, which has a matcher by hand", expr)
		}
	}
}

// TestLiteralLines: an expression of whole literal lines, or of a literal
// after any indent, is matched by comparing strings; any operator left
// unescaped makes it a regular expression again.
func TestLiteralLines(t *testing.T) {
	type got struct {
		Lines  []string
		Indent string
	}
	for _, tc := range []struct {
		expr string
		want got
	}{
		{`^(?:Ask Codex to do anything|Implement \{feature\})$`, got{Lines: []string{"Ask Codex to do anything", "Implement {feature}"}}},
		{`^Type your message or @path/to/file$`, got{Lines: []string{"Type your message or @path/to/file"}}},
		{`^(?:a\|b|c\.d)$`, got{Lines: []string{"a|b", "c.d"}}},
		{`^(?:a)|(b)$`, got{}},
		{`^a|b$`, got{}},
		{`^a\|b$`, got{Lines: []string{"a|b"}}},
		{`^(?:a.b)$`, got{}},
		{`^(?:a|)$`, got{}},
		{`^(?:a\d)$`, got{}},
		{`^(?:a\`, got{}},
		{`^a`, got{}},
		{`a$`, got{}},
		{`^ *Tip: `, got{Indent: "Tip: "}},
		{`^ *tmux focus-events off`, got{Indent: "tmux focus-events off"}},
		{`^ *  Tip`, got{}},
		{`^ *Tip.`, got{}},
		{`^ *`, got{}},
	} {
		var g got
		g.Lines, _ = literalLines(tc.expr)
		g.Indent, _ = indentedLiteral(tc.expr)
		if diff := cmp.Diff(tc.want, g, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.expr, diff)
		}
		if g.Lines == nil && g.Indent == "" {
			continue
		}
		// The comparison answers as the expression does.
		p, x := described(tc.expr), regexp.MustCompile(tc.expr)
		for _, s := range append(slices.Clone(g.Lines), "", g.Indent, "  "+g.Indent, " \t"+g.Indent, g.Indent+"x", "x"+g.Indent, "a", "b", "a|b", "c.d", "cxd") {
			if p.MatchString(s) != x.MatchString(s) {
				t.Errorf("%s on %q: %v by hand, %v by the expression", tc.expr, s, p.MatchString(s), x.MatchString(s))
			}
		}
	}
}
