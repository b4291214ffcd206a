package audit

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSynthesize: plan order whatever order the auditors finished in; the
// auditor's ranks; a place reported twice kept once, under the first
// dimension, naming the other; a clean verdict kept as its line; rejections
// and failures listed; violations first.
func TestSynthesize(t *testing.T) {
	p := Discover([]File{{"CLAUDE.md", threeRules}}, 0)
	check := func(id, report string) Outcome {
		kept, rejected := Check(Parse(report), []string{id}, project)
		o := Outcome{ID: id, Rejected: rejected}
		if len(kept.Sections) == 1 {
			o.Section = &kept.Sections[0]
		}
		return o
	}
	outs := []Outcome{
		check("D3", "## D3\n1. main.go:3-5 — Run is called without a test\n2. lib/x.go:2 — a comment, not a test\n"),
		check("D1", "## D1\n1. main.go:3 — Run has no doc comment\n   > func Run() {}\n2. main.go:99 — invented\n"),
		{ID: "D2", Failed: "claude exited 1 after 3s: no API key"},
	}
	s := Synthesize(p, outs, Run{Dir: "/p", Agent: "claude", RanAt: "2026-11-30T14:00:00Z", Violations: []string{"changed: main.go"}})

	var order []string
	for _, sec := range s.Sections {
		order = append(order, sec.ID)
	}
	if diff := cmp.Diff([]string{"D1", "D2", "D3"}, order); diff != "" {
		t.Errorf("order mismatch (-want +got):\n%s", diff)
	}
	if got := s.Sections[0].Findings; len(got) != 1 || len(got[0].Also) != 1 || !strings.HasPrefix(got[0].Also[0], "D3 #1: main.go:3-5") {
		t.Errorf("D1 findings: %+v", got)
	}
	if got := s.Sections[2].Findings; len(got) != 1 || got[0].Rank != 1 || got[0].Cites[0].Path != "lib/x.go" {
		t.Errorf("D3 findings: %+v", got)
	}
	if s.Findings != 2 || len(s.Rejected) != 1 || len(s.Failed) != 1 {
		t.Errorf("findings %d, rejected %v, failed %v", s.Findings, s.Rejected, s.Failed)
	}
	md := s.Markdown
	for _, want := range []string{
		"READ-ONLY VIOLATED (1 change)",
		"## VIOLATIONS: the audited tree changed during a read-only audit\n\n- changed: main.go\n",
		"## D1: Every exported function has a doc comment.\nRule (CLAUDE.md:7): Every exported function has a doc comment.\n\n1. main.go:3 — Run has no doc comment\n   > func Run() {}\n   Also under D3 #1: main.go:3-5 — Run is called without a test\n",
		"## D2: Never write outside the working directory.\nRule (CLAUDE.md:8): Never write outside the working directory.\n\nNo verdict",
		"1. lib/x.go:2 — a comment, not a test\n",
		"## Rejected\n\n- D1 finding 2 (report line 4): cites main.go:99: line 99 does not exist",
		"## Failed\n\n- D2: claude exited 1 after 3s: no API key\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
	if strings.Index(md, "VIOLATIONS") > strings.Index(md, "## D1") {
		t.Error("violations do not come first")
	}

	// The synthesized report is itself in the report format: it checks
	// against the same project, D2 (which has no verdict) alone refused.
	kept, rejected := Check(Parse(md), nil, project)
	if len(kept.Sections) != 2 || len(rejected) != 1 || rejected[0].Dimension != "D2" {
		t.Errorf("the synthesized report does not check: %d sections kept, rejected:\n%s", len(kept.Sections), rejections(rejected))
	}
}

func TestSynthesizeClean(t *testing.T) {
	p := Discover(nil, 0)
	var outs []Outcome
	for _, d := range p.Dimensions {
		outs = append(outs, Outcome{ID: d.ID, Section: &Section{ID: d.ID, Clean: "the rule holds because nothing here stores state at all"}})
	}
	s := Synthesize(p, outs, Run{Dir: "/p", Agent: "codex", RanAt: "now"})
	if s.Clean != 4 || !strings.Contains(s.Markdown, "Fallback dimensions: no rules of the project's own were found") ||
		strings.Count(s.Markdown, "CLEAN: the rule holds because") != 4 || strings.Contains(s.Markdown, "VIOLATIONS") {
		t.Errorf("clean synthesis:\n%s", s.Markdown)
	}
}
