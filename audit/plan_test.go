package audit

import (
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
			name:     "no rules: the seed's four, and why",
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
				if len(p.Dimensions) != 4 || !strings.Contains(p.Why, "states no rules of its own") {
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

func FuzzDiscover(f *testing.F) {
	f.Add("CLAUDE.md", threeRules)
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
