package setup

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/atomicfile"
	"github.com/omega-monitor/omega-monitor/internal/board"
	"github.com/omega-monitor/omega-monitor/internal/poll"
)

// The agents whose hooks install --hooks writes.
const (
	HookClaude   = "claude"
	HookCodex    = "codex"
	HookGemini   = "gemini"
	HookOpenCode = "opencode"
)

// HookAgents are the agents the project ships whose hooks install --hooks
// writes, each named by a flag of its own, in the order it writes them. An
// agent described in the watchers' rules file with hooks comes after them,
// named by --agent and its first program.
var HookAgents = []string{HookClaude, HookCodex, HookGemini, HookOpenCode}

// A hookSpec is where one agent keeps its user hooks, and which of its
// events wake the watcher, as its description gives them
// (classify.Hooks, "hooks" in classify/agents/*.json or the watchers'
// rules file), named as each agent's own documentation and source name
// them: an event is a moment the screen may be about to need the watcher
// (a dialog, a turn's end). A prompt sent (UserPromptSubmit, BeforeAgent)
// is not one: the turn it starts needs nothing, and its looks were four in
// ten of the polls a busy agent's hooks brought (docs/figures.md, the
// hooks' bench). Where the file is and our handler's fields are data too;
// only what is not a settings file of the shared format is code here
// (OpenCode's plugin, Codex's notify).
type hookSpec struct {
	agent   string   // install's name for it: its first program
	name    string   // classify's name for it
	builtIn bool     // the project ships its description
	file    string   // the user's hooks file (JSON, with a "hooks" object)
	events  []string // the events our hook is added to
	// entry is our handler for command: its own fields, the timeout in
	// the agent's unit.
	entry func(command string) map[string]any
	// dir is the agent's user directory, when it is not the file's.
	dir string
}

// hookSpecs are the hooks install --hooks writes, in its order: the
// built-in agents', then those of the agents the watchers' rules file
// describes with hooks (a file that does not read adds none: the tick
// says why).
func hookSpecs(home string, getenv func(string) string) []hookSpec {
	local, _ := poll.WatcherRules(getenv)
	var specs []hookSpec
	for _, h := range classify.Hooks(local) {
		spec := hookSpec{agent: h.Key, name: h.Agent, builtIn: h.BuiltIn, events: h.Events}
		switch {
		case h.BuiltIn && h.Key == HookOpenCode:
			// No hooks file: a plugin of ours in its plugin directory
			// (opencode.go).
			spec.file, spec.dir = openCodePlugin(home, getenv), openCodeDir(home, getenv)
		case reflect.ValueOf(h.Settings).IsZero():
			continue
		default:
			dir := filepath.Join(home, filepath.FromSlash(h.Settings.Default))
			if v := getenv(h.Settings.Home); h.Settings.Home != "" && filepath.IsAbs(v) {
				dir = v
			}
			spec.file = filepath.Join(dir, filepath.FromSlash(h.Settings.File))
			spec.entry = func(command string) map[string]any {
				e := map[string]any{"type": "command", "command": command}
				if h.Timeout > 0 {
					e["timeout"] = h.Timeout
				}
				if h.Name != "" {
					e["name"] = h.Name
				}
				return e
			}
		}
		specs = append(specs, spec)
	}
	return specs
}

// hookSpecOf is the spec of the agent install names agent.
func hookSpecOf(specs []hookSpec, agent string) (hookSpec, bool) {
	i := slices.IndexFunc(specs, func(s hookSpec) bool { return s.agent == agent })
	if i < 0 {
		return hookSpec{}, false
	}
	return specs[i], true
}

// hookAgents are install's names of the agents of specs, in order.
func hookAgents(specs []hookSpec) []string {
	var out []string
	for _, s := range specs {
		out = append(out, s.agent)
	}
	return out
}

// AllHookAgents are the agents whose hooks install --hooks writes, the
// watchers' rules file's among them, in its order.
func AllHookAgents(home string, getenv func(string) string) []string {
	return hookAgents(hookSpecs(home, getenv))
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
	specs := hookSpecs(env.Home, env.getenv)
	spec, ok := hookSpecOf(specs, agent)
	switch {
	case !ok:
		return "", fmt.Errorf("no agent %q (known: %s; an agent of the watchers' rules file by its first program, when its description says its hooks' settings)", agent, strings.Join(hookAgents(specs), ", "))
	case spec.builtIn && agent == HookOpenCode:
		return installOpenCodePlugin(env, uninstall)
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
	if spec.builtIn && agent == HookCodex {
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
// hook of ours (OpenCode: its plugin directory our plugin): a read of a
// few small files, for list and status.
func HooksInstalled(home string, getenv func(string) string) map[string]bool {
	return hooksInstalled(home, getenv, hookSpecs(home, getenv))
}

// hooksInstalled is HooksInstalled for the agents of specs.
func hooksInstalled(home string, getenv func(string) string, specs []hookSpec) map[string]bool {
	out := map[string]bool{}
	for _, spec := range specs {
		agent := spec.agent
		if spec.builtIn && agent == HookOpenCode {
			out[agent] = openCodeInstalled(home, getenv)
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
// agent of agents installed or not, in that order, and how to install the
// missing ones; "" for no agent.
func HooksSummary(installed map[string]bool, agents []string) string {
	var parts, missing []string
	for _, a := range agents {
		if installed[a] {
			parts = append(parts, a+" installed")
			continue
		}
		parts = append(parts, a+" not installed")
		missing = append(missing, hookFlag(a))
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

// hookFlag is install's flag for the agent it names agent: a built-in
// agent's own, --agent NAME for one the watchers' rules file describes.
func hookFlag(agent string) string {
	if slices.Contains(HookAgents, agent) {
		return "--" + agent
	}
	return "--agent " + agent
}

// HooksInstalledFor says whether the agent classify recognised by the
// name it gives ("Claude Code", "Codex CLI", an operator's "Tern") has a
// hook of ours in its user settings: false for an agent we have no hook
// for.
func HooksInstalledFor(home string, getenv func(string) string, name string) bool {
	specs := hookSpecs(home, getenv)
	key := hookKey(specs, name)
	return key != "" && hooksInstalled(home, getenv, specs)[key]
}

// Hooked is HooksInstalledFor under home, as a value: what wake --mux
// --auto asks of an agent it recognised.
func Hooked(home string, getenv func(string) string) func(agent string) bool {
	return func(agent string) bool { return HooksInstalledFor(home, getenv, agent) }
}

// hookKey is the name install --hooks gives the agent classify names name
// ("Claude Code" is claude, "Codex CLI" codex; install's own name is
// itself), "" for one it has no hooks for.
func hookKey(specs []hookSpec, name string) string {
	if i := slices.IndexFunc(specs, func(s hookSpec) bool { return s.name == name || s.agent == name }); i >= 0 {
		return specs[i].agent
	}
	return ""
}

// WatchedHooks says whether the agents the fleet f watches have our hooks
// in their user settings under home, and says it in a line ("" when the
// fleet watches no agent).
func WatchedHooks(home string, getenv func(string) string, f board.Fleet) (map[string]bool, string) {
	specs := hookSpecs(home, getenv)
	var agents []string
	for _, s := range specs {
		// Another host's board's agents have their hooks there. The
		// board names an agent as classify does.
		if slices.ContainsFunc(f.Watchers, func(w board.Watcher) bool { return w.Agent == s.name && w.Host == "" }) {
			agents = append(agents, s.agent)
		}
	}
	if len(agents) == 0 {
		return nil, ""
	}
	all := hooksInstalled(home, getenv, specs)
	hooks := map[string]bool{}
	for _, a := range agents {
		hooks[a] = all[a]
	}
	return hooks, HooksSummary(all, agents)
}

// HookSelection is the agents install --hooks works on: those named, the
// built-in ones in HookAgents' order, then agent (one of the watchers'
// rules file, by its first program) when it is not ""; nil when none is
// named, which is all of them.
func HookSelection(claude, codex, gemini, opencode bool, agent string) []string {
	var out []string
	for _, a := range HookAgents {
		if a == HookClaude && claude || a == HookCodex && codex || a == HookGemini && gemini || a == HookOpenCode && opencode {
			out = append(out, a)
		}
	}
	if agent != "" && !slices.Contains(out, agent) {
		out = append(out, agent)
	}
	return out
}
