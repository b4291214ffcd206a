package answer

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/omega-monitor/omega-monitor/classify"
)

// A Field is where a dialog takes the human's own words: a text field the
// agent draws in one option's own row, or the dialog's notes line, sent
// with one option. Text typed there is read back from the screen before
// Enter, so the watcher types an operator's words only into a field whose
// row it can see hold exactly them. What each agent draws is data, in
// agents.go, each form seen with the real program.
type Field struct {
	// Pos is the option whose row holds the field.
	Pos int
	// Tab says Tab opens the field once the cursor is on the option
	// (Claude Code's permission prompt: "Tab to amend"); otherwise the
	// cursor on the option opens it (AskUserQuestion's "Type something.").
	Tab bool
	// Label is the option's row while its field is open and empty: the
	// option the alert says a reply answers.
	Label string
	// Prefix is what the row keeps before the words typed: "No, " in the
	// field Tab opens on No; "" where the words take the label's place.
	Prefix string
	// Notes, when not empty, says the words go into the dialog's notes
	// line under the options, which Tab opens, and not into the option's
	// row: Notes is that line's placeholder while it is open and empty
	// (Codex's request_user_input: "› Add notes"). The option's row does
	// not change; Enter sends the option with the words.
	Notes string
}

// Why a menu has no Field. FieldOf returns one of these.
var (
	ErrNoField     = errorf("no option of the dialog takes the human's own words")
	ErrFieldCloses = errorf("the free-text option closes the dialog: its words would go to the agent's input box, not into a field of the dialog")
	ErrFieldUnseen = errorf("the free-text option's field was never seen typed into with the real program: where its words go cannot be checked")
	ErrNotesField  = errorf("the dialog takes words only as a note to an option, and none of its options is the one whose note is the answer (None of the above)")
	ErrFields      = errorf("more than one option takes the human's own words: a reply could not say which")
)

// FieldOf returns the one field of the menu m, when one of its options
// takes the human's words in a field of its own row that the watcher can
// read back; otherwise why not, one of the ErrField values of this package.
func FieldOf(m Menu) (Field, error) {
	t := tableOf(m.Agent)
	if t == nil {
		return Field{}, ErrNoAgent
	}
	var fields []Field
	closes, unseen := false, false
	for _, o := range m.Options {
		r, ok := t.fieldOf(o, m)
		switch {
		case ok:
			f := Field{Pos: o.Pos, Tab: r.tab, Label: r.open, Prefix: r.prefix, Notes: r.notes}
			if f.Label == "" {
				f.Label = o.Label
			}
			fields = append(fields, f)
		case hasAnyPrefix(o.Label, t.closes):
			closes = true
		case o.FreeText:
			unseen = true
		}
	}
	switch {
	case len(fields) == 1:
		return fields[0], nil
	case len(fields) > 1:
		return Field{}, ErrFields
	case closes:
		return Field{}, ErrFieldCloses
	case unseen:
		return Field{}, ErrFieldUnseen
	case m.Notes:
		return Field{}, ErrNotesField
	}
	return Field{}, ErrNoField
}

// fieldOf finds the rule of the field of the option o of the menu m: a
// rule opened by Tab needs the dialog's hint to offer it (to amend, or to
// add notes).
func (t *table) fieldOf(o Option, m Menu) (fieldRule, bool) {
	for _, r := range t.fields {
		switch {
		case r.tab && r.notes == "" && !m.Amend, r.notes != "" && !m.Notes:
			continue
		case r.desc != "" && !strings.HasPrefix(o.Description, r.desc):
			continue
		}
		if r.exact && o.Label == r.label || !r.exact && strings.HasPrefix(o.Label, r.label) {
			return r, true
		}
	}
	return fieldRule{}, false
}

// FieldKey is the dialog's Key with the field's row left out: it stays
// the same while words are typed into the field, and changes with any
// other text of the dialog. A notes line is not an option's row: its key
// is the whole dialog's.
func (m Menu) FieldKey(f Field) string {
	if f.Notes != "" {
		return m.Key()
	}
	return m.key(f.Pos)
}

// A FieldView is what a screen shows of a field.
type FieldView struct {
	// Key is the dialog's FieldKey.
	Key string
	// Cursor says the cursor is on the field's option.
	Cursor bool
	// Lines are the field's row as drawn: its lines, trimmed, without
	// the cursor and the option's number, rules dropped.
	Lines []string
}

// ReadField reads the field f on the screen r: the dialog around it and
// its row. An error says the screen shows no menu (Inspect's reason), or
// none with f's option.
func ReadField(r classify.Result, f Field) (FieldView, error) {
	m, d, err := inspect(r, f.Notes != "")
	if err != nil {
		return FieldView{}, err
	}
	if f.Pos < 1 || f.Pos > len(m.Options) {
		return FieldView{}, errorf("no option %d in a menu of %d", f.Pos, len(m.Options))
	}
	v := FieldView{Key: m.FieldKey(f), Cursor: m.Options[f.Pos-1].Cursor}
	if f.Notes != "" {
		// Only a notes line the dialog's own hint says is open: with
		// none, no lines, and the field reads neither open nor holding.
		t := tableOf(m.Agent)
		for _, g := range t.cursors {
			if lines, _, ok := d.notesLines(g); ok {
				v.Lines = lines
				break
			}
		}
		return v, nil
	}
	for _, l := range d.rows[f.Pos-1] {
		if l = strings.TrimSpace(l); l != "" && !boxDrawing(strings.ReplaceAll(l, " ", "")) {
			v.Lines = append(v.Lines, l)
		}
	}
	return v, nil
}

// Shows says the row reads exactly s: its lines in order, each line break
// standing for one space of s or for none (the agent wraps a row at a
// space, which it does not draw, or inside a word too long for it).
func (v FieldView) Shows(s string) bool {
	if len(v.Lines) == 0 {
		return false
	}
	for i, l := range v.Lines {
		if i > 0 {
			s = strings.TrimPrefix(s, " ")
		}
		rest, ok := strings.CutPrefix(s, l)
		if !ok {
			return false
		}
		s = rest
	}
	return s == ""
}

// Open says the field is open and empty: the cursor on its option, and
// its row reading the field's own label (a notes line, its placeholder).
func (v FieldView) Open(f Field) bool { return v.Cursor && v.Shows(f.placeholder()) }

// Holds says the field holds exactly text: the cursor on its option, and
// its row reading the field's prefix and the text.
func (v FieldView) Holds(f Field, text string) bool {
	return v.Cursor && v.Shows(f.Prefix+text) && !v.Shows(f.placeholder())
}

// placeholder is what the field reads while it is open and empty.
func (f Field) placeholder() string {
	if f.Notes != "" {
		return f.Notes
	}
	return f.Label
}

// Placeholder says the words typed into f would read as the field open
// and empty: they could not be told from no words.
func (f Field) Placeholder(text string) bool { return f.Prefix+text == f.placeholder() }

// MaxText is the most characters of the human's own words typed into a
// field.
const MaxText = 500

// CheckText is the rule for words typed into a dialog's field, the rule of
// a nudge's text: one line of printable text, words one space apart, at
// most MaxText characters. A control character typed into a terminal is a
// key, not text (a newline would press Enter on half the words, ESC starts
// a sequence); an invisible or reordering character would type what the
// operator did not see; spacing that the screen cannot show exactly could
// not be read back.
func CheckText(s string) error {
	if err := checkChars(s); err != nil {
		return err
	}
	if s != Words(s) {
		return errors.New("the text's words must be one space apart, with no space around them")
	}
	if n := utf8.RuneCountInString(s); n > MaxText {
		return fmt.Errorf("the text is %d characters long, more than %d", n, MaxText)
	}
	return nil
}

// TakeText is the operator's words as they are typed: refused as CheckText
// refuses them, except that white space is made single spaces first (a
// phone's double space, a no-break space); a line break is refused, not
// made a space.
func TakeText(s string) (string, error) {
	if err := checkChars(s); err != nil {
		return "", err
	}
	s = Words(s)
	return s, CheckText(s)
}

// checkChars refuses text that is no printable line.
func checkChars(s string) error {
	switch {
	case !utf8.ValidString(s):
		return errors.New("the text is not valid UTF-8")
	case strings.TrimSpace(s) == "":
		return errors.New("the text is empty")
	}
	for i, r := range s {
		switch {
		case r == '\n' || r == '\r' || r == '\u2028' || r == '\u2029' || r == '\u0085':
			return fmt.Errorf("the text must be one line; character %d is a line break", utf8.RuneCountInString(s[:i])+1)
		case r < ' ' || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			return fmt.Errorf("the text must hold no control characters (a terminal reads them as keys); character %d is %U", utf8.RuneCountInString(s[:i])+1, r)
		case unicode.Is(unicode.Cf, r):
			return fmt.Errorf("the text must hold no invisible characters; character %d is %U", utf8.RuneCountInString(s[:i])+1, r)
		}
	}
	return nil
}

// Words is s with its white space as CheckText takes it: its words one
// space apart. The relay takes the operator's words so.
func Words(s string) string { return strings.Join(strings.Fields(s), " ") }
