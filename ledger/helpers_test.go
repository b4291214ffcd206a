package ledger

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// nudges is a ledger of ordinary nudges, the kind the watcher sends.
var nudges = []string{
	"continue with the next step",
	"keep going until the queue is empty",
	"Please continue. If you are blocked, say what blocks you in one line.",
	"run the tests again and fix what fails",
	"carry on with the plan; do not stop to ask for confirmation",
	"pick the next open ticket and work on it",
	"the build is not finished: continue from where you stopped",
	"resume the task you were working on",
	"check the remaining work items and keep going",
	"you stopped without finishing; continue",
	"There is still work in the queue. Continue with it, and commit each step when its tests pass.",
	"go on",
}

// screenLines returns the lines of testdata/screen.txt and a few hundred
// generated spinner and footer lines.
func screenLines(tb testing.TB) []string {
	tb.Helper()
	data, err := os.ReadFile("testdata/screen.txt")
	if err != nil {
		tb.Fatal(err)
	}
	var lines []string
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSuffix(line, "\n")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		lines = append(lines, line)
	}
	return append(lines, spinnerLines()...)
}

// spinnerLines returns live-chrome lines of every era: spinner glyphs,
// gerunds and meters, and status-bar footers.
func spinnerLines() []string {
	glyphs := []string{"·", "✢", "✳", "✶", "✻", "✽", "*", "●"}
	gerunds := []string{"Clauding", "Mulling", "Percolating", "Shimmying", "Crunching",
		"Baking", "Swirling", "Gitifying", "Crystallizing", "Processing simple-backup skill",
		"Running the ledger fuzz targets", "Reading classify/region.go"}
	meters := []string{"", " (4s · thinking)", " (2m 35s · ↓ 4.9k tokens)",
		" (esc to interrupt · ctrl+t to hide tasks · 3m 0s · ↑ 6.6k tokens)",
		" (102s · ⚒ 8.7k tokens · esc to interrupt)", " (7s · ↓ 78 tokens)",
		" (12s · thought for 3s)", " (1m 2s · running stop hook)"}
	footers := []string{"⏵⏵ bypass permissions on (shift+tab to cycle)",
		"⏵⏵ accept edits on (shift+Tab to cycle)", "⏸ manual mode on", "⏵⏵ auto mode on (shift+tab to cycle)"}
	tails := []string{"", " · esc to interrupt", " · ← 2 agents", " · ? for shortcuts",
		" · 19 files +152 -56 · esc to interrupt", " · ← for agents"}
	var lines []string
	for i, g := range gerunds {
		for j, m := range meters {
			lines = append(lines, glyphs[(i+j)%len(glyphs)]+" "+g+"…"+m)
		}
	}
	for _, f := range footers {
		for _, t := range tails {
			lines = append(lines, "  "+f+t)
		}
	}
	return lines
}

// hardWrap cuts s into lines of width runes, as a terminal wraps.
func hardWrap(s string, width int) []string {
	rs := []rune(s)
	var lines []string
	for len(rs) > width {
		lines = append(lines, string(rs[:width]))
		rs = rs[width:]
	}
	return append(lines, string(rs))
}

// wordWrap fills lines of at most width runes with whole words, cutting a
// word only when it is longer than a line.
func wordWrap(s string, width int) []string {
	var lines []string
	var cur []rune
	for _, w := range strings.Fields(s) {
		wr := []rune(w)
		if len(cur) > 0 && len(cur)+1+len(wr) <= width {
			cur = append(append(cur, ' '), wr...)
			continue
		}
		if len(cur) > 0 {
			lines = append(lines, string(cur))
		}
		for len(wr) > width {
			lines = append(lines, string(wr[:width]))
			wr = wr[width:]
		}
		cur = wr
	}
	return append(lines, string(cur))
}

// naiveMask is Mask as the definition reads, the slow way: it tries every
// SliceLen-rune window of the normalised line against every record, groups
// the matches at consecutive positions into runs, keeps the runs whose ends
// are both the end of a record or have no letter beyond them, trims their
// whitespace and removes what they cover.
func naiveMask(recs []string, line string) string {
	type nrune struct {
		r          rune
		start, end int
	}
	var ns []nrune
	blank := -1
	for i := 0; i < len(line); {
		r, size := utf8.DecodeRuneInString(line[i:])
		switch {
		case isSpace(r):
			if blank < 0 && len(ns) > 0 {
				blank = i
			}
		default:
			if blank >= 0 {
				ns = append(ns, nrune{' ', blank, i})
				blank = -1
			}
			ns = append(ns, nrune{r, i, i + size})
		}
		i += size
	}
	// match[j] says whether the window starting at j is recorded, and
	// whether some record starts or ends with it.
	type flags struct{ found, first, last bool }
	match := make([]flags, len(ns))
	for j := 0; j+SliceLen <= len(ns); j++ {
		var w strings.Builder
		for _, n := range ns[j : j+SliceLen] {
			w.WriteRune(n.r)
		}
		for _, rec := range recs {
			if strings.Contains(rec, w.String()) {
				match[j].found = true
				match[j].first = match[j].first || strings.HasPrefix(rec, w.String())
				match[j].last = match[j].last || strings.HasSuffix(rec, w.String())
			}
		}
	}
	letter := func(s string) bool { return strings.IndexFunc(s, unicode.IsLetter) >= 0 }
	removed := make([]bool, len(line))
	for j := 0; j < len(ns); {
		if !match[j].found {
			j++
			continue
		}
		k := j
		for k+1 < len(ns) && match[k+1].found {
			k++
		}
		start, end := ns[j].start, ns[k+SliceLen-1].end
		if (match[j].first || !letter(line[:start])) && (match[k].last || !letter(line[end:])) {
			run := line[start:end]
			start += len(run) - len(strings.TrimLeftFunc(run, isSpace))
			end -= len(run) - len(strings.TrimRightFunc(run, isSpace))
			for i := start; i < end; i++ {
				removed[i] = true
			}
		}
		j = k + 1
	}
	var b strings.Builder
	for i := range len(line) {
		if !removed[i] {
			b.WriteByte(line[i])
		}
	}
	return b.String()
}

// benchNudges returns n distinct nudges of realistic shape.
func benchNudges(n int) []string {
	verbs := []string{"continue with", "finish", "pick up", "resume", "get back to", "keep working on"}
	things := []string{"the ledger benchmarks", "the replay parser", "step %d of the plan",
		"ticket #%d", "the failing test in classify (run %d)", "the fuzz corpus for probe %d",
		"the README section on budgets, draft %d", "the migration of golden pane %d"}
	tails := []string{"", "; do not stop to ask", " and commit when green", ", then report in one line",
		"; the queue still holds work"}
	out := make([]string, 0, n)
	for i := range n {
		thing := things[i%len(things)]
		if strings.Contains(thing, "%d") {
			thing = fmt.Sprintf(thing, i)
		} else {
			thing = fmt.Sprintf("%s (item %d)", thing, i)
		}
		out = append(out, verbs[i%len(verbs)]+" "+thing+tails[i%len(tails)])
	}
	return out
}

// benchPane returns a pane of n lines, 80 to 200 columns wide, built from
// the screen corpus; every 50th line is an echo of one of echoes.
func benchPane(tb testing.TB, n int, echoes []string) []string {
	src := screenLines(tb)
	pane := make([]string, 0, n)
	for i := range n {
		width := 80 + (i*37)%121
		if len(echoes) > 0 && i%50 == 49 {
			e := echoes[(i/50)%len(echoes)]
			pane = append(pane, "❯ "+hardWrap(e, width-2)[0])
			continue
		}
		var b strings.Builder
		for k := 0; utf8.RuneCountInString(b.String()) < width; k++ {
			if k > 0 {
				b.WriteString("  ")
			}
			b.WriteString(src[(i+k*7)%len(src)])
		}
		rs := []rune(b.String())
		pane = append(pane, string(rs[:width]))
	}
	return pane
}
