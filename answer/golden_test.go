package answer_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/omega-monitor/omega-monitor/answer"
	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/expect"
	"github.com/omega-monitor/omega-monitor/ledger"
	"gotest.tools/v3/golden"
)

// The corpus: the hand-built and adversarial panes, and the captures of the
// real Claude Code, Codex CLI, Gemini CLI, Qwen Code, Pi and Copilot CLI. Each QUESTION pane either
// yields a Menu, written to testdata/DIR/NAME.golden (a capture's .e twin,
// taken with escape sequences, must yield the same Menu and shares its
// file), or is listed in notAnswerable with the reason.
var corpusDirs = []string{"panes", "real", "real-codex", "real-gemini", "real-qwen", "real-pi", "real-copilot", "real-opencode"}

// litByColour lists, by golden name, the panes of a dialog whose selected
// option is shown by its colour alone (OpenCode's row of buttons): the
// plain capture, listed in notAnswerable, has no cursor; its .e twin,
// taken with the colours, yields a Menu, written to NAME.e.golden.
var litByColour = map[string]bool{
	"real-opencode/opencode-40-approval": true,
	"real-opencode/opencode-80-approval": true,
}

// A questionPane is a QUESTION pane of the corpus, classified.
type questionPane struct {
	dir, name string // name without .pane
	pane      []byte
	r         classify.Result
}

// twin is the name of the golden file: a .e capture shares its twin's.
func (p questionPane) twin() string { return p.dir + "/" + strings.TrimSuffix(p.name, ".e") }

func questionPanes(t *testing.T) []questionPane {
	t.Helper()
	var out []questionPane
	for _, dir := range corpusDirs {
		wants, err := filepath.Glob(filepath.Join("..", "golden", dir, "*.want"))
		if err != nil {
			t.Fatal(err)
		}
		for _, wp := range wants {
			w, err := expect.Read(wp)
			if err != nil {
				t.Fatal(err)
			}
			if w.State != "QUESTION" {
				continue
			}
			base := strings.TrimSuffix(wp, ".want")
			pane, err := os.ReadFile(base + ".pane")
			if err != nil {
				t.Fatal(err)
			}
			opt := classify.Options{}
			if len(w.Ledger) > 0 {
				opt.Ledger = ledger.NewMatcher(w.Ledger...)
			}
			if data, err := os.ReadFile(base + ".rules.json"); err == nil {
				if opt.Local, err = classify.ParseLocal(data, base+".rules.json"); err != nil {
					t.Fatal(err)
				}
			}
			r := classify.Classify(classify.ParseScreen(pane), opt)
			if r.State != classify.Question {
				t.Fatalf("%s: classify says %v, its case says QUESTION", wp, r.State)
			}
			out = append(out, questionPane{dir: dir, name: filepath.Base(base), pane: pane, r: r})
		}
	}
	return out
}

// notAnswerable lists the QUESTION panes of the corpus that yield no Menu,
// by their golden name (a .e twin counts with its pane), with the reason
// Inspect must give and why that is right.
var notAnswerable = map[string]struct {
	err error
	why string
}{
	// Claude Code's AskUserQuestion with multiSelect: "[ ]" checkboxes,
	// Enter toggles one, and a Next row moves on.
	"panes/GOLDEN-question-real":            {answer.ErrMultiSelect, "AskUserQuestion, multi-select checkboxes"},
	"real/claude-auto-100-question-many":    {answer.ErrMultiSelect, "AskUserQuestion of two questions, multi-select checkboxes"},
	"real/claude-auto-160-question-many":    {answer.ErrMultiSelect, "AskUserQuestion of two questions, multi-select checkboxes"},
	"real/claude-auto-60-question-many":     {answer.ErrMultiSelect, "AskUserQuestion of two questions, multi-select checkboxes"},
	"real/claude-bypass-100-question-many":  {answer.ErrMultiSelect, "AskUserQuestion of two questions, multi-select checkboxes"},
	"real/claude-bypass-160-question-many":  {answer.ErrMultiSelect, "AskUserQuestion of two questions, multi-select checkboxes"},
	"real/claude-bypass-60-question-many":   {answer.ErrMultiSelect, "AskUserQuestion of two questions, multi-select checkboxes"},
	"real/claude-manual-100-question-many":  {answer.ErrMultiSelect, "AskUserQuestion of two questions, multi-select checkboxes"},
	"real/claude-manual-160-question-many":  {answer.ErrMultiSelect, "AskUserQuestion of two questions, multi-select checkboxes"},
	"real/claude-manual-60-question-many":   {answer.ErrMultiSelect, "AskUserQuestion of two questions, multi-select checkboxes"},
	"real/claude-auto-100-auto-check":       {answer.ErrNoOptions, "auto mode's check notice: keys named in its hint line (Enter, shift+Tab, Esc), no options"},
	"real/claude-auto-160-auto-check":       {answer.ErrNoOptions, "auto mode's check notice: keys named in its hint line, no options"},
	"real/claude-auto-60-auto-check":        {answer.ErrNoOptions, "auto mode's check notice: keys named in its hint line, no options"},
	"panes/codex-allow-command-old":         {answer.ErrNoOptions, "old Codex approval: letter keys on one line (Yes (y) Always (a) …), no cursor menu"},
	"real-gemini/gemini-120-api-key":        {answer.ErrNoOptions, "Gemini's API key entry: a secret's text field, never typed from a chat"},
	"real-gemini/gemini-60-api-key":         {answer.ErrNoOptions, "Gemini's API key entry: a secret's text field, never typed from a chat"},
	"panes/codex-ask-hidden-options-40":     {answer.ErrHiddenOptions, "Codex request_user_input scrolled: options 2-4 of 5 drawn"},
	"panes/codex-ask-hidden-options-80":     {answer.ErrHiddenOptions, "Codex request_user_input scrolled: options 2-4 of 5 drawn"},
	"panes/codex-ask-multiline-approval-40": {answer.ErrHiddenOptions, "Codex request_user_input: option 1/3, two drawn"},
	"panes/codex-ask-multiline-approval-80": {answer.ErrHiddenOptions, "Codex request_user_input: option 1/3, two drawn"},
	"panes/codex-ask-multi-last-40":         {answer.ErrSubmitsAll, "Codex's last question of two: Enter submits all answers"},
	"panes/codex-ask-multi-last-80":         {answer.ErrSubmitsAll, "Codex's last question of two: Enter submits all answers"},
	"panes/codex-ask-notes-visible-40":      {answer.ErrNotesOpen, "Codex's notes field open under a radio list"},
	"panes/codex-ask-notes-visible-80":      {answer.ErrNotesOpen, "Codex's notes field open under a radio list"},
	"panes/codex-ask-notes-with-text-40":    {answer.ErrNotesOpen, "Codex's notes field open, holding a human's text"},
	"panes/codex-ask-notes-with-text-80":    {answer.ErrNotesOpen, "Codex's notes field open, holding a human's text"},
	// The real Codex 0.171's notes line, open under the options: Enter
	// would send what it holds with the option, and Tab clear it.
	"panes/codex-171-100-notes-open":                  {answer.ErrNotesOpen, "Codex 0.171's notes line open, empty"},
	"panes/codex-171-60-notes-open":                   {answer.ErrNotesOpen, "Codex 0.171's notes line open, empty"},
	"panes/codex-171-100-notes-typed":                 {answer.ErrNotesOpen, "Codex 0.171's notes line open, holding words"},
	"panes/codex-171-60-notes-typed":                  {answer.ErrNotesOpen, "Codex 0.171's notes line open, holding words (wrapped)"},
	"panes/codex-171-100-notes-typed-away":            {answer.ErrNotesOpen, "Codex 0.171's notes line holding words, the cursor moved to another option"},
	"panes/codex-171-60-notes-typed-away":             {answer.ErrNotesOpen, "Codex 0.171's notes line holding words, the cursor moved to another option"},
	"panes/codex-ask-multi-first-40":                  {answer.ErrNoCursor, "Codex radio list: the cursor is not drawn"},
	"panes/codex-ask-multi-first-80":                  {answer.ErrNoCursor, "Codex radio list: the cursor is not drawn"},
	"panes/codex-ask-options-radio-40":                {answer.ErrNoCursor, "Codex radio list: the cursor is not drawn"},
	"panes/codex-ask-options-radio-80":                {answer.ErrNoCursor, "Codex radio list: the cursor is not drawn"},
	"panes/codex-ask-scrolling-options-40":            {answer.ErrNoCursor, "Codex radio list, (x) on a choice: the cursor is not drawn"},
	"panes/codex-ask-scrolling-options-80":            {answer.ErrNoCursor, "Codex radio list, (x) on a choice: the cursor is not drawn"},
	"panes/codex-ask-tight-height-40":                 {answer.ErrNoCursor, "Codex radio list: the cursor is not drawn"},
	"panes/codex-ask-tight-height-80":                 {answer.ErrNoCursor, "Codex radio list: the cursor is not drawn"},
	"panes/codex-ask-wrapped-options-40":              {answer.ErrNoCursor, "Codex radio list, (x) on a choice: the cursor is not drawn"},
	"panes/codex-ask-wrapped-options-80":              {answer.ErrNoCursor, "Codex radio list, (x) on a choice: the cursor is not drawn"},
	"panes/codex-question-radio-short":                {answer.ErrNoCursor, "Codex radio list, (•) on a choice: the cursor is not drawn"},
	"panes/frame-ask-above-box":                       {answer.ErrInputBox, "a dialog frame drawn over a live input box (issue 10.4)"},
	"panes/frame-hint-only-above-box":                 {answer.ErrInputBox, "a dialog's hint line left over a live input box"},
	"panes/frame-options-no-hint-above-box":           {answer.ErrInputBox, "a dialog frame drawn over a live input box"},
	"panes/frame-permission-above-box":                {answer.ErrInputBox, "a dialog frame drawn over a live input box"},
	"panes/frame-permission-glued-to-box":             {answer.ErrInputBox, "a dialog frame glued to a live input box"},
	"panes/frame-question-line-only-above-box":        {answer.ErrInputBox, "a dialog's question line left over a live input box"},
	"panes/frameless-dialog-cursor-moved":             {answer.ErrInputBox, "a dialog with no edge over a live input box"},
	"panes/frameless-dialog-described-options":        {answer.ErrInputBox, "a dialog with no edge over a live input box"},
	"panes/frameless-dialog-plan":                     {answer.ErrInputBox, "a dialog with no edge over a live input box"},
	"panes/frameless-dialog-proceed":                  {answer.ErrInputBox, "a dialog with no edge over a live input box"},
	"panes/frameless-dialog-two-options":              {answer.ErrInputBox, "a dialog with no edge over a live input box"},
	"panes/codex-picker-over-composer-model":          {answer.ErrInputBox, "a Codex picker drawn over its live composer"},
	"panes/codex-picker-over-composer-permissions-50": {answer.ErrInputBox, "a Codex picker drawn over its live composer"},
	"panes/pi-073-40-dialog-confirm":                  {answer.ErrNoAgent, "an extension's confirmation in Pi (Pi asks no permission of its own): no reader for Pi's → selector"},
	"panes/pi-073-40-dialog-login":                    {answer.ErrNoAgent, "Pi's /login, opened by a human at the terminal: never answered from a chat"},
	"panes/pi-073-40-dialog-model":                    {answer.ErrNoAgent, "Pi's /model selector, opened by a human at the terminal: never answered from a chat"},
	"panes/pi-073-40-dialog-settings":                 {answer.ErrNoAgent, "Pi's /settings, opened by a human at the terminal: never answered from a chat"},
	"panes/pi-073-80-dialog-confirm":                  {answer.ErrNoAgent, "an extension's confirmation in Pi (Pi asks no permission of its own): no reader for Pi's → selector"},
	"panes/pi-073-80-dialog-login":                    {answer.ErrNoAgent, "Pi's /login, opened by a human at the terminal: never answered from a chat"},
	"panes/pi-073-80-dialog-login-apikey":             {answer.ErrNoAgent, "Pi's /login provider list, opened by a human at the terminal: never answered from a chat"},
	"panes/pi-073-80-dialog-model":                    {answer.ErrNoAgent, "Pi's /model selector, opened by a human at the terminal: never answered from a chat"},
	"panes/pi-073-80-dialog-resume":                   {answer.ErrNoAgent, "Pi's /resume picker, opened by a human at the terminal: never answered from a chat"},
	"panes/pi-073-80-dialog-settings":                 {answer.ErrNoAgent, "Pi's /settings, opened by a human at the terminal: never answered from a chat"},
	"panes/pi-073-80-dialog-tree-doubleesc":           {answer.ErrNoAgent, "Pi's session tree (Esc twice), opened by a human at the terminal: never answered from a chat"},
	"panes/copilot-1-0-102-40-help":                   {answer.ErrNoOptions, "Copilot's full-screen help: no options"},
	"panes/copilot-1-0-102-80-help":                   {answer.ErrNoOptions, "Copilot's full-screen help: no options"},
	// Qwen Code's approval in a pane too narrow for its labels: two
	// options read "Always allow run 'touch *'…", one for the project, one
	// for the user.
	"panes/qwen-0-24-4-40-permission":  {answer.ErrCutLabel, "Qwen Code's approval at 40 columns: its widening labels cut short"},
	"real-qwen/qwen-40-approval":       {answer.ErrCutLabel, "Qwen Code's approval at 40 columns: its widening labels cut short"},
	"real-pi/pi-40-model-selector":     {answer.ErrNoAgent, "Pi's /model selector, opened by a human at the terminal: never answered from a chat"},
	"real-pi/pi-80-model-selector":     {answer.ErrNoAgent, "Pi's /model selector, opened by a human at the terminal: never answered from a chat"},
	"panes/gemini-notice-esc-to-close": {answer.ErrNoOptions, "a Gemini notice in place of the composer: Esc leaves it, no options"},
	// OpenCode lights its selected button by colour alone: a capture
	// without the colours shows no cursor (the -e and .e twins, taken with
	// them, yield a Menu).
	"panes/opencode-1-18-33-40-approval": {answer.ErrNoCursor, "OpenCode's row of buttons, captured without colours: which one is lit is not in the text"},
	"panes/opencode-1-18-33-80-approval": {answer.ErrNoCursor, "OpenCode's row of buttons, captured without colours: which one is lit is not in the text"},
	"real-opencode/opencode-40-approval": {answer.ErrNoCursor, "OpenCode's row of buttons, captured without colours: which one is lit is not in the text"},
	"real-opencode/opencode-80-approval": {answer.ErrNoCursor, "OpenCode's row of buttons, captured without colours: which one is lit is not in the text"},
}

// startupPane says, by its golden name, that a pane shows a screen an agent
// draws before or outside its composer: onboarding, a folder to trust, a
// key, a login, bypass mode, an update offer. Each is refused as
// ErrStartup, and no other pane is: a permission dialog taken for one
// would never be answered from the chat.
func startupPane(name string) bool {
	for _, kind := range []string{"-startup-", "-trust", "bypass-warning", "api-key-dialog", "update-offer", "sign-in", "auth-choice", "startup-menu-", "usage-limit-menu", "-limit-weekly", "-quota-",
		// Screens that change the model, the provider, the permissions or
		// the setup, or connect an IDE (real-codex/codex-171-*,
		// real-gemini/gemini-061-*).
		"model-migration", "oss-provider", "login-dialog", "login-method", "-import-", "full-access-confirm", "rate-limit-switch", "new-agents", "ide-prompt", "theme-dialog", "privacy-notice"} {
		if strings.Contains(name, kind) {
			return true
		}
	}
	return false
}

// TestGoldenMenus reads every QUESTION pane of the corpus. A pane listed
// in notAnswerable must be refused for its reason; every other must yield a
// Menu equal to its golden file (go test ./answer -update rewrites them;
// then READ the diff). It also counts both kinds, for the record.
func TestGoldenMenus(t *testing.T) {
	panes := questionPanes(t)
	if len(panes) < 160 {
		t.Fatalf("the corpus holds %d QUESTION panes; this test was written over 170", len(panes))
	}
	seen := make(map[string]bool)
	menus, refused := 0, 0
	for _, p := range panes {
		t.Run(p.dir+"/"+p.name, func(t *testing.T) {
			name := p.twin()
			if litByColour[name] && strings.HasSuffix(p.name, ".e") {
				name = p.dir + "/" + p.name
			}
			seen[name] = true
			m, err := answer.Inspect(p.r)
			if startupPane(p.twin()) {
				refused++
				if !errors.Is(err, answer.ErrStartup) {
					t.Errorf("Inspect = %v, want %v: the agent drew it before or outside its composer", err, answer.ErrStartup)
				}
				return
			}
			if errors.Is(err, answer.ErrStartup) {
				t.Fatalf("Inspect = %v for a dialog of the agent's session, answerable or refused for its own reason", err)
			}
			if want, listed := notAnswerable[name]; listed {
				refused++
				if !errors.Is(err, want.err) {
					t.Errorf("Inspect = %v, want %v (%s)", err, want.err, want.why)
				}
				if _, ok := answer.Read(p.r); ok {
					t.Errorf("Read gave a menu for a pane refused for %v", want.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Inspect: %v\n(list the pane in notAnswerable with the reason, or fix the reader)", err)
			}
			menus++
			golden.Assert(t, render(m), name+".golden")
		})
	}
	for name := range notAnswerable {
		if !seen[name] {
			t.Errorf("notAnswerable lists %s, which is no QUESTION pane of the corpus", name)
		}
	}
	t.Logf("%d QUESTION panes: %d yield a menu, %d are not answerable", len(panes), menus, refused)
}

// render writes a Menu for a person to review: every field, labels quoted
// so that their spaces show.
func render(m answer.Menu) string {
	var b strings.Builder
	fmt.Fprintf(&b, "agent: %s\n", m.Agent)
	fmt.Fprintf(&b, "key: %s\n", m.Key())
	if m.Step != "" {
		fmt.Fprintf(&b, "step: %q\n", m.Step)
	}
	if m.Esc {
		fmt.Fprintf(&b, "esc: %s\n", m.EscAction)
	} else {
		b.WriteString("esc: none\n")
	}
	if m.Notes {
		b.WriteString("notes: tab\n")
	}
	if m.Amend {
		b.WriteString("amend: tab\n")
	}
	if m.Above != "" {
		b.WriteString("above:\n")
		for _, l := range strings.Split(m.Above, "\n") {
			fmt.Fprintf(&b, "  | %s\n", l)
		}
	}
	b.WriteString("question:\n")
	for _, l := range strings.Split(m.Question, "\n") {
		fmt.Fprintf(&b, "  | %s\n", l)
	}
	b.WriteString("options:\n")
	for _, o := range m.Options {
		fmt.Fprintf(&b, "  %d. %q", o.Pos, o.Label)
		if o.Number != 0 {
			fmt.Fprintf(&b, " number=%d", o.Number)
		}
		for _, f := range []struct {
			on   bool
			name string
		}{{o.Cursor, "cursor"}, {o.FreeText, "free-text"}, {o.Widens, "widens"}} {
			if f.on {
				b.WriteString(" " + f.name)
			}
		}
		b.WriteString("\n")
		if o.Description != "" {
			fmt.Fprintf(&b, "     description: %q\n", o.Description)
		}
	}
	if f, err := answer.FieldOf(m); err != nil {
		fmt.Fprintf(&b, "field: none: %s\n", strings.TrimPrefix(err.Error(), "answer: "))
	} else {
		fmt.Fprintf(&b, "field: option %d, open %q", f.Pos, f.Label)
		if f.Tab {
			b.WriteString(" after Tab")
		}
		if f.Prefix != "" {
			fmt.Fprintf(&b, ", words after %q", f.Prefix)
		}
		if f.Notes != "" {
			fmt.Fprintf(&b, ", words in the notes line under the options (open: %q)", f.Notes)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestTwinsAgree: a capture taken with escape sequences (.e) yields the
// same Menu as its plain twin, or the same refusal.
func TestTwinsAgree(t *testing.T) {
	byName := make(map[string]questionPane)
	for _, p := range questionPanes(t) {
		byName[p.dir+"/"+p.name] = p
	}
	n := 0
	for name, e := range byName {
		plain, ok := byName[strings.TrimSuffix(name, ".e")]
		if !strings.HasSuffix(name, ".e") || !ok || litByColour[plain.dir+"/"+plain.name] {
			continue
		}
		n++
		me, erre := answer.Inspect(e.r)
		mp, errp := answer.Inspect(plain.r)
		if !errors.Is(erre, errp) && !errors.Is(errp, erre) {
			t.Errorf("%s: %v, its plain twin: %v", name, erre, errp)
		}
		if diff := cmp.Diff(mp, me); diff != "" {
			t.Errorf("%s (-plain +e):\n%s", name, diff)
		}
	}
	if n < 40 {
		t.Errorf("only %d .e twins compared", n)
	}
}
