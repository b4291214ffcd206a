// Package answer reads an answerable menu out of a classified screen: the
// options of the live dialog an agent drew, the one its cursor is on, the
// keys that move the cursor to another, and a key naming the dialog, so that
// an operator's answer from afar can be typed into the dialog it was asked
// in and nowhere else.
//
// It reads only what classify recognised from an agent's own chrome: a
// dialog that replaced the agent's input box, found by a built-in rule of a
// named agent. It never reads a question in prose that imitates a dialog
// (options under a head of the transcript), one an operator's rules file
// found, or a menu drawn while an input box is live: the keys could reach
// the box, where Up recalls history and Enter sends it. A dialog that moving
// a cursor and pressing Enter cannot answer safely has no Menu either: one
// with no options (a notice that names its keys, a text field for a secret),
// a multi-select list (Enter toggles a checkbox), a list scrolled past the
// screen, Codex's radio lists (the cursor is not drawn) and its open notes
// field, the last of Codex's questions (Enter submits the unseen ones too),
// a label cut short by a narrow pane ("…": what the option does is not
// shown).
// Inspect says which, with one of the Err values.
//
// What it knows of each agent's menus (cursor glyphs, how the lines under
// an option read, which options open a text field or widen what the agent
// may do) is data, in agents.go, each entry shown by a golden pane.
//
// It is pure and deterministic, as classify is: no files, no clock, no
// randomness, no state between calls. It types nothing and decides nothing
// about whether an answer is allowed; the watcher does, with a fresh capture
// before each key it sends (see Moves).
package answer

import (
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/digest"
)

// A Menu is a live dialog's choices, as the agent draws them.
type Menu struct {
	// Agent names the agent that drew the dialog, as classify does.
	Agent string
	// Question is the dialog's text above its options, verbatim as
	// classify read it for the relay (classify.DialogText.Question).
	Question string
	// Above is what the dialog draws over Question inside its own frame
	// (classify.DialogText.Above): the command a Gemini approval asks about.
	Above string
	// Step says which of several questions this dialog is, as it says so
	// itself: Claude Code's tab header ("←  ☐ Outputs  ☐ Target  ✔ Submit
	// →") or Codex's "Question 1/2 (2 unanswered)"; empty when it draws
	// neither. Enter answers the question on the screen; the dialog then
	// shows the next one (or its Submit tab), which is a new dialog with a
	// new Key, relayed and answered in turn.
	Step string
	// Options are the choices in drawn order.
	Options []Option
	// Esc says the dialog's hint line offers Esc, and EscAction what the
	// hint says it does ("cancel", "exit", "back", "interrupt"). An
	// option marked "(esc)" is an option, not this.
	Esc       bool
	EscAction string
	// Notes says the dialog takes a note typed after Tab with whichever
	// option is chosen (Codex's request_user_input: "tab to add notes").
	Notes bool
	// Amend says the dialog's hint offers Tab to amend the option the
	// cursor is on with the human's words (Claude Code's permission
	// prompt: "Tab to amend"); FieldOf says which option's field a reply
	// is typed into.
	Amend bool
}

// An Option is one choice of a Menu.
type Option struct {
	// Pos is the option's place in the menu, from 1, in drawn order.
	Pos int
	// Label is the option's own text, verbatim, without the cursor glyph,
	// its "N." number or its description. A label the pane wrapped over
	// several lines is joined with single spaces.
	Label string
	// Description is the text the agent draws under the option (an
	// AskUserQuestion's indented line) or beside it in a column (Codex's
	// request_user_input), its lines joined with single spaces.
	Description string
	// Number is the number drawn before the label, 0 when none is.
	Number int
	// Cursor says the selection cursor is on this option.
	Cursor bool
	// FreeText says choosing the option opens a text field for the
	// human's own words.
	FreeText bool
	// Widens says choosing the option widens what the agent may do
	// without asking (don't ask again, all edits this session, trust a
	// folder, bypass permissions): the relay asks for a second tap.
	Widens bool
}

// Why no Menu is read. Inspect returns one of these.
var (
	ErrNoDialog      = errorf("no live dialog on the screen")
	ErrLocalRule     = errorf("an operator's rule, not the agent's own chrome, found the dialog")
	ErrNoAgent       = errorf("the dialog is not recognised as an agent's own")
	ErrInputBox      = errorf("an input box is live with the dialog: keys could reach the box")
	ErrProse         = errorf("the options sit under a head of the transcript (an answer, a message): they may be prose")
	ErrUnreadable    = errorf("the dialog's lines do not read as one menu: lines that are no option stand above its first option")
	ErrNoOptions     = errorf("the dialog draws no options to choose from")
	ErrNoCursor      = errorf("no selection cursor is drawn on exactly one option")
	ErrHiddenOptions = errorf("the option list scrolls: some of its options are not on the screen")
	ErrMultiSelect   = errorf("a multi-select list: Enter toggles a checkbox, it does not answer")
	ErrSubmitsAll    = errorf("Enter submits the answers of other questions, which are not on the screen")
	ErrNotesOpen     = errorf("the dialog's notes field is open and holds the keyboard")
	ErrCutLabel      = errorf("an option's label is cut short by the pane (…): what it does is not on the screen")
	ErrStartup       = errorf("a screen the agent draws before or outside its composer (onboarding, a folder to trust, a key to use, a login, bypass mode, an update offer, a usage limit's choice): answered at the terminal, never from the chat")
)

// Read returns the live dialog's menu, when the screen's live dialog is one
// recognised from the agent's own chrome and a cursor and Enter can answer
// it; false when there is nothing answerable. Inspect says why.
func Read(r classify.Result) (Menu, bool) {
	m, err := Inspect(r)
	return m, err == nil
}

// Inspect reads the menu as Read does, and says why there is none: one of
// the Err values of this package.
func Inspect(r classify.Result) (Menu, error) {
	m, _, err := inspect(r, false)
	return m, err
}

// inspect is Inspect, with the dialog read; notes reads a dialog whose
// notes line is open, as the watcher reads it once it opened it itself.
func inspect(r classify.Result, notes bool) (Menu, *dialog, error) {
	switch {
	case r.Dialog == nil || r.State != classify.Question:
		return Menu{}, nil, ErrNoDialog
	case r.Source != "":
		return Menu{}, nil, ErrLocalRule
	}
	// A screen of an agent's start (the classifier says so) is answered at
	// the terminal, whoever's it is, read or not.
	if r.Startup {
		return Menu{}, nil, ErrStartup
	}
	t := tableOf(r.Agent)
	if t == nil {
		return Menu{}, nil, ErrNoAgent
	}
	d := t.read(r.Dialog)
	// Every agent's screens before or outside its composer (onboarding,
	// trust, a key, a login, a mode, an update, a model, a provider, full
	// access, an IDE) are answered at the terminal, whatever their shape
	// and wherever they are drawn: over a live composer
	// (real-codex/codex-171-100-full-access-confirm), under a title drawn
	// like a message (real-gemini/gemini-061-100-theme-dialog), with lines
	// that are no option (real-codex/codex-171-100-import-customize).
	if startupScreen(d) {
		return Menu{}, nil, ErrStartup
	}
	if r.HasBox || r.Region != classify.Dialog {
		return Menu{}, nil, ErrInputBox
	}
	if t.underHead(append(slices.Clone(d.question), d.stray...)) {
		return Menu{}, nil, ErrProse
	}
	if len(d.stray) > 0 {
		return Menu{}, nil, ErrUnreadable
	}
	for _, f := range t.refusals {
		if f.when(d) && !(notes && f.notesLine) {
			return Menu{}, nil, f.err
		}
	}
	if len(d.options) == 0 {
		return Menu{}, nil, ErrNoOptions
	}
	for _, o := range d.options {
		if hasAnyPrefix(o.Label, t.checkboxes) {
			return Menu{}, nil, ErrMultiSelect
		}
	}
	if d.hidden() {
		return Menu{}, nil, ErrHiddenOptions
	}
	cursors := 0
	for _, o := range d.options {
		if o.Cursor {
			cursors++
		}
	}
	if cursors != 1 {
		return Menu{}, nil, ErrNoCursor
	}
	m := Menu{
		Agent:    r.Agent,
		Question: r.Dialog.Question,
		Above:    r.Dialog.Above,
		Step:     d.step,
		Options:  d.options,
		Notes:    anyHint(d.hints, t.notes),
		Amend:    anyHint(d.hints, t.amend),
	}
	if t.buttons != nil {
		// The lines above the row of buttons: the row and the hints
		// beside it wrap with the pane's width, and the key must not.
		m.Question = strings.Join(d.question, "\n")
	}
	m.EscAction = escAction(d.hints)
	m.Esc = m.EscAction != ""
	for i := range m.Options {
		o := &m.Options[i]
		o.Pos = i + 1
		o.FreeText = hasAnyPrefix(o.Label, t.freeText)
		o.Widens = hasAnyPrefix(o.Label, t.widens)
	}
	return m, d, nil
}

// Highlighted returns the Pos of the option the cursor is on, 0 if none.
func Highlighted(m Menu) int {
	for i, o := range m.Options {
		if o.Cursor {
			return i + 1
		}
	}
	return 0
}

// Moves returns the keys, as tmux names them ("Up", "Down"; "Left",
// "Right" along a row of buttons), that move the
// cursor from the option it is on to option pos; none when it is there
// already. It never returns Enter: the watcher sends the moves, captures
// the screen again, checks that Read gives a Menu with the same Key whose
// Highlighted is pos, and only then presses Enter. The keys assume the
// cursor moves one option a key and does not wrap, which is how every
// agent here draws it; the check after the moves catches an agent that
// does otherwise.
func Moves(m Menu, pos int) ([]string, error) {
	if pos < 1 || pos > len(m.Options) {
		return nil, errorf("no option %d in a menu of %d", pos, len(m.Options))
	}
	at := Highlighted(m)
	if at == 0 {
		return nil, ErrNoCursor
	}
	prev, next := "Up", "Down"
	if t := tableOf(m.Agent); t != nil && t.next != "" {
		prev, next = t.prev, t.next
	}
	key, n := next, pos-at
	if n < 0 {
		key, n = prev, -n
	}
	keys := make([]string, n)
	for i := range keys {
		keys[i] = key
	}
	return keys, nil
}

// Key returns a digest naming the dialog, so that an answer accepted for
// one dialog is refused for another drawn in its place. It covers the agent,
// Above, Question, and every option's Label and Description in order, each
// with its white space collapsed and its box-drawing characters (rules,
// borders) dropped, so that the same dialog re-wrapped in a resized pane
// keeps its key. It does not cover the cursor, the numbers, the hint line
// (Codex's "option 4/5" follows the cursor) or the flags this package
// derives: moving the cursor keeps the key; changing any text of the dialog
// changes it. It is the hex SHA-256 of those texts, each length-prefixed.
func (m Menu) Key() string { return m.key(0) }

// key is Key, with the texts of option skip (from 1) left out; 0 leaves
// none out.
func (m Menu) key(skip int) string {
	h := digest.New()
	write := func(s string) {
		s = normalise(s)
		h.Write([]byte(strconv.Itoa(len(s))))
		h.Write([]byte{':'})
		h.Write([]byte(s))
	}
	write("answer.Menu.Key/1")
	write(m.Agent)
	write(m.Above)
	write(m.Question)
	for i, o := range m.Options {
		if i+1 == skip {
			write("answer.Menu.FieldKey/1: the field's row")
			continue
		}
		write(o.Label)
		write(o.Description)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// normalise collapses white space and drops words made only of box-drawing
// characters, which a pane draws as wide as it is.
func normalise(s string) string {
	var words []string
	for _, w := range strings.Fields(s) {
		if !boxDrawing(w) {
			words = append(words, w)
		}
	}
	return strings.Join(words, " ")
}

func boxDrawing(w string) bool {
	for _, r := range w {
		if r < 0x2500 || r > 0x257F {
			return false
		}
	}
	return true
}

// escAction returns what the hint lines say Esc does, or "".
func escAction(hints []string) string {
	for _, h := range hints {
		if m := escHint().FindStringSubmatch(h); m != nil {
			return strings.ToLower(m[1])
		}
	}
	return ""
}

func anyHint(hints []string, texts []string) bool {
	for _, h := range hints {
		h = strings.ToLower(h)
		for _, t := range texts {
			if strings.Contains(h, t) {
				return true
			}
		}
	}
	return false
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// column returns the screen column of byte offset i of line: the agents'
// glyphs here are each one column wide.
func column(line string, i int) int { return utf8.RuneCountInString(line[:i]) }
