package answer

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/omega-monitor/omega-monitor/classify"
)

// This file reads a dialog drawn as a row of buttons side by side
// (OpenCode's permission: "Allow once   Allow always   Reject"), where no
// glyph marks the selected button: the agent lights it with a background
// colour of its own. Only a capture taken with its colours (capture-pane
// -e, as the watcher takes them) shows which one that is; a plain capture
// yields no cursor, and no Menu.

// readButtons cuts a dialog into the question above its row of buttons,
// the buttons, and the hints beside and under them. The row must start
// with one of the table's button sets, whole and in order; a row that
// starts with a set's first label and holds less of it (a pane too narrow
// for the row) is read as cut. The selected button is the one whose
// background is a colour of its own, the others drawn on the row's.
func (t *table) readButtons(dt *classify.DialogText) *dialog {
	d := &dialog{}
	if dt.Hint != "" {
		d.hints = append(d.hints, dt.Hint)
	}
	d.under = len(d.hints)
	row, set := -1, []string(nil)
	var cells []cell
	for i, l := range dt.Rows {
		fs := t.cells(l.Text)
		if len(fs) == 0 {
			continue
		}
		for _, s := range t.buttons {
			if fs[0].text != s[0] {
				continue
			}
			if row >= 0 {
				// Two rows of buttons: which one the keys reach is not
				// on the screen.
				d.stray = append(d.stray, l.Text)
				continue
			}
			row, set, cells = i, s, fs
		}
	}
	if row < 0 {
		d.question = t.unframe(dt.Rows)
		return d
	}
	d.question = trimBlank(t.unframe(dt.Rows[:row]))
	if len(cells) < len(set) || !slices.Equal(texts(cells[:len(set)]), set) {
		d.cut = true
		return d
	}
	backs := dt.Rows[row].Backs
	for i, f := range cells[:len(set)] {
		d.options = append(d.options, Option{Label: f.text, Cursor: lit(backs, cells[:len(set)], i)})
		d.rows = append(d.rows, []string{f.text})
	}
	if rest := texts(cells[len(set):]); len(rest) > 0 {
		d.hints = append(d.hints, strings.Join(rest, "  "))
	}
	for _, l := range t.unframe(dt.Rows[row+1:]) {
		if l != "" {
			d.hints = append(d.hints, l)
		}
	}
	return d
}

// A cell is a stretch of a row between gaps of two spaces or more, with
// the rune column of Text where it starts.
type cell struct {
	text string
	col  int
}

func texts(fs []cell) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.text
	}
	return out
}

// cells splits a line, its frame taken off, at its gaps of two spaces or
// more.
func (t *table) cells(line string) []cell {
	rest, col := t.unframeLine(line)
	var out []cell
	for rest != "" {
		trimmed := strings.TrimLeft(rest, " ")
		col += len(rest) - len(trimmed)
		rest = trimmed
		if rest == "" {
			break
		}
		end := strings.Index(rest, "  ")
		if end < 0 {
			end = len(rest)
		}
		out = append(out, cell{text: rest[:end], col: col})
		col += utf8.RuneCountInString(rest[:end])
		rest = rest[end:]
	}
	return out
}

// unframeLine takes the frame glyph the agent draws down the dialog's left
// side off a line, with the spaces around it; col is the rune column of
// what is left.
func (t *table) unframeLine(line string) (rest string, col int) {
	rest = strings.TrimLeft(line, " ")
	if t.frame != "" {
		rest = strings.TrimPrefix(rest, t.frame)
	}
	trimmed := strings.TrimLeft(rest, " ")
	return trimmed, utf8.RuneCountInString(line) - utf8.RuneCountInString(trimmed)
}

// unframe returns the lines' texts, their frame taken off.
func (t *table) unframe(lines []classify.Line) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i], _ = t.unframeLine(l.Text)
	}
	return out
}

// lit says button i of the row is the selected one: it is drawn on a
// colour of its own, and every other button on the row's own background
// (the colour of the gap left of the first button).
func lit(backs []classify.Back, buttons []cell, i int) bool {
	if len(buttons) < 2 || buttons[0].col < 2 {
		return false
	}
	row := colourAt(backs, buttons[0].col-2)
	for j, b := range buttons {
		if (colourAt(backs, b.col) == row) == (j == i) {
			return false
		}
	}
	return true
}

// colourAt is the background under rune column col, "" for the default
// (and for a capture that carried no colours).
func colourAt(backs []classify.Back, col int) string {
	for _, b := range backs {
		if b.From <= col && col < b.To {
			return b.Colour
		}
	}
	return ""
}
