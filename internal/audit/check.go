package audit

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"unicode/utf8"
)

// A Rejection is one part of a report that the checker refused, and why.
type Rejection struct {
	Dimension string `json:"dimension"`
	// What names the part: "finding 2", "clean verdict", "dimension".
	What   string `json:"what"`
	Line   int    `json:"line,omitempty"` // in the report; 0 when it is missing
	Reason string `json:"reason"`
}

func (r Rejection) String() string {
	where := ""
	if r.Line > 0 {
		where = fmt.Sprintf(" (report line %d)", r.Line)
	}
	return fmt.Sprintf("%s %s%s: %s", r.Dimension, r.What, where, r.Reason)
}

// MinCleanWords is the fewest words a clean verdict must have beyond any
// stock phrase: a verdict that says why needs at least that many.
const MinCleanWords = 6

// fillerRE matches the stock phrases that say nothing. A finding made of
// one is rejected; a clean verdict must have MinCleanWords words without them.
var fillerRE = lazyRegexp(`(?i)\b(no (issues|problems|findings|concerns|violations)( (were )?(found|detected|identified))?|nothing (to report|found)|looks? (good|fine|ok(ay)?)|all (good|clean|fine)|everything (is |looks )?(fine|good|ok(ay)?|clean)|lgtm|n/a|none)\b`)

// Check checks a parsed report against the project's files in fsys and
// returns the report with only what passed, and what it rejected. want lists
// the dimensions the report must answer, in order; with none, the report's
// own sections are the dimensions.
//
// Rejected: a finding with no citation; a citation whose path leaves the
// project or names no file, or whose lines do not exist; a quote that is not
// in the first cited range; a finding that is only filler; a clean verdict
// that is filler, not one line, or beside findings of its own dimension; a
// section for a dimension not asked for; and a dimension left with neither a
// cited finding nor a specific clean verdict; and a report with no section at
// all when none was asked for by name.
func Check(rep Report, want []string, fsys fs.FS) (Report, []Rejection) {
	c := checker{fsys: fsys, files: map[string][]string{}}
	if len(want) == 0 {
		for _, s := range rep.Sections {
			if !containsString(want, s.ID) {
				want = append(want, s.ID)
			}
		}
	}
	var rejected []Rejection
	reject := func(dim, what string, line int, format string, args ...any) {
		rejected = append(rejected, Rejection{Dimension: dim, What: what, Line: line, Reason: fmt.Sprintf(format, args...)})
	}
	if len(want) == 0 {
		reject("report", "as a whole", 0, "no section ## D<n>: nothing in it is a verdict")
		return Report{}, rejected
	}
	var out Report
	for _, s := range rep.Sections {
		if !containsString(want, s.ID) {
			reject(s.ID, "dimension", s.Line, "not a dimension this audit asked for (%s)", strings.Join(want, ", "))
		}
	}
	for _, id := range want {
		var secs []Section
		for _, s := range rep.Sections {
			if s.ID == id {
				secs = append(secs, s)
			}
		}
		if len(secs) == 0 {
			reject(id, "dimension", 0, "missing: the report has no section ## %s", id)
			continue
		}
		kept := Section{ID: id, Title: secs[0].Title, Line: secs[0].Line}
		cleans, cleanLine, clean := 0, 0, ""
		hasFindings := false
		for _, s := range secs {
			hasFindings = hasFindings || len(s.Findings) > 0
			cleans += s.Cleans
			if clean == "" && s.Clean != "" {
				clean, cleanLine = s.Clean, s.CleanLine
			}
			for _, f := range s.Findings {
				what := fmt.Sprintf("finding %d", f.Rank)
				if reason := c.finding(f); reason != "" {
					reject(id, what, f.Line, "%s", reason)
					continue
				}
				f.Rank = len(kept.Findings) + 1
				kept.Findings = append(kept.Findings, f)
			}
		}
		switch {
		case cleans == 0:
		case hasFindings:
			reject(id, "clean verdict", cleanLine, "the dimension has findings, so it is not clean")
		case cleans > 1:
			reject(id, "clean verdict", cleanLine, "%d CLEAN lines; a verdict is one line", cleans)
		default:
			if reason := cleanReason(clean); reason != "" {
				reject(id, "clean verdict", cleanLine, "%s", reason)
			} else {
				kept.Clean, kept.CleanLine = clean, cleanLine
			}
		}
		if len(kept.Findings) == 0 && kept.Clean == "" {
			reject(id, "dimension", secs[0].Line, "neither a cited ranked finding nor a one-line specific clean verdict passed")
			continue
		}
		out.Sections = append(out.Sections, kept)
	}
	return out, rejected
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// cleanReason says why a clean verdict is not one, or "".
func cleanReason(v string) string {
	if strings.TrimSpace(v) == "" {
		return "an empty clean verdict"
	}
	if reason := smuggled(v); reason != "" {
		return reason
	}
	rest := fillerRE().ReplaceAllString(v, " ")
	if n := len(strings.FieldsFunc(rest, func(r rune) bool {
		return !(r == '_' || r == '-' || r == '/' || r == '.' || r == ':' || r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r > 0x7f)
	})); n < MinCleanWords {
		return fmt.Sprintf("filler, not a verdict: %q does not say why the rule holds (fewer than %d words beyond stock phrases)", v, MinCleanWords)
	}
	return ""
}

type checker struct {
	fsys  fs.FS
	files map[string][]string // path → lines; nil for a path that is no file
	errs  map[string]string
}

// finding says why a finding is rejected, or "".
func (c *checker) finding(f Finding) string {
	// First, before any reason quotes the finding's text back.
	if reason := smuggled(f.Text); reason != "" {
		return reason
	}
	if len(f.Cites) == 0 {
		return fmt.Sprintf("uncited: %q names no path:LINE", cutRunes(f.Text, 80))
	}
	bare := f.Text
	for _, ct := range citeRE().FindAllString(bare, -1) {
		bare = strings.Replace(bare, ct, "", 1)
	}
	bare = strings.Trim(bare, " \t`*_—–-:.,;()")
	if len(strings.Fields(strings.Trim(fillerRE().ReplaceAllString(bare, " "), " .,;:!-"))) == 0 {
		return fmt.Sprintf("filler: %q says nothing the citation does not", cutRunes(f.Text, 80))
	}
	for _, ct := range f.Cites {
		if reason := c.cite(ct); reason != "" {
			return reason
		}
	}
	if q := unquote(f.Quote); q != "" {
		ct := f.Cites[0]
		lines := c.files[ct.Path][ct.Start-1 : ct.End]
		if !strings.Contains(squash(strings.Join(lines, " ")), squash(q)) {
			// Not echoed: a quote the file does not hold is the
			// auditor's own text, and the report travels.
			return fmt.Sprintf("the quoted text (%d characters) is not at %s", utf8.RuneCountInString(q), ct)
		}
	}
	return ""
}

// cite says why a citation does not point at lines of a file, or "".
func (c *checker) cite(ct Cite) string {
	if !fs.ValidPath(ct.Path) || ct.Path == "." {
		return fmt.Sprintf("%s: the path is not inside the project (a relative path without ..)", ct)
	}
	lines, ok := c.files[ct.Path]
	if !ok {
		b, err := fs.ReadFile(c.fsys, ct.Path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			c.note(ct.Path, "no such file")
		case err != nil:
			c.note(ct.Path, "cannot read it")
		default:
			s := strings.TrimSuffix(string(b), "\n")
			lines = strings.Split(s, "\n")
			if len(b) == 0 {
				lines = []string{}
			}
		}
		c.files[ct.Path] = lines
	}
	if lines == nil {
		return fmt.Sprintf("cites %s: %s", ct, c.errs[ct.Path])
	}
	switch {
	case ct.Start < 1:
		return fmt.Sprintf("cites %s: lines start at 1", ct)
	case ct.End < ct.Start:
		return fmt.Sprintf("cites %s: the range ends before it starts", ct)
	case ct.End > len(lines):
		return fmt.Sprintf("cites %s: line %d does not exist, %s has %d lines", ct, ct.End, ct.Path, len(lines))
	}
	return ""
}

func (c *checker) note(path, err string) {
	if c.errs == nil {
		c.errs = map[string]string{}
	}
	c.errs[path] = err
}

// unquote strips the quotes an auditor may put around an excerpt.
func unquote(q string) string {
	q = strings.TrimSpace(q)
	for _, p := range []string{"\"", "`", "'", "“"} {
		end := p
		if p == "“" {
			end = "”"
		}
		if len(q) >= len(p)+len(end) && strings.HasPrefix(q, p) && strings.HasSuffix(q, end) {
			return strings.TrimSpace(q[len(p) : len(q)-len(end)])
		}
	}
	return q
}

// squash collapses runs of white space, so that a quote spanning lines or
// re-indented still matches.
func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

func cutRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// CheckText is what audit check prints of Check's answer: a line a section
// kept, a line a rejection, then "passed" or how many were rejected.
func CheckText(kept Report, rejected []Rejection) string {
	var b strings.Builder
	for _, s := range kept.Sections {
		if s.Clean != "" {
			fmt.Fprintf(&b, "%s passed: clean (report line %d)\n", s.ID, s.CleanLine)
			continue
		}
		fmt.Fprintf(&b, "%s passed: %s\n", s.ID, Count(len(s.Findings), "finding"))
	}
	for _, r := range rejected {
		fmt.Fprintf(&b, "rejected: %s\n", r)
	}
	if len(rejected) > 0 {
		fmt.Fprintf(&b, "FAILED: %d rejected\n", len(rejected))
		return b.String()
	}
	return b.String() + "passed\n"
}
