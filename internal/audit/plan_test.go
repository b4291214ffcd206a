package audit

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		path string
		kind Kind
		ok   bool
	}{
		{"CLAUDE.md", RuleFile, true},
		{"./AGENTS.md", RuleFile, true},
		{"sub/GEMINI.md", RuleFile, true},
		{"RULES.md", RuleFile, true},
		{"CONTRIBUTING.md", RuleFile, true},
		{".cursorrules", RuleFile, true},
		{".cursor/rules/go.mdc", RuleFile, true},
		{".cursor/rules/deep/x.md", RuleFile, true},
		{"rules/naming.md", RuleFile, true},
		{"docs/rules/naming.txt", RuleFile, true},
		{"rules/script.sh", "", false},
		{"README.md", Doc, true},
		{"docs/DESIGN.md", Doc, true},
		{"claude.md", Doc, true}, // names are case-sensitive: a doc, not a rule file
		{"main.go", "", false},
		{"node_modules/x/CLAUDE.md", "", false},
		{"vendor/x/README.md", "", false},
		{"a/testdata/CLAUDE.md", "", false},
		{".git/CLAUDE.md", "", false},
	}
	for _, tt := range tests {
		k, ok := Classify(tt.path)
		if k != tt.kind || ok != tt.ok {
			t.Errorf("Classify(%q) = %q, %v; want %q, %v", tt.path, k, ok, tt.kind, tt.ok)
		}
	}
}

// threeRules is the CLAUDE.md of the real-agent test: three numbered rules
// under a rules heading, so three dimensions.
const threeRules = `# Project

Some prose that is not a rule.

## Rules

1. Every exported function has a doc comment.
2. Never write outside the working directory.
3. Tests use real files, not mocks;
   a temporary directory per test.
`

func TestDiscover(t *testing.T) {
	type dim struct {
		Name  string
		Rules []Rule
	}
	tests := []struct {
		name     string
		files    []File
		want     []dim
		sources  []string
		fallback bool
	}{
		{
			name:  "three numbered rules, three dimensions",
			files: []File{{"CLAUDE.md", threeRules}},
			want: []dim{
				{"Every exported function has a doc comment.", []Rule{{"CLAUDE.md", 7, "Every exported function has a doc comment."}}},
				{"Never write outside the working directory.", []Rule{{"CLAUDE.md", 8, "Never write outside the working directory."}}},
				{"Tests use real files, not mocks; a temporary directory per test.", []Rule{{"CLAUDE.md", 9, "Tests use real files, not mocks; a temporary directory per test."}}},
			},
			sources: []string{"CLAUDE.md"},
		},
		{
			name:  "bullets group by heading; prose and code are no rules",
			files: []File{{"AGENTS.md", "# Style\n- gofmt everything\n- no globals\n\n# Build\nRun make.\n```\n- not a rule\nMUST not either\n```\n# Tests\n* table tests\n"}},
			want: []dim{
				{"Style", []Rule{{"AGENTS.md", 2, "gofmt everything"}, {"AGENTS.md", 3, "no globals"}}},
				{"Tests", []Rule{{"AGENTS.md", 12, "table tests"}}},
			},
			sources: []string{"AGENTS.md"},
		},
		{
			name: "a copy in AGENTS.md is the same dimension, cited twice",
			files: []File{
				{"CLAUDE.md", "# Rules\n- Never push to main.\n"},
				{"AGENTS.md", "# Rules\n- Never push to main.\n"},
			},
			want: []dim{
				{"Rules", []Rule{{"AGENTS.md", 2, "Never push to main."}, {"CLAUDE.md", 2, "Never push to main."}}},
			},
			sources: []string{"AGENTS.md", "CLAUDE.md"},
		},
		{
			name:  "docs: only items under a rules or invariants heading, and marker lines",
			files: []File{{"docs/DESIGN.md", "# Design\n- a list that is no rule\n\n## Invariants\n1. The ledger is never empty.\n2. One variable per signal.\n\n## Notes\nThe loop MUST NEVER exit on error.\nyou must see this (lower case)\n"}},
			want: []dim{
				{"The ledger is never empty.", []Rule{{"docs/DESIGN.md", 5, "The ledger is never empty."}}},
				{"One variable per signal.", []Rule{{"docs/DESIGN.md", 6, "One variable per signal."}}},
				{"Notes", []Rule{{"docs/DESIGN.md", 9, "The loop MUST NEVER exit on error."}}},
			},
			sources: []string{"docs/DESIGN.md"},
		},
		{
			name:  "rule files come before docs",
			files: []File{{"README.md", "## Rules\n- docs rule\n"}, {"rules/a.md", "- file rule\n"}},
			want: []dim{
				{"rules/a.md", []Rule{{"rules/a.md", 1, "file rule"}}},
				{"Rules", []Rule{{"README.md", 2, "docs rule"}}},
			},
			sources: []string{"rules/a.md", "README.md"},
		},
		{
			name: "a marker mid-sentence across a line wrap: the whole sentence, at the line it starts",
			files: []File{{"docs/x.md", "# Notes\nThe watcher reads the screen. Whatever the screen shows, the watcher\n" +
				"MUST NOT type into a live dialog, and it\nwaits. Then it polls.\n"}},
			want: []dim{
				{"Notes", []Rule{{"docs/x.md", 2, "Whatever the screen shows, the watcher MUST NOT type into a live dialog, and it waits."}}},
			},
			sources: []string{"docs/x.md"},
		},
		{
			name: "items that list or quote the markers are about them, even under a rules heading",
			files: []File{{"docs/x.md", "## Rules\n- MUST, NEVER and ALWAYS lines are rules\n- `NEVER` in a code span is quoted\n" +
				"- the \"MUST\" of a quotation\n- Lines are short.\n- Quoting `MUST` is data; the auditor NEVER obeys it.\n"}},
			want: []dim{
				{"Rules", []Rule{{"docs/x.md", 5, "Lines are short."}, {"docs/x.md", 6, "Quoting `MUST` is data; the auditor NEVER obeys it."}}},
			},
			sources: []string{"docs/x.md"},
		},
		{
			name: "quotes, code, comments and thematic breaks are no rules; a table row is read alone",
			files: []File{{"docs/x.md", "> The loop MUST exit.\nlazy NEVER line of the quote\n\n    MUST indented code\n\n" +
				"<!-- NEVER shown\nMUST not either -->\n***\n| a | MUST be a row |\n| b | plain |\n~~~~\nNEVER\n~~~\nALWAYS\n~~~~\n" +
				"<!-- MUST --> one line\n> q\n- The item MUST count.\n"}},
			want: []dim{
				{"docs/x.md", []Rule{{"docs/x.md", 9, "| a | MUST be a row |"}, {"docs/x.md", 18, "The item MUST count."}}},
			},
			sources: []string{"docs/x.md"},
		},
		{
			name: "setext headings name rules too",
			files: []File{{"docs/x.md", "Invariants\n==========\n\n1. The ledger is never empty.\n2. One variable\n   per signal.\n\n" +
				"Notes\n-----\n- not a rule\n"}},
			want: []dim{
				{"The ledger is never empty.", []Rule{{"docs/x.md", 4, "The ledger is never empty."}}},
				{"One variable per signal.", []Rule{{"docs/x.md", 5, "One variable per signal."}}},
			},
			sources: []string{"docs/x.md"},
		},
		{
			name: "a rule file: its prose in any case, and items over wrapped, lazy and continued lines",
			files: []File{{"CLAUDE.md", "# Style\nRun make first. Never push\nto main.\n\n- gofmt every\nfile\n- tests first\n\n" +
				"  with a paragraph of the item\n\nA closing line.\n"}},
			want: []dim{
				{"Style", []Rule{{"CLAUDE.md", 2, "Never push to main."}, {"CLAUDE.md", 5, "gofmt every file"},
					{"CLAUDE.md", 7, "tests first with a paragraph of the item"}}},
			},
			sources: []string{"CLAUDE.md"},
		},
		{
			name: "hostile text: escape sequences and invisible characters removed, an endless sentence cut",
			files: []File{{"RULES.md", "# Rules\n- Never \x1b]0;pwned\x07print\u202e\U000E0041 this.\n\n" +
				"The loop MUST" + strings.Repeat(" go on", 500) + "\n"}},
			want: []dim{
				{"RULES.md: Never print this.", []Rule{{"RULES.md", 2, "Never print this."},
					{"RULES.md", 4, "The loop MUST" + strings.Repeat(" go on", 331) + " …"}}},
			},
			sources: []string{"RULES.md"},
		},
		{
			// The paragraph of docs/audit.md that once made this
			// repository's only dimension, cut at a line's end.
			name: "a doc that only describes the markers states no rules: the fallback stays",
			files: []File{{"README.md", "# A project\n\n## What counts as the project's rules\n\n" +
				"Every other `.md` is a doc, whose rules are the list items under a heading that names\n" +
				"rules or invariants (`## Invariants`, \"The rules that cost credibility\") and any line carrying a\n" +
				"capitalised marker: MUST, NEVER, ALWAYS, SHALL, REQUIRED, DO NOT. Code blocks never count;\n" +
				"`node_modules` is not read. Lines with the MUST/NEVER markers, a `MUST` in a code span and the\n" +
				"keyword NEVER are named, not used.\n"}},
			fallback: true,
		},
		{
			name:     "no rules: the four generic dimensions, and why",
			files:    []File{{"README.md", "# Hello\nA project.\n- a feature\n"}, {"main.go", "package main // MUST\n"}},
			fallback: true,
		},
		{name: "nothing at all", fallback: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Discover(tt.files, 0)
			if p.Fallback != tt.fallback {
				t.Fatalf("Fallback = %v, want %v (why %q)", p.Fallback, tt.fallback, p.Why)
			}
			if tt.fallback {
				if len(p.Dimensions) != 4 || !strings.HasPrefix(p.Why, "no rules of the project's own were found in ") {
					t.Errorf("fallback plan: %d dimensions, why %q", len(p.Dimensions), p.Why)
				}
				for i, d := range p.Dimensions {
					if d.Name != fallbackDimensions[i].Name || !strings.Contains(d.Brief, d.Focus) {
						t.Errorf("fallback dimension %d: %q", i, d.Name)
					}
				}
				return
			}
			var got []dim
			for i, d := range p.Dimensions {
				got = append(got, dim{d.Name, d.Rules})
				if want := "D" + string(rune('1'+i)); d.ID != want {
					t.Errorf("dimension %d has id %s, want %s", i, d.ID, want)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("dimensions mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.sources, p.Sources); diff != "" {
				t.Errorf("sources mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDiscoverLimit(t *testing.T) {
	var b strings.Builder
	b.WriteString("## Rules\n")
	for i := range 5 {
		b.WriteString(strings.Repeat("x", i+1) + "\n")
		b.WriteString("1. rule number " + strings.Repeat("i", i+1) + "\n")
	}
	p := Discover([]File{{"CLAUDE.md", b.String()}}, 3)
	if len(p.Dimensions) != 3 || len(p.Dropped) != 2 || p.Dropped[0].ID != "D4" {
		t.Errorf("%d dimensions, %d dropped (%v)", len(p.Dimensions), len(p.Dropped), p.Dropped)
	}
}

// TestBrief: each brief carries the rule verbatim with its place, the four
// demands, and the report format with its own dimension's heading.
func TestBrief(t *testing.T) {
	p := Discover([]File{{"CLAUDE.md", threeRules}}, 0)
	for _, d := range p.Dimensions {
		for _, want := range []string{
			d.Rules[0].File + ":", d.Rules[0].Text,
			"READ-ONLY", "ADVERSARIAL", "CITE", "RANK", "NEVER PAD", "ONE specific line",
			"## " + d.ID + "\n1. path/to/file.go:12", "CLEAN: the rule holds because",
		} {
			if !strings.Contains(d.Brief, want) {
				t.Errorf("%s brief lacks %q:\n%s", d.ID, want, d.Brief)
			}
		}
	}
	// The format example in a brief is itself a report the parser reads as
	// one finding-bearing section of that dimension.
	r := Parse(FormatSpec("D2"))
	if len(r.Sections) != 2 || r.Sections[0].ID != "D2" || len(r.Sections[0].Findings) != 2 ||
		r.Sections[0].Findings[1].Cites[0] != (Cite{"path/to/other.go", 30, 34}) || r.Sections[1].Clean == "" {
		t.Errorf("the format example parses as %+v", r)
	}
}

// TestPlanText: the no-rules message says what was looked for, where and
// what to write, and what it says to write makes the dimensions it
// promises; no escape sequence in a file's name or rule reaches the
// terminal.
func TestPlanText(t *testing.T) {
	var docs []File
	for _, name := range []string{"f.md", "a.md", "e.md", "docs/b.md", "c.md", "d.md"} {
		docs = append(docs, File{name, "# " + name + "\nA page that uses `MUST` as a name.\n"})
	}
	p := Discover(append(docs, File{"CONTRIBUTING.md", "Welcome.\n"}), 0)
	text := p.Text()
	for _, want := range []string{
		"No rules of the project's own were found, so it is audited on four generic dimensions instead.\n\n",
		"Looked in:  1 rule file (CONTRIBUTING.md) and 6 Markdown files (a.md, c.md, d.md, docs/b.md and 2 more).\n",
		"Looked for: a list item in a rule file (CLAUDE.md,",
		"a list item under a\n            heading that names rules or invariants;",
		"write them in RULES.md",
		"\n\nD1  design and token rules\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the no-rules plan lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(p.Why, "\n") || !strings.Contains(p.Why, "in 1 rule file (CONTRIBUTING.md) and 6 Markdown files") {
		t.Errorf("why is not one line naming where it looked: %q", p.Why)
	}

	// The example it gives, as a project's RULES.md.
	example := strings.Join(strings.Split(writeRules, "\n    "), "\n")
	p = Discover([]File{{"RULES.md", example}}, 0)
	if len(p.Dimensions) != 2 || p.Fallback || p.Dimensions[1].Name != "Nothing is written outside the working directory." {
		t.Errorf("the advice makes %d dimensions (fallback %v):\n%s", len(p.Dimensions), p.Fallback, p.Text())
	}

	p = Discover([]File{{"docs/\x1b[2J\x1b]0;x\x07evil.md", "# \x1b[31mTitle\nThe loop MUST \x1b[8mhide\x1b[0m nothing.\n"}}, 0)
	if text := p.Text(); strings.ContainsAny(text, "\x1b\x07") || !strings.Contains(text, "docs/evil.md:2  The loop MUST hide nothing.") {
		t.Errorf("the plan of a hostile file:\n%q", text)
	}
}

func FuzzDiscover(f *testing.F) {
	f.Add("CLAUDE.md", threeRules)
	f.Add("docs/x.md", "Invariants\n===\n1. a `MUST\n\n   b. NEVER, ALWAYS\n<!-- x\n> q\n| MUST |\n~~~~\n")
	f.Add("RULES.md", "- ``a`` MUST/NEVER e.g. x. Y?\n\tz\n\n    w\n---\n")
	f.Add("docs/x.md", "## Invariants\n1. a\n   b\n```\n2. c\n")
	f.Add("rules/a.md", "- MUST\n\t- NEVER\n# \n")
	f.Fuzz(func(t *testing.T, path, content string) {
		p := Discover([]File{{path, content}}, 0)
		if len(p.Dimensions) == 0 || len(p.Dimensions) > MaxDimensions {
			t.Fatalf("%d dimensions", len(p.Dimensions))
		}
		for _, d := range p.Dimensions {
			if d.Brief == "" || (len(d.Rules) == 0 && !p.Fallback) {
				t.Fatalf("dimension %+v", d)
			}
			for _, r := range d.Rules {
				if r.Line < 1 || r.Line > strings.Count(content, "\n")+1 {
					t.Fatalf("rule at line %d of a %d-line file", r.Line, strings.Count(content, "\n")+1)
				}
			}
		}
	})
}

// TestDiscoverKeepsWhatTheProjectStresses: past the limit, the dimensions
// dropped are the least stressed: a rule the project calls its key
// invariant (or most important, critical) comes first wherever it is
// written, then the groups under a heading naming invariants or security;
// the plan says in one line what was left out and why. A heading that only
// repeats its file's name does not title a dimension.
func TestDiscoverKeepsWhatTheProjectStresses(t *testing.T) {
	var b strings.Builder
	b.WriteString("# AGENTS\n- Use tabs.\n- Keep lines short.\n\n")
	for i := range 14 {
		fmt.Fprintf(&b, "## Area %d\n- rule %d of the area\n\n", i, i)
	}
	b.WriteString("## Security\n- Secrets never reach a log.\n\n## Last words\n- The key invariant: no key is typed into a dialog.\n")
	p := Discover([]File{{"AGENTS.md", b.String()}}, 12)
	names := make([]string, len(p.Dimensions))
	for i, d := range p.Dimensions {
		names[i] = d.Name
	}
	if len(names) != 12 || names[0] != "Last words" || names[1] != "Security" {
		t.Errorf("the stressed rules are not first: %q", names)
	}
	if want := "AGENTS.md: Use tabs."; names[2] != want {
		t.Errorf("the file's title group is named %q, want %q", names[2], want)
	}
	if text := p.Text(); !strings.Contains(text, "not audited (over the limit of 12, the least stressed of the project's rules; raise --max): D13 Area 9") {
		t.Errorf("the plan does not say what it left out:\n%s", text)
	}
}
