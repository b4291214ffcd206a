package classify

import (
	"slices"
	"sync"

	"github.com/omega-monitor/omega-monitor/probe"
)

// This file is the shape of the classifier's knowledge of the agents'
// screens: for each agent, how its input box is drawn and which rules are
// read in which region around it. The knowledge itself is data, one
// description per agent (agents/*.json, in the format of an operator's
// rules file, docs/rules.md): supporting another agent, or another release
// of one, means a description, not new control flow. The facts come from
// the agents' real screens (see golden/ for captures of each). What stays
// here is what every screen shares.

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
	// programs are the names its process runs as (LocalAgent.Programs).
	programs []string
	// title are the marks of its terminal title (LocalTitle).
	title titleMarks
	// hooks are its events whose hooks wake the watcher, and where they
	// are written (LocalHooks).
	hooks LocalHooks
	// witness is the kind of its own files that speak for it (WitnessOf);
	// events its events log, when that is its witness (LocalEvents).
	witness string
	events  *probe.EventsLog
	// account is where it keeps its account (LocalAccount).
	account LocalAccount
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
)

// agents returns the built-in agents, read in this order: the first box
// found lowest on the screen wins. They are built when first asked for,
// so that a command that reads no screen (--help, hold, ack) does not pay
// for them.
var agents func() []*agent

// The descriptions are read by the code that reads an operator's file,
// which asks for the agents known: agents is set at init, not declared
// with its value, so that the two do not form an initialization cycle.
func init() {
	agents = sync.OnceValue(func() []*agent { return describedBuiltins(nil) })
}

// builtinOrder names the project's descriptions (agents/NAME.json) in
// the order screens are read against them. The box found lowest on the
// screen wins (two agents' alike are told apart by their marks); the
// order decides which of an agent's shapes is read there, and on a screen
// with no box which agent's dialog rules name it first.
// builtinDescriptions holds them in this order (TestBuiltinOrder).
var builtinOrder = []string{"claude-code", "codex", "gemini-cli", "copilot", "opencode", "pi", "qwen"}

// A description is one of the project's description files, decoded when
// the project is built (descriptions_gen.go): a poll pays for no JSON.
type description struct {
	path   string
	agents []LocalAgent
	rules  []LocalRule
}

// describedBuiltins makes the agents the project ships as data, known
// after base. A description that does not read is a build's mistake
// (TestBuiltinDescriptionsChecked holds every one to the parser).
//
//go:generate go test -run ^TestDescriptionsGenerated$ -generate .
func describedBuiltins(base []*agent) []*agent {
	var out []*agent
	for _, d := range builtinDescriptions {
		l := newLocal(d.path, append(slices.Clip(base), out...), true)
		if err := l.read(d.agents, d.rules); err != nil {
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
