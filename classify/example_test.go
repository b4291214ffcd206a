package classify_test

import (
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/probe"
)

// Classify a captured pane read from a file, with the work probe's output.
func Example() {
	f, err := os.Open("../golden/panes/claude-c-idle-work7.pane")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	screen, err := classify.ReadScreen(f)
	if err != nil {
		log.Fatal(err)
	}
	r := classify.Classify(screen, classify.Options{
		Work:        classify.WorkReading(probe.Read("7", true)),
		WorkPresent: true,
	})
	fmt.Println(r.State, "·", r.Agent)
	// Output: STALLED · Claude Code
}

// Explain says which rule decided, where it read and what it found.
func ExampleResult_Explain() {
	pane := strings.Join([]string{
		"⏺ Running the suite.",
		"",
		"✻ Compiling… (38s · ↑ 1.1k tokens)",
		"",
		strings.Repeat("─", 40),
		"❯ ",
		strings.Repeat("─", 40),
		"  ⏵⏵ accept edits on (shift+Tab to cycle)",
	}, "\n")
	fmt.Print(classify.ClassifyText(pane, classify.Options{}).Explain())
	// Output:
	// WORKING: spinner line (a glyph, a gerund ending in …, an optional meter)
	//   agent:    Claude Code
	//   region:   the block directly above the input box, line 3 of 8
	//   evidence: line 3: ✻ Compiling… (38s · ↑ 1.1k tokens)
}

// echoes is a Masker: it hides the text the watcher typed itself.
// ledger.Matcher is the real one, matching by content across wraps.
type echoes []string

func (e echoes) Mask(line string) string {
	for _, s := range e {
		line = strings.ReplaceAll(line, s, strings.Repeat(" ", len(s)))
	}
	return line
}

// Plug in a ledger: an echo of the watcher's own nudge is not read as the
// screen's content, so a nudge that mentions a dialog raises no QUESTION.
func ExampleOptions_ledger() {
	nudge := "Enter to select · ↑/↓ to navigate · Esc to cancel"
	pane := "⏺ Done.\n\n" + nudge + "\n"
	without := classify.ClassifyText(pane, classify.Options{})
	with := classify.ClassifyText(pane, classify.Options{Ledger: echoes{nudge}})
	fmt.Println(without.State, with.State)
	// Output: QUESTION STALLED
}
