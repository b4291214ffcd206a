package audit

import (
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	report := strings.Join([]string{
		"Here is my summary, which is not the verdict: all good.", // 1
		"## D1: Every exported function has a doc comment",        // 2
		"1. `main.go:3` — Run is exported and has no comment",     // 3
		"   > func Run() {}",                             // 4
		"2) lib/x.go:10-12 and lib/y.go:4: both skip it", // 5
		"some prose", // 6
		"> a stray quote after prose belongs to nobody", // 7
		"### D2", // 8
		"**CLEAN:** the rule holds because gofmt -l runs in scripts/test.sh:8", // 9
		"## Notes",                                  // 10
		"1. main.go:1 outside any dimension",        // 11
		"# D3 Name at level one",                    // 12
		"3. see https://example.com:443/x at 17:42", // 13
	}, "\n")
	want := Report{Sections: []Section{
		{ID: "D1", Title: "Every exported function has a doc comment", Line: 2, Findings: []Finding{
			{Rank: 1, Line: 3, Text: "`main.go:3` — Run is exported and has no comment", Cites: []Cite{{"main.go", 3, 3}}, Quote: "func Run() {}"},
			{Rank: 2, Line: 5, Text: "lib/x.go:10-12 and lib/y.go:4: both skip it", Cites: []Cite{{"lib/x.go", 10, 12}, {"lib/y.go", 4, 4}}},
		}},
		{ID: "D2", Line: 8, Clean: "the rule holds because gofmt -l runs in scripts/test.sh:8", CleanLine: 9, Cleans: 1},
		{ID: "D3", Title: "Name at level one", Line: 12, Findings: []Finding{
			{Rank: 1, Line: 13, Text: "see https://example.com:443/x at 17:42"},
		}},
	}}
	if diff := cmp.Diff(want, Parse(report)); diff != "" {
		t.Errorf("Parse mismatch (-want +got):\n%s", diff)
	}
}

var project = fstest.MapFS{
	"main.go":     {Data: []byte("package main\n\nfunc Run() {}\n\nfunc main() { Run() }\n")},
	"lib/x.go":    {Data: []byte("package lib\n// one\n// two\n")},
	"empty.txt":   {Data: nil},
	"dir/file.md": {Data: []byte("x\n")},
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name   string
		report string
		want   []string // dimensions asked for
		kept   string   // what passed, as "D1:f1,f2 D2:clean"
		reject []string // each as Rejection.String() contains
	}{
		{
			name:   "a cited finding with its quote passes",
			report: "## D1\n1. main.go:3 — Run has no doc comment\n   > func Run() {}\n",
			kept:   "D1:3",
		},
		{
			name:   "a quote across a range, re-indented, passes",
			report: "## D1\n1. main.go:3-5 — Run and main\n> func Run() {}\n>\n> func main() {\n",
			kept:   "D1:3",
		},
		{
			name:   "uncited",
			report: "## D1\n1. Run has no doc comment\n2. main.go:5 — main calls Run without a check\n",
			kept:   "D1:5",
			reject: []string{`D1 finding 1 (report line 2): uncited`},
		},
		{
			name:   "a line that does not exist",
			report: "## D1\n1. main.go:99 — something at line 99\n",
			reject: []string{"cites main.go:99: line 99 does not exist, main.go has 5 lines", "D1 dimension (report line 1): neither"},
		},
		{
			name:   "a range past the end",
			report: "## D1\n1. lib/x.go:2-4 — the comments\n",
			reject: []string{"line 4 does not exist, lib/x.go has 3 lines", "neither a cited"},
		},
		{
			name:   "line zero, backwards range",
			report: "## D1\n1. main.go:0 — zero\n2. main.go:4-2 — backwards\n",
			reject: []string{"lines start at 1", "ends before it starts", "neither a cited"},
		},
		{
			name:   "a file that does not exist, a directory, an empty file",
			report: "## D1\n1. nope.go:1 — missing\n2. dir:1 — a directory\n3. empty.txt:1 — empty\n",
			reject: []string{"cites nope.go:1: no such file", "cites dir:1: cannot read it", "empty.txt has 0 lines", "neither a cited"},
		},
		{
			name:   "outside the project",
			report: "## D1\n1. ../etc/passwd:1 — out\n2. /etc/passwd:1 — absolute\n",
			reject: []string{"../etc/passwd:1: the path is not inside the project", "/etc/passwd:1: the path is not inside the project", "neither a cited"},
		},
		{
			name:   "a quote not at the cited lines",
			report: "## D1\n1. main.go:1 — says it\n   > func Run() {}\n",
			reject: []string{`the quoted text (13 characters) is not at main.go:1`, "neither a cited"},
		},
		{
			name:   "filler findings and filler verdicts",
			report: "## D1\n1. main.go:3 — looks good\n## D2\nCLEAN: no issues found.\n## D3\nCLEAN: Looks good to me, LGTM!\n",
			reject: []string{"D1 finding 1 (report line 2): filler", "D1 dimension", "D2 clean verdict (report line 4): filler, not a verdict", "D2 dimension", "D3 clean verdict (report line 6): filler", "D3 dimension"},
		},
		{
			name:   "a specific clean verdict passes, stock phrase or not",
			report: "## D1\nCLEAN: no issues found: every exported func in main.go has a comment, checked by golint in CI\n",
			kept:   "D1:clean",
		},
		{
			name:   "clean beside findings, two clean lines",
			report: "## D1\n1. main.go:3 — Run has no doc comment\nCLEAN: the rule holds because every file is linted in CI\n## D2\nCLEAN: the rule holds because every file is linted in CI\nCLEAN: and a second line that also says a lot\n",
			kept:   "D1:3",
			reject: []string{"D1 clean verdict (report line 3): the dimension has findings", "D2 clean verdict (report line 5): 2 CLEAN lines", "D2 dimension (report line 4): neither"},
		},
		{
			name:   "a missing dimension and one not asked for",
			report: "## D1\nCLEAN: the rule holds because every file is linted in CI\n## D7\nCLEAN: the rule holds because every file is linted in CI\n",
			want:   []string{"D1", "D2"},
			kept:   "D1:clean",
			reject: []string{"D7 dimension (report line 3): not a dimension this audit asked for (D1, D2)", "D2 dimension: missing"},
		},
		{
			name:   "an empty section",
			report: "Sure! I read everything.\n## D1\nThe code is great.\n",
			reject: []string{"D1 dimension (report line 2): neither a cited ranked finding nor a one-line specific clean verdict passed"},
		},
		{
			name:   "no section, nothing asked for by name",
			report: "All good! I checked everything.\n",
			reject: []string{"report as a whole: no section ## D<n>"},
		},
		{
			name:   "nothing at all",
			report: "I could not finish.",
			want:   []string{"D1"},
			reject: []string{"D1 dimension: missing"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kept, rejected := Check(Parse(tt.report), tt.want, project)
			var got []string
			for _, s := range kept.Sections {
				var parts []string
				for _, f := range s.Findings {
					parts = append(parts, strconv.Itoa(f.Cites[0].Start))
				}
				if s.Clean != "" {
					parts = append(parts, "clean")
				}
				got = append(got, s.ID+":"+strings.Join(parts, ","))
			}
			if diff := cmp.Diff(tt.kept, strings.Join(got, " ")); diff != "" {
				t.Errorf("kept mismatch (-want +got):\n%s", diff)
			}
			if len(rejected) != len(tt.reject) {
				t.Errorf("%d rejections, want %d:\n%s", len(rejected), len(tt.reject), rejections(rejected))
			}
			for i, want := range tt.reject {
				if i < len(rejected) && !strings.Contains(rejected[i].String(), want) {
					t.Errorf("rejection %d is %q, want it to say %q", i, rejected[i], want)
				}
			}
		})
	}
}

func rejections(rs []Rejection) string {
	var b strings.Builder
	for _, r := range rs {
		b.WriteString("  " + r.String() + "\n")
	}
	return b.String()
}

func FuzzParse(f *testing.F) {
	f.Add("## D1\n1. main.go:3 — x\n   > func Run() {}\nCLEAN: y\n")
	f.Add("## D12: t\n2) a:1-9999999 b:0 c:-1 `d`:3\n>\n> q\n# x\n")
	f.Add("### D1\n**clean**: ok\n1. https://h:1/x 17:42 ./x.go:2.\n")
	f.Fuzz(func(t *testing.T, report string) {
		r := Parse(report)
		lines := strings.Count(report, "\n") + 1
		for _, s := range r.Sections {
			if s.Line < 1 || s.Line > lines {
				t.Fatalf("section at line %d of %d", s.Line, lines)
			}
			for i, fd := range s.Findings {
				if fd.Rank != i+1 || fd.Line <= s.Line || fd.Line > lines {
					t.Fatalf("finding %+v in section at %d", fd, s.Line)
				}
			}
		}
		// The checker never panics, and never keeps what cites nothing
		// real or a dimension without a verdict.
		kept, _ := Check(r, nil, project)
		for _, s := range kept.Sections {
			if len(s.Findings) == 0 && s.Clean == "" {
				t.Fatalf("kept an empty section %+v", s)
			}
			for _, fd := range s.Findings {
				for _, c := range fd.Cites {
					if _, ok := project[c.Path]; !ok || c.Start < 1 {
						t.Fatalf("kept a citation %v", c)
					}
				}
			}
		}
	})
}
