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
}

// A LocalRule is one rule as the file writes it.
type LocalRule struct {
	// Agent is claude, codex or gemini (or the agent's full name).
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

// agentByWord finds an agent by its short or full name.
func agentByWord(w string) *agent {
	all := agents()
	short := map[string]*agent{"claude": all[0], "codex": all[1], "gemini": all[2]}
	if a := short[strings.ToLower(w)]; a != nil {
		return a
	}
	for _, a := range agents() {
		if strings.EqualFold(a.name, w) {
			return a
		}
	}
	return nil
}

// ParseLocal reads a rules file: a JSON object whose "rules" member is a
// list of rules. Every error names the file and the line it is on.
func ParseLocal(data []byte, path string) (*Local, error) {
	l := &Local{Path: path, before: map[*agent][]rule{}, after: map[*agent][]rule{},
		replace: map[*agent]map[string]rule{}, disabled: map[*agent]map[string]bool{}}
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
	seen := false
	for dec.More() {
		off := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return nil, jsonErr(err)
		}
		if tok != "rules" {
			return nil, fail(off, "unknown member %v (the file holds \"rules\": [...])", tok)
		}
		seen = true
		if err := expect('['); err != nil {
			return nil, err
		}
		for dec.More() {
			// The offset before a value is where the previous token
			// ended; the rule starts at its brace, after any comma
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
			rd := json.NewDecoder(bytes.NewReader(raw))
			rd.DisallowUnknownFields()
			if err := rd.Decode(&lr); err != nil {
				var typ *json.UnmarshalTypeError
				if errors.As(err, &typ) {
					return nil, fail(start+typ.Offset, "%s must be a %s, not a %s", typ.Field, typ.Type, typ.Value)
				}
				return nil, fail(start, "%v", strings.TrimPrefix(err.Error(), "json: "))
			}
			if err := l.add(lr, at(start)); err != nil {
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
	if !seen {
		return nil, fail(0, "no \"rules\" member")
	}
	return l, nil
}

// add checks one rule and adds it.
func (l *Local) add(lr LocalRule, where string) error {
	a := agentByWord(lr.Agent)
	if a == nil {
		return fmt.Errorf("rule %q: unknown agent %q (want claude, codex or gemini)", lr.Name, lr.Agent)
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
	if lr.Pattern == "" {
		return fmt.Errorf("rule %q: no pattern", lr.Name)
	}
	if _, err := regexp.Compile(lr.Pattern); err != nil {
		return fmt.Errorf("rule %q: pattern: %v", lr.Name, err)
	}
	if lr.Free == "" && !anchored(lr.Pattern) {
		return fmt.Errorf("rule %q: pattern %q is not anchored with ^ (say in \"free\" why it may match anywhere in a line)", lr.Name, lr.Pattern)
	}
	p := re(lr.Pattern)
	if lr.Free != "" {
		p = free(lr.Pattern, lr.Free)
	}
	m := anyLine(p)
	if lr.Lines < 0 {
		return fmt.Errorf("rule %q: lines must not be negative", lr.Name)
	} else if lr.Lines > 0 {
		m = lastLines(lr.Lines, p)
	}
	ru := rule{name: lr.Name, region: region, verdict: v, match: m, source: where}
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

// Effective lists every agent's effective rules and where each came from.
func (l *Local) Effective() []LocalSource {
	var out []LocalSource
	for _, a := range agents() {
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
