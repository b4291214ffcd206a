package classify

import (
	"embed"
	"slices"
	"sync"
)

// This file is the classifier's knowledge of the agents' screens, as data:
// for each agent, how its input box is drawn and which rules are read in
// which region around it. Supporting another agent, or another release of
// one, means a new entry here, not new control flow. The facts come from
// the agents' real screens (see golden/ for captures of each).

// An agent describes one agent's screen.
type agent struct {
	name string
	// boxes are the shapes its input box takes, one per UI era.
	boxes []boxShape
	// placeholders are texts the agent draws faint in an empty input box.
	// They are read as no draft when the capture has no attributes to
	// tell faint from normal text.
	placeholders []*pattern
	// transparent lines may sit between the live block and the input box
	// without being the live block: tips, notices, the effort indicator.
	transparent []*pattern
	// marks are lines in or under the input box that only this agent
	// draws; they tell two agents with the same box shape apart.
	marks []*pattern
	// userTurn matches the echo of a human's message in the scrollback:
	// the start of the last turn, which the Turn region reads back to.
	userTurn *pattern
	// sessionStart matches the banner the agent draws when a session
	// starts: no turn reaches above it.
	sessionStart *pattern
	// frameTop matches the edge the agent draws above a dialog, and heads
	// the lines that start a block of its transcript (an answer, a tool
	// call, a spinner, a turn's end). Between the input box and a frame
	// top with no head in between is a dialog frame hugging the box (the
	// Frame region); a head in between makes it text of the transcript.
	frameTop *pattern
	heads    *pattern
	// statusLines is how many lines the agent may draw under its box after
	// a blank line (a footer that wraps in a narrow pane); 2 when zero.
	statusLines int
	// shownPlaceholders are texts the agent draws in an empty input box
	// in a colour, not faint: no draft, with or without attributes.
	shownPlaceholders []*pattern
	rules             []rule
	// marksRequired says a box of its shape is its only with one of its
	// marks in or under it.
	marksRequired bool
	// source is FILE:LINE for an agent an operator's rules file describes;
	// empty for a built-in one.
	source string
}

// A boxShape says how one era draws the input box: an optional top edge, a
// prompt line, continuation lines, and an optional bottom edge. Without a
// bottom edge the box ends at the first blank line after the prompt.
type boxShape struct {
	name string
	// top matches the edge drawn above the prompt line; nil means the
	// prompt line itself is the top.
	top *pattern
	// prompt matches the first line inside the box; its first group is
	// what the human typed there, if anything.
	prompt *pattern
	// promptPrefixes are the literal starts a prompt line may have, a cheap
	// test before the regular expression.
	promptPrefixes []string
	// notPrompt rejects lines that look like a prompt but belong to a
	// dialog (an option list drawn with the same cursor).
	notPrompt *pattern
	// inner, when set, strips the box's side borders from a continuation
	// line; its first group is the content.
	inner *pattern
	// lead, when set, matches one line allowed between the top edge and
	// the prompt line (a hint drawn inside the box).
	lead *pattern
	// gap is how many blank lines may sit between the lead and the prompt
	// line (an input area padded above its prompt).
	gap    int
	bottom *pattern
	// blankPrompt says the prompt line of an empty box is blank (an
	// agent that draws no prompt mark).
	blankPrompt bool
	// sides says the box has a side border and no top edge: every line
	// inside matches prompt, and the box reaches up from its bottom
	// through them (inner reads each line's content).
	sides bool
	// last says the box ends the screen: nothing but its bottom line may
	// follow the prompt. For shapes whose prompt marker is drawn on other
	// lines too.
	last bool
}

// A verdict is what a rule concludes when it matches.
type verdict struct {
	state State // Working or Question; zero for a hold
	hold  Hold  // why a nudge must wait, for rules that do not decide a state
	first bool  // read before the dialogs and the activity
	// unsettled says the rule reads a reason to look again soon, never a
	// state: what it matches is the absence of a marker (no end line under
	// an answer), which no verdict may rest on (Result.Unsettled).
	unsettled bool
}

// A rule is one named observation, read in one region.
type rule struct {
	// name is what the operator reads in an explanation, and what a
	// golden case's rule: line names.
	name    string
	region  Region
	verdict verdict
	match   matcher
	// quoted are the rule's marker words as an answer could quote them in
	// prose. The property test writes each into the transcript (an
	// indented line of an answer, a line of a fenced block, a ⎿ line)
	// and checks that no verdict moves.
	quoted []string
	// tool says the agent itself draws this marker as a ⎿ line, so a ⎿
	// line quoting it cannot be told from it and is not tested.
	tool bool
	// startup says the rule finds a screen drawn before or outside the
	// composer (Result.Startup).
	startup bool
	// source is FILE:LINE for a rule from an operator's rules file; empty
	// for a built-in rule.
	source string
}

var (
	working   = verdict{state: Working}
	question  = verdict{state: Question}
	unsettled = verdict{unsettled: true}
	// overlay is a stop with nothing to type into, decided before any
	// dialog is looked for.
	overlay = verdict{hold: HoldNoInputBox, first: true}
)

func hold(h Hold) verdict { return verdict{hold: h} }

// Claude Code's dialog footers, case-sensitive: its status bar says "esc
// to interrupt" in lower case, a dialog says "Esc to cancel".
const claudeFooterKeys = `Esc to cancel|Enter to confirm|Esc to exit|Enter to set as default|ctrl-g to edit\b.*`

// claudeHeads matches the lines that start a block of Claude Code's
// transcript: an answer or tool call, a thinking block, a spinner or a
// turn's end, a human's message.
func claudeHeadsPattern() *pattern {
	return re(claudeHeads).by(isClaudeHead)
}

func claudeCodeTable() *agent {
	return &agent{
		name: "Claude Code",
		boxes: []boxShape{
			{
				name:           "rule, ❯ prompt, rule (eras B to D)",
				promptPrefixes: []string{"❯", ">", "!"},
				top:            ruleLinePattern(),
				prompt:         re(`^(?:❯|>|!)(?: (.*))?$`).byGroups(promptDraft("❯", ">", "!")),
				notPrompt:      re(`^(?:❯|>) *\d+\. `).by(cursorOnNumber("❯", ">")),
				bottom:         ruleLinePattern(),
			},
			{
				name:           "rounded box, > prompt (era A)",
				promptPrefixes: []string{"│"},
				top:            re(`^╭─+╮$`),
				prompt:         re(`^│ *(?:>|❯|!)(?: (.*?))? *│$`),
				notPrompt:      re(`^│ *(?:❯|>) *\d+\. `),
				inner:          re(`^│(.*?)│$`),
				bottom:         re(`^╰─+╯$`),
			},
		},
		placeholders: []*pattern{
			// Only the fixed placeholder: a suggestion such as "Resend your
			// message to try again" reads like a human's words, and without
			// the faint attribute it is held as one.
			re(`^Try "[^"]*"$`).by(isTryPlaceholder),
		},
		userTurn:     re(`^(?:>|❯) \S`).by(isClaudeUserTurn),
		sessionStart: re(`^.{0,12}(?:Claude Code v\d|✻ Welcome to Claude Code)`).by(isClaudeBanner),
		marks: []*pattern{free(`\? for shortcuts|⏵⏵|⏸ \S+ mode on|auto-compact|esc to interrupt`,
			"read only in and under the input box, where the status bar puts its hints anywhere on the line")},
		transparent: []*pattern{
			re(`^ +` + effortGlyphs + ` \S+ · /effort$`).by(isEffortLine),
			re(`^ *⎿ +Tip: `).by(isToolTip),
			indented("Tip: "),
			indented("tmux focus-events off"),
		},
		frameTop: re(`^(?:─{3,}|╭─+╮)`).by(isClaudeFrameTop),
		heads:    claudeHeadsPattern(),
		rules: []rule{
			// Neutral overlays hide the input box without asking anything;
			// they are read before the dialogs, whose footers they share.
			{name: "an overlay (transcript, history search) hides the input box", region: Dialog, verdict: overlay,
				match:  lastLines(1, re(`^ *(?:Showing detailed transcript · |ctrl\+r to toggle · |⌕ Search…)`)),
				quoted: []string{"Showing detailed transcript · ctrl+o to toggle", "ctrl+r to toggle · enter to run · esc to cancel"}},

			// Its onboarding, drawn under the Welcome banner before its
			// first input box: the text style (an unnumbered picker, no
			// footer: claude-332-100-startup-theme), the key found in the
			// environment, the security notes (Press Enter to continue),
			// the login method. A human goes through it at the terminal.
			{name: "its onboarding under the Welcome banner (a choice under the ❯ cursor, or Press Enter to continue)", region: Dialog, verdict: question,
				match: onboarding(re(`^Welcome to Claude Code v\d`).needs(containing("Welcome to Claude Code")), re(`^\.{10,}$`).needs(containing("..........")),
					re(`^ *❯ \S`).needs(containing("❯")), re(continueFooter)),
				quoted: []string{"Welcome to Claude Code v2.1.332"}, startup: true},

			// A dialog a human must answer. Read at the bottom of a screen
			// whose input box is gone; never in the scrollback.
			{name: "question hint line (Enter to select and to navigate on one line)", region: Dialog, verdict: question,
				match:  lastLines(2, re(hintLine(`Enter to select`)).by(hintOf("Enter to select"))),
				quoted: []string{"Enter to select · ↑/↓ to navigate · Esc to cancel"}},
			{name: "dialog footer at the bottom of the screen", region: Dialog, verdict: question,
				match:  lastLines(1, re(hintLine(claudeFooterKeys))),
				quoted: []string{"Esc to cancel · Tab to amend", "Enter to confirm · Esc to exit", "Enter to set as default · Esc to exit", "ctrl-g to edit in Vim"}},
			{name: "numbered options with the ❯ cursor, at the bottom of the screen", region: Dialog, verdict: question,
				match:  optionMenu("❯", ">"),
				quoted: []string{"❯ 1. Yes", "  2. No"}},
			// A whole dialog frame drawn directly above a live input box (a
			// redraw that left the box, a menu opened over it): the keyboard
			// may be the dialog's, so it is a QUESTION.
			{name: "a dialog frame hugging the input box (its hint line)", region: Frame, verdict: question,
				match: lastLines(1, re(hintLine(`Enter to select|`+claudeFooterKeys)))},
			{name: "a dialog frame hugging the input box (numbered options with the ❯ cursor)", region: Frame, verdict: question,
				match: optionMenu("❯")},
			{name: "a dialog frame hugging the input box (its question line)", region: Frame, verdict: question,
				match: anyLine(re(`^ ?[^ ⎿].*\?$`))},
			// A dialog drawn directly above the live input box with no edge
			// over it (a redraw lost it): a question line at the margin, then
			// the numbered menu with the ❯ cursor. A menu quoted in an answer
			// is under the answer's head or indented under it, never this.
			{name: "a dialog directly above the input box with no frame edge (question line, numbered options with the ❯ cursor)", region: Above, verdict: question,
				match: framelessMenu(re(`^ ?❯ *\d+\. +\S`).by(isMarginCursor), re(`^ *(?:❯ *)?\d+\. +\S`).by(numbered(false, "❯")),
					re(`^ ?[^ ⎿❯>⏺●].*\?$`).by(isMarginQuestion), claudeHeadsPattern())},
			// The same structures drawn below a live input box (a menu opened
			// over the status bar) are a dialog too.
			{name: "question hint line under the input box", region: Below, verdict: question,
				match: lastLines(2, re(hintLine(`Enter to select`)).by(hintOf("Enter to select")))},
			{name: "numbered options with the ❯ cursor under the input box", region: Below, verdict: question,
				match: optionMenu("❯")},

			// Live activity: a spinner line heads or closes the block directly
			// above the box (a redraw can lose the blank line under it).
			{name: "spinner line (a glyph, a gerund ending in …, an optional meter)", region: Above, verdict: working,
				match:  edgeLine(re(`^` + spinnerGlyphs + ` \S.*…(?: \(.*\))?$`).by(spinnerLine(spinners))),
				quoted: []string{"✻ Thinking… (3s · thinking)", "✶ Compiling… (38s · ↑ 1.1k tokens · esc to interrupt)"}},
			{name: "spinner line in reduced motion (● with a meter)", region: Above, verdict: working,
				match:  edgeLine(re(`^● \S.*… \(.*(?:\d+s|tokens|thinking|thought for|interrupt|hook).*\)$`).needs(containing("… ("))),
				quoted: []string{"● Thinking… (12s · ↓ 300 tokens)"}},
			{name: "retrying after an API error", region: Above, verdict: working,
				match: anyLine(re(`^` + spinnerGlyphs + ` .*\bretrying in \d+s · attempt \d+/\d+|^ *⎿ +API Error \(.*(?: · Retrying in \d+ seconds?…|·)`).
					needs(containing("retrying in ", "API Error ("))),
				quoted: []string{"Retrying in 5 seconds… (attempt 4/10)", "retrying in 5s · attempt 4/10",
					"API Error (529 overloaded) · Retrying in 12 seconds… (attempt 6/10)"},
				tool: true},
			{name: "waiting for background agents, which resume the turn", region: Above, verdict: working,
				match:  edgeLine(re(`^` + spinnerGlyphs + ` Waiting for \d+ background (?:agents?|tasks?) to finish`).needs(containing(" background "))),
				quoted: []string{"✻ Waiting for 2 background agents to finish"}},
			{name: "esc to interrupt in the status bar", region: Below, verdict: working,
				match:  anyLine(re(`(?i)^ +(?:\S.* · )?esc to interrupt(?: · |$)`).needs(containingFold("to interrupt"))),
				quoted: []string{"esc to interrupt", "⏵⏵ accept edits on (shift+Tab to cycle) · esc to interrupt"}},

			// Stops that a nudge must not be typed into.
			{name: "the operator interrupted the turn", region: Turn, verdict: hold(HoldInterrupt),
				match:  anyLine(re(`^ *⎿ +Interrupted(?: by user| · What should Claude do instead\?)`).needs(containing("Interrupted"))),
				quoted: []string{"Interrupted by user", "Interrupted · What should Claude do instead?"},
				tool:   true},
			// Esc on a question dialog (2.1.33x) ends the turn with this line
			// instead of an interrupt: the human declined, the stop is theirs.
			{name: "the operator declined the agent's questions", region: Turn, verdict: hold(HoldInterrupt),
				match:  anyLine(re(`^[●⏺] Declined to answer Claude's questions?:`).needs(containing("Declined to answer"))),
				quoted: []string{"Declined to answer Claude's questions:"}},
			{name: "a usage limit, until it resets", region: Turn, verdict: hold(HoldUsageLimit),
				// 2.1.332 says "You've hit your " and the limit's name: the
				// session's, the 5-hour, the weekly, a model's ("Opus"),
				// the org's monthly spend limit; older releases said it
				// otherwise. A typographic apostrophe reads as one.
				match: anyLine(re(`(?i)^(?: *⎿ +)?(?:Claude usage limit reached|\d+-hour limit reached ∙ resets|you['’]ve (?:hit|reached) your (?:[\w'’.-]+ ){0,4}limit\b)`).
					needs(containingFold("limit"))),
				quoted: []string{"Claude usage limit reached. Your limit will reset at 9am (America/Chicago).",
					"5-hour limit reached ∙ resets 9pm", "You've hit your limit · resets 10pm (America/New_York)",
					"You've hit your 5-hour limit · resets 6:12am (UTC)", "You've hit your weekly limit · resets Dec 5, 9am (UTC)",
					"You’ve hit your Opus limit · resets 3pm", "You've hit your org's monthly spend limit"},
				tool: true},
			{name: "a human at the keyboard (Ctrl-C pressed once)", region: Below, verdict: hold(HoldKeyboard),
				match:  anyLine(re(`^ *Press Ctrl-[CD] again to exit`).needs(containing("again to exit"))),
				quoted: []string{"Press Ctrl-C again to exit"}},
		},
	}
}

// agents returns the built-in agents, read in this order: the first box
// found lowest on the screen wins. They are built when first asked for,
// so that a command that reads no screen (--help, hold, ack) does not pay
// for them: the agents of Go tables, then those described as data
// (agents/*.json, in the format of an operator's rules file).
var agents func() []*agent

// The descriptions are parsed by the code that reads an operator's file,
// which asks for the agents known: agents is set at init, not declared
// with its value, so that the two do not form an initialization cycle.
func init() {
	agents = sync.OnceValue(func() []*agent {
		t := tables()
		return append(slices.Clip(t), describedBuiltins(t)...)
	})
}

// tables are the agents whose screens need matchers of Go code.
var tables = sync.OnceValue(func() []*agent {
	return []*agent{claudeCodeTable()}
})

// builtinDescriptions are the agents the project ships as data.
//
//go:embed agents/*.json
var builtinDescriptions embed.FS

// builtinOrder names the project's descriptions in the order screens are
// read against them: the first box found lowest on the screen wins, and
// a box two agents draw alike is the first one's (TestBuiltinOrder).
var builtinOrder = []string{"codex", "gemini-cli", "copilot", "opencode", "pi", "qwen"}

// describedBuiltins parses the agents the project ships as data, known
// after base. A description that does not parse is a build's mistake
// (TestBuiltinDescriptions holds every one to the parser).
func describedBuiltins(base []*agent) []*agent {
	var out []*agent
	for _, name := range builtinOrder {
		f := "agents/" + name + ".json"
		data, err := builtinDescriptions.ReadFile(f)
		if err != nil {
			panic(err)
		}
		l, err := parseLocal(data, f, append(slices.Clip(base), out...), true)
		if err != nil {
			panic(err)
		}
		for _, a := range l.described {
			// Built in: its rules are its own, from no operator's file.
			a.rules, a.source = l.rulesOf(a), ""
			for i := range a.rules {
				a.rules[i].source = ""
			}
			out = append(out, a)
		}
	}
	return out
}

// shared are the rules every agent's screen shares: all that is read on a
// screen whose agent is unknown. A numbered menu with a cursor on one option,
// reaching the bottom of a screen with no input box, is a choice a human
// must make, whoever drew it.
var shared = sync.OnceValue(func() []rule {
	return []rule{
		{name: "numbered options with a cursor, at the bottom of a screen with no input box", region: Dialog, verdict: question,
			match: optionMenu("❯", "›", "●", ">")},
		startupMenu,
	}
})

// continueFooter is the footer of an agent's start-up menus: Enter goes on
// with the option chosen (Codex's "Press enter to continue", "enter
// continue · esc skip").
const continueFooter = `(?i)^ *(?:press enter to continue|enter (?:to )?continue(?: · esc(?: to)? \w+)?)\.?$`

// startupMenu is the screen an agent draws before or outside its composer
// (an update offer, a sign-in or trust choice, a migration notice): a human
// must choose, and Enter there may run an install. A QUESTION, whoever drew
// it; never typed into.
var startupMenu = rule{name: "a start-up menu: numbered options over a footer that says Enter goes on", region: Dialog, verdict: question,
	match: continueMenu(re(continueFooter)), quoted: []string{"Press enter to continue"}, startup: true}
