package setup

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// Codex keeps its MCP servers in its user config.toml, one table each,
// [mcp_servers.NAME] (what `codex mcp add` writes). A user's config.toml is
// theirs: install edits it as text, adding or replacing our table and
// nothing else, so that every other line and comment stays byte for byte.
// A TOML parser reads the file before and after the edit: a file it cannot
// read is refused, naming the line, and an edit that would change any value
// but ours is refused too, never written.

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

// value is the table as the parser reads it.
func (s codexServer) value() map[string]any {
	v := map[string]any{"command": s.Command, "args": toAny(s.Args)}
	if len(s.Env) > 0 {
		env := map[string]any{}
		for k, e := range s.Env {
			env[k] = e
		}
		v["env"] = env
	}
	return v
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// isOurCodexServer says whether a registration under our name is ours: it
// runs a binary called omega-monitor, or bin, with the one argument mcp.
func isOurCodexServer(v any, bin string) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	cmd, _ := m["command"].(string)
	args, _ := m["args"].([]any)
	return (filepath.Base(cmd) == "omega-monitor" || cmd == bin) && len(args) == 1 && args[0] == "mcp"
}

// decodeTOML reads a config's text; a parse error names its line.
func decodeTOML(path string, text []byte) (map[string]any, error) {
	doc := map[string]any{}
	if _, err := toml.Decode(string(text), &doc); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			// The parser counts the newline that ended a line as the next
			// line's: the line is counted from the error's offset.
			line := pe.Position.Line
			if at := pe.Position.Start; at >= 0 && at <= len(text) {
				line = bytes.Count(text[:at], []byte("\n")) + 1
			}
			return nil, fmt.Errorf("%s is not TOML that install can read, left as it is: line %d: %s", path, line, pe.Message)
		}
		return nil, fmt.Errorf("%s is not TOML that install can read, left as it is: %w", path, err)
	}
	return doc, nil
}

// editCodexConfig returns the config text with our table set to want, or
// taken out when want is nil, and whether it changed. bin is the binary
// installing (a registration that runs it is ours, whatever its name).
func editCodexConfig(path string, text []byte, want *codexServer, bin string) ([]byte, bool, error) {
	if len(text) > maxCodexConfig {
		return nil, false, fmt.Errorf("%s is %d bytes, more than a config install edits (%d): left as it is", path, len(text), maxCodexConfig)
	}
	before, err := decodeTOML(path, text)
	if err != nil {
		return nil, false, err
	}
	servers, _ := before["mcp_servers"].(map[string]any)
	if v, ok := before["mcp_servers"]; ok && servers == nil {
		return nil, false, fmt.Errorf("mcp_servers in %s is a %T, not a table: left as it is", path, v)
	}
	old, had := servers[MCPServerName]
	if had && !isOurCodexServer(old, bin) {
		if want == nil {
			return nil, false, nil // the user's own: not ours to remove
		}
		return nil, false, fmt.Errorf("the MCP server %s in %s is not ours (it does not run omega-monitor mcp): left as it is; remove it or rename it first", MCPServerName, path)
	}
	lines := splitKeep(text)
	if want != nil && inlineServers(lines) {
		return nil, false, fmt.Errorf("%s sets mcp_servers as keys at its top (mcp_servers = { ... } or mcp_servers.NAME...), which a table cannot be added to: left as it is; write its servers as [mcp_servers.NAME] tables and run install again", path)
	}
	start, end, found := ourTable(lines)
	if had && !found {
		return nil, false, fmt.Errorf("%s sets mcp_servers.%s other than as a table of its own ([mcp_servers.%s]): left as it is; remove those lines and run install again", path, MCPServerName, MCPServerName)
	}
	var out []string
	switch {
	case want == nil && !found:
		return nil, false, nil
	case want == nil:
		out = slices.Concat(lines[:start], lines[end:])
		// The blank line install put before the table goes with it.
		if end == len(lines) && start > 0 && strings.TrimSpace(lines[start-1]) == "" {
			out = out[:len(out)-1]
		}
	case found:
		if had && reflect.DeepEqual(old, want.value()) && strings.Join(lines[start:end], "") == want.text() {
			return nil, false, nil
		}
		out = slices.Concat(lines[:start], splitKeep([]byte(want.text())), lines[end:])
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
	// The proof that nothing else moved: the file read again holds what it
	// held, with our table as asked.
	after, err := decodeTOML(path, result)
	if err != nil {
		return nil, false, fmt.Errorf("adding our table to %s would not leave it TOML (%v): left as it is", path, err)
	}
	expect := cloneDoc(before)
	setOurs(expect, want)
	if !reflect.DeepEqual(noEmptyServers(expect), noEmptyServers(after)) {
		return nil, false, fmt.Errorf("editing %s as text would change more than the table [mcp_servers.%s]: left as it is; add it yourself (omega-monitor install --help)", path, MCPServerName)
	}
	return result, !bytes.Equal(result, text), nil
}

// cloneDoc copies the top level and mcp_servers, the parts setOurs changes.
func cloneDoc(doc map[string]any) map[string]any {
	out := maps.Clone(doc)
	if s, ok := doc["mcp_servers"].(map[string]any); ok {
		out["mcp_servers"] = maps.Clone(s)
	}
	return out
}

// noEmptyServers drops an empty mcp_servers: a [mcp_servers] header
// alone, or none, read the same to Codex.
func noEmptyServers(doc map[string]any) map[string]any {
	if s, ok := doc["mcp_servers"].(map[string]any); ok && len(s) == 0 {
		delete(doc, "mcp_servers")
	}
	return doc
}

// setOurs puts want (nil: nothing) as our server in doc.
func setOurs(doc map[string]any, want *codexServer) {
	s, _ := doc["mcp_servers"].(map[string]any)
	if want == nil {
		delete(s, MCPServerName)
		return
	}
	if s == nil {
		s = map[string]any{}
		doc["mcp_servers"] = s
	}
	s[MCPServerName] = want.value()
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

// ourTable finds our table in lines: from our marker line (or the header,
// when the marker is gone) to its last line of keys, before the next
// table's header; comments and blank lines after its keys are not ours.
func ourTable(lines []string) (start, end int, found bool) {
	kinds := lineKinds(lines)
	h := -1
	for i, k := range kinds {
		if k.header && isOurKey(k.hkey) {
			h = i
			break
		}
	}
	if h < 0 {
		return 0, 0, false
	}
	start, end = h, h+1
	if h > 0 && strings.TrimRight(lines[h-1], "\r\n") == codexMarker {
		start = h - 1
	}
	for i := h + 1; i < len(lines); i++ {
		k := kinds[i]
		if k.header && !isOurKey(k.hkey) {
			break
		}
		if k.header || !k.blank {
			end = i + 1
		}
	}
	return start, end, true
}

// inlineServers says whether lines set mcp_servers by keys at the top of
// the file, before any table: an inline table, or dotted keys, neither of
// which a [mcp_servers.NAME] table may extend.
func inlineServers(lines []string) bool {
	for _, k := range lineKinds(lines) {
		if k.header {
			return false
		}
		if len(k.key) > 0 && k.key[0] == "mcp_servers" {
			return true
		}
	}
	return false
}

// isOurKey says whether a header's key is our table or one under it.
func isOurKey(key []string) bool {
	return len(key) >= 2 && key[0] == "mcp_servers" && key[1] == MCPServerName
}

// A lineKind is what one line of a TOML text is.
type lineKind struct {
	header bool     // a [table] or [[array]] header
	hkey   []string // its key, for a header
	blank  bool     // blank, or only a comment, outside any value
	key    []string // for a key = value line, its key
}

// lineKinds says what each line is. The text is TOML the parser read, so
// the scan only has to know where strings, arrays and inline tables run
// over lines: a line that starts outside them with '[' is a header.
func lineKinds(lines []string) []lineKind {
	out := make([]lineKind, len(lines))
	var depth int // open [ and { of a value
	var ml string // the closing quotes of an open multi-line string
	for i, line := range lines {
		t := strings.TrimSpace(line)
		if ml == "" && depth == 0 {
			switch {
			case t == "" || strings.HasPrefix(t, "#"):
				out[i].blank = true
				continue
			case strings.HasPrefix(t, "["):
				out[i] = lineKind{header: true, hkey: dottedKey(t[1:])}
				continue
			default:
				out[i].key = dottedKey(t)
			}
		}
		for j := 0; j < len(line); j++ {
			c := line[j]
			if ml != "" {
				if c == '\\' && ml == `"""` {
					j++
					continue
				}
				if strings.HasPrefix(line[j:], ml) {
					j += 3
					for j < len(line) && line[j] == ml[0] {
						j++
					}
					j--
					ml = ""
				}
				continue
			}
			switch c {
			case '#':
				j = len(line)
			case '"', '\'':
				q := string(c)
				if strings.HasPrefix(line[j:], q+q+q) {
					ml = q + q + q
					j += 2
					continue
				}
				for j++; j < len(line) && line[j] != c; j++ {
					if c == '"' && line[j] == '\\' {
						j++
					}
				}
			case '[', '{':
				depth++
			case ']', '}':
				depth--
			}
		}
	}
	return out
}

// dottedKey is the key that starts t, up to the ']' or '=' that ends it
// ("a.b", "[a.\"b\"]" without its first '['), its parts unquoted (basic
// strings' escapes beyond \" and \\ are kept as written: no key of ours
// holds one).
func dottedKey(t string) []string {
	t = strings.TrimPrefix(t, "[")
	var parts []string
	var cur strings.Builder
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case c == '"' || c == '\'':
			for i++; i < len(t) && t[i] != c; i++ {
				if c == '"' && t[i] == '\\' && i+1 < len(t) {
					i++
				}
				cur.WriteByte(t[i])
			}
		case c == '.':
			parts = append(parts, cur.String())
			cur.Reset()
		case c == ']' || c == '=':
			return append(parts, cur.String())
		case c == ' ' || c == '\t':
		default:
			cur.WriteByte(c)
		}
	}
	return append(parts, cur.String())
}
