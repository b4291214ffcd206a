package cmdline

import (
	"strings"
)

// Examples is the "Examples:" section that ends the help of the command
// name ("relay", or a subcommand's "relay start"), taken from text, a file
// of sections each headed "== NAME" whose lines are printed as written
// (lines before the first heading are the file's comment). A subcommand
// with no section of its own gets its command's; a command with none
// gets "".
func Examples(text, name string) string {
	command, _, _ := strings.Cut(name, " ")
	for _, n := range []string{name, command} {
		if lines := examplesOf(text, n); lines != "" {
			return "\nExamples:\n" + lines
		}
	}
	return ""
}

// examplesOf is the section of text headed "== name", its blank lines
// at either end left out.
func examplesOf(text, name string) string {
	var b strings.Builder
	in := false
	for line := range strings.Lines(text) {
		if head, ok := strings.CutPrefix(line, "== "); ok {
			in = strings.TrimSpace(head) == name
			continue
		}
		if in {
			b.WriteString(line)
		}
	}
	s := strings.Trim(b.String(), "\n")
	if s == "" {
		return ""
	}
	return s + "\n"
}

// WantsHelp says args ask for a command's help and nothing else.
func WantsHelp(args []string) bool {
	return len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help")
}

// HelpAsked is the command, or "command subcommand", whose help args (a
// command line from the command's name on) ask for, and nothing else: the
// help flag alone after it.
func HelpAsked(args []string) (string, bool) {
	switch {
	case len(args) == 3 && !strings.HasPrefix(args[1], "-"):
		return args[0] + " " + args[1], WantsHelp(args[2:])
	case len(args) == 2:
		return args[0], WantsHelp(args[1:])
	}
	return "", false
}

// ExampleSections are the names of text's sections, in order.
func ExampleSections(text string) []string {
	var names []string
	for line := range strings.Lines(text) {
		if head, ok := strings.CutPrefix(line, "== "); ok {
			names = append(names, strings.TrimSpace(head))
		}
	}
	return names
}
