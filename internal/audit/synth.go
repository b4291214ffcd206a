package audit

import (
	"fmt"
	"strings"
)

// An Outcome is what became of one dimension's auditor.
type Outcome struct {
	ID string
	// Section is what passed the check; nil when the auditor failed or
	// nothing of its report passed.
	Section *Section
	// Rejected is what the check refused.
	Rejected []Rejection
	// Failed says why the auditor produced no report (it exited non-zero,
	// ran out of time); "" when it did.
	Failed string
}

// A Run describes one audit run for its report's header.
type Run struct {
	Dir, Agent, RanAt string
	// Violations are the changes the audit made to the tree it promised
	// to leave alone; they head the report.
	Violations []string
	// Sandbox says what the auditors read and ran in (a sanitized copy,
	// what surrounded it); LeftOut lists what of the project the copy did
	// not hold, and why.
	Sandbox string
	LeftOut []string
}

// A Synthesis is the one report of a run, made here from the checked
// reports: never a delegate's summary.
type Synthesis struct {
	Summary  string    `json:"summary"`
	Sections []Section `json:"sections"`
	Rejected []Rejection
	Failed   []string
	Findings int
	Clean    int
	Markdown string
}

// Synthesize merges the checked reports of a run into one: dimensions in the
// plan's order; in each, findings in the auditor's rank order; a place (file
// and overlapping lines) reported under several dimensions kept once, under
// the first, naming the others; clean verdicts kept as their one line;
// rejections and failures listed, never dropped; violations first.
func Synthesize(p Plan, outs []Outcome, run Run) Synthesis {
	byID := map[string]Outcome{}
	for _, o := range outs {
		byID[o.ID] = o
	}
	var s Synthesis
	type placed struct{ sec, idx int }
	var seen []struct {
		cite Cite
		at   placed
		dim  string
	}
	for _, d := range p.Dimensions {
		o, ok := byID[d.ID]
		sec := Section{ID: d.ID, Title: d.Name}
		switch {
		case !ok:
			s.Failed = append(s.Failed, d.ID+": no auditor ran")
		case o.Failed != "":
			s.Failed = append(s.Failed, d.ID+": "+o.Failed)
		}
		s.Rejected = append(s.Rejected, o.Rejected...)
		if ok && o.Section != nil {
			sec.Clean, sec.CleanLine = o.Section.Clean, o.Section.CleanLine
			for _, f := range o.Section.Findings {
				dup := false
				for _, prev := range seen {
					if prev.dim != d.ID && prev.cite.Overlaps(f.Cites[0]) {
						at := &s.Sections[prev.at.sec].Findings[prev.at.idx]
						at.Also = append(at.Also, fmt.Sprintf("%s #%d: %s", d.ID, f.Rank, f.Text))
						dup = true
						break
					}
				}
				if dup {
					continue
				}
				f.Rank = len(sec.Findings) + 1
				sec.Findings = append(sec.Findings, f)
				seen = append(seen, struct {
					cite Cite
					at   placed
					dim  string
				}{f.Cites[0], placed{len(s.Sections), len(sec.Findings) - 1}, d.ID})
			}
		}
		s.Sections = append(s.Sections, sec)
	}
	withFindings, failedDims := 0, 0
	for _, sec := range s.Sections {
		s.Findings += len(sec.Findings)
		if len(sec.Findings) > 0 {
			withFindings++
		} else if sec.Clean != "" {
			s.Clean++
		} else {
			failedDims++
		}
	}
	s.Summary = fmt.Sprintf("%s: %s in %d, %d clean, %d without a verdict; %d rejected",
		Count(len(s.Sections), "dimension"), Count(s.Findings, "finding"), withFindings, s.Clean, failedDims, len(s.Rejected))
	if len(run.Violations) > 0 {
		s.Summary = "READ-ONLY VIOLATED (" + Count(len(run.Violations), "change") + "); " + s.Summary
	}
	s.Markdown = s.render(p, run)
	return s
}

// Count says n things: "1 finding", "2 findings".
func Count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

func (s Synthesis) render(p Plan, run Run) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Audit of %s\n\n", run.Dir)
	fmt.Fprintf(&b, "Ran %s with %s. %s.\n", run.RanAt, run.Agent, s.Summary)
	if len(run.Violations) > 0 {
		b.WriteString("\n## VIOLATIONS: the audited tree changed during a read-only audit\n\n")
		for _, v := range run.Violations {
			fmt.Fprintf(&b, "- %s\n", v)
		}
	}
	if run.Sandbox != "" {
		fmt.Fprintf(&b, "\nThe auditors read %s.\n", run.Sandbox)
	}
	if len(run.LeftOut) > 0 {
		fmt.Fprintf(&b, "Left out of their copy: %s.\n", strings.Join(run.LeftOut, "; "))
	}
	if p.Fallback {
		fmt.Fprintf(&b, "\nFallback dimensions: %s.\n", p.Why)
	}
	for i, sec := range s.Sections {
		fmt.Fprintf(&b, "\n## %s: %s\n", sec.ID, sec.Title)
		for _, r := range p.Dimensions[i].Rules {
			fmt.Fprintf(&b, "Rule (%s:%d): %s\n", r.File, r.Line, r.Text)
		}
		b.WriteString("\n")
		for _, f := range sec.Findings {
			fmt.Fprintf(&b, "%d. %s\n", f.Rank, f.Text)
			if f.Quote != "" {
				fmt.Fprintf(&b, "   > %s\n", f.Quote)
			}
			for _, a := range f.Also {
				fmt.Fprintf(&b, "   Also under %s\n", a)
			}
		}
		if sec.Clean != "" {
			fmt.Fprintf(&b, "CLEAN: %s\n", sec.Clean)
		}
		if len(sec.Findings) == 0 && sec.Clean == "" {
			b.WriteString("No verdict: see Rejected and Failed below.\n")
		}
	}
	if len(p.Dropped) > 0 {
		b.WriteString("\n## Not audited this run\n\n")
		for _, d := range p.Dropped {
			fmt.Fprintf(&b, "- %s: %s (over the limit on dimensions)\n", d.ID, d.Name)
		}
	}
	if len(s.Rejected) > 0 {
		b.WriteString("\n## Rejected\n\n")
		for _, r := range s.Rejected {
			fmt.Fprintf(&b, "- %s\n", r)
		}
	}
	if len(s.Failed) > 0 {
		b.WriteString("\n## Failed\n\n")
		for _, f := range s.Failed {
			fmt.Fprintf(&b, "- %s\n", f)
		}
	}
	return b.String()
}
