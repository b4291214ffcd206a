package classify_test

import (
	"os"
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
