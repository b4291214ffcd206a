package setup

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
)

// Codex keeps its MCP servers in its user config.toml, one table each,
// [mcp_servers.NAME] (what `codex mcp add` writes). A user's config.toml is
// theirs: install edits it as text, adding or replacing our table and
// nothing else, so that every other line and comment stays byte for byte.
// A scanner of our own (tomlscan.go) finds the tables: a file it cannot be
// sure of is refused, naming the line, and so is one that sets mcp_servers
// in a way a table of ours could not safely be added beside. The result is
// scanned again before it is written; Codex itself, when it is on PATH,
// reads the file after the write (codexcheck.go).

// maxCodexConfig bounds the config.toml install reads and edits: Codex's
// own are a few kilobytes.
const maxCodexConfig = 4 << 20

// codexServer is the registration of our MCP server in Codex's config.
type codexServer struct {
	Command string
	Args    []string
	Env     map[string]string // written only when it holds something
}

// codexMarker is the comment line install writes above our table, and
// uninstall removes with it.
const codexMarker = "# Added by omega-monitor install --codex: the read-only MCP server of $monitor; install --codex --uninstall removes it."

// text is the table as install writes it, the marker line first.
func (s codexServer) text() string {
	var b strings.Builder
	b.WriteString(codexMarker + "\n")
	b.WriteString("[mcp_servers." + MCPServerName + "]\n")
	b.WriteString("command = " + tomlString(s.Command) + "\n")
	b.WriteString("args = " + tomlArray(s.Args) + "\n")
	if len(s.Env) > 0 {
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(s.Env)) {
			kv = append(kv, tomlString(k)+" = "+tomlString(s.Env[k]))
		}
		b.WriteString("env = { " + strings.Join(kv, ", ") + " }\n")
	}
	return b.String()
}

// tomlString is s as a TOML basic string (JSON's escapes are TOML's).
func tomlString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// codexLayout is where a config.toml holds what install looks at.
type codexLayout struct {
	found      bool // a header of ours, [mcp_servers.omega-monitor] or one under it
	start, end int  // our lines: the marker (or the first header) to the last key
	ours       bool // they register omega-monitor mcp, as install does
	keysAt     int  // a line (from 1) setting mcp_servers by keys, not as [mcp_servers.NAME]; 0: none
	arrayAt    int  // a line making mcp_servers, or a table in it, an array of tables; 0: none
}

// codexLayoutOf finds our lines among a config.toml's. bin is the binary
// installing (a registration that runs it is ours, whatever its name).
func codexLayoutOf(path string, lines []string, bin string) (codexLayout, error) {
	var l codexLayout
	kinds, err := scanTOML(lines)
	if err != nil {
		return l, fmt.Errorf("%s is not TOML that install can read, left as it is: %w", path, err)
	}
	var table []string // the key of the table the lines are in; nil at the top
	first, main := -1, -1
	for i, k := range kinds {
		switch {
		case k.header:
			table = k.key
			if k.array && table[0] == "mcp_servers" && l.arrayAt == 0 {
				l.arrayAt = i + 1
			}
			if !isOurKey(table) {
				continue
			}
			if first < 0 {
				first = i
			}
			if len(table) == 2 {
				if main >= 0 {
					return l, fmt.Errorf("%s has the table [mcp_servers.%s] twice (lines %d and %d): left as it is", path, MCPServerName, main+1, i+1)
				}
				main = i
			}
		case k.key != nil && len(table) < 2 && slices.Concat(table, k.key)[0] == "mcp_servers" && l.keysAt == 0:
			// mcp_servers... = at the top, or NAME... = in [mcp_servers].
			l.keysAt = i + 1
		}
	}
	if first < 0 {
		return l, nil
	}
	l.found, l.start, l.end = true, first, first+1
	if first > 0 && strings.TrimRight(lines[first-1], "\r\n") == codexMarker {
		l.start = first - 1
	}
	// Our tables run on to the next other header; comments and blank lines
	// after their last key are not ours.
	i := first + 1
	for ; i < len(lines) && (!kinds[i].header || isOurKey(kinds[i].key)); i++ {
		if !kinds[i].blank {
			l.end = i + 1
		}
	}
	for ; i < len(lines); i++ {
		if kinds[i].header && isOurKey(kinds[i].key) {
			return l, fmt.Errorf("%s has a table of [mcp_servers.%s] apart from it (line %d): left as it is", path, MCPServerName, i+1)
		}
	}
	if main >= 0 {
		l.ours = isOurCodexServer(kinds[main+1:l.end], bin)
	}
	return l, nil
}

// isOurCodexServer says whether the keys of the table under our name are
// ours: command runs a binary called omega-monitor, or bin, and args is
// the one argument mcp, each written on one line.
func isOurCodexServer(kinds []tomlLine, bin string) bool {
	var cmd string
	var args []string
	var okCmd, okArgs bool
	for _, k := range kinds {
		switch {
		case k.header:
			return okCmd && okArgs && ourCommand(cmd, args, bin) // a table under ours: its keys are not the server's
		case slices.Equal(k.key, []string{"command"}):
			cmd, okCmd = stringValue(k.value)
		case slices.Equal(k.key, []string{"args"}):
			args, okArgs = stringsValue(k.value)
		}
	}
	return okCmd && okArgs && ourCommand(cmd, args, bin)
}

func ourCommand(cmd string, args []string, bin string) bool {
	return (filepath.Base(cmd) == "omega-monitor" || cmd == bin) && slices.Equal(args, []string{"mcp"})
}

// isOurKey says whether a header's key is our table or one under it.
func isOurKey(key []string) bool {
	return len(key) >= 2 && key[0] == "mcp_servers" && key[1] == MCPServerName
}

// editCodexConfig returns the config text with our table set to want, or
// taken out when want is nil, and whether it changed. bin is the binary
// installing (a registration that runs it is ours, whatever its name).
func editCodexConfig(path string, text []byte, want *codexServer, bin string) ([]byte, bool, error) {
	if len(text) > maxCodexConfig {
		return nil, false, fmt.Errorf("%s is %d bytes, more than a config install edits (%d): left as it is", path, len(text), maxCodexConfig)
	}
	lines := splitKeep(text)
	l, err := codexLayoutOf(path, lines, bin)
	if err != nil {
		return nil, false, err
	}
	var out []string
	switch {
	case want == nil && (!l.found || !l.ours):
		return nil, false, nil // nothing of ours: a server of the user's under our name stays
	case want == nil:
		out = slices.Concat(lines[:l.start], lines[l.end:])
		// The blank line install put before the table goes with it.
		if l.end == len(lines) && l.start > 0 && strings.TrimSpace(lines[l.start-1]) == "" {
			out = out[:len(out)-1]
		}
	case l.arrayAt > 0:
		return nil, false, fmt.Errorf("%s makes mcp_servers an array of tables ([[...]], line %d), which Codex does not read: left as it is", path, l.arrayAt)
	case l.keysAt > 0:
		return nil, false, fmt.Errorf("%s sets mcp_servers as keys at its top (mcp_servers = { ... } or mcp_servers.NAME...) or in [mcp_servers] (line %d), beside which install cannot add a table safely: left as it is; write its servers as [mcp_servers.NAME] tables and run install again", path, l.keysAt)
	case l.found && !l.ours:
		return nil, false, fmt.Errorf("the MCP server %s in %s is not ours (it does not run omega-monitor mcp): left as it is; remove it or rename it first", MCPServerName, path)
	case l.found:
		if strings.Join(lines[l.start:l.end], "") == want.text() {
			return nil, false, nil
		}
		out = slices.Concat(lines[:l.start], splitKeep([]byte(want.text())), lines[l.end:])
	default:
		out = slices.Clone(lines)
		if n := len(out); n > 0 && !strings.HasSuffix(out[n-1], "\n") {
			out[n-1] += "\n"
		}
		// A blank line before the table, which uninstall takes out with
		// it.
		if len(out) > 0 {
			out = append(out, "\n")
		}
		out = append(out, splitKeep([]byte(want.text()))...)
	}
	result := []byte(strings.Join(out, ""))
	// The proof that the edit did what it meant to: the result, scanned
	// again, holds our table as asked, or none.
	after := splitKeep(result)
	l, err = codexLayoutOf(path, after, bin)
	if err != nil || l.found != (want != nil) || want != nil && strings.Join(after[l.start:l.end], "") != want.text() {
		return nil, false, fmt.Errorf("editing %s as text would change more than the table [mcp_servers.%s]: left as it is; add it yourself (omega-monitor install --help)", path, MCPServerName)
	}
	return result, !bytes.Equal(result, text), nil
}

// splitKeep splits text into lines that keep their "\n".
func splitKeep(text []byte) []string {
	if len(text) == 0 {
		return nil
	}
	lines := strings.SplitAfter(string(text), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// stringValue reads a value that is one string on its line.
func stringValue(v string) (string, bool) {
	s, rest, ok := oneString(v)
	return s, ok && endOfValue(rest)
}

// stringsValue reads a value that is an array of strings on its line.
func stringsValue(v string) ([]string, bool) {
	if !strings.HasPrefix(v, "[") {
		return nil, false
	}
	list := []string{}
	rest := v[1:]
	for {
		rest = strings.TrimLeft(rest, " \t")
		if strings.HasPrefix(rest, "]") {
			return list, endOfValue(rest[1:])
		}
		s, after, ok := oneString(rest)
		if !ok {
			return nil, false
		}
		list = append(list, s)
		rest = strings.TrimLeft(after, " \t")
		switch {
		case strings.HasPrefix(rest, ","):
			rest = rest[1:]
		case !strings.HasPrefix(rest, "]"):
			return nil, false
		}
	}
}

// oneString reads the one-line string, basic or literal, that v starts
// with: its text, and what follows it.
func oneString(v string) (s, rest string, ok bool) {
	if v == "" || strings.HasPrefix(v, `"""`) || strings.HasPrefix(v, "'''") {
		return "", "", false
	}
	switch v[0] {
	case '"':
		end := stringEnd(v)
		if end < 0 {
			return "", "", false
		}
		s, ok = unescape(v[1 : end-1])
		return s, v[end:], ok
	case '\'':
		end := strings.IndexByte(v[1:], '\'')
		if end < 0 {
			return "", "", false
		}
		return v[1 : end+1], v[end+2:], true
	}
	return "", "", false
}

// endOfValue says whether rest, what follows a value on its line, is
// blanks and a comment at most.
func endOfValue(rest string) bool {
	rest = strings.TrimLeft(rest, " \t")
	return rest == "" || rest[0] == '#'
}
