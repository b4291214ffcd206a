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
	"math"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
)

// ParseInterspersed parses flags wherever they stand among the positional
// arguments, as in "omega-monitor host:agent --interval 30". It answers
// --help itself, with usage and the flags. A bad flag is one line on
// stderr, in the spelling the usage uses (--name), with the flag meant
// when a defined one is close, and where the usage is: thirty lines of
// usage after it would bury it. When ok is false the command returns code:
// 0 after --help, 2 after a usage error.
func ParseInterspersed(fs *flag.FlagSet, args []string, usage string, stdout, stderr io.Writer) (positional []string, code int, ok bool) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			WriteUsage(stdout, fs, usage)
			NoteHelp(fs)
			return nil, 0, false
		}
		if err != nil {
			fmt.Fprintf(stderr, "omega-monitor: %s\n", WithHint(FlagError(fs, err), HelpHint(fs.Name())))
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

// Helped, when set, is called with the flag set of each usage --help
// printed, so that a test can hold every command's help to the flags it
// parses (cmd/omega-monitor's TestHelpListsTheFlagsParsed).
var Helped func(fs *flag.FlagSet)

// NoteHelp tells Helped, when set, that fs's usage was printed: for a
// command that answers --help itself.
func NoteHelp(fs *flag.FlagSet) {
	if Helped != nil {
		Helped(fs)
	}
}

// FlagName is a flag as the usage spells it and as it is typed: one dash
// for a one-letter flag (-f, -n), two for the others (--interval).
func FlagName(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// HelpHint is where a command's usage is, for the end of a usage error's
// line: name is the flag set's, "omega-monitor" itself or a command.
func HelpHint(name string) string {
	if name == "" || name == "omega-monitor" {
		return `see "omega-monitor --help"`
	}
	return fmt.Sprintf(`see "omega-monitor %s --help"`, name)
}

// WithHint is msg followed by hint: after a sentence that ends in a
// question ("did you mean --interval?"), in parentheses.
func WithHint(msg, hint string) string {
	if strings.HasSuffix(msg, "?") {
		return msg + " (" + hint + ")"
	}
	return msg + "; " + hint
}

// FlagError says the flag package's parse error err in the flags' own
// spelling: "unknown flag --intervall: did you mean --interval?" for
// "flag provided but not defined: -intervall".
func FlagError(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		s := "unknown flag " + FlagName(name)
		if near := nearest(fs, name); near != "" {
			s += ": did you mean " + FlagName(near) + "?"
		}
		return s
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return FlagName(name) + " needs a value"
	}
	// invalid value "x" for flag -interval: why
	if rest, ok := strings.CutPrefix(msg, "invalid value "); ok {
		if i := strings.LastIndex(rest, " for flag -"); i >= 0 {
			value, tail := rest[:i], rest[i+len(" for flag -"):]
			name, why, _ := strings.Cut(tail, ": ")
			return fmt.Sprintf("%s %s: %s", FlagName(name), value, why)
		}
	}
	if name, ok := strings.CutPrefix(msg, "bad flag syntax: "); ok {
		return "bad flag syntax: " + name
	}
	return msg
}

// nearest is the defined flag closest to the unknown name (Nearest).
func nearest(fs *flag.FlagSet, name string) string {
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	return Nearest(name, names)
}

// Nearest is the one of names closest to the unknown word: one that the
// word starts or ends, or at most two edits away (one for a word of four
// letters or fewer, which two edits make into too much); "" when none is.
func Nearest(word string, names []string) string {
	best, bestDist := "", 3
	if len(word) <= 4 {
		bestDist = 2
	}
	lower := strings.ToLower(word)
	for _, n := range names {
		d := editDistance(lower, n)
		if len(word) >= 3 && (strings.HasPrefix(n, lower) || strings.HasPrefix(lower, n)) {
			d = min(d, 1)
		}
		if d < bestDist {
			best, bestDist = n, d
		}
	}
	return best
}

// editDistance is the edit distance between a and b, in bytes, a swap of
// two neighbours counting as one edit (stauts is one from status).
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
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
		left := FlagName(fl.Name)
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

// About is what this binary knows of its build, for "version": its
// version line (Version), then the Go release and platform it was built
// with, the commit's time when it was built from a checkout, and where it
// runs from (exe, the caller's os.Executable, with that file's time when
// the build recorded no commit).
func About(exe string, modTime time.Time) []string {
	lines := []string{Version()}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return lines
	}
	var goos, goarch, vcsTime string
	for _, s := range info.Settings {
		switch s.Key {
		case "GOOS":
			goos = s.Value
		case "GOARCH":
			goarch = s.Value
		case "vcs.time":
			vcsTime = s.Value
		}
	}
	lines = append(lines, fmt.Sprintf("built with %s for %s/%s", info.GoVersion, goos, goarch))
	switch {
	case vcsTime != "":
		lines = append(lines, "commit of "+vcsTime)
	case !modTime.IsZero():
		lines = append(lines, "binary written "+modTime.UTC().Format(time.RFC3339)+" (no commit recorded: built outside a git checkout, or with -buildvcs=false)")
	}
	if exe != "" {
		lines = append(lines, "running from "+exe)
	}
	return lines
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

// parseSeconds reads a length of time as "30" (seconds) or as Go writes a
// duration ("30s", "1m30s", "500ms"): the two spellings operators type.
func parseSeconds(s string) (time.Duration, error) {
	if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
		if math.Abs(f) > float64(math.MaxInt64/int64(time.Second)) {
			return 0, errors.New("too long")
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, errors.New(`not a number of seconds or a duration such as "90s" or "2m"`)
	}
	return d, nil
}

// Duration is a length of time given in seconds ("30") or as a duration
// ("30s", "2m"): fs.Var((*Duration)(&d), ...) over a time.Duration.
type Duration time.Duration

func (d *Duration) String() string { return time.Duration(*d).String() }

// Set reads v.
func (d *Duration) Set(v string) error {
	x, err := parseSeconds(v)
	if err != nil {
		return err
	}
	*d = Duration(x)
	return nil
}

// Seconds is a whole number of seconds given as "30" or as a duration
// ("30s", "2m"); "1.5" or "90ms" is refused: fs.Var((*Seconds)(&n), ...)
// over an int.
type Seconds int

func (s *Seconds) String() string { return strconv.Itoa(int(*s)) }

// Set reads v.
func (s *Seconds) Set(v string) error {
	if n, err := strconv.Atoi(v); err == nil {
		*s = Seconds(n) // the caller says which counts are too many
		return nil
	}
	d, err := parseSeconds(v)
	if err != nil {
		return err
	}
	if d%time.Second != 0 {
		return errors.New("not a whole number of seconds")
	}
	*s = Seconds(d / time.Second)
	return nil
}
