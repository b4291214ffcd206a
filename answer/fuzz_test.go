package answer_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/omega-monitor/omega-monitor/answer"
	"github.com/omega-monitor/omega-monitor/classify"
)

// FuzzRead reads any capture, as the watcher will read a pane an agent (or
// whatever writes to the terminal) drew: a Menu, when there is one, is one
// the watcher can act on, and reading is deterministic.
func FuzzRead(f *testing.F) {
	for _, s := range []string{
		"❯ 1. Yes\n  2. No\n\nEsc to cancel\n",
		" ❯ No, exit\n   Yes, I accept\n\n Enter to confirm · Esc to cancel\n",
		"  › 1. A  a\n    2. B  b\n  option 1/2 | tab to add notes | enter to submit answer | esc to interrupt\n",
		"│ ● 1. Allow once │\n│   2. No (esc)   │\n╰─────────────────╯\n",
		"⏺ Pick:\n  ❯ 1. Yes\n    2. No\n",
	} {
		f.Add([]byte(s))
	}
	for _, p := range []string{"panes/claude-328-ask-question", "real/claude-manual-60-permission", "real-codex/codex-60-plan-question", "real-gemini/gemini-60-approval"} {
		data, err := os.ReadFile(filepath.Join("..", "golden", p+".pane"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, capture []byte) {
		r := classify.Classify(classify.ParseScreen(capture), classify.Options{})
		m, err := answer.Inspect(r)
		again, err2 := answer.Inspect(r)
		if diff := cmp.Diff(m, again); diff != "" || err != err2 {
			t.Fatalf("same screen, different readings:\n%s", diff)
		}
		if _, ok := answer.Read(r); ok != (err == nil) {
			t.Fatalf("Read says %v, Inspect %v", ok, err)
		}
		if err != nil {
			if len(m.Options) != 0 {
				t.Fatalf("refused (%v) with %d options", err, len(m.Options))
			}
			return
		}
		if r.HasBox || r.Agent == "" || len(m.Options) == 0 {
			t.Fatalf("a menu from a screen with box %v, agent %q, %d options", r.HasBox, r.Agent, len(m.Options))
		}
		at := answer.Highlighted(m)
		for i, o := range m.Options {
			if o.Pos != i+1 || o.Label == "" {
				t.Fatalf("option %d reads Pos %d, label %q", i+1, o.Pos, o.Label)
			}
			if o.Cursor != (o.Pos == at) {
				t.Fatalf("option %d cursor %v, Highlighted %d", o.Pos, o.Cursor, at)
			}
			keys, err := answer.Moves(m, o.Pos)
			if err != nil {
				t.Fatalf("Moves to %d: %v", o.Pos, err)
			}
			if got := answer.Highlighted(apply(t, m, keys)); got != o.Pos {
				t.Fatalf("Moves to %d reach %d", o.Pos, got)
			}
			if withCursor(m, o.Pos).Key() != m.Key() {
				t.Fatal("moving the cursor changed the key")
			}
		}
	})
}
