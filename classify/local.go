package classify

// This file reads an operator's own rules (a rules file, say
// ~/.omega/monitor/rules.json) that add to or override the built-in tables,
// so that a misread screen can be fixed without a release. It parses bytes;
// finding and reading the file is the caller's job.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Local is a parsed rules file: rules per agent that add to or replace the
// built-in ones.
type Local struct {
	// Path names the file in explanations and errors.
	Path string
	// before and after are the file's new rules, read ahead of and after
	// the built-in ones; replace holds those named as a built-in rule,
	// which take its place; disabled names built-in rules turned off.
	before, after map[*agent][]rule
	replace       map[*agent]map[string]rule
	disabled      map[*agent]map[string]bool
	// base are the agents known before the file; described are the
	// agents it describes, after them in all: the agents a screen is
	// read against.
	base, described, all []*agent
	// trusted says the file is one of the project's own descriptions,
	// whose patterns its test checked.
	trusted bool
}

// agents are the agents a screen is read against: the built-in ones, then
// those the file describes.
func (l *Local) agents() []*agent {
	switch {
	case l == nil:
		return agents()
	case len(l.described) == 0:
		return l.base
	}
	return l.all
}

// A LocalAgent is an agent the file describes, one the built-in tables do
// not know: how to find its input box, and what tells it from another
// agent that draws the same box. Its rules are the file's rules that name
// it. Every pattern is a Go regular expression matched against one line.
type LocalAgent struct {
	// Name is the agent's name, as results and rules name it.
	Name string `json:"name"`
	// Note says why, for whoever reads the file next; the classifier
	// does not read it.
	Note string `json:"note,omitempty"`
	// Box is the input box the agent draws at the bottom of its screen;
	// Boxes, instead of Box, are the shapes it takes across releases, the
	// first found lowest on the screen read.
	Box   LocalBox   `json:"box"`
	Boxes []LocalBox `json:"boxes,omitempty"`
	// Marks are texts only this agent draws in or under its box (a status
	// bar's hint), matched anywhere in a line: they tell it from another
	// agent with the same box.
	Marks []string `json:"marks,omitempty"`
	// MarksRequired says its box is its only when one of its marks shows
	// in or under it: a box as plain as two rules around a line is drawn
	// by other programs too.
	MarksRequired bool `json:"marks_required,omitempty"`
	// Placeholders are texts it draws in an empty box: no draft.
	// FaintPlaceholders are texts it draws faint there: no draft when the
	// capture cannot tell faint text (no attributes), else a human's
	// words, which a suggestion may read like.
	Placeholders      []string `json:"placeholders,omitempty"`
	FaintPlaceholders []string `json:"faint_placeholders,omitempty"`
	// Transparent lines may sit between its live block and its box
	// without being the live block (tips, notices).
	Transparent []string `json:"transparent,omitempty"`
	// UserTurn matches the echo of a human's message in its transcript,
	// where the turn region starts; SessionStart its banner, above which
	// no turn of this session reaches.
	UserTurn     string `json:"user_turn,omitempty"`
	SessionStart string `json:"session_start,omitempty"`
	// StatusLines is how many lines it may draw under its box after a
	// blank line; 2 when zero.
	StatusLines int `json:"status_lines,omitempty"`
	// FrameTop matches the edge it draws above a dialog, and Heads the
	// lines that start a block of its transcript (an answer, a tool call,
	// a spinner, a human's message): lines between its box and a frame
	// top with no head between them are a dialog hugging the box (region
	// frame). Each needs the other.
	FrameTop string `json:"frame_top,omitempty"`
	Heads    string `json:"heads,omitempty"`
	// Programs are the names its process runs as, lower case: the
	// process's own name, its executable's or, for an interpreter, its
	// script's, without .js or .exe. Keys of ours go only to a process of
	// one of them in the pane's foreground (package probe).
	Programs []string `json:"programs,omitempty"`
	// Title says what the agent's terminal title says of its state.
	Title LocalTitle `json:"title,omitzero"`
	// Hooks are the agent's events whose hooks wake the watcher, and where
	// install --hooks writes them (LocalHooks).
	Hooks LocalHooks `json:"hooks,omitzero"`
	// Witness names the kind of the agent's own status or log files that
	// say whether its turn is open (one of WitnessKinds): found and read
	// as the watcher reads that kind, weighed against its screen only.
	// Events is its events log, for the witness "events".
	Witness string      `json:"witness,omitempty"`
	Events  LocalEvents `json:"events,omitzero"`
	// Account is where it keeps the account it is signed in with.
	Account LocalAccount `json:"account,omitzero"`
}

// A LocalTitle is what an agent's terminal title (tmux's #{pane_title})
// says of its state: patterns, anchored with ^, matched against the
// title. Waiting is read first, then Busy, then Idle.
type LocalTitle struct {
	Waiting []string `json:"waiting,omitempty"`
	Busy    []string `json:"busy,omitempty"`
	Idle    []string `json:"idle,omitempty"`
}

// A LocalBox is an input box: an optional top edge, the prompt line, and an
// optional bottom edge (without one, the box ends at the first blank line).
type LocalBox struct {
	Top string `json:"top,omitempty"`
	// Prompt matches the box's first line; its one group is what a human
	// typed there, so that a draft is never typed over.
	Prompt string `json:"prompt"`
	Bottom string `json:"bottom,omitempty"`
	// Blank says the prompt line of an empty box is blank: the agent
	// draws no prompt mark, only the box's edges.
	Blank bool `json:"blank,omitempty"`
	// Sides says the box has a side border and no top edge (OpenCode's ┃
	// column): every line inside it matches Prompt, whose group is what a
	// human typed on that line. The box reaches up from its bottom edge
	// through every such line, so it needs Bottom and takes no Top.
	Sides bool `json:"sides,omitempty"`
	// Name names the shape in explanations (an era of the agent's UI).
	Name string `json:"name,omitempty"`
	// PromptPrefixes are literal starts of the prompt line: a line that
	// starts with none of them is no prompt, and costs no regular
	// expression.
	PromptPrefixes []string `json:"prompt_prefixes,omitempty"`
	// NotPrompt matches lines that match Prompt but belong to a dialog
	// (an option under the same cursor).
	NotPrompt string `json:"not_prompt,omitempty"`
	// Inner strips the box's side borders from a line inside it: its one
	// group is the line's content.
	Inner string `json:"inner,omitempty"`
	// Lead matches one line allowed between Top and the prompt line (a
	// hint drawn inside the box), with up to Gap blank lines under it.
	Lead string `json:"lead,omitempty"`
	Gap  int    `json:"gap,omitempty"`
	// Last says the box ends the screen: nothing but its Bottom may
	// follow the prompt line (an agent that draws its prompt mark on
	// other lines too).
	Last bool `json:"last,omitempty"`
}

// A LocalPattern is one pattern of a matcher: a Go regular expression
// written as a string, or as {"pattern": "...", "needs": ["..."]}, where
// needs are literals one of which a line must hold to match (a cheap test
// before the expression, in any case under (?i)).
type LocalPattern struct {
	Pattern string   `json:"pattern"`
	Needs   []string `json:"needs,omitempty"`
}

// UnmarshalJSON reads a pattern written as a string or as an object.
func (p *LocalPattern) UnmarshalJSON(b []byte) error {
	const want = `a pattern is a string or {"pattern": "...", "needs": [...]}`
	switch b = bytes.TrimSpace(b); {
	case len(b) > 0 && b[0] == '"':
		*p = LocalPattern{}
		return json.Unmarshal(b, &p.Pattern)
	case len(b) == 0 || b[0] != '{':
		return fmt.Errorf("%s, not %.20s", want, b)
	}
	type plain LocalPattern
	var x plain
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&x); err != nil {
		return fmt.Errorf("%s: %v", want, strings.TrimPrefix(err.Error(), "json: "))
	}
	*p = LocalPattern(x)
	return nil
}

// A LocalMatch says how a rule finds its evidence in its region, when
// reading each line for Pattern is not enough: a menu, a picker, the
// order of two lines. Kind names the matcher; the other members are its
// patterns (see docs/rules.md for which each kind takes).
type LocalMatch struct {
	Kind string `json:"kind"`
	// Cursors are the marks an option_menu's cursor is drawn with.
	Cursors  []string     `json:"cursors,omitempty"`
	Until    LocalPattern `json:"until"`
	Origin   LocalPattern `json:"origin"`
	Footer   LocalPattern `json:"footer"`
	Cursor   LocalPattern `json:"cursor"`
	Option   LocalPattern `json:"option"`
	Question LocalPattern `json:"question"`
	Heads    LocalPattern `json:"heads"`
	Bound    LocalPattern `json:"bound"`
	Banner   LocalPattern `json:"banner"`
	Rule     LocalPattern `json:"rule"`
}

// A LocalRule is one rule as the file writes it.
type LocalRule struct {
	// Agent names the agent by its first word (claude, codex, gemini, opencode, pi,
	// copilot, qwen) or its full name, built in or described by the file.
	Agent string `json:"agent"`
	// Name names the rule in explanations; a built-in rule's name
	// replaces that rule.
	Name string `json:"name"`
	// Note says why the rule reads what it reads, for whoever reads the
	// file next; the classifier does not read it.
	Note string `json:"note,omitempty"`
	// Region is above, below, dialog, box, turn or frame.
	Region string `json:"region"`
	// Pattern is a Go regular expression matched against each line of
	// the region, anchored with ^ unless Free says why not.
	Pattern string `json:"pattern"`
	Free    string `json:"free,omitempty"`
	// Lines, when positive, reads only the region's last Lines non-blank
	// lines (a footer); zero reads every line.
	Lines int `json:"lines,omitempty"`
	// Verdict is working, question, or hold:NAME (draft, interrupt,
	// keyboard, usage-limit, no-input-box, turn-open).
	Verdict string `json:"verdict"`
	// Priority is before (read ahead of the built-in rules of the same
	// verdict) or after (the default).
	Priority string `json:"priority,omitempty"`
	// Disable turns the built-in rule of this name off instead.
	Disable bool `json:"disable,omitempty"`
	// Startup says the rule reads a screen the agent draws before or
	// outside its composer (a folder to trust, a sign-in): a question a
	// human answers at the terminal, never from the chat.
	Startup bool `json:"startup,omitempty"`
	// Needs are literals one of which a line must hold for Pattern to
	// match it (a cheap test before the expression).
	Needs []string `json:"needs,omitempty"`
	// Match, when set, says how the region is read (LocalMatch); without
	// it each line is read for Pattern.
	Match *LocalMatch `json:"match,omitempty"`
	// First says a hold is read before any dialog or activity: a screen
	// (an overlay) that hides the box and asks nothing.
	First bool `json:"first,omitempty"`
	// Quoted are the rule's marker words as an answer could quote them in
	// prose; the classifier's tests write each into the transcript and
	// check that no verdict moves. Tool says the agent draws them as a ⎿
	// line itself, so that quoting is not tested.
	Quoted []string `json:"quoted,omitempty"`
	Tool   bool     `json:"tool,omitempty"`
}

// A LocalSource says where a rule of the effective table came from.
type LocalSource struct {
	Agent, Name, Region, Verdict string
	// From is "built-in", or FILE:LINE for a rule from a rules file.
	From string
}

var regionWords = map[string]Region{"above": Above, "below": Below, "dialog": Dialog, "box": Box, "turn": Turn, "frame": Frame}

var holdWords = map[string]Hold{"draft": HoldDraft, "interrupt": HoldInterrupt, "keyboard": HoldKeyboard,
	"usage-limit": HoldUsageLimit, "no-input-box": HoldNoInputBox, "turn-open": HoldTurnOpen}

// agentByWord finds an agent by its short name (its name's first word:
// claude, codex, gemini, copilot) or its full name.
func (l *Local) agentByWord(w string) *agent {
	for _, a := range l.agents() {
		first, _, _ := strings.Cut(a.name, " ")
		if strings.EqualFold(a.name, w) || strings.EqualFold(first, w) {
			return a
		}
	}
	return nil
}

// ParseLocal reads a rules file: a JSON object whose "rules" member is a
// list of rules and whose "agents" member a list of agents it describes
// (LocalAgent). Every error names the file and the line it is on.
func ParseLocal(data []byte, path string) (*Local, error) {
	l, err := parseLocal(data, path, agents())
	if err != nil {
		return nil, err
	}
	for _, a := range l.described {
		if a.hooks.Events != nil && reflect.ValueOf(a.hooks.Settings).IsZero() {
			return nil, errorf("%s: agent %q: %w", a.source, a.name, errOwnHooks)
		}
	}
	return l, nil
}

// parseLocal is ParseLocal for a file read after the agents of base.
func parseLocal(data []byte, path string, base []*agent) (*Local, error) {
	l := newLocal(path, base, false)
	at := func(off int64) string {
		return path + ":" + strconv.Itoa(1+bytes.Count(data[:min(int(off), len(data))], []byte("\n")))
	}
	fail := func(off int64, format string, args ...any) error {
		return errorf("%s: %s", at(off), fmt.Sprintf(format, args...))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	jsonErr := func(err error) error {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syn):
			return fail(syn.Offset, "%v", syn)
		case errors.As(err, &typ):
			return fail(typ.Offset, "%s must be a %s, not a %s", typ.Field, typ.Type, typ.Value)
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return fail(int64(len(data)), "the file ends early")
		}
		return fail(dec.InputOffset(), "%v", err)
	}
	expect := func(want json.Delim) error {
		off := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return jsonErr(err)
		}
		if d, ok := tok.(json.Delim); !ok || d != want {
			return fail(off, "want %q, found %v", string(want), tok)
		}
		return nil
	}
	if err := expect('{'); err != nil {
		return nil, err
	}
	// Rules may name an agent the file describes after them: they are
	// added once every member is read.
	type pending struct {
		rule  LocalRule
		start int64
	}
	var rules []pending
	seen := false
	for dec.More() {
		off := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return nil, jsonErr(err)
		}
		if tok != "rules" && tok != "agents" {
			return nil, fail(off, "unknown member %v (the file holds \"rules\": [...] and \"agents\": [...])", tok)
		}
		member := tok.(string)
		seen = seen || member == "rules"
		if err := expect('['); err != nil {
			return nil, err
		}
		for dec.More() {
			// The offset before a value is where the previous token
			// ended; the value starts at its brace, after any comma
			// and white space.
			start := dec.InputOffset()
			for int(start) < len(data) && strings.ContainsRune(" \t\r\n,", rune(data[start])) {
				start++
			}
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return nil, jsonErr(err)
			}
			var lr LocalRule
			var la LocalAgent
			into := any(&lr)
			if member == "agents" {
				into = &la
			}
			rd := json.NewDecoder(bytes.NewReader(raw))
			rd.DisallowUnknownFields()
			if err := rd.Decode(into); err != nil {
				var typ *json.UnmarshalTypeError
				if errors.As(err, &typ) {
					return nil, fail(start+typ.Offset, "%s must be a %s, not a %s", typ.Field, typ.Type, typ.Value)
				}
				return nil, fail(start, "%v", strings.TrimPrefix(err.Error(), "json: "))
			}
			if member == "rules" {
				rules = append(rules, pending{lr, start})
			} else if err := l.describe(la, at(start)); err != nil {
				return nil, fail(start, "%v", err)
			}
		}
		if err := expect(']'); err != nil {
			return nil, err
		}
	}
	if err := expect('}'); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fail(dec.InputOffset(), "more after the closing brace")
	}
	if !seen && len(l.described) == 0 {
		return nil, fail(0, "no \"rules\" member")
	}
	for _, r := range rules {
		if err := l.add(r.rule, at(r.start)); err != nil {
			return nil, fail(r.start, "%v", err)
		}
	}
	for _, a := range l.described {
		if !l.hasWorking(a) {
			return nil, errorf("%s: agent %q: no working rule names it: without one every screen of it reads stopped, and a working agent would be nudged", a.source, a.name)
		}
	}
	return l, nil
}

// newLocal returns an empty Local for the file at path, read after the
// agents of base; trusted skips the checks of its patterns (see
// checkPattern).
func newLocal(path string, base []*agent, trusted bool) *Local {
	return &Local{Path: path, base: base, trusted: trusted, before: map[*agent][]rule{}, after: map[*agent][]rule{},
		replace: map[*agent]map[string]rule{}, disabled: map[*agent]map[string]bool{}}
}

// read adds a file's agents, then its rules, naming the file in errors:
// one of the project's own descriptions, decoded at build time
// (descriptions_gen.go), whose lines its test named when it was checked
// as an operator's (TestBuiltinDescriptionsChecked).
func (l *Local) read(agents []LocalAgent, rules []LocalRule) error {
	for _, la := range agents {
		if err := l.describe(la, l.Path); err != nil {
			return errorf("%s: %v", l.Path, err)
		}
	}
	for _, lr := range rules {
		if err := l.add(lr, l.Path); err != nil {
			return errorf("%s: %v", l.Path, err)
		}
	}
	return nil
}

// describe checks an agent the file describes and adds it. Its patterns
// are held to the rules' own: anchored, except the marks, which are read
// only in and under its box.
func (l *Local) describe(la LocalAgent, where string) error {
	name := strings.TrimSpace(la.Name)
	if name == "" {
		return errors.New("an agent needs a name")
	}
	if l.agentByWord(name) != nil {
		return fmt.Errorf("agent %q: the name of an agent already known (a built-in agent's rules are changed with rules, not described again)", name)
	}
	if la.StatusLines < 0 || la.StatusLines > maxBelow {
		return fmt.Errorf("agent %q: status_lines must be from 0 to %d", name, maxBelow)
	}
	fail := func(err error) error { return fmt.Errorf("agent %q: %w", name, err) }
	if la.MarksRequired && len(la.Marks) == 0 {
		return fail(errors.New("marks_required without marks"))
	}
	if err := l.checkPrograms(la.Programs); err != nil {
		return fail(err)
	}
	if err := checkHooks(la.Hooks); err != nil {
		return fail(err)
	}
	if la.Hooks.Events != nil && len(la.Programs) == 0 {
		return fail(errHooksProgram)
	}
	if err := checkAccount(la.Account); err != nil {
		return fail(err)
	}
	if err := checkWitness(la.Witness); err != nil {
		return fail(err)
	}
	a := &agent{name: name, source: where, statusLines: la.StatusLines, marksRequired: la.MarksRequired, programs: la.Programs,
		hooks: la.Hooks, witness: la.Witness, account: la.Account}
	switch hasEvents := !reflect.ValueOf(la.Events).IsZero(); {
	case hasEvents != (la.Witness == WitnessEvents):
		return fail(errEventsWitness)
	case hasEvents:
		log, err := eventsLog(name, la.Events)
		if err != nil {
			return fail(err)
		}
		for _, other := range l.agents() {
			if other.events != nil && other.events.Key == log.Key {
				return fail(fmt.Errorf("events: its logs would go by %q, as %s's do: a name that differs in more than case and punctuation", log.Key, other.name))
			}
		}
		a.events = &log
	}
	boxes := la.Boxes
	switch hasBox := !reflect.ValueOf(la.Box).IsZero(); {
	case hasBox && len(boxes) > 0:
		return fail(errors.New("both box and boxes: one box, or a list of its shapes"))
	case hasBox || len(boxes) == 0:
		boxes = []LocalBox{la.Box}
	}
	for i, lb := range boxes {
		what := "box"
		if len(la.Boxes) > 0 {
			what = fmt.Sprintf("boxes[%d]", i)
		}
		shape, err := l.boxShape(lb, what, name+"'s box ("+where+")")
		if err != nil {
			return fail(err)
		}
		a.boxes = append(a.boxes, shape)
	}
	var err error
	for _, one := range []struct {
		what string
		expr string
		into **pattern
	}{{"user_turn", la.UserTurn, &a.userTurn}, {"session_start", la.SessionStart, &a.sessionStart},
		{"frame_top", la.FrameTop, &a.frameTop}, {"heads", la.Heads, &a.heads}} {
		if one.expr == "" {
			continue
		}
		if *one.into, err = l.pattern(one.what, LocalPattern{Pattern: one.expr}, ""); err != nil {
			return fail(err)
		}
	}
	if (a.frameTop == nil) != (a.heads == nil) {
		return fail(errors.New("frame_top and heads go together: a frame is told from the transcript by the heads between it and the box"))
	}
	for _, list := range []struct {
		what  string
		exprs []string
		into  *[]*pattern
		free  string
	}{{"marks", la.Marks, &a.marks, "a mark, read only in and under the agent's box"},
		{"placeholders", la.Placeholders, &a.shownPlaceholders, ""},
		{"faint_placeholders", la.FaintPlaceholders, &a.placeholders, ""},
		{"transparent", la.Transparent, &a.transparent, ""},
		{"title waiting", la.Title.Waiting, &a.title.waiting, ""},
		{"title busy", la.Title.Busy, &a.title.busy, ""},
		{"title idle", la.Title.Idle, &a.title.idle, ""}} {
		for _, x := range list.exprs {
			if x == "" {
				return fail(fmt.Errorf("%s: no pattern", list.what))
			}
			p, err := l.pattern(list.what, LocalPattern{Pattern: x}, list.free)
			if err != nil {
				return fail(err)
			}
			*list.into = append(*list.into, p)
		}
	}
	// A placeholder is no draft whatever its colour; a faint one only
	// where the capture cannot tell faint text.
	a.placeholders = append(slices.Clip(a.shownPlaceholders), a.placeholders...)
	l.described = append(l.described, a)
	l.all = append(slices.Clip(l.base), l.described...)
	return nil
}

// maxGap bounds the blank lines a box may draw between its lead and its
// prompt line.
const maxGap = 4

// boxShape checks one shape of an agent's box, named what in errors.
func (l *Local) boxShape(lb LocalBox, what, name string) (boxShape, error) {
	shape := boxShape{name: lb.Name, promptPrefixes: lb.PromptPrefixes, gap: lb.Gap, last: lb.Last, blankPrompt: lb.Blank, sides: lb.Sides}
	if shape.name == "" {
		shape.name = name
	}
	fail := func(format string, args ...any) (boxShape, error) {
		if what != "box" {
			format = what + ": " + format // which of the shapes
		}
		return boxShape{}, fmt.Errorf(format, args...)
	}
	var err error
	for _, one := range []struct {
		what     string
		expr     string
		into     **pattern
		required bool
	}{{"top", lb.Top, &shape.top, false}, {"prompt", lb.Prompt, &shape.prompt, true}, {"bottom", lb.Bottom, &shape.bottom, false},
		{"not_prompt", lb.NotPrompt, &shape.notPrompt, false}, {"inner", lb.Inner, &shape.inner, false}, {"lead", lb.Lead, &shape.lead, false}} {
		switch {
		case one.expr == "" && one.required:
			return boxShape{}, fmt.Errorf("%s %s: no pattern", what, one.what)
		case one.expr == "":
			continue
		}
		if *one.into, err = l.pattern(what+" "+one.what, LocalPattern{Pattern: one.expr}, ""); err != nil {
			return boxShape{}, err
		}
	}
	for _, p := range lb.PromptPrefixes {
		if p == "" {
			return fail("prompt_prefixes: an empty prefix, which every line has")
		}
	}
	switch {
	case lb.Blank && (shape.top == nil || shape.bottom == nil):
		return fail("a box whose prompt may be blank needs its top and bottom edges, or any blank line would be one")
	case lb.Sides && (shape.top != nil || shape.bottom == nil):
		return fail("a box drawn with sides reaches up through its bordered lines from its bottom edge: it needs a bottom and takes no top")
	case lb.Sides && shape.inner != nil:
		return fail("a box drawn with sides reads every line with prompt: it takes no inner")
	case shape.lead != nil && shape.top == nil:
		return fail("lead is a line under the top edge: it needs a top")
	case lb.Gap < 0 || lb.Gap > maxGap:
		return fail("gap must be from 0 to %d", maxGap)
	case lb.Gap > 0 && shape.lead == nil:
		return fail("gap is the blank lines under the lead: it needs a lead")
	case lb.Last && shape.bottom == nil:
		return fail("a box that ends the screen is told by its bottom line under the prompt: last needs a bottom")
	}
	if shape.sides {
		// Every line inside is read as the prompt line is.
		shape.inner = shape.prompt
	}
	return shape, nil
}

// pattern checks one of the file's patterns, named what, and makes it:
// anchored with ^ unless free says why it may match anywhere in a line.
func (l *Local) pattern(what string, lp LocalPattern, free string) (*pattern, error) {
	if lp.Pattern == "" {
		return nil, fmt.Errorf("%s: no pattern", what)
	}
	if err := l.checkPattern(what, lp.Pattern, free != ""); err != nil {
		return nil, err
	}
	p := described(lp.Pattern)
	p.free = free
	if len(lp.Needs) == 0 {
		return p, nil
	}
	fold := strings.Contains(lp.Pattern, "(?i")
	for _, lit := range lp.Needs {
		switch {
		case lit == "":
			return nil, fmt.Errorf("%s: needs: an empty literal, which every line holds", what)
		case fold && !l.trusted && !foldable(lit):
			return nil, fmt.Errorf("%s: needs: %q under (?i) must be ASCII without k or s (their case folds outside ASCII)", what, lit)
		}
	}
	if fold {
		return p.needs(containingFold(lp.Needs...)), nil
	}
	return p.needs(containing(lp.Needs...)), nil
}

// foldable says a literal's case-folded match is its bytes in some case:
// ASCII, without k or s, whose cases fold to the Kelvin sign and the long
// s too.
func foldable(lit string) bool {
	for i := 0; i < len(lit); i++ {
		if c := lit[i] | 0x20; lit[i] >= 0x80 || c == 'k' || c == 's' {
			return false
		}
	}
	return true
}

// errNotAnchored says a pattern does not start with ^.
var errNotAnchored = errors.New("not anchored with ^")

// checkPattern checks one of the file's patterns, named what: it compiles,
// and is anchored with ^ unless it may match anywhere; a box prompt has
// exactly one group. The project's own descriptions were checked so by
// their test, and a poll does not pay for it again.
func (l *Local) checkPattern(what, expr string, anywhere bool) error {
	if l.trusted {
		return nil
	}
	x, err := regexp.Compile(expr)
	if err != nil {
		return fmt.Errorf("%s: %v", what, err)
	}
	if !anywhere && !anchored(expr) {
		return fmt.Errorf("%s: pattern %q is %w", what, expr, errNotAnchored)
	}
	switch {
	case strings.HasSuffix(what, " prompt") && x.NumSubexp() != 1:
		return fmt.Errorf("%s: pattern %q needs exactly one group, what a human typed in the box (a draft is never typed over); it has %d", what, expr, x.NumSubexp())
	case strings.HasSuffix(what, " inner") && x.NumSubexp() != 1:
		return fmt.Errorf("%s: pattern %q needs exactly one group, a line's content inside the borders; it has %d", what, expr, x.NumSubexp())
	}
	return nil
}

// hasWorking says whether the file gives the agent a rule that reads it
// working.
func (l *Local) hasWorking(a *agent) bool {
	for _, r := range l.rulesOf(a) {
		if r.verdict.state == Working {
			return true
		}
	}
	return false
}

// add checks one rule and adds it.
func (l *Local) add(lr LocalRule, where string) error {
	a := l.agentByWord(lr.Agent)
	if a == nil {
		return fmt.Errorf("rule %q: unknown agent %q (want claude, codex, gemini, opencode, pi, copilot, qwen or an agent the file describes)", lr.Name, lr.Agent)
	}
	if strings.TrimSpace(lr.Name) == "" {
		return errors.New("a rule needs a name")
	}
	if lr.Disable {
		if !hasRule(a.rules, lr.Name) {
			return fmt.Errorf("rule %q: %s has no built-in rule of that name to disable", lr.Name, a.name)
		}
		if l.disabled[a] == nil {
			l.disabled[a] = map[string]bool{}
		}
		l.disabled[a][lr.Name] = true
		return nil
	}
	ru, err := l.rule(lr, a)
	if err != nil {
		return fmt.Errorf("rule %q: %w", lr.Name, err)
	}
	ru.source = where
	if lr.Priority != "" && lr.Priority != "before" && lr.Priority != "after" {
		return fmt.Errorf("rule %q: unknown priority %q (want before or after)", lr.Name, lr.Priority)
	}
	switch {
	case hasRule(a.rules, lr.Name):
		if l.replace[a] == nil {
			l.replace[a] = map[string]rule{}
		}
		l.replace[a][lr.Name] = ru
	case lr.Priority == "before":
		l.before[a] = append(l.before[a], ru)
	default:
		l.after[a] = append(l.after[a], ru)
	}
	return nil
}

// rule checks one rule of agent a and makes it.
func (l *Local) rule(lr LocalRule, a *agent) (rule, error) {
	region, ok := regionWords[lr.Region]
	if !ok {
		return rule{}, fmt.Errorf("unknown region %q (want above, below, dialog, box, turn or frame)", lr.Region)
	}
	var v verdict
	switch hold, isHold := strings.CutPrefix(lr.Verdict, "hold:"); {
	case lr.Verdict == "working":
		v = working
	case lr.Verdict == "question":
		v = question
	case lr.Verdict == "look-again":
		v = unsettled
	case isHold && holdWords[hold] != "":
		v = verdict{hold: holdWords[hold]}
	default:
		return rule{}, fmt.Errorf("unknown verdict %q (want working, question, look-again or hold:NAME, NAME one of draft, interrupt, keyboard, usage-limit, no-input-box, turn-open)", lr.Verdict)
	}
	if lr.First {
		// Read before any dialog, it could hide a question: only a
		// screen that hides the box and asks nothing is read so.
		if v.hold != HoldNoInputBox {
			return rule{}, errors.New("first is said of hold:no-input-box only (a screen that hides the box and asks nothing, read before any dialog)")
		}
		v.first = true
	}
	if lr.Startup && v.state != Question {
		return rule{}, errors.New("startup is said of a question rule only")
	}
	if lr.Lines < 0 {
		return rule{}, errors.New("lines must not be negative")
	}
	kind := "any_line"
	if v.state == Working && region == Above {
		// A spinner heads or closes the live block; a line inside it is
		// an answer's, and may quote any marker.
		kind = "end_line"
	}
	var mt LocalMatch
	if lr.Match != nil {
		mt = *lr.Match
		if kind = mt.Kind; kind == "last_lines" {
			return rule{}, errors.New(`match: the region's last lines are read with "lines": N, not a kind`)
		}
	}
	if lr.Lines > 0 {
		if lr.Match != nil {
			return rule{}, fmt.Errorf("lines reads the region's last lines for pattern: it takes no match (kind %q)", kind)
		}
		kind = "last_lines"
	}
	m, err := l.matcher(kind, mt, lr, a)
	if err != nil {
		return rule{}, err
	}
	if v.state == Working {
		// The turn and the dialog hold the transcript and the agent's
		// text, where any word can be quoted: a marker read there would
		// read an idle agent as busy for as long as it stays on screen.
		// A status line read bottom-up through the turn (latest) is live
		// while no line under it ends the turn.
		live := region == Above || region == Below || region == Turn && kind == "latest"
		if !live {
			return rule{}, fmt.Errorf("a working rule reads only live evidence, region above or below (the live block over the box, the status lines under it), or the turn with kind latest; %s may hold quoted text", lr.Region)
		}
		if !readsLines(kind) {
			return rule{}, fmt.Errorf("a working rule reads lines of live evidence: kind %s is a dialog's or a turn's shape (want one of any_line, end_line, edge_line, latest, or \"lines\": N)", kind)
		}
	}
	for _, q := range lr.Quoted {
		if strings.TrimSpace(q) == "" {
			return rule{}, errors.New("quoted: an empty marker")
		}
	}
	return rule{name: lr.Name, region: region, verdict: v, match: m, startup: lr.Startup, quoted: lr.Quoted, tool: lr.Tool}, nil
}

// readsLines says whether a kind of matcher reads lines, not a dialog's
// or a turn's shape: the kinds a working rule may use.
func readsLines(kind string) bool {
	switch kind {
	case "any_line", "end_line", "edge_line", "last_lines", "latest":
		return true
	}
	return false
}

// matchKinds lists the kinds of matcher, for errors.
const matchKinds = "any_line, end_line, edge_line, latest, open_turn, option_menu, continue_menu, picker, picker_over_composer, frameless_menu or onboarding"

// matcher checks a rule's match of the given kind and makes it: the
// kinds that read lines take the rule's pattern, the others the
// patterns of match; each refuses what it does not read.
func (l *Local) matcher(kind string, mt LocalMatch, lr LocalRule, a *agent) (matcher, error) {
	// wants lists the members of match the kind reads; every other one
	// must be empty, so that a misspelt kind or a stray member is said.
	type member struct {
		name string
		lp   *LocalPattern
	}
	all := []member{{"until", &mt.Until}, {"origin", &mt.Origin}, {"footer", &mt.Footer}, {"cursor", &mt.Cursor}, {"option", &mt.Option},
		{"question", &mt.Question}, {"heads", &mt.Heads}, {"bound", &mt.Bound}, {"banner", &mt.Banner}, {"rule", &mt.Rule}}
	var wants []string
	readsPattern := false // the kind reads the rule's pattern
	switch kind {
	case "any_line", "end_line", "edge_line", "last_lines":
		readsPattern = true
	case "latest":
		readsPattern, wants = true, []string{"until"}
	case "open_turn":
		wants = []string{"until", "origin"}
	case "option_menu":
	case "continue_menu":
		wants = []string{"footer"}
	case "picker":
		wants = []string{"footer", "cursor"}
	case "picker_over_composer":
		wants = []string{"footer", "cursor", "heads", "bound"}
	case "frameless_menu":
		wants = []string{"cursor", "option", "question", "heads?"}
	case "onboarding":
		wants = []string{"banner", "rule", "cursor", "footer"}
	default:
		return nil, fmt.Errorf("match: unknown kind %q (want %s)", kind, matchKinds)
	}
	got := map[string]*pattern{}
	for _, m := range all {
		optional := slices.Contains(wants, m.name+"?")
		switch want := optional || slices.Contains(wants, m.name); {
		case !want && (m.lp.Pattern != "" || len(m.lp.Needs) > 0):
			return nil, fmt.Errorf("match: kind %s takes no %s", kind, m.name)
		case want && m.lp.Pattern == "" && optional:
		case want && m.lp.Pattern == "":
			return nil, fmt.Errorf("match: kind %s needs %s", kind, m.name)
		case want:
			p, err := l.pattern("match "+m.name, *m.lp, "")
			if err != nil {
				return nil, err
			}
			got[m.name] = p
		}
	}
	if kind == "option_menu" {
		if len(mt.Cursors) == 0 {
			return nil, errors.New("match: kind option_menu needs cursors, the marks its cursor is drawn with")
		}
		for _, c := range mt.Cursors {
			if strings.TrimSpace(c) == "" || strings.ContainsAny(c, "0123456789") {
				return nil, fmt.Errorf("match: cursor %q: a cursor is a visible mark, no digit", c)
			}
		}
	} else if len(mt.Cursors) > 0 {
		return nil, fmt.Errorf("match: kind %s takes no cursors", kind)
	}
	var p *pattern
	switch {
	case readsPattern && lr.Pattern == "":
		return nil, errors.New("no pattern")
	case !readsPattern && (lr.Pattern != "" || len(lr.Needs) > 0 || lr.Free != ""):
		return nil, fmt.Errorf("kind %s reads the patterns of match, not pattern", kind)
	case readsPattern:
		var err error
		p, err = l.pattern("pattern", LocalPattern{Pattern: lr.Pattern, Needs: lr.Needs}, lr.Free)
		if errors.Is(err, errNotAnchored) {
			return nil, fmt.Errorf("pattern %q is not anchored with ^ (say in \"free\" why it may match anywhere in a line)", lr.Pattern)
		} else if err != nil {
			return nil, err
		}
	}
	switch kind {
	case "any_line":
		return anyLine(p), nil
	case "end_line":
		return endLine(p), nil
	case "edge_line":
		return edgeLine(p), nil
	case "last_lines":
		return lastLines(lr.Lines, p), nil
	case "latest":
		return latest(p, got["until"]), nil
	case "open_turn":
		return openTurn(got["until"], got["origin"]), nil
	case "option_menu":
		return optionMenu(mt.Cursors...), nil
	case "continue_menu":
		return continueMenu(got["footer"]), nil
	case "picker":
		return picker(got["footer"], got["cursor"]), nil
	case "picker_over_composer":
		return pickerOverComposer(got["footer"], got["cursor"], got["heads"], got["bound"]), nil
	case "frameless_menu":
		heads := got["heads"]
		if heads == nil {
			if heads = a.heads; heads == nil {
				return nil, errors.New("match: kind frameless_menu needs heads, in match or the agent's")
			}
		}
		return framelessMenu(got["cursor"], got["option"], got["question"], heads), nil
	}
	return onboarding(got["banner"], got["rule"], got["cursor"], got["footer"]), nil
}

// regionWord is the word a rules file names a region by.
func regionWord(r Region) string {
	for w, x := range regionWords {
		if x == r {
			return w
		}
	}
	return r.String()
}

func hasRule(rules []rule, name string) bool {
	for _, r := range rules {
		if r.name == name {
			return true
		}
	}
	return false
}

// rulesOf returns an agent's effective rules: the built-in ones less those
// the file disables, each replaced by the file's rule of the same name, with
// the file's new rules before or after them.
func (l *Local) rulesOf(a *agent) []rule {
	if l == nil || len(l.before[a])+len(l.after[a])+len(l.replace[a])+len(l.disabled[a]) == 0 {
		return a.rules
	}
	out := append([]rule(nil), l.before[a]...)
	for _, r := range a.rules {
		if l.disabled[a][r.name] {
			continue
		}
		if x, ok := l.replace[a][r.name]; ok {
			r = x
		}
		out = append(out, r)
	}
	return append(out, l.after[a]...)
}

// An AgentSource is an agent screens are read against, and where it is
// described: "built-in", or FILE:LINE.
type AgentSource struct{ Name, From string }

// Agents lists the agents screens are read against: the built-in ones,
// then those the file describes.
func (l *Local) Agents() []AgentSource {
	var out []AgentSource
	for _, a := range l.agents() {
		from := a.source
		if from == "" {
			from = "built-in"
		}
		out = append(out, AgentSource{a.name, from})
	}
	return out
}

// Effective lists every agent's effective rules and where each came from.
func (l *Local) Effective() []LocalSource {
	var out []LocalSource
	for _, a := range l.agents() {
		for _, r := range l.rulesOf(a) {
			from := r.source
			if from == "" {
				from = "built-in"
			}
			out = append(out, LocalSource{Agent: a.name, Name: r.name, Region: regionWord(r.region), Verdict: r.verdict.String(), From: from})
		}
	}
	return out
}

func (v verdict) String() string {
	switch {
	case v.state != 0:
		return v.state.String()
	case v.first:
		return "hold:" + string(v.hold) + " (before any dialog)"
	case v.unsettled:
		return "look again"
	}
	return "hold:" + string(v.hold)
}
