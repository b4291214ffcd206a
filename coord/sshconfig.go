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

	"github.com/kevinburke/ssh_config"
)

// An SSHConfig is an ssh client config read for its aliases. It is for
// listing, validating and explaining hosts; ssh itself resolves an alias when
// it connects.
type SSHConfig struct {
	// Path is the file read, after the default was applied.
	Path string
	// Err is set when the file could not be parsed (ssh_config does not know
	// every keyword ssh does, such as "Match final"). Aliases then come from
	// a plain scan of the Host lines, and Resolve refuses.
	Err error

	cfg     *ssh_config.Config
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
// is empty. A missing file is an empty config, as it is to ssh. Only a file
// that exists and cannot be read is an error; a file that cannot be parsed
// is reported in the result's Err.
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
	cfg, err := ssh_config.DecodeBytes(data)
	if err != nil {
		c.Err = fmt.Errorf("coord: ssh config %s: %v", path, err)
		c.aliases = scanHostLines(data)
		return c, nil
	}
	c.cfg = cfg
	c.aliases = concreteAliases(cfg, 0)
	return c, nil
}

// Aliases returns the concrete aliases of the config, in the order they
// appear, each once: the patterns of Host lines without wildcards or
// negation, including those of included files. Match blocks name no alias.
func (c *SSHConfig) Aliases() []string {
	return append([]string(nil), c.aliases...)
}

// includeDepth is how deep Include is followed, as ssh_config does.
const includeDepth = 5

func concreteAliases(cfg *ssh_config.Config, depth int) []string {
	var aliases []string
	seen := map[string]bool{}
	add := func(a string) {
		if !seen[a] {
			seen[a] = true
			aliases = append(aliases, a)
		}
	}
	for _, h := range cfg.Hosts {
		for _, p := range h.Patterns {
			if a := p.String(); isConcrete(a) && !isMatchBlock(h) {
				add(a)
			}
		}
		if depth >= includeDepth {
			continue
		}
		for _, n := range h.Nodes {
			inc, ok := n.(*ssh_config.Include)
			if !ok {
				continue
			}
			for _, sub := range includedConfigs(inc) {
				for _, a := range concreteAliases(sub, depth+1) {
					add(a)
				}
			}
		}
	}
	return aliases
}

// isMatchBlock reports whether h came from a Match line, whose patterns are
// conditions rather than aliases.
func isMatchBlock(h *ssh_config.Host) bool {
	return strings.HasPrefix(strings.TrimSpace(h.String()), "Match")
}

func isConcrete(pattern string) bool {
	return pattern != "" && !strings.ContainsAny(pattern, "*?!")
}

// includedConfigs reads the files an Include line names. ssh_config parses
// them but keeps them private, so the directive is read back from the line
// and resolved as ssh resolves a user config's Include: relative to ~/.ssh.
func includedConfigs(inc *ssh_config.Include) []*ssh_config.Config {
	line := inc.String()
	if i := strings.IndexByte(line, '#'); i >= 0 {
		line = line[:i]
	}
	fields := strings.Fields(strings.ReplaceAll(line, "=", " "))
	if len(fields) < 2 {
		return nil
	}
	home := sshHome()
	var configs []*ssh_config.Config
	for _, d := range fields[1:] {
		switch {
		case filepath.IsAbs(d):
		case strings.HasPrefix(d, "~/"):
			d = filepath.Join(home, d[2:])
		default:
			d = filepath.Join(home, ".ssh", d)
		}
		matches, _ := filepath.Glob(d)
		for _, m := range matches {
			data, err := os.ReadFile(m)
			if err != nil {
				continue
			}
			if cfg, err := ssh_config.DecodeBytes(data); err == nil {
				configs = append(configs, cfg)
			}
		}
	}
	return configs
}

// scanHostLines finds the concrete aliases of a config that ssh_config could
// not parse, from its Host lines alone.
func scanHostLines(data []byte) []string {
	var aliases []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		fields := strings.Fields(strings.Replace(line, "=", " ", 1))
		if len(fields) < 2 || !strings.EqualFold(fields[0], "Host") {
			continue
		}
		for _, a := range fields[1:] {
			if isConcrete(a) && !seen[a] {
				seen[a] = true
				aliases = append(aliases, a)
			}
		}
	}
	return aliases
}

// A Host is what an alias resolves to, as far as the config says.
type Host struct {
	Alias         string
	HostName      string
	Port          string
	User          string
	IdentityFiles []string
}

// Resolve returns what the config says about alias, with ssh's defaults
// where it says nothing. It explains; it is never used to connect.
func (c *SSHConfig) Resolve(alias string) (Host, error) {
	if c.Err != nil {
		return Host{}, c.Err
	}
	h := Host{Alias: alias, HostName: alias, Port: "22"}
	if u, err := user.Current(); err == nil {
		h.User = u.Username
	}
	if c.cfg == nil {
		return h, nil
	}
	get := func(key string, into *string) error {
		v, err := c.cfg.Get(alias, key)
		if err != nil {
			return fmt.Errorf("coord: ssh config %s: %s for %s: %v", c.Path, key, alias, err)
		}
		if v != "" {
			*into = v
		}
		return nil
	}
	if err := get("HostName", &h.HostName); err != nil {
		return Host{}, err
	}
	h.HostName = strings.ReplaceAll(h.HostName, "%h", alias)
	if err := get("Port", &h.Port); err != nil {
		return Host{}, err
	}
	if err := get("User", &h.User); err != nil {
		return Host{}, err
	}
	ids, err := c.cfg.GetAll(alias, "IdentityFile")
	if err != nil {
		return Host{}, fmt.Errorf("coord: ssh config %s: IdentityFile for %s: %v", c.Path, alias, err)
	}
	h.IdentityFiles = ids
	return h, nil
}
