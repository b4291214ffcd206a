// Package cmdline holds the command-line conventions the module's two
// binaries, omega-monitor and omega-monitor-mcp, share: flags that stand
// anywhere among the positional arguments, --help answered on stdout and a
// usage error on stderr, a command's flags listed as they are typed, and the
// version string of the build. It is not the commands: each binary owns
// its own, and its own usage text.
package cmdline

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

// ParseInterspersed parses flags wherever they stand among the positional
// arguments, as in "omega-monitor host:agent --interval 30". It answers
// --help itself, with usage and the flags. When ok is false the command
// returns code: 0 after --help, 2 after a usage error.
func ParseInterspersed(fs *flag.FlagSet, args []string, usage string, stdout, stderr io.Writer) (positional []string, code int, ok bool) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			WriteUsage(stdout, fs, usage)
			return nil, 0, false
		}
		if err != nil {
			fmt.Fprintf(stderr, "omega-monitor: %v\n", err)
			WriteUsage(stderr, fs, usage)
			return nil, 2, false
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, 0, true
		}
		if rest[0] == "--" {
			return append(positional, rest[1:]...), 0, true
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// WriteUsage writes a command's usage text, followed by its flags when the
// text ends with a line that introduces them ("flags:"); a text that
// documents its flags in its own words ends otherwise.
func WriteUsage(w io.Writer, fs *flag.FlagSet, usage string) {
	var b bytes.Buffer
	b.WriteString(usage)
	if strings.HasSuffix(usage, ":\n") {
		writeFlags(&b, fs)
	}
	w.Write(b.Bytes())
}

// writeFlags lists a command's flags as they are typed: "--mux PATH", the
// value's name taken from the back-quoted word of the flag's usage.
func writeFlags(w io.Writer, fs *flag.FlagSet) {
	type row struct{ left, usage string }
	var rows []row
	width := 0
	fs.VisitAll(func(fl *flag.Flag) {
		name, usage := flag.UnquoteUsage(fl)
		left := "--" + fl.Name
		if name != "" {
			left += " " + strings.ToUpper(name)
		}
		if d := fl.DefValue; d != "" && d != "0" && d != "false" {
			usage += " (default " + d + ")"
		}
		rows = append(rows, row{left, usage})
		width = max(width, len(left))
	})
	for _, r := range rows {
		fmt.Fprintf(w, "  %-*s  %s\n", width, r.left, r.usage)
	}
}

// Version is this binary's version as its build info records it: the
// module version ("(devel)" for a build from a checkout) and the VCS
// revision, with "+dirty" for a build from a modified tree. A loop script
// and the binary that wrote it carry the same string, and so do the two
// binaries of one install.
func Version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev == "" {
		return v + " (no VCS revision)"
	}
	return v + " " + rev + dirty
}

// Strings is a flag that may be given more than once; each value is kept
// whole (a value may hold commas). Values lists them, for a caller that
// passes the flag on.
type Strings []string

func (s *Strings) String() string { return strings.Join(*s, ",") }

// Set adds v.
func (s *Strings) Set(v string) error {
	*s = append(*s, v)
	return nil
}

// Values returns the values given, in order.
func (s *Strings) Values() []string { return *s }

// Optional is a string flag that remembers whether it was given: an empty
// work probe output differs from no probe at all.
type Optional struct {
	Value string
	Given bool
}

func (o *Optional) String() string { return o.Value }

// Set records v as given.
func (o *Optional) Set(v string) error {
	o.Value, o.Given = v, true
	return nil
}
