// Package audit plans and judges the deep audit of a watched project: it
// finds the project's own rules, turns each rule group into one dimension
// with a brief for a read-only, adversarial auditor, defines the report
// format those auditors write and parses it, checks every citation against
// the project's files, and synthesizes one report from the checked ones.
//
// The package is pure. It reads files only through what it is given (a list
// of contents, an fs.FS); it runs no agent, walks no directory, keeps no
// clock and sends nothing. Running the auditors, proving the tree stayed the
// same, writing the report and delivering it belong to the audit command
// (cmd/omega-monitor/audit.go).
package audit

import (
	"path"
	"strings"
)

// What counts as the project's own rules, exactly:
//
// Rule files are named CLAUDE.md, AGENTS.md, GEMINI.md, RULES.md,
// CONTRIBUTING.md or .cursorrules (at any depth); any file under a
// .cursor/rules/ directory; and any .md, .mdc or .txt file directly inside a
// directory named rules. Every list item of a rule file is a rule (the file
// exists to instruct), and so is every line carrying a marker word.
//
// Every other .md or .mdc file is a doc. In a doc, a rule is a list item
// under a heading that names rules or invariants ("## Invariants", "The rules
// that cost credibility"), or a line carrying a marker word.
//
// Marker words are the requirement words of RFC 2119 and their kin, in
// capitals only, so that prose ("you must see") is not a rule: MUST, MUST
// NOT, NEVER, ALWAYS, SHALL, SHALL NOT, REQUIRED, DO NOT.
//
// Text inside fenced code blocks is never a rule. An indented line under a
// rule continues it.
//
// Rules become dimensions by heading: the rules under one heading of one file
// are one dimension, named after the heading (after the file when there is
// none), except that each numbered item under a heading naming rules or
// invariants is a dimension of its own, named after its words. The same rules
// stated in two files (AGENTS.md copying CLAUDE.md) are one dimension citing
// both.

// ruleFileNames are the base names of rule files.
var ruleFileNames = map[string]bool{
	"CLAUDE.md": true, "AGENTS.md": true, "GEMINI.md": true, "RULES.md": true,
	"CONTRIBUTING.md": true, ".cursorrules": true,
}

// skipDirs are directories whose contents are never the project's own words:
// other projects' code, build output, test fixtures.
var skipDirs = map[string]bool{
	".git": true, "node_modules": true, "vendor": true, "third_party": true,
	"testdata": true, "dist": true, "build": true, ".venv": true, "venv": true,
	"__pycache__": true, "target": true,
}

// SkipDir reports whether a directory of this base name is left out of the
// search for rules: .git, node_modules, vendor, third_party, testdata, dist,
// build, target, virtualenvs.
func SkipDir(name string) bool { return skipDirs[name] }

// A Kind says why a file was read for rules.
type Kind string

// The kinds of source.
const (
	RuleFile Kind = "rule file"
	Doc      Kind = "doc"
)

// Classify returns the kind of a slash-separated path relative to the
// project, and false when the file is neither a rule file nor a doc.
func Classify(p string) (Kind, bool) {
	p = path.Clean(strings.TrimPrefix(p, "./"))
	for _, dir := range strings.Split(path.Dir(p), "/") {
		if SkipDir(dir) {
			return "", false
		}
	}
	base := path.Base(p)
	dir := path.Dir(p)
	ext := path.Ext(base)
	switch {
	case ruleFileNames[base]:
		return RuleFile, true
	case strings.Contains("/"+dir+"/", "/.cursor/rules/"):
		return RuleFile, true
	case path.Base(dir) == "rules" && (ext == ".md" || ext == ".mdc" || ext == ".txt"):
		return RuleFile, true
	case ext == ".md" || ext == ".mdc":
		return Doc, true
	}
	return "", false
}

// A File is one candidate source and its contents.
type File struct {
	Path    string // slash-separated, relative to the project
	Content string
}

// A Rule is one rule as the project states it.
type Rule struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

var (
	headingRE  = lazyRegexp(`^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	numberedRE = lazyRegexp(`^( {0,3})(\d{1,3})[.)]\s+(\S.*)$`)
	bulletRE   = lazyRegexp(`^(\s{0,3})[-*+]\s+(\S.*)$`)
	markerRE   = lazyRegexp(`\b(MUST|NEVER|ALWAYS|SHALL|REQUIRED|DO NOT)\b`)
	rulesHead  = lazyRegexp(`(?i)\b(rules?|invariants?)\b`)
	fenceRE    = lazyRegexp("^\\s*(```|~~~)")
)

// A group is what becomes one dimension: the rules under one heading of one
// file, or one numbered rule of a rules heading.
type group struct {
	name  string
	rules []Rule
	// single says the group is one numbered rule, named after its text.
	single bool
}

// groups returns the rule groups of one file, in the file's order.
func groups(f File, kind Kind) []group {
	var out []group
	var cur *group // the group of the current heading's unnumbered rules
	heading := ""
	headingNamesRules := false
	var last *Rule // the rule that indented continuation lines extend
	inFence := false
	flush := func() {
		if cur != nil && len(cur.rules) > 0 {
			out = append(out, *cur)
		}
		cur = nil
	}
	lines := strings.Split(f.Content, "\n")
	for i, raw := range lines {
		line := strings.TrimRight(raw, " \t\r")
		if fenceRE().MatchString(line) {
			inFence = !inFence
			last = nil
			continue
		}
		if inFence {
			continue
		}
		if m := headingRE().FindStringSubmatch(line); m != nil {
			flush()
			heading = strings.Trim(m[2], "*_` ")
			headingNamesRules = rulesHead().MatchString(heading)
			last = nil
			continue
		}
		if strings.TrimSpace(line) == "" {
			last = nil
			continue
		}
		n := numberedRE().FindStringSubmatch(line)
		b := bulletRE().FindStringSubmatch(line)
		item := ""
		switch {
		case n != nil:
			item = n[3]
		case b != nil:
			item = b[2]
		}
		marked := markerRE().MatchString(line)
		listRule := item != "" && (kind == RuleFile || headingNamesRules)
		if !listRule && !marked {
			// An indented line continues the rule above it.
			if last != nil && (strings.HasPrefix(raw, "  ") || strings.HasPrefix(raw, "\t")) {
				last.Text += " " + strings.TrimSpace(line)
			}
			continue
		}
		text := strings.TrimSpace(line)
		if item != "" {
			text = item
		}
		r := Rule{File: f.Path, Line: i + 1, Text: text}
		if n != nil && headingNamesRules {
			// A numbered list under a rules heading enumerates separate
			// rules: each is a dimension of its own.
			out = append(out, group{rules: []Rule{r}, single: true})
			last = &out[len(out)-1].rules[0]
			continue
		}
		if cur == nil {
			name := heading
			if name == "" {
				name = f.Path
			}
			cur = &group{name: name}
		}
		cur.rules = append(cur.rules, r)
		last = &cur.rules[len(cur.rules)-1]
	}
	flush()
	for i := range out {
		if out[i].single {
			out[i].name = cutWords(out[i].rules[0].Text, 12)
		}
	}
	return out
}

// cutWords returns the first n words of s, with an ellipsis when it cut.
func cutWords(s string, n int) string {
	s = strings.Trim(s, "*_` ")
	words := strings.Fields(s)
	if len(words) <= n {
		return strings.Join(words, " ")
	}
	return strings.Join(words[:n], " ") + " …"
}
