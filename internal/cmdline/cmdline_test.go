package cmdline

import (
	"bytes"
	"flag"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const testUsage = "usage: omega-monitor thing <target> [flags]\n\nflags:\n"

// testFlags is how testUsage's flags are listed: the value's name is the
// back-quoted word of the usage, else the flag's type.
const testFlags = "  --interval INT  seconds between polls (default 60)\n" +
	"  --mux PATH      multiplexer binary path\n"

func TestParseInterspersed(t *testing.T) {
	for _, c := range []struct {
		args       []string
		positional []string
		interval   int // when ok
		code       int
		ok         bool
		out, err   string
	}{
		{[]string{"host:agent", "--interval", "30"}, []string{"host:agent"}, 30, 0, true, "", ""},
		{[]string{"-interval=5", "a", "b"}, []string{"a", "b"}, 5, 0, true, "", ""},
		{[]string{"a", "--", "--interval", "b"}, []string{"a", "--interval", "b"}, 60, 0, true, "", ""},
		{nil, nil, 60, 0, true, "", ""},
		{[]string{"a", "--help"}, nil, 0, 0, false, testUsage + testFlags, ""},
		{[]string{"a", "--nope"}, nil, 0, 2, false, "",
			"omega-monitor: unknown flag --nope; see \"omega-monitor thing --help\"\n"},
		{[]string{"a", "--intervall", "3"}, nil, 0, 2, false, "",
			"omega-monitor: unknown flag --intervall: did you mean --interval? (see \"omega-monitor thing --help\")\n"},
		{[]string{"-inter", "3"}, nil, 0, 2, false, "",
			"omega-monitor: unknown flag --inter: did you mean --interval? (see \"omega-monitor thing --help\")\n"},
		{[]string{"--mxu", "tmux"}, nil, 0, 2, false, "",
			"omega-monitor: unknown flag --mxu: did you mean --mux? (see \"omega-monitor thing --help\")\n"},
		{[]string{"--interval"}, nil, 0, 2, false, "",
			"omega-monitor: --interval needs a value; see \"omega-monitor thing --help\"\n"},
		{[]string{"--interval", "x"}, nil, 0, 2, false, "",
			"omega-monitor: --interval \"x\": parse error; see \"omega-monitor thing --help\"\n"},
	} {
		fs := flag.NewFlagSet("thing", flag.ContinueOnError)
		interval := fs.Int("interval", 60, "seconds between polls")
		fs.String("mux", "", "multiplexer binary `path`")
		var out, errb bytes.Buffer
		positional, code, ok := ParseInterspersed(fs, c.args, testUsage, &out, &errb)
		if !ok {
			*interval = 0
		}
		got := []any{positional, *interval, code, ok, out.String(), errb.String()}
		want := []any{c.positional, c.interval, c.code, c.ok, c.out, c.err}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", c.args, diff)
		}
	}
}

func TestVersion(t *testing.T) {
	// A test binary has build info: its version is never the "unknown" of
	// a binary without.
	if v := Version(); v == "unknown" || v == "" {
		t.Errorf("Version() = %q", v)
	}
}

func TestSecondsAndDuration(t *testing.T) {
	for _, c := range []struct {
		in      string
		seconds int           // -1: refused
		dur     time.Duration // -1: refused
	}{
		{"30", 30, 30 * time.Second},
		{"30s", 30, 30 * time.Second},
		{"2m", 120, 2 * time.Minute},
		{"1m30s", 90, 90 * time.Second},
		{"1.5", -1, 1500 * time.Millisecond},
		{"500ms", -1, 500 * time.Millisecond},
		{"0", 0, 0},
		{"-5", -5, -5 * time.Second},
		{"soon", -1, -1},
		{"", -1, -1},
		{"NaN", -1, -1},
		{"1e300", -1, -1},
	} {
		var s Seconds
		gotS := -1
		if s.Set(c.in) == nil {
			gotS = int(s)
		}
		var d Duration
		gotD := time.Duration(-1)
		if d.Set(c.in) == nil {
			gotD = time.Duration(d)
		}
		if diff := cmp.Diff([]any{c.seconds, c.dur}, []any{gotS, gotD}); diff != "" {
			t.Errorf("%q (-want +got):\n%s", c.in, diff)
		}
	}
}

func TestNearest(t *testing.T) {
	names := []string{"status", "stop", "list", "logs", "ack", "watch", "interval", "mux"}
	for _, c := range []struct{ word, want string }{
		{"stauts", "status"}, // a swap is one edit
		{"statsu", "status"},
		{"stat", "status"}, // a prefix
		{"lsit", "list"},
		{"mxu", "mux"},
		{"wach", "watch"},
		{"Status", "status"},
		{"ag", ""},       // two edits from ack: too far for a short word
		{"shop", "stop"}, // a session of that name is watched all the same
		{"agent", ""},    // nothing near
		{"intervall", "interval"},
	} {
		if got := Nearest(c.word, names); got != c.want {
			t.Errorf("Nearest(%q) = %q, want %q", c.word, got, c.want)
		}
	}
}

// TestExamples: a command's section, a subcommand's or else its
// command's, none for a command without one; the help asked for is the
// help flag alone after a command or a subcommand.
func TestExamples(t *testing.T) {
	const text = "# a comment\n== relay\n  omega-monitor relay start\n\n== relay logs\n  omega-monitor relay logs -f\n\n== stop\n\n"
	for _, tc := range []struct{ name, want string }{
		{"relay", "\nExamples:\n  omega-monitor relay start\n"},
		{"relay logs", "\nExamples:\n  omega-monitor relay logs -f\n"},
		{"relay stop", "\nExamples:\n  omega-monitor relay start\n"},
		{"stop", ""},
		{"status", ""},
		{"", ""},
	} {
		if diff := cmp.Diff(tc.want, Examples(text, tc.name)); diff != "" {
			t.Errorf("Examples(%q) (-want +got):\n%s", tc.name, diff)
		}
	}
	if diff := cmp.Diff([]string{"relay", "relay logs", "stop"}, ExampleSections(text)); diff != "" {
		t.Errorf("ExampleSections (-want +got):\n%s", diff)
	}
	type asked struct {
		Name string
		OK   bool
	}
	for _, tc := range []struct {
		args []string
		want asked
	}{
		{[]string{"stop", "--help"}, asked{"stop", true}},
		{[]string{"relay", "logs", "-h"}, asked{"relay logs", true}},
		{[]string{"stop", "api"}, asked{"stop", false}},
		{[]string{"watch", "--nudge-text", "--help"}, asked{"", false}},
		{[]string{"stop", "api", "--help"}, asked{"stop api", true}},
		{[]string{"stop"}, asked{"", false}},
	} {
		name, ok := HelpAsked(tc.args)
		if diff := cmp.Diff(tc.want, asked{name, ok}); diff != "" {
			t.Errorf("HelpAsked(%q) (-want +got):\n%s", tc.args, diff)
		}
	}
}
