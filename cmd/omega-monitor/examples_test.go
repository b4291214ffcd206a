package main

import (
	"bytes"
	"flag"
	"slices"
	"strings"
	"testing"

	"github.com/omega-monitor/omega-monitor/internal/cmdline"
)

// TestEveryHelpHasExamples: every command's --help, and each
// subcommand's, answers on standard output, exit 0, and ends with
// examples; help COMMAND prints the same; every flag an example gives its
// command is one that command parses, so that an example cannot drift;
// and every section of the examples file is a command's.
func TestEveryHelpHasExamples(t *testing.T) {
	var seen []*flag.FlagSet
	cmdline.Helped = func(fs *flag.FlagSet) { seen = append(seen, fs) }
	defer func() { cmdline.Helped = nil }()
	help := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := newTestEnv("OMEGA_MONITOR_HOME="+t.TempDir()).run(args, nil, &out, &errb)
		return code, out.String(), errb.String()
	}
	parsed := map[string][]string{} // a command's, and its subcommands', flags
	for name, flags := range handParsed {
		parsed[name] = flags
	}
	named := map[string]bool{"omega-monitor": true}
	for _, inv := range helpInvocations() {
		name := strings.Join(inv, " ")
		named[name] = true
		seen = nil
		code, out, errs := help(append(slices.Clone(inv), "--help")...)
		if code != 0 || !strings.HasPrefix(out, "usage: ") {
			t.Errorf("%s --help: exit %d, want 0 and a usage on standard output:\n%s%s", name, code, out, errs)
			continue
		}
		if !strings.Contains(out, "\nExamples:\n  ") {
			t.Errorf("%s --help has no examples:\n%s", name, out)
		}
		for _, fs := range seen {
			fs.VisitAll(func(f *flag.Flag) { parsed[inv[0]] = append(parsed[inv[0]], cmdline.FlagName(f.Name)) })
		}
		if len(inv) == 1 {
			if _, viaHelp, _ := help("help", inv[0]); viaHelp != out {
				t.Errorf("help %s differs from %s --help:\n%s", name, name, viaHelp)
			}
		}
	}
	if code, out, _ := help("--help"); code != 0 || !strings.Contains(out, "\nExamples:\n  ") {
		t.Errorf("omega-monitor --help: exit %d, no examples:\n%s", code, out)
	}
	for _, section := range cmdline.ExampleSections(examples) {
		if !named[section] {
			t.Errorf("examples.txt: section %q is no command's", section)
			continue
		}
		body := strings.ReplaceAll(cmdline.Examples(examples, section), "\\\n", " ")
		for _, line := range strings.Split(body, "\n") {
			command, flags := exampleFlags(line)
			for _, f := range flags {
				if !slices.Contains(parsed[command], f) {
					t.Errorf("examples.txt, %s: %s gives %s, which %s does not parse", section, strings.TrimSpace(line), f, command)
				}
			}
		}
	}
}

// exampleFlags are the command an example line runs omega-monitor as
// (watch, for a target) and the flags it gives it: the words after the
// last "omega-monitor" that start with a dash, up to a shell operator,
// quoted words whole (a probe's own flags are not ours), "-" (standard
// input) none.
func exampleFlags(line string) (command string, flags []string) {
	words := shellFields(line)
	i := len(words) - 1
	for i >= 0 && words[i] != "omega-monitor" {
		i--
	}
	if i < 0 || i == len(words)-1 || strings.HasPrefix(strings.TrimSpace(line), "#") {
		return "", nil
	}
	command = "watch"
	if _, ok := find(words[i+1]); ok {
		command = words[i+1]
	}
	for _, w := range words[i+1:] {
		if strings.ContainsAny(w[:1], "|<>;&") {
			break
		}
		if strings.HasPrefix(w, "-") && w != "-" {
			flags = append(flags, w)
		}
	}
	return command, flags
}

// shellFields splits line into words as a shell does, for the examples'
// few forms: quotes keep a word whole, and a quoted word is not a flag
// (it is kept with its quote).
func shellFields(line string) []string {
	var words []string
	var w strings.Builder
	quote := rune(0)
	for _, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
			w.WriteRune(r)
		case r == '\'' || r == '"':
			quote = r
			w.WriteRune(r)
		case r == ' ' || r == '\t':
			if w.Len() > 0 {
				words = append(words, w.String())
				w.Reset()
			}
		case r == '(' || r == ')':
			// '#(omega-monitor status --tmux)': the command inside.
			if w.Len() > 0 {
				words = append(words, w.String())
				w.Reset()
			}
		default:
			w.WriteRune(r)
		}
	}
	if w.Len() > 0 {
		words = append(words, w.String())
	}
	return words
}
