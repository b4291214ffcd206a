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
	// Box is the input box the agent draws at the bottom of its screen.
	Box LocalBox `json:"box"`
	// Marks are texts only this agent draws in or under its box (a status
	// bar's hint), matched anywhere in a line: they tell it from another
	// agent with the same box.
	Marks []string `json:"marks,omitempty"`
	// MarksRequired says its box is its only when one of its marks shows
	// in or under it: a box as plain as two rules around a line is drawn
	// by other programs too.
	MarksRequired bool `json:"marks_required,omitempty"`
	// Placeholders are texts it draws in an empty box: no draft.
	Placeholders []string `json:"placeholders,omitempty"`
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
}

// A LocalRule is one rule as the file writes it.
type LocalRule struct {
	// Agent names the agent by its first word (claude, codex, gemini, opencode, pi,
	// copilot, qwen) or its full name, built in or described by the file.
	Agent string `json:"agent"`
	// Name names the rule in explanations; a built-in rule's name
	// replaces that rule.
	Name string `json:"name"`
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
	all := tables()
	short := map[string]*agent{"claude": all[0], "codex": all[1], "gemini": all[2]}
	if a := short[strings.ToLower(w)]; a != nil {
		return a
	}
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
	return parseLocal(data, path, agents(), false)
}

// parseLocal is ParseLocal for a file read after the agents of base;
// trusted skips the checks of its patterns (see checkPattern).
func parseLocal(data []byte, path string, base []*agent, trusted bool) (*Local, error) {
	l := &Local{Path: path, base: base, trusted: trusted, before: map[*agent][]rule{}, after: map[*agent][]rule{},
		replace: map[*agent]map[string]rule{}, disabled: map[*agent]map[string]bool{}}
	if trusted {
		return l.readTrusted(data)
	}
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

// readTrusted reads one of the project's own files, which its test read
// as an operator's (TestBuiltinDescriptionsChecked): whole, in one decode,
// with no line to name, since nothing in it fails.
func (l *Local) readTrusted(data []byte) (*Local, error) {
	var f struct {
		Agents []LocalAgent `json:"agents"`
		Rules  []LocalRule  `json:"rules"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, errorf("%s: %v", l.Path, err)
	}
	for _, la := range f.Agents {
		if err := l.describe(la, l.Path); err != nil {
			return nil, errorf("%s: %v", l.Path, err)
		}
	}
	for _, lr := range f.Rules {
		if err := l.add(lr, l.Path); err != nil {
			return nil, errorf("%s: %v", l.Path, err)
		}
	}
	return l, nil
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
	compile := func(what, expr string, optional, anywhere bool) (*pattern, error) {
		switch {
		case expr == "" && optional:
			return nil, nil
		case expr == "":
			return nil, fmt.Errorf("agent %q: %s: no pattern", name, what)
		}
		if err := l.checkPattern(what, expr, anywhere); err != nil {
			return nil, fmt.Errorf("agent %q: %s", name, err)
		}
		if anywhere {
			return free(expr, "a mark, read only in and under the agent's box"), nil
		}
		return re(expr), nil
	}
	if la.MarksRequired && len(la.Marks) == 0 {
		return fmt.Errorf("agent %q: marks_required without marks", name)
	}
	a := &agent{name: name, source: where, statusLines: la.StatusLines, marksRequired: la.MarksRequired}
	var shape boxShape
	var err error
	shape.name = name + "'s box (" + where + ")"
	if shape.top, err = compile("box top", la.Box.Top, true, false); err != nil {
		return err
	}
	if shape.prompt, err = compile("box prompt", la.Box.Prompt, false, false); err != nil {
		return err
	}
	if shape.bottom, err = compile("box bottom", la.Box.Bottom, true, false); err != nil {
		return err
	}
	if la.Box.Blank && (shape.top == nil || shape.bottom == nil) {
		return fmt.Errorf("agent %q: a box whose prompt may be blank needs its top and bottom edges, or any blank line would be one", name)
	}
	shape.blankPrompt = la.Box.Blank
	if la.Box.Sides && (shape.top != nil || shape.bottom == nil) {
		return fmt.Errorf("agent %q: a box drawn with sides reaches up through its bordered lines from its bottom edge: it needs a bottom and takes no top", name)
	}
	if shape.sides = la.Box.Sides; shape.sides {
		// Every line inside is read as the prompt line is.
		shape.inner = shape.prompt
	}
	a.boxes = []boxShape{shape}
	if a.userTurn, err = compile("user_turn", la.UserTurn, true, false); err != nil {
		return err
	}
	if a.sessionStart, err = compile("session_start", la.SessionStart, true, false); err != nil {
		return err
	}
	for _, list := range []struct {
		what     string
		exprs    []string
		into     *[]*pattern
		anywhere bool
	}{{"marks", la.Marks, &a.marks, true}, {"placeholders", la.Placeholders, &a.placeholders, false}, {"transparent", la.Transparent, &a.transparent, false}} {
		for _, x := range list.exprs {
			p, err := compile(list.what, x, false, list.anywhere)
			if err != nil {
				return err
			}
			*list.into = append(*list.into, p)
		}
	}
	// Its placeholder is no draft whatever its colour: a described agent
	// says the text, not how it is drawn.
	a.shownPlaceholders = a.placeholders
	l.described = append(l.described, a)
	l.all = append(slices.Clip(l.base), l.described...)
	return nil
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
	if what == "box prompt" && x.NumSubexp() != 1 {
		return fmt.Errorf("box prompt: pattern %q needs exactly one group, what a human typed in the box (a draft is never typed over); it has %d", expr, x.NumSubexp())
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
	region, ok := regionWords[lr.Region]
	if !ok {
		return fmt.Errorf("rule %q: unknown region %q (want above, below, dialog, box, turn or frame)", lr.Name, lr.Region)
	}
	var v verdict
	switch hold, isHold := strings.CutPrefix(lr.Verdict, "hold:"); {
	case lr.Verdict == "working":
		v = working
	case lr.Verdict == "question":
		v = question
	case isHold && holdWords[hold] != "":
		v = verdict{hold: holdWords[hold]}
	default:
		return fmt.Errorf("rule %q: unknown verdict %q (want working, question or hold:NAME, NAME one of draft, interrupt, keyboard, usage-limit, no-input-box, turn-open)", lr.Name, lr.Verdict)
	}
	if v.state == Working && region != Above && region != Below {
		// The turn and the dialog hold the transcript and the agent's
		// text, where any word can be quoted: a marker read there would
		// read an idle agent as busy for as long as it stays on screen.
		return fmt.Errorf("rule %q: a working rule reads only live evidence, region above or below (the live block over the box, the status lines under it); %s may hold quoted text", lr.Name, lr.Region)
	}
	if lr.Pattern == "" {
		return fmt.Errorf("rule %q: no pattern", lr.Name)
	}
	if err := l.checkPattern("pattern", lr.Pattern, lr.Free != ""); errors.Is(err, errNotAnchored) {
		return fmt.Errorf("rule %q: pattern %q is not anchored with ^ (say in \"free\" why it may match anywhere in a line)", lr.Name, lr.Pattern)
	} else if err != nil {
		return fmt.Errorf("rule %q: %v", lr.Name, err)
	}
	p := re(lr.Pattern)
	if lr.Free != "" {
		p = free(lr.Pattern, lr.Free)
	}
	m := anyLine(p)
	if v.state == Working && region == Above {
		// A spinner heads or closes the live block; a line inside it is
		// an answer's, and may quote any marker.
		m = endLine(p)
	}
	if lr.Lines < 0 {
		return fmt.Errorf("rule %q: lines must not be negative", lr.Name)
	} else if lr.Lines > 0 {
		m = lastLines(lr.Lines, p)
	}
	if lr.Startup && v.state != Question {
		return fmt.Errorf("rule %q: startup is said of a question rule only", lr.Name)
	}
	ru := rule{name: lr.Name, region: region, verdict: v, match: m, source: where, startup: lr.Startup}
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
