package main

import (
	"bytes"
	"flag"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/internal/cmdline"
)

// helpInvocations are the command lines whose --help prints a flag set's
// usage: every command, and each subcommand that parses flags of its own.
func helpInvocations() [][]string {
	var out [][]string
	for _, g := range groups() {
		for _, c := range g.commands {
			out = append(out, []string{c.name})
		}
	}
	return append(out,
		[]string{"relay", "start"}, []string{"relay", "stop"}, []string{"relay", "status"}, []string{"relay", "logs"},
		[]string{"rules", "check"}, []string{"rules", "list"},
		[]string{"golden", "add"},
		[]string{"audit", "plan"}, []string{"audit", "check"}, []string{"audit", "run"}, []string{"audit", "stop"},
		[]string{"ledger", "record"},
	)
}

// flagWord is a flag as a usage writes it: in the usage lines ("[-f]",
// "--state DIR") or at the head of a line of a flag list ("  --raw  …").
var flagWord = regexp.MustCompile(`(?:^|[\s\[(|,])(--?[a-z][a-z0-9-]*)`)

// handParsed are the commands that read their few flags without a flag
// set, each for a reason of its own: wake must answer an agent's hook
// whatever it is given, and channels hands its words to
// omega-monitor-notify.
var handParsed = map[string][]string{
	"wake":     {"--home"},
	"channels": {"--test"},
	"mcp":      {"--hosts", "--ssh-config", "--hosts-timeout"}, // omega-monitor-mcp's
}

// TestHelpListsTheFlagsParsed: every command's --help names exactly the
// flags it parses, spelled as they are typed (-f for a one-letter flag,
// --name for the others), in its usage lines or its list of flags; none
// it does not parse, and none in another spelling. A command of
// subcommands names, in its own help, only flags one of them parses.
func TestHelpListsTheFlagsParsed(t *testing.T) {
	var seen []*flag.FlagSet
	cmdline.Helped = func(fs *flag.FlagSet) { seen = append(seen, fs) }
	defer func() { cmdline.Helped = nil }()
	help := func(inv []string) (string, []string, bool) {
		seen = nil
		var out, errb bytes.Buffer
		env := newTestEnv("OMEGA_MONITOR_HOME=" + t.TempDir())
		env.run(append(slices.Clone(inv), "--help"), nil, &out, &errb)
		if len(seen) == 0 {
			return out.String(), nil, false
		}
		var parsed []string
		seen[len(seen)-1].VisitAll(func(f *flag.Flag) { parsed = append(parsed, cmdline.FlagName(f.Name)) })
		slices.Sort(parsed)
		return out.String(), parsed, true
	}
	parsedBy := map[string][]string{} // a command's, and its subcommands', flags
	for _, inv := range helpInvocations() {
		_, parsed, ok := help(inv)
		if ok {
			parsedBy[inv[0]] = append(parsedBy[inv[0]], parsed...)
		}
	}
	for name, flags := range handParsed {
		parsedBy[name] = append(parsedBy[name], flags...)
	}
	for _, inv := range helpInvocations() {
		name := strings.Join(inv, " ")
		t.Run(name, func(t *testing.T) {
			out, parsed, ok := help(inv)
			named := helpFlags(out, inv)
			if !ok || len(inv) == 1 && hasSubcommands(inv[0]) {
				// A command of subcommands, or one that reads its
				// flags by hand: what it names, one of them parses.
				for _, f := range named {
					if !slices.Contains(parsedBy[inv[0]], f) {
						t.Errorf("%s --help names %s, which no form of %s parses:\n%s", name, f, inv[0], out)
					}
				}
				return
			}
			if diff := cmp.Diff(parsed, named); diff != "" {
				t.Errorf("%s --help (-parsed +named):\n%s\n%s", name, diff, out)
			}
		})
	}
}

// hasSubcommands says name's help is its subcommands' too.
func hasSubcommands(name string) bool {
	for _, inv := range helpInvocations() {
		if len(inv) > 1 && inv[0] == name {
			return true
		}
	}
	return false
}

// helpFlags are the flags a usage names where it lists them, sorted, each
// once: its usage lines (up to the first blank line; for a subcommand,
// only the lines of that subcommand) and the lines that start a flag's
// entry.
func helpFlags(help string, inv []string) []string {
	var got []string
	add := func(line string) {
		for _, m := range flagWord.FindAllStringSubmatch(line, -1) {
			if m[1] != "--help" && m[1] != "-h" && m[1] != "--" && !slices.Contains(got, m[1]) {
				got = append(got, m[1])
			}
		}
	}
	lines := strings.Split(help, "\n")
	i := 0
	for ; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
		if len(inv) > 1 && !usageOf(lines[i], inv) {
			continue
		}
		add(lines[i])
	}
	for _, l := range lines[i:] {
		if t := strings.TrimLeft(l, " "); strings.HasPrefix(t, "-") && len(l)-len(t) >= 2 && len(l)-len(t) <= 4 {
			add(strings.Fields(t)[0])
		}
	}
	slices.Sort(got)
	return got
}

// usageOf says a usage line is the subcommand inv's: "omega-monitor relay
// start|stop|status …" is relay start's, "omega-monitor relay logs …" is
// not.
func usageOf(line string, inv []string) bool {
	f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "usage:"))
	return len(f) >= 3 && f[0] == "omega-monitor" && f[1] == inv[0] && slices.Contains(strings.Split(f[2], "|"), inv[1])
}
