package classify_test

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/omega-monitor/omega-monitor/classify"
)

// TestDialogAbove checks DialogText.Above: a Gemini CLI approval draws the
// command it asks about in a box nested in its dialog, over the question, so
// the cut for Question starts under it; Above carries it. A dialog with no
// nested box over its question has none.
func TestDialogAbove(t *testing.T) {
	tests := []struct {
		pane string
		want string
	}{
		{"../golden/real-gemini/gemini-60-approval.pane",
			"? Shell  touch omega-bash-ran\n│ touch omega-bash-ran                                 │"},
		{"../golden/real-gemini/gemini-60-approval.e.pane",
			"? Shell  touch omega-bash-ran\n│ touch omega-bash-ran                                 │"},
		{"../golden/panes/gemini-dialog-allow.pane", ""},
		{"../golden/panes/claude-328-permission.pane", ""},
		{"../golden/real-codex/codex-60-approval.pane", ""},
	}
	for _, tt := range tests {
		data, err := os.ReadFile(tt.pane)
		if err != nil {
			t.Fatal(err)
		}
		r := classify.Classify(classify.ParseScreen(data), classify.Options{})
		if r.Dialog == nil {
			t.Fatalf("%s: no dialog read", tt.pane)
		}
		if diff := cmp.Diff(tt.want, r.Dialog.Above); diff != "" {
			t.Errorf("%s: Above (-want +got):\n%s", tt.pane, diff)
		}
	}
}

// TestDialogCursorBelowARule: AskUserQuestion draws a rule (a blank line,
// in older builds) between "Type something" and "Chat about this". With
// the cursor moved below it, the options above it are still the menu's, and
// the question reads as it did with the cursor on the first option.
func TestDialogCursorBelowARule(t *testing.T) {
	for _, name := range []string{"claude-328-ask-question", "claude-d-esc-question"} {
		data, err := os.ReadFile("../golden/panes/" + name + ".pane")
		if err != nil {
			t.Fatal(err)
		}
		before := classify.Classify(classify.ParseScreen(data), classify.Options{})
		var text []string
		for _, l := range classify.ParseScreen(data).Lines {
			line := l.Text
			switch {
			case strings.HasPrefix(line, "❯ 1. "):
				line = "  " + strings.TrimPrefix(line, "❯ ")
			case strings.HasPrefix(line, "  4. Chat about this"):
				line = "❯ " + strings.TrimPrefix(line, "  ")
			}
			text = append(text, line)
		}
		after := classify.Classify(classify.ParseScreen([]byte(strings.Join(text, "\n"))), classify.Options{})
		if after.State != classify.Question || after.Dialog == nil {
			t.Fatalf("%s, cursor on 4: %v", name, after.State)
		}
		if diff := cmp.Diff(before.Dialog.Question, after.Dialog.Question); diff != "" {
			t.Errorf("%s: the cursor on option 4 changed the question (-before +after):\n%s", name, diff)
		}
		if len(after.Dialog.Options) != len(before.Dialog.Options) {
			t.Errorf("%s: %d option lines with the cursor on 1, %d on 4:\n%q", name, len(before.Dialog.Options), len(after.Dialog.Options), after.Dialog.Options)
		}
	}
}
