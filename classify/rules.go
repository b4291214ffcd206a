package classify

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
	rules    []rule
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
	lead   *pattern
	bottom *pattern
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
}

// A rule is one named observation, read in one region.
type rule struct {
	// name is what the operator reads in an explanation.
	name    string
	region  Region
	verdict verdict
	match   matcher
}

var (
	working  = verdict{state: Working}
	question = verdict{state: Question}
	// overlay is a stop with nothing to type into, decided before any
	// dialog is looked for.
	overlay = verdict{hold: HoldNoInputBox, first: true}
)

func hold(h Hold) verdict { return verdict{hold: h} }

// Claude Code's spinner glyphs (macOS, Linux's ASCII star, reduced motion).
// The same glyphs head a finished turn (✻ Brewed for 60s), which carries
// neither the ellipsis nor a meter, and so is not a spinner.
const spinnerGlyphs = `[·✢✳✶✻✽*]`

// rule lines: a column-0 run of box-drawing horizontals, possibly with a
// short label inside. Draft continuation lines are indented, so a draft
// cannot forge one.
const ruleLine = `^─{3,}(?:[^─]{0,40}─+)?$`

var claudeCode = agent{
	name: "Claude Code",
	boxes: []boxShape{
		{
			name:           "rule, ❯ prompt, rule (eras B to D)",
			promptPrefixes: []string{"❯", ">", "!"},
			top:            compile(ruleLine),
			prompt:         compile(`^(?:❯|>|!)(?: (.*))?$`),
			notPrompt:      compile(`^(?:❯|>) *\d+\. `),
			bottom:         compile(ruleLine),
		},
		{
			name:           "rounded box, > prompt (era A)",
			promptPrefixes: []string{"│"},
			top:            compile(`^╭─+╮$`),
			prompt:         compile(`^│ *(?:>|❯|!)(?: (.*?))? *│$`),
			notPrompt:      compile(`^│ *(?:❯|>) *\d+\. `),
			inner:          compile(`^│(.*?)│$`),
			bottom:         compile(`^╰─+╯$`),
		},
	},
	placeholders: []*pattern{
		// Only the fixed placeholder: a suggestion such as "Resend your
		// message to try again" reads like a human's words, and without
		// the faint attribute it is held as one.
		compile(`^Try "[^"]*"$`),
	},
	userTurn: compile(`^(?:>|❯) \S`),
	marks:    []*pattern{compile(`\? for shortcuts|⏵⏵|⏸|auto-compact|esc to interrupt`)},
	transparent: []*pattern{
		compile(`^ +[◐◑◒◓○●] \S+ · /effort$`),
		compile(`^ *⎿ +Tip: `),
		compile(`^ *Tip: `),
		compile(`^ *tmux focus-events off`),
	},
	rules: []rule{
		// Neutral overlays hide the input box without asking anything;
		// they are read before the dialogs, whose footers they share.
		{"an overlay (transcript, history search) hides the input box", Dialog, overlay,
			lastLines(3, `showing detailed transcript|ctrl\+r to toggle|⌕ Search…`)},

		// A dialog a human must answer. Read at the bottom of a screen
		// whose input box is gone; never in the scrollback.
		{"question hint line (Enter to select and to navigate on one line)", Dialog, question,
			lastLines(2, `Enter to select.*to navigate`)},
		{"dialog footer at the bottom of the screen", Dialog, question,
			lastLines(1, `\bEsc to cancel\b|\bEnter to confirm\b|\bEsc to exit\b|\bEnter to set as default\b|\bctrl-g to edit\b`)},
		{"numbered options with the ❯ cursor, at the bottom of the screen", Dialog, question,
			optionMenu(`❯|>`)},
		// The same structures drawn below a live input box (a menu opened
		// over the status bar) are a dialog too.
		{"question hint line under the input box", Below, question,
			lastLines(2, `Enter to select.*to navigate`)},
		{"numbered options with the ❯ cursor under the input box", Below, question,
			optionMenu(`❯`)},

		// Live activity: the spinner heads the block directly above the box.
		{"spinner line (a glyph, a gerund ending in …, an optional meter)", Above, working,
			topLine(`^` + spinnerGlyphs + ` \S.*…(?: \(.*\))?$`)},
		{"spinner line in reduced motion (● with a meter)", Above, working,
			topLine(`^● \S.*… \(.*(?:\d+s|tokens|thinking|thought for|interrupt|hook).*\)$`)},
		{"retrying after an API error", Above, working,
			anyLine(`^` + spinnerGlyphs + ` .*\bretrying in \d+s · attempt \d+/\d+|Retrying in \d+ seconds?…`)},
		{"waiting for background agents, which resume the turn", Above, working,
			topLine(`^` + spinnerGlyphs + ` Waiting for \d+ background (?:agents?|tasks?) to finish`)},
		{"esc to interrupt in the status bar", Below, working,
			anyLine(`(?i)\besc to interrupt\b`)},

		// Stops that a nudge must not be typed into.
		{"the operator interrupted the turn", Turn, hold(HoldInterrupt),
			anyLine(`Interrupted by user|Interrupted · What should Claude do instead\?`)},
		// Esc on a question dialog (2.1.33x) ends the turn with this line
		// instead of an interrupt: the human declined, the stop is theirs.
		{"the operator declined the agent's questions", Turn, hold(HoldInterrupt),
			anyLine(`^[●⏺] Declined to answer Claude's questions?:`)},
		{"a usage limit, until it resets", Turn, hold(HoldUsageLimit),
			anyLine(`(?i)usage limit reached|limit reached ∙ resets|you've hit your (?:\w+ )?limit`)},
		{"a human at the keyboard (Ctrl-C pressed once)", Below, hold(HoldKeyboard),
			anyLine(`Press Ctrl-[CD] again to exit`)},
	},
}

var codexCLI = agent{
	name: "Codex CLI",
	boxes: []boxShape{
		{
			name:           "› composer",
			promptPrefixes: []string{"›"},
			prompt:         compile(`^› ?(.*)$`),
			notPrompt:      compile(`^› *\d+\. `),
		},
		{
			// Older releases drew a ▌ gutter on the composer and on the
			// lines above it, so only a ▌ line ending the screen (with
			// its key hints under it) is the composer.
			name:           "▌ composer (older releases)",
			promptPrefixes: []string{"▌ "},
			prompt:         compile(`^▌ (.*)$`),
			notPrompt:      compile(`^▌ (?:[•◦] |Yes \(y\))`),
			bottom:         compile(`^ +⏎ send\b`),
			last:           true,
		},
	},
	userTurn: compile(`^› \S`),
	placeholders: []*pattern{
		compile(`^Ask Codex to do anything$`),
	},
	rules: []rule{
		{"Codex approval footer", Dialog, question,
			lastLines(2, `(?i)press enter to confirm or esc to cancel`)},
		{"Codex numbered options with the › cursor", Dialog, question,
			optionMenu(`›`)},
		{"Codex command approval (older releases)", Dialog, question,
			lastLines(2, `Allow command\?|\bYes \(y\).*\bNo \(n\)`)},
		{"Codex working line (esc to interrupt in its meter)", Above, working,
			anyLine(`^(?:▌ ?)?[•◦] \S.* \(.*• *.+ to interrupt\)`)},
		{"Codex conversation interrupted", Above, hold(HoldInterrupt),
			anyLine(`^■ Conversation interrupted`)},
		{"Codex usage limit", Above, hold(HoldUsageLimit),
			anyLine(`^(?:■|🖐) +You've hit your usage limit`)},
		{"Codex usage limit", Dialog, hold(HoldUsageLimit),
			anyLine(`^(?:■|🖐) +You've hit your usage limit`)},
	},
}

var geminiCLI = agent{
	name: "Gemini CLI",
	boxes: []boxShape{
		{
			name:           "rounded box, > prompt",
			promptPrefixes: []string{"│"},
			top:            compile(`^╭─+╮$`),
			prompt:         compile(`^│ *> +(.*?) *│$`),
			inner:          compile(`^│(.*?)│$`),
			bottom:         compile(`^╰─+╯$`),
		},
		{
			name:           "rule, hint, > prompt, rule (0.61)",
			promptPrefixes: []string{" > "},
			top:            compile(ruleLine),
			lead:           compile(`^ \S`),
			prompt:         compile(`^ > +(.*)$`),
			bottom:         compile(ruleLine),
		},
	},
	userTurn: compile(`^> \S`),
	marks:    []*pattern{compile(`Type your message or @path/to/file|no sandbox|\bgemini-\d`)},
	placeholders: []*pattern{
		compile(`^Type your message or @path/to/file$`),
	},
	rules: []rule{
		{"Gemini waiting for user confirmation", Dialog, question,
			lastLines(3, `Waiting for user confirmation`)},
		{"Gemini waiting for user confirmation", Above, question,
			anyLine(`Waiting for user confirmation`)},
		{"Gemini numbered options with the ● cursor", Dialog, question,
			optionMenu(`●`)},
		{"Gemini select hint", Dialog, question,
			lastLines(2, `\(Use Enter to select\)`)},
		{"Gemini braille spinner with (esc to cancel, Ns)", Above, working,
			anyLine(`^ *[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] \S.*\(esc to cancel, \d`)},
	},
}

// agents are read in this order; the first box found lowest on the screen
// wins.
var agents = []*agent{&claudeCode, &codexCLI, &geminiCLI}
