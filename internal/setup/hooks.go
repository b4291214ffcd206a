package setup

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/atomicfile"
	"github.com/omega-monitor/omega-monitor/internal/board"
)

// The agents whose hooks install --hooks writes.
const (
	HookClaude   = "claude"
	HookCodex    = "codex"
	HookGemini   = "gemini"
	HookOpenCode = "opencode"
)

// HookAgents are the agents install --hooks knows, in the order it writes
// them.
var HookAgents = []string{HookClaude, HookCodex, HookGemini, HookOpenCode}

// A hookSpec is where one agent keeps its user hooks, and which of its
// events wake the watcher. The events are the agent's description's
// (classify.HookEvents, "hooks" in classify/agents/*.json), named as each
// agent's own documentation and source name them: an event is a moment
// the screen may be about to need the watcher (a dialog, a turn's end). A
// prompt sent (UserPromptSubmit, BeforeAgent) is not one: the turn it
// starts needs nothing, and its looks were four in ten of the polls a busy
// agent's hooks brought (docs/figures.md, the hooks' bench). The file and
// the handler's shape are each agent's settings format, and stay here.
type hookSpec struct {
	agent  string
	file   string   // the user's hooks file (JSON, with a "hooks" object)
	events []string // the events our hook is added to
	// entry is our handler for command: its own fields, the timeout in
	// the agent's unit (a wake takes milliseconds; the bound is for a
	// machine so loaded that it does not).
	entry func(command string) map[string]any
	// dir is the agent's user directory, when it is not the file's.
	dir string
}

func hookSpecs(home string, getenv func(string) string) map[string]hookSpec {
	codexHome := getenv("CODEX_HOME")
	if !filepath.IsAbs(codexHome) {
		codexHome = filepath.Join(home, ".codex")
	}
	return map[string]hookSpec{
		// Claude Code: ~/.claude/settings.json; timeout in seconds.
		HookClaude: {HookClaude, filepath.Join(home, ".claude", "settings.json"),
			classify.HookEvents("Claude Code"),
			func(c string) map[string]any { return map[string]any{"type": "command", "command": c, "timeout": 10} }, ""},
		// Codex: hooks.json beside its user config.toml; timeout in
		// seconds. A user's hooks run once trusted: Codex asks at its next
		// start (Hooks need review), or in /hooks.
		HookCodex: {HookCodex, filepath.Join(codexHome, "hooks.json"),
			classify.HookEvents("Codex CLI"),
			func(c string) map[string]any { return map[string]any{"type": "command", "command": c, "timeout": 10} }, ""},
		// Gemini CLI: ~/.gemini/settings.json; timeout in milliseconds.
		HookGemini: {HookGemini, filepath.Join(home, ".gemini", "settings.json"),
			classify.HookEvents("Gemini CLI"),
			func(c string) map[string]any {
				return map[string]any{"type": "command", "command": c, "name": "omega-monitor-wake", "timeout": 10000}
			}, ""},
		// OpenCode: a plugin of ours in its plugin directory, no hooks
		// file (opencode.go).
		HookOpenCode: {agent: HookOpenCode, file: openCodePlugin(home, getenv), dir: openCodeDir(home, getenv), events: openCodeEvents()},
	}
}

// wakeCommand is the hook's command line for a shell: the binary's path,
// quoted, then wake, and the state home when it is not the default one (the
// agent's environment need not hold $OMEGA_MONITOR_HOME).
func wakeCommand(env Env, bin string) string {
	words := []string{shellQuote(bin), "wake"}
	if env.getenv("OMEGA_MONITOR_HOME") != "" {
		words = append(words, "--home", shellQuote(env.State))
	}
	return strings.Join(words, " ")
}

// wakeArgv is the same as an argument vector (Codex's notify).
func wakeArgv(env Env, bin string) []string {
	argv := []string{bin, "wake"}
	if env.getenv("OMEGA_MONITOR_HOME") != "" {
		argv = append(argv, "--home", env.State)
	}
	return argv
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// IsWakeCommand says whether a hook's command line is ours: its first word,
// unquoted, names a binary called omega-monitor, and its second is wake. A
// hook of the user's that calls us differently is theirs, and left alone.
func IsWakeCommand(line string) bool {
	words := shellWords(line)
	return len(words) >= 2 && filepath.Base(words[0]) == "omega-monitor" && words[1] == "wake"
}

// shellWords splits the first words of a command line as sh would for the
// forms wakeCommand writes (bare words, single quotes, '\” inside them);
// anything else ends the split.
func shellWords(line string) []string {
	var words []string
	var w strings.Builder
	in, inWord, escaped := false, false, false
	for _, r := range line {
		switch {
		case escaped:
			w.WriteRune(r)
			escaped, inWord = false, true
		case !in && r == '\\':
			escaped = true
		case r == '\'':
			in, inWord = !in, true
		case !in && (r == ' ' || r == '\t'):
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case !in && strings.ContainsRune("\"$`;&|<>()\n", r):
			return words
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if inWord && !in {
		words = append(words, w.String())
	}
	return words
}

// editHooks rewrites the hooks object of a settings file: every handler of
// ours is taken out, wherever it is; with add, one handler of ours is put
// back in a group of its own under each of events. A group of ours already
// as add would write it stays where it is: Codex keys the trust a user gave
// a hook by its place (the event, the group's index, the handler's), so a
// group moved, ours or one after it, would be asked about again. Every
// other handler, group and event stays as it was.
func editHooks(hooks map[string]json.RawMessage, events []string, add map[string]any, isOurs func(string) bool) error {
	var want []byte // our group, as it is written
	if add != nil {
		b, err := json.Marshal(map[string]any{"hooks": []any{add}})
		if err != nil {
			return err
		}
		want = b
	}
	kept := map[string]bool{} // the events whose group of ours stays in place
	for event, raw := range hooks {
		var groups []map[string]json.RawMessage
		if err := json.Unmarshal(raw, &groups); err != nil {
			continue // not the shape we write: not ours to touch
		}
		ours := add != nil && slices.Contains(events, event)
		var out []map[string]json.RawMessage
		took := false
		for _, g := range groups {
			if ours && !kept[event] && isGroup(g, want) {
				kept[event] = true
				out = append(out, g)
				continue
			}
			var handlers []map[string]json.RawMessage
			if json.Unmarshal(g["hooks"], &handlers) != nil {
				out = append(out, g)
				continue
			}
			others := slices.DeleteFunc(slices.Clone(handlers), func(h map[string]json.RawMessage) bool {
				var c string
				return json.Unmarshal(h["command"], &c) == nil && isOurs(c)
			})
			if len(others) == len(handlers) {
				out = append(out, g)
				continue
			}
			took = true
			if len(others) == 0 {
				continue // a group that held only ours
			}
			b, err := json.Marshal(others)
			if err != nil {
				return err
			}
			g["hooks"] = b
			out = append(out, g)
		}
		if !took {
			continue
		}
		if len(out) == 0 {
			delete(hooks, event)
		} else {
			b, err := json.Marshal(out)
			if err != nil {
				return err
			}
			hooks[event] = b
		}
	}
	for _, event := range events {
		if add == nil || kept[event] {
			continue
		}
		var groups []json.RawMessage
		if raw, ok := hooks[event]; ok {
			if err := json.Unmarshal(raw, &groups); err != nil {
				return fmt.Errorf("hooks.%s is not a list: left as it is", event)
			}
		}
		b, err := json.Marshal(append(groups, want))
		if err != nil {
			return err
		}
		hooks[event] = b
	}
	return nil
}

// isGroup says whether the group g is, as JSON, the group want.
func isGroup(g map[string]json.RawMessage, want []byte) bool {
	b, err := json.Marshal(g)
	return err == nil && sameJSON(b, want)
}

// installHooks adds our hook to the user settings of agent, or with
// uninstall takes ours out, and says where and what changed: the lines
// added and removed, and the backup of a file it changed. A file or
// directory it made is recorded in the state home, and uninstall removes
// it again once it holds nothing else.
func installHooks(env Env, agent string, uninstall bool) (string, error) {
	if agent == HookOpenCode {
		return installOpenCodePlugin(env, uninstall)
	}
	spec, ok := hookSpecs(env.Home, env.getenv)[agent]
	if !ok {
		return "", fmt.Errorf("no agent %q (known: %s)", agent, strings.Join(HookAgents, ", "))
	}
	bin, err := env.binary()
	if err != nil {
		return "", err
	}
	var add map[string]any
	if !uninstall {
		add = spec.entry(wakeCommand(env, bin))
	}
	created := readCreated(env.State)
	var said, diff []string
	// change records one file's edit: its backup and diff, or what
	// install made, or on uninstall what it made and now removes.
	change := func(path string, existed bool, before []byte, empty func([]byte) bool) error {
		after, _ := readConfig(path)
		if bytes.Equal(before, after) {
			return nil
		}
		for _, l := range lineDiff(before, after) {
			diff = append(diff, "    "+filepath.Base(path)+": "+l)
		}
		switch {
		case uninstall:
			// What install made goes: the backups it kept, and a file
			// or directory that holds nothing else now.
			gone := created.removeMade(path+backupSuffix, func([]byte) bool { return true })
			gone = append(gone, created.removeMade(path, empty)...)
			if len(gone) > 0 {
				said = append(said, "removed "+strings.Join(gone, " and ")+", which install had made")
			}
		case before != nil:
			b, err := keepBackup(path, before)
			if err != nil {
				return err
			}
			created.made(b)
			said = append(said, "the file before is kept as "+b)
		case !existed:
			created.made(filepath.Dir(path), path)
		default:
			created.made(path)
		}
		return nil
	}
	_, dirErr := os.Stat(filepath.Dir(spec.file))
	before, _ := readConfig(spec.file)
	if _, err := editJSON(spec.file, "hooks", spec.agent, func(hooks map[string]json.RawMessage) (bool, error) {
		old, err := json.Marshal(hooks)
		if err != nil {
			return false, err
		}
		if err := editHooks(hooks, spec.events, add, ours(bin)); err != nil {
			return false, err
		}
		now, err := json.Marshal(hooks)
		return err == nil && !sameJSON(old, now), err
	}); err != nil {
		return "", err
	}
	if after, _ := readConfig(spec.file); !bytes.Equal(before, after) {
		if uninstall {
			said = append(said, "removed our hooks from "+spec.file)
		} else {
			said = append(said, fmt.Sprintf("wrote our hook for %s into %s", strings.Join(spec.events, ", "), spec.file))
		}
	}
	if err := change(spec.file, dirErr == nil, before, emptyJSON); err != nil {
		return strings.Join(said, "; "), err
	}
	if agent == HookCodex {
		toml := filepath.Join(filepath.Dir(spec.file), "config.toml")
		tomlBefore, _ := readConfig(toml)
		did, err := codexNotify(toml, wakeArgv(env, bin), uninstall)
		if err != nil {
			return strings.Join(said, "; "), err
		}
		if did != "" {
			said = append(said, did)
		}
		if err := change(toml, true, tomlBefore, emptyText); err != nil {
			return strings.Join(said, "; "), err
		}
		if !uninstall && did != "" {
			said = append(said, "Codex runs the hooks of hooks.json once you trust them: at its next start it asks (Hooks need review: Trust all and continue), or in /hooks; until then notify alone wakes the watcher, at a turn's end")
		}
	}
	if err := created.save(env.State); err != nil {
		said = append(said, "the record of the files install made not kept: "+err.Error())
	}
	if len(said) > 0 && !uninstall {
		said = append(said, "sessions started from now on wake their watcher")
	}
	out := strings.Join(said, "; ")
	if len(diff) > 0 {
		out += "\n" + strings.Join(diff, "\n")
	}
	return out, nil
}

// ours says whether a hook's command line is our wake: one IsWakeCommand
// knows, or one that runs bin, the binary installing, whatever its name.
func ours(bin string) func(string) bool {
	return func(line string) bool {
		if IsWakeCommand(line) {
			return true
		}
		words := shellWords(line)
		return len(words) >= 2 && words[0] == bin && words[1] == "wake"
	}
}

// binary is the omega-monitor binary the hooks run: Bin, else this
// process's executable, links resolved.
func (e Env) binary() (string, error) {
	if e.Bin != "" {
		return e.Bin, nil
	}
	bin, err := os.Executable()
	if err == nil {
		bin, err = filepath.EvalSymlinks(bin)
	}
	if err != nil {
		return "", fmt.Errorf("cannot tell where this binary is: %w", err)
	}
	return bin, nil
}

// HooksInstalled says, for each agent, whether its user settings hold a
// hook of ours (OpenCode: its plugin directory our plugin): a read of four
// small files, for list and status.
func HooksInstalled(home string, getenv func(string) string) map[string]bool {
	out := map[string]bool{HookOpenCode: openCodeInstalled(home, getenv)}
	for agent, spec := range hookSpecs(home, getenv) {
		if agent == HookOpenCode {
			continue
		}
		b, err := readConfig(spec.file)
		if err != nil || len(b) > 4<<20 {
			continue
		}
		var f struct {
			Hooks map[string][]struct {
				Hooks []struct {
					Command string `json:"command"`
				} `json:"hooks"`
			} `json:"hooks"`
		}
		if json.Unmarshal(b, &f) != nil {
			continue
		}
		for _, groups := range f.Hooks {
			for _, g := range groups {
				for _, h := range g.Hooks {
					out[agent] = out[agent] || IsWakeCommand(h.Command)
				}
			}
		}
	}
	return out
}

// codexNotify sets Codex's legacy notify, in its user config.toml, to the
// wake command (Codex appends one JSON argument at each turn's end), or
// with uninstall removes it. A notify of the user's own is left alone: it
// is one program, and Codex's hooks wake the watcher without it. The file
// is edited as text, a line at the top level, so that the user's comments
// and layout stay.
func codexNotify(path string, argv []string, uninstall bool) (string, error) {
	target, err := configTarget(path)
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(target)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	lines := strings.SplitAfter(string(b), "\n")
	at := -1 // the line of a top-level notify
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "[") {
			break // tables begin: no top-level key after this
		}
		if k, _, ok := strings.Cut(t, "="); ok && strings.TrimSpace(k) == "notify" {
			at = i
			break
		}
	}
	want := "notify = " + tomlArray(argv) + "\n"
	switch {
	case at >= 0 && !notifyIsOurs(lines[at], argv[0]):
		if uninstall {
			return "", nil
		}
		return fmt.Sprintf("%s sets notify to a program of your own: left as it is (the hooks still wake the watcher)", path), nil
	case at >= 0 && uninstall:
		lines = slices.Delete(lines, at, at+1)
	case at >= 0 && lines[at] == want:
		return "", nil
	case at >= 0:
		lines[at] = want
	case uninstall:
		return "", nil
	default:
		lines = append([]string{"# Added by omega-monitor install --hooks: each turn's end wakes the pane's watcher.\n", want}, lines...)
	}
	if uninstall {
		lines = slices.DeleteFunc(lines, func(l string) bool {
			return strings.HasPrefix(l, "# Added by omega-monitor install --hooks")
		})
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		return "", err
	}
	if err := atomicfile.Write(target, []byte(strings.Join(lines, "")), 0o600); err != nil {
		return "", err
	}
	if uninstall {
		return "removed our notify from " + path, nil
	}
	return "set notify in " + path, nil
}

// notifyIsOurs says whether a notify line runs our wake: its first string
// names a binary called omega-monitor, or bin, and its second is wake.
func notifyIsOurs(line, bin string) bool {
	_, v, _ := strings.Cut(line, "=")
	var argv []string
	// A TOML array of basic strings without escapes reads as JSON.
	if json.Unmarshal([]byte(strings.TrimSpace(v)), &argv) != nil {
		return false
	}
	return len(argv) >= 2 && (filepath.Base(argv[0]) == "omega-monitor" || argv[0] == bin) && argv[1] == "wake"
}

// tomlArray writes strings as a TOML array of basic strings: JSON's string
// escapes are TOML's (\uXXXX included), and a JSON array is a TOML one.
func tomlArray(words []string) string {
	b, _ := json.Marshal(words)
	return string(b)
}

// HooksSummary is one line on agents' hooks, for list and status: each
// agent installed or not, and how to install the missing ones; "" for no
// agent.
func HooksSummary(installed map[string]bool, agents []string) string {
	var parts, missing []string
	for _, a := range HookAgents {
		if !slices.Contains(agents, a) {
			continue
		}
		if installed[a] {
			parts = append(parts, a+" installed")
			continue
		}
		parts = append(parts, a+" not installed")
		missing = append(missing, "--"+a)
	}
	if len(parts) == 0 {
		return ""
	}
	line := "hooks (a wake at the agent's own events): " + strings.Join(parts, ", ")
	if len(missing) > 0 {
		line += " (omega-monitor install --hooks " + strings.Join(missing, " ") + ")"
	}
	return line
}

// HooksInstalledFor says whether the agent classify recognised by the
// name it gives ("Claude Code", "Codex CLI", "Gemini CLI") has a hook of
// ours in its user settings: false for an agent we have no hook for.
func HooksInstalledFor(home string, getenv func(string) string, name string) bool {
	key := hookKey(name)
	return key != "" && HooksInstalled(home, getenv)[key]
}

// Hooked is HooksInstalledFor under home, as a value: what wake --mux
// --auto asks of an agent it recognised.
func Hooked(home string, getenv func(string) string) func(agent string) bool {
	return func(agent string) bool { return HooksInstalledFor(home, getenv, agent) }
}

// hookKey is the name install --hooks gives the agent classify names name
// ("Claude Code" is claude, "Codex CLI" codex), "" for one it has no hooks
// for.
func hookKey(name string) string {
	key, _, _ := strings.Cut(strings.ToLower(name), " ")
	if !slices.Contains(HookAgents, key) {
		return ""
	}
	return key
}

// WatchedHooks says whether the agents the fleet f watches have our hooks
// in their user settings under home, and says it in a line ("" when the
// fleet watches no agent).
func WatchedHooks(home string, getenv func(string) string, f board.Fleet) (map[string]bool, string) {
	var agents []string
	for _, w := range f.Watchers {
		// Another host's board's agents have their hooks there.
		// The board names an agent as classify does: its hooks go by
		// install's name for it.
		if key := hookKey(w.Agent); key != "" && w.Host == "" && !slices.Contains(agents, key) {
			agents = append(agents, key)
		}
	}
	if len(agents) == 0 {
		return nil, ""
	}
	all := HooksInstalled(home, getenv)
	hooks := map[string]bool{}
	for _, a := range agents {
		hooks[a] = all[a]
	}
	return hooks, HooksSummary(all, agents)
}

// HookSelection is the agents install --hooks works on: those named, in
// HookAgents' order; all of them when none is.
func HookSelection(claude, codex, gemini, opencode bool) []string {
	var out []string
	for _, a := range HookAgents {
		if a == HookClaude && claude || a == HookCodex && codex || a == HookGemini && gemini || a == HookOpenCode && opencode {
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		return slices.Clone(HookAgents)
	}
	return out
}
