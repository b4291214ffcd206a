package cmdline

import (
	"bytes"
	"flag"
	"testing"

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
			"omega-monitor: flag provided but not defined: -nope\n" + testUsage + testFlags},
		{[]string{"--interval", "x"}, nil, 0, 2, false, "",
			"omega-monitor: invalid value \"x\" for flag -interval: parse error\n" + testUsage + testFlags},
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
