package answer_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/omega-monitor/omega-monitor/answer"
	"github.com/omega-monitor/omega-monitor/classify"
)

// paneLines returns a golden pane's text, one line a row, without escape
// sequences, as classify reads it.
func paneLines(t *testing.T, name string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "golden", name+".pane"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range classify.ParseScreen(data).Lines {
		out = append(out, l.Text)
	}
	return out
}

func inspectLines(lines []string) (answer.Menu, error) {
	r := classify.Classify(classify.ParseScreen([]byte(strings.Join(lines, "\n")+"\n")), classify.Options{})
	return answer.Inspect(r)
}

// edit returns lines with line i (counted from the first line that
// contains at) replaced by f of it.
func edit(t *testing.T, lines []string, at string, f func(string) string) []string {
	t.Helper()
	out := append([]string(nil), lines...)
	for i, l := range out {
		if strings.Contains(l, at) {
			out[i] = f(l)
			return out
		}
	}
	t.Fatalf("no line holds %q", at)
	return nil
}

// TestQwenScrollbar: Qwen Code draws its transcript's scrollbar in the
// pane's last column, beside its approval's options. Taken off, the
// options read as they do in a pane without it; a scrollbar missing from
// one line of the options is no scrollbar, and the dialog is refused, not
// read with the glyphs in its labels.
func TestQwenScrollbar(t *testing.T) {
	lines := paneLines(t, "real-qwen/qwen-80-approval")
	m, err := inspectLines(lines)
	if err != nil {
		t.Fatal(err)
	}
	var plain []string
	for _, l := range lines {
		plain = append(plain, strings.TrimRight(strings.TrimRight(strings.TrimRight(l, " "), "█│"), " "))
	}
	want, err := inspectLines(plain)
	if err != nil {
		t.Fatalf("the pane without its scrollbar: %v", err)
	}
	if diff := cmp.Diff(want.Options, m.Options); diff != "" {
		t.Errorf("options (-without the scrollbar +with it):\n%s", diff)
	}
	broken := edit(t, lines, "2. Always allow", func(l string) string { return strings.Replace(l, "█", " ", 1) })
	if m, err := inspectLines(broken); err == nil {
		t.Errorf("a scrollbar missing from an option's line: read as %+v", m.Options)
	}
}

// TestQwenCutLabel: a label cut short by the pane ("…") is refused, even
// in a wide pane: what the option does is not on the screen.
func TestQwenCutLabel(t *testing.T) {
	lines := edit(t, paneLines(t, "panes/qwen-0-24-4-80-permission"), "3. Always allow", func(l string) string {
		return strings.Replace(l, "commands for this user", "comm…", 1)
	})
	if _, err := inspectLines(lines); !errors.Is(err, answer.ErrCutLabel) {
		t.Errorf("Inspect = %v, want %v", err, answer.ErrCutLabel)
	}
}

// TestCopilotLastOptionAtAnotherColumn: Copilot CLI at 40 columns draws
// its last option's number a column left of the others'. That slack is
// taken for the next number only: a line two columns left, or one column
// left with another number, is not read as an option, and a menu with a
// numbered line under its options is refused, not offered without it.
func TestCopilotLastOptionAtAnotherColumn(t *testing.T) {
	lines := paneLines(t, "real-copilot/copilot-40-approval")
	m, err := inspectLines(lines)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(m.Options); got != 3 {
		t.Fatalf("%d options read, want 3: %+v", got, m.Options)
	}
	for _, tc := range []struct {
		name string
		f    func(string) string
	}{
		{"two columns left", func(l string) string { return strings.Replace(l, "│  3. No", "│ 3. No ", 1) }},
		{"the wrong number", func(l string) string { return strings.Replace(l, "3. No", "4. No", 1) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := inspectLines(edit(t, lines, "3. No, and tell", tc.f))
			if !errors.Is(err, answer.ErrHiddenOptions) {
				t.Errorf("Inspect = %v, want %v; options %+v", err, answer.ErrHiddenOptions, m.Options)
			}
		})
	}
}

// TestQwenProse: options drawn under the model's answer ("◆︎ ") are prose
// that imitates Qwen Code's approval, whatever the classifier said.
func TestQwenProse(t *testing.T) {
	for _, name := range []string{"panes/qwen-0-24-4-80-permission", "real-qwen/qwen-80-approval"} {
		lines := edit(t, paneLines(t, name), "Allow execution of:", func(l string) string {
			return strings.Replace(l, "   Allow execution of:", "  ◆︎ Allow execution of:", 1)
		})
		if _, err := inspectLines(lines); !errors.Is(err, answer.ErrProse) {
			t.Errorf("%s: Inspect = %v, want %v", name, err, answer.ErrProse)
		}
	}
}
