package probe

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseCount(t *testing.T) {
	type result struct {
		N  int64
		OK bool
	}
	tests := []struct {
		raw  string
		want result
	}{
		{"7", result{7, true}},
		{"0", result{0, true}},
		{"00", result{0, true}},
		{"007", result{7, true}},
		{" 12\n", result{12, true}},
		{"\t41\r\n", result{41, true}},
		{"\n\n3\n\n", result{3, true}},
		{"9223372036854775807", result{9223372036854775807, true}},
		{"0009223372036854775807", result{9223372036854775807, true}},

		{"", result{}},
		{" \t\r\n", result{}},
		{"-0", result{}},
		{"-3", result{}},
		{"+3", result{}},
		{"+0", result{}},
		{"1e3", result{}},
		{"0x10", result{}},
		{"1_000", result{}},
		{"1,000", result{}},
		{"12 13", result{}},
		{"12\n13", result{}},
		{"3.0", result{}},
		{"٣", result{}},       // ARABIC-INDIC DIGIT THREE
		{"３", result{}},       // FULLWIDTH DIGIT THREE
		{"\u00a03", result{}}, // no-break space is not trimmed
		{"3\v", result{}},     // nor a vertical tab
		{"\x003", result{}},
		{"9223372036854775808", result{}},
		{"99999999999999999999999", result{}},
		{"abc", result{}},
		{"7 steps", result{}},
		{"work: 7", result{}},
	}
	for _, tt := range tests {
		var got result
		got.N, got.OK = ParseCount(tt.raw)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseCount(%q) (-want +got):\n%s", tt.raw, diff)
		}
	}
}

func TestRead(t *testing.T) {
	type meaning struct {
		Reading     Reading
		String      string
		WorkRemains bool
	}
	tests := []struct {
		raw     string
		present bool
		want    meaning
	}{
		{"7\n", true, meaning{Reading{"7\n", 7, true}, "7", true}},
		{"0\n", true, meaning{Reading{"0\n", 0, true}, "0", false}},
		{"00", true, meaning{Reading{"00", 0, true}, "0", false}},
		{" 12\n", true, meaning{Reading{" 12\n", 12, true}, "12", true}},
		// Everything else is unknown, and unknown is work remaining.
		{"-0", true, meaning{Reading{"-0", 0, false}, "?", true}},
		{"+3", true, meaning{Reading{"+3", 0, false}, "?", true}},
		{"1e3", true, meaning{Reading{"1e3", 0, false}, "?", true}},
		{"0x10", true, meaning{Reading{"0x10", 0, false}, "?", true}},
		{"12 13", true, meaning{Reading{"12 13", 0, false}, "?", true}},
		{"٣", true, meaning{Reading{"٣", 0, false}, "?", true}},
		{"9223372036854775808", true, meaning{Reading{"9223372036854775808", 0, false}, "?", true}},
		{"", true, meaning{Reading{"", 0, false}, "?", true}},
		{"abc", true, meaning{Reading{"abc", 0, false}, "?", true}},
		// A probe that was missing or failed is unknown whatever it printed.
		{"", false, meaning{Reading{"", 0, false}, "?", true}},
		{"0\n", false, meaning{Reading{"0\n", 0, false}, "?", true}},
	}
	for _, tt := range tests {
		r := Read(tt.raw, tt.present)
		got := meaning{r, r.String(), r.WorkRemains()}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Read(%q, %v) (-want +got):\n%s", tt.raw, tt.present, diff)
		}
	}
}

func TestZeroReadingIsUnknown(t *testing.T) {
	var r Reading
	if r.Known || r.String() != "?" || !r.WorkRemains() {
		t.Errorf("zero Reading = %+v, String %q, WorkRemains %v; want unknown, \"?\", true", r, r.String(), r.WorkRemains())
	}
}

func TestCount(t *testing.T) {
	tests := []struct {
		n    int64
		want Reading
	}{
		{0, Reading{"0", 0, true}},
		{42, Reading{"42", 42, true}},
		{-1, Reading{"-1", 0, false}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, Count(tt.n)); diff != "" {
			t.Errorf("Count(%d) (-want +got):\n%s", tt.n, diff)
		}
	}
}

func TestUnusable(t *testing.T) {
	for _, c := range []struct{ out, said, want string }{
		{"", "", "printed nothing"},
		{"  \n", "grep: TODO.md: No such file or directory\n", "printed nothing; it said: grep: TODO.md: No such file or directory"},
		{"seven", "", `printed "seven", not one whole number`},
		{strings.Repeat("x", 70), "", `printed "` + strings.Repeat("x", 60) + `…", not one whole number`},
	} {
		if got := Unusable(c.out, c.said); got != c.want {
			t.Errorf("Unusable(%q, %q) = %q, want %q", c.out, c.said, got, c.want)
		}
	}
}
