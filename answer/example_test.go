package answer_test

import (
	"fmt"
	"strings"

	"github.com/omega-monitor/omega-monitor/answer"
	"github.com/omega-monitor/omega-monitor/classify"
)

// Read a permission dialog's menu, and the keys that take its cursor to
// "No". The watcher sends them, captures the screen again, checks that the
// dialog has the same Key and that Highlighted is 3, and only then presses
// Enter.
func Example() {
	pane := strings.Join([]string{
		"⏺ I'll clear the build output first.",
		"",
		strings.Repeat("─", 60),
		" Bash command",
		"",
		"   rm -rf build/",
		"   Remove the build directory",
		"",
		" Do you want to proceed?",
		" ❯ 1. Yes",
		"   2. Yes, and don't ask again for rm commands in /work/app",
		"   3. No",
		"",
		" Esc to cancel · Tab to amend",
	}, "\n")
	m, ok := answer.Read(classify.ClassifyText(pane, classify.Options{}))
	if !ok {
		fmt.Println("nothing to answer")
		return
	}
	for _, o := range m.Options {
		fmt.Printf("%d %q cursor=%v widens=%v\n", o.Pos, o.Label, o.Cursor, o.Widens)
	}
	fmt.Println("esc:", m.EscAction)
	keys, err := answer.Moves(m, 3)
	fmt.Println(keys, err)
	// Output:
	// 1 "Yes" cursor=true widens=false
	// 2 "Yes, and don't ask again for rm commands in /work/app" cursor=false widens=true
	// 3 "No" cursor=false widens=false
	// esc: cancel
	// [Down Down] <nil>
}

// A menu quoted in the agent's answer, above its live input box, is prose:
// there is nothing to answer.
func ExampleInspect() {
	pane := strings.Join([]string{
		"⏺ The dialog will look like this:",
		"",
		"  Do you want to proceed?",
		"  ❯ 1. Yes",
		"    2. No",
		"",
		strings.Repeat("─", 60),
		"❯ ",
		strings.Repeat("─", 60),
		"  ⏵⏵ accept edits on (shift+Tab to cycle)",
	}, "\n")
	r := classify.ClassifyText(pane, classify.Options{})
	_, err := answer.Inspect(r)
	fmt.Println(r.State, "·", err)
	// Output: STALLED · answer: no live dialog on the screen
}
