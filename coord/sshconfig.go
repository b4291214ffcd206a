package coord

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strings"

	"github.com/kevinburke/ssh_config"
)

// An SSHConfig is an ssh client config read for its aliases: the names an
// operator gave hosts, which list offers as places to watch. ssh itself
// resolves an alias when it connects, so no setting of a host is read here.
//
// Host lines are read by github.com/kevinburke/ssh_config, one line at a
// time, so that a line it refuses costs that line and not the file. It
// reads "Host a b", "Host=a", "Host = a" and trailing comments; it splits
// patterns at spaces only, so a pattern it returns is split again at tabs,
// and one in double quotes is unquoted, as ssh reads both. A pattern with
// a wildcard ("*", "?"), a negation ("!"), or a quote or space left in it
// names no alias.
//
// A line's keyword decides which lines the library is given: Host lines,
// and no other. A Match line names no alias whatever its criteria, and
// the library would refuse most: it knows Match all and Match host (taking
// any further criteria for more host patterns) and refuses exec, final,
// canonical, user, localuser, originalhost, tagged and the rest, so that
// a file with one of them cannot be decoded whole, nor asked for a host's
// settings. TestSSHConfigLibraryMatch holds the library to this.
//
// Include is followed by coord, not by the library: ssh_config reads an
// Include's files as it parses the line, keeps them to itself, refuses the
// file for one it cannot read, and reads whatever the glob names, a device
// too. coord resolves the paths as ssh does (absolute, "~/", otherwise
// under ~/.ssh), globs them, reads the regular files of at most
// maxConfigSize bytes and skips the others, follows Include to ssh's depth
// of 16 and reads each file once. An argument is a word between spaces, as
// the library reads one: a quoted path with a space in it is not followed.
type SSHConfig struct {
	// Path is the file read, after the default was applied.
	Path string

	aliases []string
}

// DefaultSSHConfig returns ~/.ssh/config, where ssh looks for it.
func DefaultSSHConfig() string {
	return filepath.Join(sshHome(), ".ssh", "config")
}

// sshHome is the home directory as ssh finds it: from the password
// database, not $HOME, so that the config listed is the one ssh reads.
func sshHome() string {
	if u, err := user.Current(); err == nil && u.HomeDir != "" {
		return u.HomeDir
	}
	home, _ := os.UserHomeDir()
	return home
}

// LoadSSHConfig reads the ssh config at path, or DefaultSSHConfig when path
// is empty, with the files its Include lines name. A missing file is an
// empty config, as it is to ssh; only a file that exists and cannot be read
// is an error. An included file that cannot be read is skipped, as ssh
// skips a glob that matches nothing.
func LoadSSHConfig(path string) (*SSHConfig, error) {
	if path == "" {
		path = DefaultSSHConfig()
	}
	return loadSSHConfig(path, sshHome())
}

// loadSSHConfig is LoadSSHConfig with relative Include paths under home.
func loadSSHConfig(path, home string) (*SSHConfig, error) {
	c := &SSHConfig{Path: path}
	data, err := readConfig(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("coord: ssh config: %w", err)
	}
	r := &aliasReader{home: home, read: map[string]bool{fileKey(path): true}}
	seen := map[string]bool{}
	for _, a := range r.aliases(data, 0) {
		if !seen[a] {
			seen[a] = true
			c.aliases = append(c.aliases, a)
		}
	}
	return c, nil
}

// Aliases returns the concrete aliases of the config, in the order they
// appear, each once: the patterns of Host lines without wildcards or
// negation, including those of included files. Match lines name no alias.
func (c *SSHConfig) Aliases() []string {
	return append([]string(nil), c.aliases...)
}

// maxIncludeDepth is how deep Include is followed: ssh's own limit.
const maxIncludeDepth = 16

// An aliasReader reads a config's aliases and those of the files it
// includes. Each file is read once: ssh reads a file each time it is
// included, to its depth of 16, which is exponential in a file that
// includes itself twice, and a file read again names no alias not already
// listed.
type aliasReader struct {
	home string          // the directory of "~/" and ~/.ssh
	read map[string]bool // the files read, by fileKey
}

// aliases returns the concrete Host patterns of one config file's text, in
// order, with those of the files it includes where the Include line stands.
// An Include inside a Host or Match block is followed too: its aliases are
// offered whatever the condition.
func (r *aliasReader) aliases(data []byte, depth int) []string {
	var aliases []string
	for line := range bytes.Lines(data) {
		keyword, args := splitLine(line)
		switch keyword {
		case "include":
			if depth < maxIncludeDepth {
				aliases = append(aliases, r.included(strings.Fields(args), depth)...)
			}
		case "host":
			aliases = append(aliases, hostAliases(line)...)
		}
	}
	return aliases
}

// hostAliases returns the concrete patterns of a Host line.
func hostAliases(line []byte) []string {
	cfg, err := ssh_config.DecodeBytes(line)
	if err != nil {
		return nil
	}
	var aliases []string
	// Hosts[0] is the library's implicit "Host *"; a Host line is the one
	// after it.
	for _, h := range cfg.Hosts[1:] {
		for _, p := range h.Patterns {
			for _, a := range strings.Fields(p.String()) {
				if a := unquotePattern(a); isConcrete(a) {
					aliases = append(aliases, a)
				}
			}
		}
	}
	return aliases
}

// included returns the aliases of the files an Include line's arguments
// name, in the order ssh reads them, skipping a file it cannot read.
func (r *aliasReader) included(args []string, depth int) []string {
	var aliases []string
	for _, pattern := range args {
		matches, _ := filepath.Glob(includePath(pattern, r.home))
		for _, m := range matches {
			if r.read[fileKey(m)] {
				continue
			}
			r.read[fileKey(m)] = true
			// Only a regular file: a FIFO or a terminal would hold the
			// read, and no device holds a config.
			if fi, err := os.Stat(m); err != nil || !fi.Mode().IsRegular() {
				continue
			}
			if data, err := readConfig(m); err == nil {
				aliases = append(aliases, r.aliases(data, depth+1)...)
			}
		}
	}
	return aliases
}

// maxConfigSize bounds what is read of a config file: ssh's are a few
// kilobytes, and a name such as /dev/zero must not fill the memory.
const maxConfigSize = 1 << 20

// readConfig reads a config file of at most maxConfigSize bytes.
func readConfig(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConfigSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxConfigSize {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxConfigSize)
	}
	return data, nil
}

// fileKey names a file the same way however it was reached.
func fileKey(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return filepath.Clean(path)
}

// splitLine returns a config line's keyword, lower-cased, and its
// arguments after one "=", without a comment. The keyword ends where the
// library's does, at white space, "=" or a line end, or sooner at "#": so
// a line the library would take for an Include (and read the files it
// names) is never one splitLine calls a Host line.
func splitLine(line []byte) (keyword, args string) {
	s, _, _ := strings.Cut(string(line), "#")
	s = strings.TrimLeft(s, " \t\r")
	end := strings.IndexAny(s, " \t=\r\n")
	if end < 0 {
		return strings.ToLower(s), ""
	}
	args = strings.TrimLeft(s[end:], " \t")
	args = strings.TrimPrefix(args, "=")
	return strings.ToLower(s[:end]), args
}

// includePath resolves an Include argument as ssh resolves a user config's:
// "~/" is the home directory, and a relative path is under ~/.ssh.
func includePath(pattern, home string) string {
	switch {
	case filepath.IsAbs(pattern):
		return pattern
	case strings.HasPrefix(pattern, "~/"):
		return filepath.Join(home, pattern[2:])
	default:
		return filepath.Join(home, ".ssh", pattern)
	}
}

// unquotePattern removes the double quotes around a pattern, as the
// library does for the value of a setting but not for a Host pattern.
func unquotePattern(pattern string) string {
	if len(pattern) >= 2 && pattern[0] == '"' && pattern[len(pattern)-1] == '"' {
		return pattern[1 : len(pattern)-1]
	}
	return pattern
}

func isConcrete(pattern string) bool {
	return pattern != "" && !strings.ContainsAny(pattern, "*?!\" \t")
}
