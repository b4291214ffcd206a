package expect

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseFormat(t *testing.T) {
	tests := []struct {
		in   string
		want Want
	}{
		{"state: STALLED\nwork:  3 \nhold: draft\nwhy: a draft\n",
			Want{State: "STALLED", Work: " 3 ", HasWork: true, Hold: "draft", Why: "a draft"}},
		{"# a comment\n\nstate: WORKING\nledger: keep going\nledger: and more\n",
			Want{State: "WORKING", Ledger: []string{"keep going", "and more"}}},
		{"state: BLOCKED\nwork:\nstatus: idle\nversion: 2.1.332\n",
			Want{State: "BLOCKED", HasWork: true, Status: "idle", Version: "2.1.332"}},
		{"state: QUESTION\nagent: Claude Code\nrule: dialog footer\nquestion: Do you want to proceed?\noption: Yes\noption: No\n",
			Want{State: "QUESTION", Agent: "Claude Code", Rule: "dialog footer", Question: "Do you want to proceed?", Options: []string{"Yes", "No"}}},
		{"state: STALLED\nhold: interrupt\nhold-rule: the operator interrupted the turn\n",
			Want{State: "STALLED", Hold: "interrupt", HoldRule: "the operator interrupted the turn"}},
	}
	for _, tt := range tests {
		got, err := Parse([]byte(tt.in))
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.in, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Parse(%q) (-want +got):\n%s", tt.in, diff)
		}
		again, err := Parse([]byte(got.Format()))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(got, again); diff != "" {
			t.Errorf("Format does not read back (-want +got):\n%s", diff)
		}
	}
	for _, bad := range []string{"", "state STALLED\n", "state: X\nodd: 1\n", "why: no state\n"} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%q) gave no error", bad)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("state: STALLED\nwork: 7\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := Parse(data)
		if err != nil {
			return
		}
		again, err := Parse([]byte(w.Format()))
		if err != nil {
			t.Fatalf("Format of a parsed file does not parse: %v", err)
		}
		if w.State != again.State || w.Hold != again.Hold || w.HasWork != again.HasWork {
			t.Fatalf("round trip changed %+v to %+v", w, again)
		}
	})
}
