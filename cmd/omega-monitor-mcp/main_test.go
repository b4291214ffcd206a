package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRunUsage checks the command line: --help answers on stdout, an
// argument or a flag the server does not take is a usage error, exit 2, and
// a client that closes stdin ends the server cleanly.
func TestRunUsage(t *testing.T) {
	for _, c := range []struct {
		args     []string
		code     int
		out, err string
	}{
		{nil, 0, "", ""},
		{[]string{"--help"}, 0, "usage: omega-monitor mcp\n", ""},
		{[]string{"-h"}, 0, "usage: omega-monitor mcp\n", ""},
		{[]string{"serve"}, 2, "", "omega-monitor: mcp takes no arguments, got \"serve\"\n"},
		{[]string{"--port", "80"}, 2, "", "omega-monitor: unknown flag --port; see \"omega-monitor mcp --help\"\n"},
		{[]string{"--hosts-timeout", "2m"}, 2, "", "omega-monitor: mcp: --hosts-timeout must be 1s to 60s, got 2m0s\n"},
	} {
		var out, errb bytes.Buffer
		code := run(c.args, strings.NewReader(""), &out, &errb)
		got := []any{code, firstLines(out.String(), c.out), firstLines(errb.String(), c.err)}
		if diff := cmp.Diff([]any{c.code, c.out, c.err}, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", c.args, diff)
		}
	}
}

// firstLines returns as many first lines of s as want has, and all of s
// when want is empty.
func firstLines(s, want string) string {
	n := strings.Count(want, "\n")
	if n == 0 {
		return s
	}
	lines := strings.SplitAfter(s, "\n")
	return strings.Join(lines[:min(n, len(lines))], "")
}
