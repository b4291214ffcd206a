package answer_test

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/omega-monitor/omega-monitor/answer"
	"github.com/omega-monitor/omega-monitor/classify"
)

// screen classifies a pane of the corpus.
func screen(t *testing.T, name string) classify.Result {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "golden", name+".pane"))
	if err != nil {
		t.Fatal(err)
	}
	return classify.Classify(classify.ParseScreen(data), classify.Options{})
}

// fieldOf reads the field of the menu on a pane of the corpus.
func fieldOf(t *testing.T, name string) (answer.Menu, answer.Field) {
	t.Helper()
	m, err := answer.Inspect(screen(t, name))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	f, err := answer.FieldOf(m)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return m, f
}

// TestFieldReadBack reads the real Claude Code's fields as the watcher
// does around the typing: the field found on the question relayed, open
// and empty once the cursor (or Tab) opened it, then holding exactly the
// words typed, in a dialog whose other text did not change; and never
// holding them when the cursor is elsewhere or the words differ.
func TestFieldReadBack(t *testing.T) {
	for _, c := range []struct {
		name string
		// asked is the question as relayed (the field found there),
		// open its field opened, typed the words typed into it.
		asked, open, typed string
		words              string
		want               answer.Field
	}{
		{
			name:  "AskUserQuestion, 100 columns",
			asked: "real/claude-manual-100-question", open: "panes/claude-332-100-ask-field-open", typed: "panes/claude-332-100-ask-field-typed",
			words: `use CSV; "quoted" $HOME ünïcödé`,
			want:  answer.Field{Pos: 3, Label: "Type something."},
		},
		{
			name:  "AskUserQuestion, 60 columns, wrapped inside a word",
			asked: "real/claude-manual-60-question", open: "panes/claude-332-60-ask-field-open", typed: "panes/claude-332-60-ask-field-typed",
			words: "keep it in https://example.com/a/very/long/path/that/does/not/fit/in/one/row/of/the/pane/at/all then stop",
			want:  answer.Field{Pos: 3, Label: "Type something."},
		},
		{
			name:  "Codex's notes line, 100 columns",
			asked: "panes/codex-171-100-notes-none", open: "panes/codex-171-100-notes-open", typed: "panes/codex-171-100-notes-typed",
			words: codexNotes,
			want:  answer.Field{Pos: 3, Tab: true, Label: "None of the above", Notes: "Add notes"},
		},
		{
			name:  "Codex's notes line, 60 columns, wrapped",
			asked: "panes/codex-171-60-notes-none", open: "panes/codex-171-60-notes-open", typed: "panes/codex-171-60-notes-typed",
			words: codexNotes,
			want:  answer.Field{Pos: 3, Tab: true, Label: "None of the above", Notes: "Add notes"},
		},
		{
			name: "permission, Tab on No, 100 columns",
			open: "panes/claude-332-100-permission-amend-open", typed: "panes/claude-332-100-permission-amend-typed",
			words: "use ls instead, and explain why the marker file is needed before you touch anything else in this folder",
			want:  answer.Field{Pos: 4, Tab: true, Label: "No, and tell Claude what to do differently", Prefix: "No, "},
		},
		{
			name: "permission, Tab on No, 60 columns",
			open: "panes/claude-332-60-permission-amend-open", typed: "panes/claude-332-60-permission-amend-typed",
			words: "use ls instead, and explain why the marker file is needed before you touch anything else in this folder",
			want:  answer.Field{Pos: 4, Tab: true, Label: "No, and tell Claude what to do differently", Prefix: "No, "},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			var f answer.Field
			var key string
			if c.asked != "" {
				var m answer.Menu
				m, f = fieldOf(t, c.asked)
				key = m.FieldKey(f)
			} else {
				// No capture of this run shows the prompt before Tab:
				// the field is the one its golden says, and the key is
				// the open field's.
				f = c.want
			}
			if diff := cmp.Diff(c.want, f); diff != "" {
				t.Errorf("FieldOf (-want +got):\n%s", diff)
			}
			open, err := answer.ReadField(screen(t, c.open), f)
			if err != nil {
				t.Fatal(err)
			}
			if key == "" {
				key = open.Key
			}
			typed, err := answer.ReadField(screen(t, c.typed), f)
			if err != nil {
				t.Fatal(err)
			}
			if open.Key != key || typed.Key != key {
				t.Errorf("the dialog's key changed while the field was opened and typed into: %s, %s, %s", key, open.Key, typed.Key)
			}
			if !open.Open(f) || open.Holds(f, c.words) {
				t.Errorf("the open field reads open %v, holding the words %v; its lines: %q", open.Open(f), open.Holds(f, c.words), open.Lines)
			}
			if typed.Open(f) || !typed.Holds(f, c.words) {
				t.Errorf("the typed field reads open %v, holding the words %v; its lines: %q", typed.Open(f), typed.Holds(f, c.words), typed.Lines)
			}
			for _, other := range []string{c.words + ".", strings.TrimSuffix(c.words, c.words[len(c.words)-1:]), strings.Replace(c.words, " ", "  ", 1), strings.Replace(c.words, " ", "", 1), "x" + c.words} {
				if typed.Holds(f, other) {
					t.Errorf("the field holding %q reads as holding %q", c.words, other)
				}
			}
		})
	}
}

// TestFieldNotHeld: the field's words do not count where the dialog
// changed around them, or the cursor left the field.
func TestFieldNotHeld(t *testing.T) {
	_, f := fieldOf(t, "real/claude-manual-100-question")
	away, err := answer.ReadField(screen(t, "panes/claude-332-100-ask-field-typed-away"), f)
	if err != nil {
		t.Fatal(err)
	}
	if away.Holds(f, `use CSV; "quoted" $HOME ünïcödé`) {
		t.Error("a field the cursor left reads as holding its words: Enter would choose another option")
	}
	amend := answer.Field{Pos: 4, Tab: true, Label: "No, and tell Claude what to do differently", Prefix: "No, "}
	open, _ := answer.ReadField(screen(t, "panes/claude-332-100-permission-amend-open"), amend)
	yes, err := answer.ReadField(screen(t, "panes/claude-332-100-permission-amend-yes"), amend)
	if err != nil {
		t.Fatal(err)
	}
	if yes.Key == open.Key {
		t.Error("Tab on Yes changed its row, but not the key of No's field")
	}
	if yes.Cursor {
		t.Error("the cursor reads on No while it is on Yes")
	}
	// Another question's field is not this one's.
	if other, err := answer.ReadField(screen(t, "panes/claude-328-ask-question"), f); err != nil || other.Key == away.Key {
		t.Errorf("another question: %v, key %s", err, other.Key)
	}
}

// codexNotes are the words typed into Codex's notes line in the captures
// (internal/codex TestCaptureNotes).
const codexNotes = `use CSV; keep "quoted" $HOME as is, ünïcödé ✓ and wrap this note past sixty columns`

// TestNotesLineHostile: Codex's notes line is read only as the dialog
// draws it open: the cursor on the option, one line starting with the
// cursor glyph under the options, the hint that says how to clear it under
// that. A screen that draws anything else around the words never reads as
// holding them, and a dialog changed around them has another key.
func TestNotesLineHostile(t *testing.T) {
	f := answer.Field{Pos: 3, Tab: true, Label: "None of the above", Notes: "Add notes"}
	m, err := answer.Inspect(screen(t, "panes/codex-171-60-notes-none"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join("..", "golden", "panes", "codex-171-60-notes-typed.pane"))
	if err != nil {
		t.Fatal(err)
	}
	typed := string(data)
	read := func(pane string) answer.FieldView {
		t.Helper()
		v, err := answer.ReadField(classify.Classify(classify.ParseScreen([]byte(pane)), classify.Options{}), f)
		if err != nil {
			return answer.FieldView{}
		}
		return v
	}
	if v := read(typed); !v.Holds(f, codexNotes) || v.Key != m.FieldKey(f) {
		t.Fatalf("the capture itself does not read: %+v", v)
	}
	for _, c := range []struct{ name, from, to string }{
		{"no hint under the words", "tab or esc to clear notes | enter to submit answer", "enter to submit answer"},
		{"the hint above the words", "  › use CSV", "  tab or esc to clear notes\n  › use CSV"},
		{"a second line with the glyph", "    wrap this note past sixty columns", "  › wrap this note past sixty columns"},
		{"a line more under the words", "    wrap this note past sixty columns", "    wrap this note past sixty columns\n    and more"},
		{"the cursor on another option", "  › 3. None of the above", "    3. None of the above"},
		{"a word of the question changed", "Which format should the history use?", "Which format should the history keep?"},
		{"an option changed", "2. SQLite", "2. SQLitf"},
		{"another agent's glyph", "  › use CSV", "  ❯ use CSV"},
	} {
		t.Run(c.name, func(t *testing.T) {
			pane := strings.Replace(typed, c.from, c.to, 1)
			if pane == typed {
				t.Fatalf("%q is not in the capture", c.from)
			}
			if v := read(pane); v.Holds(f, codexNotes) && v.Key == m.FieldKey(f) {
				t.Errorf("reads as the dialog relayed, holding the words:\n%s", pane)
			}
		})
	}
	// The words left there while the cursor moved to another option:
	// Enter would send them with that option.
	if v := read(string(must(os.ReadFile(filepath.Join("..", "golden", "panes", "codex-171-60-notes-typed-away.pane"))))); v.Holds(f, codexNotes) {
		t.Error("the notes read as held for None of the above while the cursor is on SQLite")
	}
	// The placeholder typed as words could not be told from none.
	if !f.Placeholder("Add notes") || f.Placeholder("Add notes now") {
		t.Error("Placeholder")
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestFieldOf: a menu offers its one field; none where no option takes
// words, where the option's words go elsewhere, or where two options
// take them and a reply could not say which.
func TestFieldOf(t *testing.T) {
	claude := func(labels ...string) answer.Menu {
		m := answer.Menu{Agent: "Claude Code"}
		for i, l := range labels {
			free := strings.HasPrefix(l, "Type something") || strings.HasPrefix(l, "No, and tell Claude")
			m.Options = append(m.Options, answer.Option{Pos: i + 1, Label: l, Cursor: i == 0, FreeText: free})
		}
		return m
	}
	amend := claude("Yes", "No")
	amend.Amend = true
	for _, c := range []struct {
		name string
		m    answer.Menu
		want answer.Field
		err  error
	}{
		{"inline", claude("A", "B", "Type something."), answer.Field{Pos: 3, Label: "Type something."}, nil},
		{"amend", amend, answer.Field{Pos: 2, Tab: true, Label: "No, and tell Claude what to do differently", Prefix: "No, "}, nil},
		{"no amend offered", claude("Yes", "No"), answer.Field{}, answer.ErrNoField},
		{"two fields", func() answer.Menu { m := claude("No", "Type something."); m.Amend = true; return m }(), answer.Field{}, answer.ErrFields},
		{"never seen", claude("Yes", "No, and tell Claude what to do differently (esc)"), answer.Field{}, answer.ErrFieldUnseen},
		{"codex closes", answer.Menu{Agent: "Codex CLI", Options: []answer.Option{{Pos: 1, Label: "Yes, proceed (y)", Cursor: true}, {Pos: 2, Label: "No, and tell Codex what to do differently (esc)", FreeText: true}}}, answer.Field{}, answer.ErrFieldCloses},
		{"codex notes", answer.Menu{Agent: "Codex CLI", Notes: true, Options: []answer.Option{{Pos: 1, Label: "A", Cursor: true}}}, answer.Field{}, answer.ErrNotesField},
		{"codex notes, none of the above", codexNotesMenu(true, "Optionally, add details in notes (tab)"), answer.Field{Pos: 2, Tab: true, Label: "None of the above", Notes: "Add notes"}, nil},
		{"codex, none of the above without the notes hint", codexNotesMenu(false, "Optionally, add details in notes (tab)"), answer.Field{}, answer.ErrNoField},
		{"codex, a model's own none of the above", codexNotesMenu(true, "Pick this if nothing fits."), answer.Field{}, answer.ErrNotesField},
		{"codex, two of them", func() answer.Menu {
			m := codexNotesMenu(true, "Optionally, add details in notes (tab)")
			m.Options = append(m.Options, answer.Option{Pos: 3, Label: "None of the above", Description: "Optionally, add details in notes (tab)"})
			return m
		}(), answer.Field{}, answer.ErrFields},
		{"unknown agent", answer.Menu{Agent: "Other"}, answer.Field{}, answer.ErrNoAgent},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := answer.FieldOf(c.m)
			if !errors.Is(err, c.err) {
				t.Fatalf("FieldOf = %v, want %v", err, c.err)
			}
			if diff := cmp.Diff(c.want, f); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// codexNotesMenu is a request_user_input menu whose last option is "None
// of the above" with the description desc; notes says its hint offers
// notes.
func codexNotesMenu(notes bool, desc string) answer.Menu {
	return answer.Menu{Agent: "Codex CLI", Notes: notes, Options: []answer.Option{
		{Pos: 1, Label: "JSON Lines", Cursor: true}, {Pos: 2, Label: "None of the above", Description: desc}}}
}

// TestShows: a row wrapped at any place reads as its words, and as
// nothing else.
func TestShows(t *testing.T) {
	for _, c := range []struct {
		lines []string
		s     string
		want  bool
	}{
		{[]string{"use CSV"}, "use CSV", true},
		{[]string{"use", "CSV"}, "use CSV", true},
		{[]string{"us", "e CSV"}, "use CSV", true},
		{[]string{"use", "CSV"}, "useCSV", true}, // a break inside a word: the screen cannot tell
		{[]string{"use", "CSV"}, "use  CSV", false},
		{[]string{"use CSV"}, "use CSV.", false},
		{[]string{"use CSV"}, "use", false},
		{[]string{"use CSV", "now"}, "use CSV", false},
		{nil, "", false},
		{[]string{"No, use", "ls"}, "No, use ls", true},
	} {
		if got := (answer.FieldView{Lines: c.lines}).Shows(c.s); got != c.want {
			t.Errorf("%q shows %q = %v, want %v", c.lines, c.s, got, c.want)
		}
	}
}

// TestShowsAnyWrap: words cut into rows anywhere, as a pane of any width
// draws them, read back as exactly those words.
func TestShowsAnyWrap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"use", "CSV;", `"quoted"`, "$HOME", "ünïcödé", "日本語", "https://example.com/a/b", "-x", "✓"}
	for range 2000 {
		var ws []string
		for range 1 + rng.IntN(12) {
			ws = append(ws, words[rng.IntN(len(words))])
		}
		s := strings.Join(ws, " ")
		runes := []rune(s)
		var lines []string
		for len(runes) > 0 {
			n := min(len(runes), 1+rng.IntN(20))
			line := strings.TrimSpace(string(runes[:n]))
			runes = runes[n:]
			// The agent does not draw the space it wraps at.
			if len(runes) > 0 && runes[0] == ' ' {
				runes = runes[1:]
			}
			if line != "" {
				lines = append(lines, line)
			}
		}
		v := answer.FieldView{Lines: lines}
		if !v.Shows(s) {
			t.Fatalf("%q cut into %q does not read back", s, lines)
		}
		if v.Shows(s+"x") || v.Shows("x"+s) {
			t.Fatalf("%q cut into %q reads as other words", s, lines)
		}
	}
}

// TestCheckText: every form of text that is not one printable line is
// refused, with its reason; words the operator could type are taken.
func TestCheckText(t *testing.T) {
	for _, s := range []string{
		"use CSV", `"quoted" $HOME \n 'single' ; & | > < $(rm -rf /) ` + "`x`",
		"-starts with a dash", "ünïcödé 日本語 ✓ 🙂", strings.Repeat("é", answer.MaxText),
	} {
		if err := answer.CheckText(s); err != nil {
			t.Errorf("CheckText(%q) = %v, want nil", s, err)
		}
	}
	for _, c := range []struct{ s, why string }{
		{"", "empty"},
		{"   ", "empty"},
		{"two\nlines", "line break"},
		{"carriage\rreturn", "line break"},
		{"line\u2028separator", "line break"},
		{"next\u0085line", "line break"},
		{"tab\there", "control"},
		{"ctrl-c \x03", "control"},
		{"escape \x1b[2J", "control"},
		{"bracketed paste end \x1b[201~", "control"},
		{"delete \x7f", "control"},
		{"c1 \u009b", "control"},
		{"nul \x00", "control"},
		{"zero\u200bwidth", "invisible"},
		{"bidi \u202eoverride", "invisible"},
		{"bom \ufeff", "invisible"},
		{"invalid \xff", "UTF-8"},
		{strings.Repeat("x", answer.MaxText+1), "more than"},
		{" leading", "one space apart"},
		{"double  space", "one space apart"},
	} {
		err := answer.CheckText(c.s)
		if err == nil || !strings.Contains(err.Error(), c.why) {
			t.Errorf("CheckText(%q) = %v, want an error saying %q", c.s, err, c.why)
		}
	}
}

// TestTakeText: the operator's spacing is made single spaces; a line
// break or a control character is refused, never made a space.
func TestTakeText(t *testing.T) {
	for in, want := range map[string]string{
		"  use  CSV ":            "use CSV",
		"no\u00a0break":          "no break",
		"ideographic\u3000space": "ideographic space",
	} {
		if got, err := answer.TakeText(in); err != nil || got != want {
			t.Errorf("TakeText(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"two\nlines", "tab\there", "a\r\nb", "\x1b[201~", strings.Repeat("ab ", 200)} {
		if got, err := answer.TakeText(in); err == nil {
			t.Errorf("TakeText(%q) = %q, want a refusal", in, got)
		}
	}
	if n := utf8.RuneCountInString(strings.Repeat("é", answer.MaxText)); n != answer.MaxText {
		t.Fatal(n)
	}
}

// FuzzTakeText takes any words a chat could send: what is taken passes
// CheckText (one printable line within the cap, nothing a terminal reads
// as a key), is taken again unchanged, and reads back from any row that
// shows it unwrapped.
func FuzzTakeText(f *testing.F) {
	for _, s := range []string{"use CSV", "  two  spaces ", "a\nb", "\x1b[201~", "日本語 ✓", "\u202e", strings.Repeat("x ", 300)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := answer.TakeText(s)
		if err != nil {
			return
		}
		if err := answer.CheckText(got); err != nil {
			t.Fatalf("TakeText(%q) = %q, which CheckText refuses: %v", s, got, err)
		}
		if again, err := answer.TakeText(got); err != nil || again != got {
			t.Fatalf("taken again: %q, %v", again, err)
		}
		for _, r := range got {
			if r < ' ' || r == 0x7f || r >= 0x80 && r <= 0x9f {
				t.Fatalf("%q holds %U", got, r)
			}
		}
		if !(answer.FieldView{Lines: []string{got}}).Shows(got) {
			t.Fatalf("%q does not read back from its own row", got)
		}
	})
}
