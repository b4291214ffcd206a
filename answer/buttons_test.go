package answer_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/omega-monitor/omega-monitor/answer"
	"github.com/omega-monitor/omega-monitor/classify"
)

// opencodeRow draws OpenCode's row of buttons as its capture with colours
// does: the frame, then each label on its own background, "" for the
// dialog's.
func opencodeRow(labels []string, backs []string) string {
	var b strings.Builder
	b.WriteString("  \x1b[38;5;215m\x1b[48;5;233m┃\x1b[38;5;15m\x1b[48;5;234m  ")
	for i, l := range labels {
		bg := "234"
		if i < len(backs) && backs[i] != "" {
			bg = backs[i]
		}
		fmt.Fprintf(&b, "\x1b[48;5;%sm \x1b[38;5;8m%s\x1b[38;5;15m \x1b[48;5;234m  ", bg, l)
	}
	b.WriteString("\x1b[38;5;255mctrl+f \x1b[38;5;8mfullscreen\x1b[38;5;15m  \x1b[48;5;232m  ")
	return b.String()
}

// withRow returns the real OpenCode approval, captured with colours, its
// row of buttons replaced by row.
func withRow(t *testing.T, row string) classify.Result {
	t.Helper()
	pane, err := os.ReadFile("../golden/real-opencode/opencode-80-approval.e.pane")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(pane), "\n")
	n := 0
	for i, l := range lines {
		if strings.Contains(l, "Allow once") {
			lines[i] = row
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the capture has %d rows of buttons, want 1", n)
	}
	return classify.Classify(classify.ParseScreen([]byte(strings.Join(lines, "\n"))), classify.Options{})
}

var opencodeButtons = []string{"Allow once", "Allow always", "Reject"}

// TestButtonsLitRead: whichever button is lit, in any colour, Highlighted
// names it, the dialog keeps its key, and Moves reaches each other button
// with Left and Right.
func TestButtonsLitRead(t *testing.T) {
	var key string
	for lit := 1; lit <= 3; lit++ {
		for _, colour := range []string{"215", "2;250;178;131", "4"} {
			backs := make([]string, 3)
			backs[lit-1] = colour
			row := opencodeRow(opencodeButtons, backs)
			if colour == "4" {
				// A plain SGR background (44), not an extended one.
				row = strings.Replace(row, "\x1b[48;5;4m", "\x1b[44m", 1)
			}
			m, err := answer.Inspect(withRow(t, row))
			if err != nil {
				t.Fatalf("lit %d in %s: %v", lit, colour, err)
			}
			if got := answer.Highlighted(m); got != lit {
				t.Errorf("lit %d in %s: Highlighted = %d", lit, colour, got)
			}
			if key == "" {
				key = m.Key()
			} else if m.Key() != key {
				t.Errorf("lit %d in %s: the key changed with the lit button", lit, colour)
			}
			for pos := 1; pos <= 3; pos++ {
				keys, err := answer.Moves(m, pos)
				if err != nil {
					t.Fatal(err)
				}
				want := []string{}
				for i := lit; i < pos; i++ {
					want = append(want, "Right")
				}
				for i := lit; i > pos; i-- {
					want = append(want, "Left")
				}
				if diff := cmp.Diff(want, keys); diff != "" {
					t.Errorf("lit %d, to %d (-want +got):\n%s", lit, pos, diff)
				}
			}
		}
	}
}

// TestButtonsRefused attacks the reader of a row of buttons: no Menu unless
// exactly one button is lit and the whole row is on the screen, in the
// agent's own dialog.
func TestButtonsRefused(t *testing.T) {
	for _, tt := range []struct {
		name string
		row  string
		want error
	}{
		{"none lit", opencodeRow(opencodeButtons, nil), answer.ErrNoCursor},
		{"every one lit alike", opencodeRow(opencodeButtons, []string{"215", "215", "215"}), answer.ErrNoCursor},
		{"two lit alike", opencodeRow(opencodeButtons, []string{"215", "215", ""}), answer.ErrNoCursor},
		{"each its own colour", opencodeRow(opencodeButtons, []string{"215", "33", ""}), answer.ErrNoCursor},
		{"lit by reverse video only", strings.Replace(opencodeRow(opencodeButtons, nil), "\x1b[48;5;234m \x1b[38;5;8mReject", "\x1b[7m \x1b[38;5;8mReject", 1), nil},
		{"no colours at all", "  ┃   Allow once   Allow always   Reject  ctrl+f fullscreen", answer.ErrNoCursor},
		{"a button cut short", opencodeRow([]string{"Allow once", "Allow always", "Rej"}, []string{"215"}), answer.ErrCutLabel},
		{"a button missing", opencodeRow([]string{"Allow once", "Allow always"}, []string{"215"}), answer.ErrCutLabel},
		{"a button of another name", opencodeRow([]string{"Allow once", "Allow forever", "Reject"}, []string{"215"}), answer.ErrCutLabel},
		{"two rows of buttons", opencodeRow(opencodeButtons, []string{"215"}) + "\n" + opencodeRow(opencodeButtons, []string{"", "215"}), answer.ErrUnreadable},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, err := answer.Inspect(withRow(t, tt.row))
			if tt.want == nil {
				// Reverse video draws the foreground behind the text: a
				// colour of its own, lit.
				if err != nil || answer.Highlighted(m) != 3 {
					t.Errorf("Inspect = %v, Highlighted %d; want Reject lit", err, answer.Highlighted(m))
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("Inspect = %v (%+v), want %v", err, m.Options, tt.want)
			}
		})
	}
}

// TestButtonsInProse: a row of OpenCode's labels written by the model in
// its answer, above a live input box, is no dialog to answer, whatever its
// colours.
func TestButtonsInProse(t *testing.T) {
	pane, err := os.ReadFile("../golden/real-opencode/opencode-80-ran-command.e.pane")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(pane), "\n")
	for i, l := range lines {
		if strings.Contains(l, "I will run a command.") {
			lines[i] = "     \x1b[48;5;215m Allow once \x1b[48;5;234m   Allow always   Reject"
		}
	}
	r := classify.Classify(classify.ParseScreen([]byte(strings.Join(lines, "\n"))), classify.Options{})
	if m, err := answer.Inspect(r); err == nil {
		t.Errorf("a menu read from the transcript: %+v", m)
	}
}
