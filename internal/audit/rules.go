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
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/omega-monitor/omega-monitor/internal/printable"
)

// What counts as the project's own rules, exactly:
//
// Rule files are named CLAUDE.md, AGENTS.md, GEMINI.md, RULES.md,
// CONTRIBUTING.md or .cursorrules (at any depth); any file under a
// .cursor/rules/ directory; and any .md, .mdc or .txt file directly inside a
// directory named rules. Every list item of a rule file is a rule, and so is
// every sentence that uses a marker word in any case ("Never push to
// main."): the file exists to instruct.
//
// Every other .md or .mdc file is a doc. In a doc, a rule is a list item
// under a heading that names rules or invariants ("## Invariants", "The rules
// that cost credibility"), or a sentence that uses a marker word in
// capitals. A doc describes: its lower-case "never" says what the program
// does ("you never do"), and the rules it states in lower case are found by
// their place, under such a heading.
//
// Marker words are the requirement words of RFC 2119 and their kin: MUST,
// MUST NOT, NEVER, ALWAYS, SHALL, SHALL NOT, REQUIRED, DO NOT (and, in a
// rule file, don't).
//
// Files are read as Markdown (markdown.go): a sentence or a list item is
// read whole, over all the lines it is wrapped on, and cited at the line it
// starts on. Code (fenced or indented), block quotes and HTML comments are
// never rules. A sentence or list item that only names marker words, rather
// than using one, is not a rule: one that lists them ("MUST, NEVER, ALWAYS",
// "MUST/NEVER"), quotes them (in a code span or quotation marks) or names one
// as a word ("the NEVER marker"). Whatever a plan shows of a rule is on one
// line, printable, and at most maxRuleText bytes.
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

var rulesHead = lazyRegexp(`(?i)\b(rules?|invariants?)\b`)

// maxRuleText is the most of one rule a plan keeps, in bytes: a brief is
// one argument of the auditor's command line, and a paragraph that never
// ends a sentence could otherwise be a file long.
const maxRuleText = 2000

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
	flush := func() {
		if cur != nil && len(cur.rules) > 0 {
			out = append(out, *cur)
		}
		cur = nil
	}
	add := func(r Rule) {
		if cur == nil {
			name := heading
			if name == "" {
				name = shown(f.Path)
			}
			// A heading that only repeats the file's name (# AGENTS in
			// AGENTS.md) says nothing of its rules: the first one does.
			if stem := strings.TrimSuffix(filepath.Base(f.Path), filepath.Ext(f.Path)); strings.EqualFold(strings.TrimSuffix(name, ".md"), stem) {
				name = shown(f.Path) + ": " + firstWords(r.Text, 8)
			}
			cur = &group{name: name}
		}
		cur.rules = append(cur.rules, r)
	}
	for _, b := range blocks(f.Content) {
		if b.u == nil {
			flush()
			heading = shown(strings.Trim(b.heading, "*_ "))
			headingNamesRules = rulesHead().MatchString(unmentioned(b.heading))
			continue
		}
		u := b.u
		if u.kind == item && (kind == RuleFile || headingNamesRules) {
			// A list item is a rule by its place: the whole item, over
			// all its lines, unless all it does is name the markers.
			if onlyNames(u.text) {
				continue
			}
			r := Rule{File: f.Path, Line: u.lines[0], Text: ruleText(u.text)}
			if u.numbered && headingNamesRules {
				// A numbered list under a rules heading enumerates
				// separate rules: each is a dimension of its own.
				out = append(out, group{rules: []Rule{r}, single: true})
				continue
			}
			add(r)
			continue
		}
		// Elsewhere a rule is a sentence that uses a marker word.
		for _, s := range sentences(u.text) {
			text := u.text[s[0]:s[1]]
			if marked(text, kind == RuleFile) {
				add(Rule{File: f.Path, Line: u.lineAt(s[0]), Text: ruleText(text)})
			}
		}
	}
	flush()
	for i := range out {
		if out[i].single {
			out[i].name = cutWords(out[i].rules[0].Text, 12)
		}
	}
	return out
}

// ruleText is a rule as a plan shows it and a brief quotes it: on one line,
// printable (no escape sequence or invisible character reaches a terminal or
// an auditor unseen), at most maxRuleText bytes.
func ruleText(s string) string {
	s = strings.Join(strings.Fields(shown(s)), " ")
	if len(s) <= maxRuleText {
		return s
	}
	cut := maxRuleText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.TrimRight(s[:cut], " ") + " …"
}

// shown is s as a terminal may show it.
func shown(s string) string {
	return printable.String(strings.ReplaceAll(s, "\t", " "))
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

// firstWords is s cut to its first n words, "…" after a cut.
func firstWords(s string, n int) string {
	w := strings.Fields(s)
	if len(w) <= n {
		return strings.Join(w, " ")
	}
	return strings.Join(w[:n], " ") + "…"
}
