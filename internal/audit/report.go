package audit

import (
	"strconv"
	"strings"
)

// The report format, the one every auditor writes (FormatSpec says it to
// them) and the synthesized report keeps:
//
//   - A section starts at a heading line "## D<n>", optionally followed by
//     ":" or a space and the dimension's name. Headings that name no
//     dimension ("## Rejected") end a section and start none.
//   - A finding is a numbered item ("1. ", "2) ") carrying one or more
//     citations path:LINE or path:FIRST-LAST (backquotes around them are
//     allowed). Its rank is its position in the section; the numbers
//     written are not trusted.
//   - Lines starting with ">" (indented or not) right after a finding are its
//     quoted excerpt, joined with spaces; it must appear in the first cited
//     range.
//   - A clean verdict is one line starting "CLEAN:".
//   - Anything else (prose, text before the first heading) is not part of
//     the verdict and is ignored.

// A Cite is one file:line[-line] citation.
type Cite struct {
	Path  string `json:"path"`
	Start int    `json:"start"`
	End   int    `json:"end"` // equal to Start for one line
}

func (c Cite) String() string {
	if c.End != c.Start {
		return c.Path + ":" + strconv.Itoa(c.Start) + "-" + strconv.Itoa(c.End)
	}
	return c.Path + ":" + strconv.Itoa(c.Start)
}

// Overlaps reports whether two citations share a line of the same file.
func (c Cite) Overlaps(d Cite) bool {
	return c.Path == d.Path && c.Start <= d.End && d.Start <= c.End
}

// A Finding is one ranked finding of a section.
type Finding struct {
	Rank  int    `json:"rank"` // 1 is the most severe
	Line  int    `json:"line"` // its line in the report
	Text  string `json:"text"` // the item as written, without its number
	Cites []Cite `json:"cites"`
	Quote string `json:"quote,omitempty"`
	// Also lists the other dimensions that reported the same place, after
	// synthesis merged them here.
	Also []string `json:"also,omitempty"`
}

// A Section is one dimension's part of a report.
type Section struct {
	ID        string    `json:"id"`
	Title     string    `json:"title,omitempty"`
	Line      int       `json:"line"`
	Findings  []Finding `json:"findings,omitempty"`
	Clean     string    `json:"clean,omitempty"`
	CleanLine int       `json:"clean_line,omitempty"`
	// Cleans counts the CLEAN lines written; more than one is not one line.
	Cleans int `json:"-"`
}

// A Report is an auditor's report as parsed.
type Report struct {
	Sections []Section `json:"sections"`
}

// Section returns the section of dimension id, or nil.
func (r *Report) Section(id string) *Section {
	for i := range r.Sections {
		if r.Sections[i].ID == id {
			return &r.Sections[i]
		}
	}
	return nil
}

var (
	sectionRE = lazyRegexp(`^#{1,3}\s+(D[1-9][0-9]{0,2})\b[:.\s-]*(.*?)\s*$`)
	anyHeadRE = lazyRegexp(`^#{1,6}\s`)
	itemRE    = lazyRegexp(`^\s{0,3}\d{1,3}[.)]\s+(.*\S)\s*$`)
	quoteRE   = lazyRegexp(`^\s*>\s?(.*)$`)
	cleanRE   = lazyRegexp(`^\s*(?:\*\*)?(?i:clean)(?:\*\*)?\s*:\s*(?:\*\*)?\s*(.*?)\s*$`)
	// A citation: a path of no spaces or colons, a colon, a line, and
	// maybe -line (or –line, or :line as some tools print ranges).
	citeRE = lazyRegexp("([A-Za-z0-9_.@+~/-][^\\s:`'\"()\\[\\]<>,;]*):([0-9]{1,7})(?:[-–]([0-9]{1,7}))?")
)

// Parse reads a report in the format above. It never fails: what it cannot
// read as a section, finding, quote or verdict is ignored, and the checker
// says what is missing.
func Parse(text string) Report {
	var r Report
	var sec *Section
	var last *Finding
	for i, line := range strings.Split(text, "\n") {
		n := i + 1
		line = strings.TrimRight(line, " \t\r")
		if m := sectionRE().FindStringSubmatch(line); m != nil {
			r.Sections = append(r.Sections, Section{ID: m[1], Title: m[2], Line: n})
			sec = &r.Sections[len(r.Sections)-1]
			last = nil
			continue
		}
		if anyHeadRE().MatchString(line) {
			sec, last = nil, nil
			continue
		}
		if sec == nil {
			continue
		}
		if m := quoteRE().FindStringSubmatch(line); m != nil && last != nil {
			q := strings.TrimSpace(m[1])
			if last.Quote != "" {
				last.Quote += " "
			}
			last.Quote += q
			continue
		}
		if m := itemRE().FindStringSubmatch(line); m != nil {
			f := Finding{Rank: len(sec.Findings) + 1, Line: n, Text: m[1], Cites: cites(m[1])}
			sec.Findings = append(sec.Findings, f)
			last = &sec.Findings[len(sec.Findings)-1]
			continue
		}
		if m := cleanRE().FindStringSubmatch(line); m != nil {
			sec.Cleans++
			if sec.Clean == "" {
				sec.Clean, sec.CleanLine = m[1], n
			}
			last = nil
			continue
		}
		if strings.TrimSpace(line) != "" {
			// Prose between findings ends the quote of the one above.
			last = nil
		}
	}
	return r
}

// cites returns the citations in a finding's text, in order.
func cites(s string) []Cite {
	var out []Cite
	for _, m := range citeRE().FindAllStringSubmatch(s, -1) {
		p := strings.TrimSuffix(strings.TrimPrefix(m[1], "./"), ".")
		if strings.Contains(p, "://") || strings.HasPrefix(p, "//") || strings.Trim(p, "0123456789") == "" {
			// A URL's host:port, or a time of day (17:42), is no file.
			continue
		}
		start, err1 := strconv.Atoi(m[2])
		end := start
		var err2 error
		if m[3] != "" {
			end, err2 = strconv.Atoi(m[3])
		}
		if err1 != nil || err2 != nil {
			continue
		}
		out = append(out, Cite{Path: p, Start: start, End: end})
	}
	return out
}
