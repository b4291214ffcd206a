package answer

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// This file is what this package knows of each agent's menus, as data: the
// cursor it draws, how the lines under an option read, which dialogs a
// cursor and Enter cannot answer, and which options open a text field or
// widen what the agent may do. Each label entry names, in its comment, a
// golden pane that shows it (golden/panes/NAME, or real/, real-codex/,
// real-gemini/, real-qwen/, real-copilot/ for captures of the real
// programs); a test checks that every
// entry flags an option of some pane of the corpus.

// A table is one agent's menus.
type table struct {
	// cursors are the glyphs drawn on the selected option.
	cursors []string
	// head says a line starts a block of the agent's transcript (an
	// answer, a human's message): options under one are prose, not a
	// dialog. headAnywhere says classify cuts this agent's dialogs at the
	// edge drawn above them, so a head anywhere in the question means no
	// edge was found; otherwise only the paragraph directly above the
	// options is read (classify's cut keeps transcript above a Codex or
	// Gemini dialog, separated by a blank line).
	head         func(line string) bool
	headAnywhere bool
	// stepLine says a line of the question names which of several
	// questions the dialog is.
	stepLine func(trimmed string) bool
	// styles say how the lines under an option read, by what the dialog
	// shows: the first that applies; wrapped when none does.
	styles []styleRule
	// refusals are the dialogs no cursor and Enter can answer, found
	// before the options are read, in order.
	refusals []refusal
	// checkboxes start the label of an option of a multi-select list.
	checkboxes []string
	// notes are hint texts (lower case) saying a note can be added to the
	// chosen option.
	notes []string
	// freeText and widens are label prefixes: options that open a text
	// field, and options that widen what the agent may do without asking.
	freeText []string
	widens   []string
	// amend are hint texts (lower case) saying Tab amends the option the
	// cursor is on with the human's words.
	amend []string
	// fields are the text fields that take the human's words with an
	// option (drawn in its own row, or the dialog's notes line), each
	// seen typed into with the real program; closes are label prefixes of
	// free-text options seen to close the dialog and leave the words for
	// the agent's input box.
	fields []fieldRule
	closes []string
	// scrollbar are the glyphs the agent draws in the pane's last column
	// beside its transcript and dialog (a thumb, a track): when every
	// line of the options ends in one, it is taken off each line before
	// the dialog is read.
	scrollbar []string
	// numberSlack is how many columns left of the first option's number
	// a later option's number may be drawn, when it is the next number.
	numberSlack int
	// wrapAtNumber says the agent wraps an option's label under its
	// number, not under the label's first word: under the last option,
	// the lines level with its number still belong to it.
	wrapAtNumber bool
	// buttons are the sets of labels the agent draws as a row of buttons
	// side by side, in drawn order, the selected one lit by its
	// background colour alone (buttons.go); a table with buttons reads no
	// other menu. frame is the glyph drawn down the dialog's left side,
	// taken off each line before it is read.
	buttons [][]string
	frame   string
	// prev and next are the keys that move the cursor one option back
	// and on: "Up" and "Down" when empty.
	prev, next string
}

// A fieldRule is a text field an agent draws in an option's row.
type fieldRule struct {
	// label is the option's label (exact) or its start.
	label string
	exact bool
	// desc is the start of the option's description, "" for any.
	desc string
	// tab says Tab opens it, in a dialog whose hint offers to amend, or,
	// with notes, to add notes.
	tab bool
	// open is the row while the field is open and empty; "" when it is
	// the option's own label.
	open string
	// prefix is what the row keeps before the words typed.
	prefix string
	// notes is the placeholder of the dialog's notes line, where the
	// words go instead of the option's row.
	notes string
}

// A style says how the lines drawn under an option's first line read.
type style int

const (
	// wrapped: the option's label, wrapped by a narrow pane.
	wrapped style = iota
	// described: the option's description (AskUserQuestion).
	described
	// columns: the label and its description are drawn as two columns:
	// the label ends at the first gap of two spaces or more, and the rest,
	// with the lines under it, is the description (Codex's
	// request_user_input).
	columns
)

type styleRule struct {
	style style
	when  func(d *dialog) bool
}

// A refusal is a form of dialog that no cursor and Enter can answer.
// notesLine marks the refusal of an open notes line, which the watcher
// reads once it opened the line itself to type into it (ReadField).
type refusal struct {
	err       error
	when      func(d *dialog) bool
	notesLine bool
}

// tables returns every agent's table.
func tables() []*table {
	return []*table{claudeCode(), codexCLI(), geminiCLI(), qwenCode(), copilotCLI(), openCode()}
}

func tableOf(agent string) *table {
	switch agent {
	case "Claude Code":
		return claudeCode()
	case "Codex CLI":
		return codexCLI()
	case "Gemini CLI":
		return geminiCLI()
	case "Qwen Code":
		return qwenCode()
	case "Copilot CLI":
		return copilotCLI()
	case "OpenCode":
		return openCode()
	}
	// Pi has no reader: it asks no permission of its own, its selectors
	// (/model, /login, /settings, /resume, the session tree) are a
	// human's, opened at the terminal, and an extension's confirmation
	// says whatever the extension wrote (docs/answers.md).
	return nil
}

var claudeCode = sync.OnceValue(func() *table {
	return &table{
		cursors: []string{"❯", ">"},
		head: func(l string) bool {
			if hasAnyPrefix(l, []string{"⏺ ", "● ", "∴ "}) {
				return true
			}
			return userTurn(l, "❯ ", "> ")
		},
		headAnywhere: true,
		// "←  ☐ History  ✔ Submit  →" (claude-c-question-ask), "☐ History"
		// (claude-328-ask-question).
		stepLine: func(t string) bool {
			return hasAnyPrefix(t, []string{"←", "☐", "☒", "✔"}) && strings.ContainsAny(t, "☐☒")
		},
		// AskUserQuestion draws a description under each option
		// (claude-328-ask-question); its footer says Enter to select, or a
		// narrow pane wraps that footer and the tab header still shows
		// (claude-d-question-narrow-footer-wrap). Every other dialog's lines
		// under an option are its label, wrapped (real/claude-manual-60-permission).
		styles: []styleRule{
			{described, hintsHave("Enter to select")},
			{described, hasStep},
		},
		// GOLDEN-question-real, real/claude-manual-100-question-many.
		checkboxes: []string{"[ ] ", "[✔] ", "[✓] ", "[x] ", "[X] ", "[☒] "},
		freeText: []string{
			"Type something", // claude-328-ask-question ("Type something."), claude-c-question-ask
			"No, and tell Claude what to do differently", // claude-a-edit-prompt, claude-b-question-permission
			"Type here to tell Claude what to change",    // claude-d-plan-approval
		},
		amend: []string{"tab to amend"}, // claude-328-permission, real/claude-manual-100-permission
		fields: []fieldRule{
			// The cursor on the row opens an inline field; the words
			// take the label's place (claude-332-100-ask-field-open,
			// claude-332-60-ask-field-typed).
			{label: "Type something"},
			// Tab on No opens "No, and tell Claude what to do
			// differently"; the words follow "No, " and reach the model
			// with the refusal (claude-332-100-permission-amend-open,
			// claude-332-60-permission-amend-typed).
			{label: "No", exact: true, tab: true, open: "No, and tell Claude what to do differently", prefix: "No, "},
		},
		widens: []string{
			"Yes, and don't ask again",                 // claude-328-permission, claude-d-permission
			"Yes, and always allow",                    // claude-c-permission-2026, real/claude-manual-100-permission
			"Yes, allow all edits during this session", // claude-a-edit-prompt, claude-c-edit-prompt
			"Yes, allow reading from",                  // real/claude-manual-100-long-permission: a rule for the project
			"Yes, and switch to auto mode",             // claude-328-permission: actions approved by a classifier, not asked
			"Yes, and auto-accept edits",               // claude-b-plan-approval
			"Yes, auto-accept edits",                   // claude-d-plan-approval
			"Yes, clear context and auto-accept edits", // claude-d-plan-approval
		},
	}
})

var codexCLI = sync.OnceValue(func() *table {
	return &table{
		cursors: []string{"›", ">"},
		head: func(l string) bool {
			return hasAnyPrefix(l, []string{"• ", "◦ "}) || userTurn(l, "› ")
		},
		// "Question 1/2 (2 unanswered)" (real-codex/codex-60-plan-questions).
		stepLine: func(t string) bool {
			rest, ok := strings.CutPrefix(t, "Question ")
			return ok && rest != "" && isDigit(rest[0]) && strings.Contains(rest, "/")
		},
		// request_user_input draws label and description as columns, the
		// description wrapping under itself (real-codex/codex-60-plan-question)
		// or after a long label wrapped (codex-ask-long-option-40). The
		// approval's lines under an option are its label, wrapped
		// (real-codex/codex-60-approval).
		styles: []styleRule{{columns, hasStep}},
		refusals: []refusal{
			// The notes field opened under a radio list holds the keyboard,
			// and what it holds is a human's (codex-ask-notes-with-text-80).
			{err: ErrNotesOpen, when: questionLine(func(t string) bool {
				return strings.HasPrefix(t, "Notes for ") && strings.HasSuffix(t, "(optional)")
			})},
			// Codex 0.171 opens its notes line under the options on Tab:
			// Enter would send what it holds (a human's words) with the
			// option, and Tab would clear them
			// (codex-171-100-notes-typed, codex-171-60-notes-open).
			{err: ErrNotesOpen, when: notesOpen, notesLine: true},
			// On the last of several questions Enter submits every answer,
			// the earlier ones unseen (codex-ask-multi-last-80).
			{err: ErrSubmitsAll, when: hintsHave("submit all")},
			// Newer releases draw the options as radio buttons, "( )" and
			// "(x)", with no cursor glyph: which option the cursor is on is
			// not in the text (codex-ask-options-radio-80,
			// codex-question-radio-short).
			{err: ErrNoCursor, when: questionLine(func(t string) bool {
				return hasAnyPrefix(t, []string{"( ) ", "(x) ", "(X) ", "(•) "})
			})},
		},
		notes: []string{"tab to add notes", "tab: add notes", "tab add notes"}, // codex-question-ui
		freeText: []string{
			"No, and tell Codex what to do differently", // codex-approval-run-command, real-codex/codex-60-approval
			"Type your answer",                          // codex-question-free-text, codex-ask-freeform-80
		},
		// Codex 0.171 cancels the command and leaves its composer for the
		// words (real-codex/codex-60-approval).
		closes: []string{"No, and tell Codex what to do differently"},
		// request_user_input's own last option, "None of the above", says
		// to add details in notes; Tab opens the notes line under the
		// options ("› Add notes", dim) and Enter sends the option with the
		// words, which the model hears as "user_note: …"
		// (codex-171-100-notes-none, codex-171-100-notes-open,
		// codex-171-60-notes-typed). Its approval takes no notes: Tab
		// there does nothing (internal/codex TestCaptureNotes).
		fields: []fieldRule{
			{label: "None of the above", exact: true, desc: "Optionally, add details in notes", tab: true, notes: "Add notes"},
		},
		widens: []string{
			"Yes, and don't ask again", // codex-approval-run-command, real-codex/codex-60-approval
		},
	}
})

var geminiCLI = sync.OnceValue(func() *table {
	return &table{
		cursors: []string{"●"},
		head: func(l string) bool {
			return strings.HasPrefix(l, "✦ ") || userTurn(strings.TrimPrefix(l, " "), "> ")
		},
		freeText: []string{
			// It declines and returns to the prompt for the suggestion,
			// as Claude Code's "No, and tell Claude what to do
			// differently" does.
			"No, suggest changes", // gemini-dialog-allow, real-gemini/gemini-60-approval
		},
		// Gemini CLI 0.61 cancels the request and leaves its composer for
		// the words (real-gemini/gemini-60-approval).
		closes: []string{"No, suggest changes"},
		widens: []string{
			"Yes, allow always",      // gemini-dialog-allow
			"Allow for this session", // real-gemini/gemini-60-approval
		},
	}
})

// Qwen Code is a fork of Gemini CLI, and draws its approval as Gemini CLI
// 0.2x did: numbered options under a "›" cursor, with no edge or hint of
// its own (golden/panes/qwen-0-24-4-80-permission, real-qwen/qwen-80-approval).
var qwenCode = sync.OnceValue(func() *table {
	return &table{
		cursors: []string{"›"},
		head: func(l string) bool {
			t := strings.TrimLeft(l, " ")
			return hasAnyPrefix(t, []string{"✦ ", "◆︎ ", "◆ "}) || userTurn(t, "> ")
		},
		// Its transcript's scrollbar, drawn in the last column, a thumb
		// "█" over a track "│" (real-qwen/qwen-80-approval).
		scrollbar: []string{"█", "│"},
		refusals: []refusal{
			// A narrow pane cuts the long labels short with "…", and
			// what is cut is what the option does: "Always allow run
			// 'touch *'…" twice, one for this project, one for this user
			// (real-qwen/qwen-40-approval).
			{err: ErrCutLabel, when: labelCut},
		},
		freeText: []string{
			// It declines and returns to the prompt, as Gemini CLI's does.
			"No, suggest changes", // qwen-0-24-4-80-permission, real-qwen/qwen-80-approval
		},
		widens: []string{
			"Always allow", // qwen-0-24-4-80-permission, real-qwen/qwen-80-approval: a rule for the project or the user
		},
	}
})

// Copilot CLI draws its approval in a box, with numbered options under a
// "❯" cursor and its hints at the foot (real-copilot/copilot-80-approval).
var copilotCLI = sync.OnceValue(func() *table {
	return &table{
		cursors: []string{"❯"},
		head: func(l string) bool {
			return hasAnyPrefix(strings.TrimLeft(l, " "), []string{"● "}) || userTurn(strings.TrimLeft(l, " "), "❯ ")
		},
		// At 40 columns it draws the number of its last option, wrapped,
		// a column left of the others' (real-copilot/copilot-40-approval).
		numberSlack: 1,
		// It wraps a label under the option's number ("2. Yes, and don't
		// ask again for" over "`touch` in this directory (/"), the last
		// option's too (real-copilot/copilot-40-approval).
		wrapAtNumber: true,
		freeText: []string{
			"No, and tell Copilot what to do differently", // real-copilot/copilot-80-approval
		},
		widens: []string{
			"Yes, and don't ask again", // real-copilot/copilot-80-approval: for the command in this directory
		},
	}
})

// OpenCode draws its permission dialog in place of its input box, framed
// down its left by "┃", its choices a row of buttons under the command
// with its key hints beside them (at 40 columns, under them):
// "Allow once   Allow always   Reject  ctrl+f fullscreen  ⇆ select".
// No glyph marks the selected button: it is lit in the theme's warning
// colour, the others drawn on the dialog's own (real-opencode/opencode-80-
// approval.e). Left and Right (or h and l) move the selection, wrapping
// at either end; Enter chooses; Esc rejects. Allow always does not answer
// at once: it draws a second stage that asks to confirm the patterns it
// would allow until OpenCode restarts (OpenCode 1.18.33's permission
// prompt), a new question.
var openCode = sync.OnceValue(func() *table {
	return &table{
		head:  func(string) bool { return false },
		frame: "┃",
		buttons: [][]string{
			{"Allow once", "Allow always", "Reject"}, // real-opencode/opencode-80-approval.e, opencode-40-approval.e
		},
		refusals: []refusal{
			// A row narrower than its buttons: what is cut is an option.
			{err: ErrCutLabel, when: func(d *dialog) bool { return d.cut }},
		},
		widens: []string{
			"Allow always", // real-opencode/opencode-80-approval.e: the command's patterns, until OpenCode restarts
		},
		prev: "Left",
		next: "Right",
	}
})

// labelCut says an option's label is cut short by the pane: it ends "…".
func labelCut(d *dialog) bool {
	for _, o := range d.options {
		if strings.HasSuffix(o.Label, "…") {
			return true
		}
	}
	return false
}

// userTurn says l echoes a human's message: a prompt marker and text that
// is not an option's number.
func userTurn(l string, markers ...string) bool {
	for _, m := range markers {
		if rest, ok := strings.CutPrefix(l, m); ok && rest != "" && rest[0] != ' ' && !isDigit(rest[0]) {
			return true
		}
	}
	return false
}

func hasStep(d *dialog) bool { return d.step != "" }

// codexNotesHint is the hint Codex draws while its notes line is open.
const codexNotesHint = "to clear notes"

// notesOpen says Codex's notes line is open under the options: its hint
// says so, or a line under the options starts with the cursor glyph (read
// broadly: a refusal).
func notesOpen(d *dialog) bool {
	for _, h := range d.hints {
		if strings.HasPrefix(h, "›") {
			return true
		}
	}
	return anyHint(d.hints, []string{codexNotesHint})
}

// notesLines returns the lines of the notes line drawn under the options,
// trimmed, without the glyph, and the hint line under them: the line that
// starts with glyph and a space, and those under it until the hint that
// says how to clear the notes. ok is false unless exactly one line starts
// so, it is the first line under the options, and that hint follows it.
func (d *dialog) notesLines(glyph string) (lines []string, hint string, ok bool) {
	start := -1
	for i, h := range d.hints {
		if h == glyph || strings.HasPrefix(h, glyph+" ") {
			if start >= 0 {
				return nil, "", false
			}
			start = i
		}
	}
	if start < 0 || start != d.under {
		return nil, "", false
	}
	for i := start; i < len(d.hints); i++ {
		h := d.hints[i]
		if i > start && strings.Contains(strings.ToLower(h), codexNotesHint) {
			return lines, h, true
		}
		if i == start {
			h = strings.TrimSpace(strings.TrimPrefix(h, glyph))
		}
		if h != "" {
			lines = append(lines, h)
		}
	}
	return nil, "", false
}

// hintsHave says a hint line holds one of the texts, in any case.
func hintsHave(texts ...string) func(d *dialog) bool {
	for i, t := range texts {
		texts[i] = strings.ToLower(t)
	}
	return func(d *dialog) bool { return anyHint(d.hints, texts) }
}

// startupMenu says the dialog is an agent's start-up menu that no chat
// should choose in: an option that starts "Update now" or "Sign in".
func startupMenu(d *dialog) bool {
	for _, r := range d.rows {
		if len(r) > 0 && hasAnyPrefix(strings.TrimSpace(r[0]), []string{"Update now", "Sign in"}) {
			return true
		}
	}
	return false
}

// startupOptions and startupQuestions are the agents' own words on the
// screens they draw before or outside their composer: onboarding, a folder
// to trust, a key to use, a way to log in, a mode to accept, an update. An
// answer there trusts a folder's settings, approves a key, accepts that
// every command runs unasked, or ends the agent ("No, exit"): a human
// answers them at the terminal, never a chat.
var (
	startupOptions = []string{
		"Update now", "Sign in", // codex-update-offer-no-cursor, real-codex/codex-171-100-sign-in
		"No, exit", "No, quit", // claude-332-100-startup-trust, codex-trust
		"Yes, I trust this folder", "Trust and continue", "Trust folder", "Trust parent folder", "Don't trust", // claude-d-trust-numbered, real-codex/codex-60-trust, gemini-061-trust-dialog
		"Yes, I accept",                                                 // claude-332-100-startup-bypass-warning
		"Claude account with subscription", "Anthropic Console account", // claude-332-100-startup-login-method
		"Login with Google", "Use Gemini API Key", "Vertex AI", // real-gemini/gemini-061-100-auth-choice
		// A usage limit's choice: a purchase, extra usage billed, or the
		// turn ended (claude-d-usage-limit-menu,
		// claude-startup-rate-limit-options).
		"Upgrade your plan", "Switch to extra usage", "Stop and wait for limit to reset",
		// A model to change to, at start or at a usage limit's warning
		// (real-codex/codex-171-100-model-migration,
		// real-codex/codex-171-100-rate-limit-switch).
		"Try new model", "Use existing model", "Keep current model",
		"Import selected", "Customize selection", // real-codex/codex-171-100-import-setup
		"Acknowledge and Enable",  // real-gemini/gemini-061-100-new-agents
		"GitHub Enterprise Cloud", // copilot-1-0-102-80-login-dialog: the account /login signs in to
	}
	startupQuestions = []string{
		"Choose the text style",                        // claude-332-100-startup-theme
		"Do you want to use this API key?",             // claude-332-100-startup-api-key
		"Security notes:",                              // claude-332-100-startup-security-notes
		"Is this a project you created or one you",     // claude-332-60-startup-trust (wrapped there)
		"Do you trust the files in this folder?",       // claude-d-trust-numbered
		"running in Bypass Permissions mode",           // claude-332-100-startup-bypass-warning
		"Select login method:",                         // claude-332-100-startup-login-method
		"Do you trust the contents of this directory?", // codex-trust
		"Do you trust this folder?",                    // gemini-061-trust-dialog
		"Update available!",                            // real-codex/codex-171-100-update-offer
		// Screens that change the agent's model, provider, permissions or
		// setup, or connect an IDE: answered at the terminal.
		"Select an open-source provider",                       // real-codex/codex-171-100-oss-provider
		"Bring over supported setup from another coding agent", // real-codex/codex-171-100-import-setup
		"Choose an import source",                              // real-codex/codex-171-100-import-source
		"Choose what to import",                                // real-codex/codex-171-100-import-customize
		"Enable full access?",                                  // real-codex/codex-171-100-full-access-confirm
		"Approaching rate limits",                              // real-codex/codex-171-100-rate-limit-switch
		"New Agents Discovered",                                // real-gemini/gemini-061-100-new-agents
		"Do you want to connect",                               // real-gemini/gemini-061-100-ide-prompt ("… Zed to Gemini CLI?")
		"Select Theme",                                         // real-gemini/gemini-061-100-theme-dialog
		"Gemini API Key Notice",                                // real-gemini/gemini-061-100-privacy-notice
		// A usage limit's choice: try the spent quota again, or stop.
		"Usage limit reached for", // gemini-061-100-quota-daily-dialog
	}
)

// startupScreen says the dialog is one of those screens: an option or a
// line of the question in the agent's words for them.
func startupScreen(d *dialog) bool {
	if startupMenu(d) {
		return true
	}
	for _, r := range d.rows {
		if len(r) > 0 && hasAnyPrefix(strings.TrimSpace(r[0]), startupOptions) {
			return true
		}
	}
	for _, l := range append(slices.Clone(d.question), d.hints...) {
		for _, w := range startupQuestions {
			if strings.Contains(l, w) {
				return true
			}
		}
	}
	return false
}

// questionLine says a line of the question, trimmed, passes f.
func questionLine(f func(trimmed string) bool) func(d *dialog) bool {
	return func(d *dialog) bool {
		for _, l := range d.question {
			if f(strings.TrimSpace(l)) {
				return true
			}
		}
		return false
	}
}

func isDigit(b byte) bool { return '0' <= b && b <= '9' }

// The expressions are compiled when first used, not at start: a poll that
// reads no dialog pays nothing for them.
var (
	// escHint finds what a hint line says Esc does: "Esc to cancel",
	// "esc to interrupt", "Esc: interrupt", "esc back".
	escHint = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\besc(?: to|:)? (cancel|exit|back|interrupt)\b`)
	})
	// optionCount finds a hint's count of the options: "option 4/5",
	// "Option 1 of 3".
	optionCount = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\boption (\d+)(?:/| of )(\d+)\b`)
	})
)
