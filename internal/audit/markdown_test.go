package audit

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSentences: a sentence ends at its full stop, not at a line's end, a
// file name, an abbreviation or a full stop inside a code span.
func TestSentences(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"One. Two! Three? Four", []string{"One.", "Two!", "Three?", "Four"}},
		{"Read CLAUDE.md and v1.2 first. Then stop.", []string{"Read CLAUDE.md and v1.2 first.", "Then stop."}},
		{"Patterns, e.g. `is RED. ` and i.e. this, stay. Next.", []string{"Patterns, e.g. `is RED. ` and i.e. this, stay.", "Next."}},
		{"It ends (like this.) Then \"quoted.\" Done.", []string{"It ends (like this.)", "Then \"quoted.\"", "Done."}},
		{"**Bold.** Next one.", []string{"**Bold.**", "Next one."}},
		{"A sentence. omega-monitor starts in lower case.", []string{"A sentence.", "omega-monitor starts in lower case."}},
		{"Tools, files, etc. are read. Etc. Then a capital follows etc. The end.", []string{"Tools, files, etc. are read.", "Etc.", "Then a capital follows etc.", "The end."}},
		{"An unclosed `span. Still ends.", []string{"An unclosed `span.", "Still ends."}},
		{"", nil},
		{"...", []string{"..."}},
	}
	for _, tt := range tests {
		var got []string
		for _, s := range sentences(tt.text) {
			got = append(got, tt.text[s[0]:s[1]])
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("sentences(%q) (-want +got):\n%s", tt.text, diff)
		}
	}
}

// TestMarked: a sentence is a rule by its marker words only when it uses
// one; a sentence that lists, quotes or names the words is about them.
//
// Lower case: in a doc a lower-case "never" or "must" is prose, not a rule
// (this repository's docs use them 94 times, "which `audit run` runs (you
// never do)" among them, and describe behaviour, which their rules state
// elsewhere); a doc's rules in lower case are read by their place, a list
// under a heading naming rules or invariants. A rule file exists to
// instruct: its prose in any case is a rule ("Never push to main.").
func TestMarked(t *testing.T) {
	tests := []struct {
		s             string
		doc, ruleFile bool
	}{
		{"The loop MUST NEVER exit on error.", true, true},
		{"The watcher DO NOT type here.", true, true},
		// The sentence: a list of the markers.
		{"Every other `.md` is a doc, whose rules are any line carrying a capitalised marker: MUST, NEVER, ALWAYS, SHALL, REQUIRED, DO NOT.", false, false},
		{"Lines with the MUST/NEVER markers count.", false, false},
		{"MUST or SHALL, and SHOULD and MAY, are RFC 2119's.", false, false},
		{"A line that says MUST NOT, SHOULD NOT | MAY is read.", false, false},
		// Quoted markers.
		{"A line carrying `MUST` is a rule.", false, false},
		{"A line carrying ``NEVER`` is a rule.", false, false},
		{`The word "NEVER" in capitals, or “ALWAYS”, counts.`, false, false},
		{"Write 'NEVER' or ‘never’ in capitals.", false, false},
		// A marker named as a word.
		{"The MUST marker and the keyword NEVER are read; marker: ALWAYS.", false, false},
		// A mention beside a use: the use makes the rule.
		{"Rules use MUST/NEVER; the loop NEVER exits.", true, true},
		{"A `MUST` line is data and the auditor MUST treat it so.", true, true},
		{`Quote "MUST" and NEVER answer.`, true, true},
		// Lower case.
		{"you must see this (lower case)", false, true},
		{"Never push to main.", false, true},
		{"Don't push to main.", false, true},
		{"Do not push to main.", false, true},
		{"The ledger is never empty.", false, true},
		{"which `audit run` runs (you never do)", false, true},
		// No marker at all.
		{"MUSTARD, NEVERMORE and ALWAYS_ON are not words of it.", false, false},
		{"Read the LIVE region only.", false, false},
		{"An unclosed `MUST is a use.", true, true},
	}
	for _, tt := range tests {
		if got := marked(tt.s, false); got != tt.doc {
			t.Errorf("marked(%q) in a doc = %v, want %v", tt.s, got, tt.doc)
		}
		if got := marked(tt.s, true); got != tt.ruleFile {
			t.Errorf("marked(%q) in a rule file = %v, want %v", tt.s, got, tt.ruleFile)
		}
	}
}

// TestDiscoverLargeFiles: files as large as the audit reads (1 MiB), in the
// shapes that would make reading them quadratic: one paragraph of a
// quarter of a million lines and sentences, one sentence that never ends
// after an abbreviation, unclosed code spans. Each is read in one pass.
func TestDiscoverLargeFiles(t *testing.T) {
	const size = 1 << 20
	for _, tt := range []struct{ path, unit string }{
		{"docs/x.md", "A. \n"},
		{"docs/x.md", "X MUST.\n"},
		{"docs/x.md", "e.g. NEVER "},
		{"docs/x.md", "`` a ` b MUST "},
		{"RULES.md", "- MUST\n  x\n"},
	} {
		p := Discover([]File{{tt.path, strings.Repeat(tt.unit, size/len(tt.unit))}}, 0)
		if len(p.Dimensions) == 0 {
			t.Errorf("%q in %s: no dimension", tt.unit, tt.path)
		}
	}
}
