package codex_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/codex"
	"github.com/omega-monitor/omega-monitor/internal/expect"
	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
	"github.com/omega-monitor/omega-monitor/internal/termagent"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// NotesWords are the words typed into the notes field in the captures:
// quotes, a dollar sign, a semicolon and letters beyond ASCII.
const NotesWords = `use CSV; keep "quoted" $HOME as is, ünïcödé ✓ and wrap this note past sixty columns`

// TestCaptureNotes drives the real Codex CLI's request_user_input to its
// notes field and writes each moment into golden/panes as
// codex-171-WIDTH-notes-*.pane, with its .want (go test ./classify -run
// TestGolden -update fills in the agent, rule, question and options). It
// runs only with -capture. It fails where Codex does what the field's
// reading (package answer, agents.go) does not expect: Tab on the command
// approval opens nothing; Tab on the question opens the notes line under
// the options; the words show there, the cursor stays on the option; Enter
// sends the option and the words together.
func TestCaptureNotes(t *testing.T) {
	if !*termagent.CaptureFlag {
		t.Skip("captures only with -capture")
	}
	bin := codex.Pin.Binary(t)
	dir := filepath.Join("..", "..", "golden", "panes")
	for _, width := range []int{60, 100} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			t.Parallel()
			api := fakeapi.NewResponses(t, rules()...)
			s := codex.Start(t, testenv.Tmux(t), codex.Config{Binary: bin, API: api.URL, Width: width, Height: 40, Name: fmt.Sprint("notes", width)})
			s.WaitFor(t, time.Minute, "the composer", codex.Idle)
			save := func(name string, state classify.State, ok func(string) bool, why string) {
				t.Helper()
				snap := s.Settle(t, termagent.StepTimeout, name, true, ok)
				w := expect.Want{State: state.String(), Work: "7", HasWork: true,
					Why: fmt.Sprintf("real Codex CLI %s, %d columns: %s", codex.Version, width, why)}
				base := filepath.Join(dir, fmt.Sprintf("codex-171-%d-notes-%s", width, name))
				if err := os.WriteFile(base+".pane", []byte(snap.Plain), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(base+".want", []byte(w.Format()), 0o644); err != nil {
					t.Fatal(err)
				}
			}

			// The command approval takes no notes: Tab changes nothing.
			s.Type(t, "please "+triggerEscalate)
			before := s.Settle(t, time.Minute, "the approval", true, termagent.Contains("Would you like to run the following command?")).Plain
			s.Keys(t, "Tab")
			time.Sleep(2 * time.Second)
			if after := s.Capture(t); after != before || strings.Contains(after, "notes") {
				t.Errorf("Tab changed the approval dialog:\nbefore:\n%s\nafter:\n%s", before, after)
			}
			s.Keys(t, "Escape")
			s.WaitFor(t, time.Minute, "the composer", codex.Idle)

			s.Keys(t, "BTab")
			s.WaitFor(t, time.Minute, "Plan mode", termagent.Contains("Plan mode"))
			s.Type(t, "please "+fakeapi.TriggerAsk)
			s.WaitFor(t, time.Minute, "the question", termagent.Contains("enter to submit answer"))
			s.Keys(t, "Down")
			s.Keys(t, "Down")
			save("none", classify.Question, termagent.Contains("› 3. None of the above", "tab to add notes"),
				`the cursor on request_user_input's own last option, "3. None of the above  Optionally, add details in notes (tab)"; the notes line is closed`)
			s.Keys(t, "Tab")
			save("open", classify.Question, termagent.Contains("› Add notes", "tab or esc to clear notes"),
				`Tab opened the notes line under the options, "› Add notes" (the placeholder, dim); the cursor stays on "3. None of the above"; the hint says "tab or esc to clear notes | enter to submit answer"`)
			s.Tmux.Run(t, "send-keys", "-t", s.Pane, "-l", NotesWords)
			save("typed", classify.Question, termagent.Contains("columns", "tab or esc to clear notes"),
				"the words typed into the notes line (at 60 columns wrapped, the rest under it four columns in); the cursor still on the option")
			s.Keys(t, "Up")
			save("typed-away", classify.Question, termagent.Contains("› 2. SQLite", "columns"),
				"Up while the notes line holds the words: the cursor moves to 2. SQLite and the notes stay, to go with whichever option Enter submits")
			s.Keys(t, "Down")
			s.WaitFor(t, time.Minute, "the cursor back on 3", termagent.Contains("› 3. None of the above"))
			s.Keys(t, "Enter")
			save("answered", classify.Stalled, termagent.Contains("note: use CSV", "Worked for"),
				`Enter sent "None of the above" with the words: "answer: None of the above" and "note: …" in the transcript; the turn ended`)
			var got string
			for _, r := range api.Requests() {
				for _, res := range r.Results {
					if strings.Contains(res, "user_note") {
						got = res
					}
				}
			}
			want := `{"answers":{"q1":{"answers":["None of the above","user_note: ` + strings.ReplaceAll(NotesWords, `"`, `\"`) + `"]}}}`
			if got != want {
				t.Errorf("the model heard %s\nwant %s", got, want)
			}
		})
	}
}
