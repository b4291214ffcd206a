package setup

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/omega-monitor/omega-monitor/internal/atomicfile"
)

// claudeCommand is the /monitor command file; @OMEGA_MONITOR@ stands for the
// binary's absolute path.
//
//go:embed monitor.md
var claudeCommand string

// claudeMarker is a line only the command file this binary writes holds, so
// that --uninstall never removes a monitor.md of the user's own.
const claudeMarker = "<!-- Installed by `omega-monitor install --claude`"

// claudeFiles are the two places Claude Code reads for a user: the command
// file, and the user configuration whose mcpServers hold the user-scope MCP
// servers (what `claude mcp add --scope user` writes).
type claudeFiles struct {
	command, config string
}

func claudeFilesIn(home string) claudeFiles {
	return claudeFiles{
		command: filepath.Join(home, ".claude", "commands", "monitor.md"),
		config:  filepath.Join(home, ".claude.json"),
	}
}

// MCPServerName is the name the server is registered under: the name
// omega-monitor-mcp gives itself.
const MCPServerName = "omega-monitor"

// mcpEntry is the user-scope registration of the server.
type mcpEntry struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
}

// installClaude is install --claude's step: the command file and the
// server's registration, for the binary that runs.
func installClaude(env Env) (string, error) {
	bin := env.Bin
	if bin == "" {
		var err error
		bin, err = os.Executable()
		if err == nil {
			bin, err = filepath.EvalSymlinks(bin)
		}
		if err != nil {
			return "", fmt.Errorf("cannot tell where this binary is: %w", err)
		}
	}
	entry := mcpEntry{Type: "stdio", Command: bin, Args: []string{"mcp"}, Env: map[string]string{}}
	// The server runs in Claude Code's environment, which need not hold the
	// state home this install was made for.
	if env.getenv("OMEGA_MONITOR_HOME") != "" {
		entry.Env["OMEGA_MONITOR_HOME"] = env.State
	}
	changes, err := claudeFilesIn(env.Home).install(bin, entry)
	return strings.Join(changes, "; "), err
}

// uninstallClaude is install --claude --uninstall's step.
func uninstallClaude(env Env) (string, error) {
	changes, err := claudeFilesIn(env.Home).uninstall()
	return strings.Join(changes, "; "), err
}

// install writes the command file and the server's registration, each only
// when it differs, and says what it changed.
func (f claudeFiles) install(bin string, entry mcpEntry) ([]string, error) {
	var changes []string
	text := strings.ReplaceAll(claudeCommand, "@OMEGA_MONITOR@", bin)
	old, err := os.ReadFile(f.command)
	switch {
	case err == nil && string(old) == text:
	case err == nil && !bytes.Contains(old, []byte(claudeMarker)):
		return nil, fmt.Errorf("%s is not ours (no install marker); move it away first", f.command)
	case err == nil || errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(filepath.Dir(f.command), 0o700); err != nil {
			return nil, err
		}
		if err := atomicfile.Write(f.command, []byte(text), 0o600); err != nil {
			return nil, err
		}
		changes = append(changes, "wrote "+f.command+" (/monitor)")
	default:
		return nil, err
	}
	changed, err := editConfig(f.config, func(servers map[string]json.RawMessage) (bool, error) {
		want, err := json.Marshal(entry)
		if err != nil {
			return false, err
		}
		if old, ok := servers[MCPServerName]; ok && sameJSON(old, want) {
			return false, nil
		}
		servers[MCPServerName] = want
		return true, nil
	})
	if err != nil {
		return changes, err
	}
	if changed {
		changes = append(changes, fmt.Sprintf("registered the MCP server %s (%s mcp) in %s", MCPServerName, bin, f.config))
	}
	return changes, nil
}

// uninstall removes what install put in place, and nothing of the user's.
func (f claudeFiles) uninstall() ([]string, error) {
	var changes []string
	removed, err := removeMarked(f.command, claudeMarker)
	if err != nil {
		return nil, err
	}
	if removed {
		changes = append(changes, "removed "+f.command)
	}
	changed, err := editConfig(f.config, func(servers map[string]json.RawMessage) (bool, error) {
		old, ok := servers[MCPServerName]
		if !ok {
			return false, nil
		}
		var e mcpEntry
		if json.Unmarshal(old, &e) != nil || len(e.Args) != 1 || e.Args[0] != "mcp" || filepath.Base(e.Command) != "omega-monitor" {
			return false, fmt.Errorf("the MCP server %s in %s is not ours; left in place", MCPServerName, f.config)
		}
		delete(servers, MCPServerName)
		return true, nil
	})
	if changed {
		changes = append(changes, fmt.Sprintf("removed the MCP server %s from %s", MCPServerName, f.config))
	}
	return changes, err
}

// editConfig hands the mcpServers of Claude Code's user configuration to
// edit and writes the file back, atomically and keeping every other key as
// it was, when edit says it changed something. A missing file is an empty
// configuration; one that is not a JSON object is refused, never replaced.
//
// A link (a dotfiles checkout's) is followed and stays a link: its target
// is what is rewritten. Claude Code rewrites the file as it runs, so it is
// read again just before the write, and the edit starts over when it
// changed meanwhile: what Claude Code wrote is kept, not overwritten.
func editConfig(path string, edit func(map[string]json.RawMessage) (bool, error)) (bool, error) {
	return editJSON(path, "mcpServers", "Claude Code", edit)
}

// editJSON is editConfig for the object under key in any agent's JSON
// settings file (writer names the program that may rewrite it meanwhile).
// A file not there yet is made, with its directory, private.
func editJSON(path, key, writer string, edit func(map[string]json.RawMessage) (bool, error)) (bool, error) {
	target, err := configTarget(path)
	if err != nil {
		return false, err
	}
	for range 5 {
		before, err := readConfig(target)
		if err != nil {
			return false, err
		}
		out, changed, err := editText(target, key, before, edit)
		if err != nil || !changed {
			return false, err
		}
		if now, err := readConfig(target); err != nil || !bytes.Equal(now, before) {
			continue // written meanwhile: edit what is there now
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
			return false, err
		}
		if err := atomicfile.Write(target, out, 0o600); err != nil {
			return false, err
		}
		return true, nil
	}
	return false, fmt.Errorf("%s kept changing while it was edited (is %s writing it?): left as it is; try again", path, writer)
}

// configTarget is the file to rewrite for path: path itself, or where its
// link leads (which may not exist yet). A link that leads nowhere a file
// can be written is refused.
func configTarget(path string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return path, nil
	}
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fmt.Errorf("%s is a link that leads nowhere (%w): make it point at your configuration, or replace it with the file", path, err)
	}
	if fi, err := os.Stat(target); err != nil || !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is a link to %s, which is not a regular file: left as it is", path, target)
	}
	return target, nil
}

// readConfig is the configuration's text; nil when there is none.
func readConfig(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// editText applies edit to the object under key in the configuration text
// b and returns the new text, when edit changed something. An object edit
// leaves empty is removed with its key (hooks we removed leave no trace),
// except mcpServers, kept as Claude Code writes it.
func editText(path, key string, b []byte, edit func(map[string]json.RawMessage) (bool, error)) ([]byte, bool, error) {
	config := map[string]json.RawMessage{}
	if b != nil {
		if err := json.Unmarshal(b, &config); err != nil {
			return nil, false, fmt.Errorf("%s is not a JSON object, left as it is: %w", path, err)
		}
	}
	servers := map[string]json.RawMessage{}
	if raw, ok := config[key]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &servers); err != nil {
			return nil, false, fmt.Errorf("%s in %s is not an object, left as it is: %w", key, path, err)
		}
	}
	changed, err := edit(servers)
	if err != nil || !changed {
		return nil, false, err
	}
	raw, err := json.Marshal(servers)
	if err != nil {
		return nil, false, err
	}
	config[key] = raw
	if len(servers) == 0 && key != "mcpServers" {
		delete(config, key)
	}
	out, err := json.MarshalIndent(config, "", "  ")
	if err != nil {
		return nil, false, err
	}
	return append(out, '\n'), true, nil
}

// sameJSON reports whether two JSON texts hold the same value.
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}

// removeMarked removes the file at path when it carries install's marker:
// a file that is not there is nothing to remove, and one without the
// marker is the user's, left in place and said as an error.
func removeMarked(path, marker string) (bool, error) {
	old, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, err
	case !bytes.Contains(old, []byte(marker)):
		return false, fmt.Errorf("%s is not ours (no install marker); left in place", path)
	}
	return true, os.Remove(path)
}
