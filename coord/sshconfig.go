package coord

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strings"
)

// An SSHConfig is an ssh client config read for its aliases: the names an
// operator gave hosts, which list offers as places to watch. It reads what
// naming needs (Host, Match and Include lines) and nothing else: ssh itself
// resolves an alias when it connects, so no setting of a host is
// interpreted here, and a keyword this reader does not know is never an
// error.
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
	c := &SSHConfig{Path: path}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("coord: ssh config: %w", err)
	}
	seen := map[string]bool{}
	for _, a := range configAliases(data, sshHome(), 0) {
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

// maxIncludeDepth is how deep Include is followed: ssh's own limit, which
// also ends a file that includes itself.
const maxIncludeDepth = 16

// configAliases returns the concrete Host patterns of one config file's
// text, in order, with those of the files it includes where the Include
// line stands. An Include inside a Host or Match block is followed too: its
// aliases are offered whatever the condition.
func configAliases(data []byte, home string, depth int) []string {
	var aliases []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		keyword, args := configLine(sc.Text())
		switch strings.ToLower(keyword) {
		case "host":
			for _, a := range args {
				if isConcrete(a) {
					aliases = append(aliases, a)
				}
			}
		case "include":
			if depth >= maxIncludeDepth {
				continue
			}
			for _, pattern := range args {
				matches, _ := filepath.Glob(includePath(pattern, home))
				for _, m := range matches {
					if inc, err := os.ReadFile(m); err == nil {
						aliases = append(aliases, configAliases(inc, home, depth+1)...)
					}
				}
			}
		}
	}
	return aliases
}

// configLine splits a config line as ssh does: a keyword, then its
// arguments, separated by white space or one "=", with double quotes
// around an argument that holds spaces. A "#" starts a comment.
func configLine(line string) (keyword string, args []string) {
	if i := strings.IndexByte(line, '#'); i >= 0 {
		line = line[:i]
	}
	line = strings.TrimSpace(line)
	end := strings.IndexAny(line, " \t=")
	if end < 0 {
		return line, nil
	}
	keyword, rest := line[:end], strings.TrimLeft(line[end:], " \t")
	rest = strings.TrimLeft(strings.TrimPrefix(rest, "="), " \t")
	for rest != "" {
		var arg string
		if rest[0] == '"' {
			i := strings.IndexByte(rest[1:], '"')
			if i < 0 {
				return keyword, args // an unclosed quote: ssh refuses the line
			}
			arg, rest = rest[1:1+i], rest[2+i:]
		} else if i := strings.IndexAny(rest, " \t"); i >= 0 {
			arg, rest = rest[:i], rest[i:]
		} else {
			arg, rest = rest, ""
		}
		if arg != "" {
			args = append(args, arg)
		}
		rest = strings.TrimLeft(rest, " \t")
	}
	return keyword, args
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

func isConcrete(pattern string) bool {
	return pattern != "" && !strings.ContainsAny(pattern, "*?!\" \t")
}
