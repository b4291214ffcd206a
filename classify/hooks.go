package classify

import (
	"errors"
	"fmt"
	"reflect"
)

// LocalHooks are an agent's hooks as install --hooks writes them: the
// events of the agent's that wake the watcher, and where and how the
// handler is written. Most agents read their hooks in one format, Claude
// Code's settings, Codex's hooks.json, Gemini CLI's settings alike: a
// "hooks" object whose members are events, each a list of groups
// {"matcher": "", "hooks": [HANDLER]}, a handler {"type": "command",
// "command": ...} and fields of the agent's own. For such an agent the
// description says the file (Settings) and those fields, and install
// writes it with no code of its own. An agent whose hooks are something
// else (OpenCode's plugin) names only its events, and install's code for
// it does the rest (package setup): only the project's own descriptions
// may.
type LocalHooks struct {
	Events []string `json:"events"`
	// Settings is the agent's file that holds its user hooks.
	Settings LocalSettings `json:"settings,omitzero"`
	// Timeout is the handler's bound, in the agent's own unit (Claude
	// Code and Codex count seconds, Gemini CLI milliseconds): a wake takes
	// milliseconds; the bound is for a machine so loaded that it does not.
	// None when zero.
	Timeout int `json:"timeout,omitempty"`
	// Name is the handler's name, for an agent whose hooks have one
	// (Gemini CLI shows it).
	Name string `json:"name,omitempty"`
}

// LocalSettings is where an agent keeps a file of its user settings: its
// home, named by a variable (CODEX_HOME) when it has one and that variable
// holds an absolute path, else Default under the user's home (.codex); and
// the file's path under it (hooks.json).
type LocalSettings struct {
	Home    string `json:"home,omitempty"`
	Default string `json:"default"`
	File    string `json:"file"`
}

// Bounds on a description's hooks.
const (
	maxHookEvents  = 16
	maxHookTimeout = 3_600_000 // an hour in milliseconds, the largest unit an agent counts in
)

// checkHooks checks a description's hooks: one to maxHookEvents plain
// event names, when it gives any, and where and how they are written.
func checkHooks(h LocalHooks) error {
	if h.Events == nil {
		if !reflect.ValueOf(h).IsZero() {
			return errors.New("hooks: settings, timeout and name go with events: the events are what the hooks wake the watcher at")
		}
		return nil
	}
	if len(h.Events) == 0 || len(h.Events) > maxHookEvents {
		return fmt.Errorf("hooks: events: from 1 to %d names, not %d", maxHookEvents, len(h.Events))
	}
	for _, e := range h.Events {
		if !plainName(e, "_.", true) { // PermissionRequest, session.idle
			return fmt.Errorf("hooks: events: %q is not an event's name (letters, digits, _ and ., at most 64)", e)
		}
	}
	s := h.Settings
	switch {
	case s.Home != "" && !envName(s.Home):
		return fmt.Errorf("hooks: settings: home: %q is not a variable's name (letters, digits and _, not first a digit)", s.Home)
	case h.Timeout < 0 || h.Timeout > maxHookTimeout:
		return fmt.Errorf("hooks: timeout: from 0 (none) to %d, in the agent's unit", maxHookTimeout)
	case h.Name != "" && !plainName(h.Name, "-_.", true):
		return fmt.Errorf("hooks: name: %q is not a handler's name (letters, digits, - _ and ., at most 64)", h.Name)
	case reflect.ValueOf(s).IsZero():
		return nil
	}
	if err := checkEventsPath(s.Default, false); err != nil {
		return fmt.Errorf("hooks: settings: default: %v", err)
	}
	if err := checkEventsPath(s.File, false); err != nil {
		return fmt.Errorf("hooks: settings: file: %v", err)
	}
	return nil
}

// errOwnHooks refuses an operator's description hooks that are not a
// settings file: install --hooks writes only the one format it knows for
// an agent it does not ship.
var errOwnHooks = errors.New(`hooks: settings: install --hooks writes an agent's hooks into its settings file, in the format Claude Code, Codex and Gemini CLI share ({"hooks": {EVENT: [{"hooks": [HANDLER]}]}}); say where it is, or give no hooks (the agent is then read at the watcher's pace)`)

// errHooksProgram refuses hooks of an agent without programs: install
// --hooks names an agent by its program, and looks for it on PATH.
var errHooksProgram = errors.New("hooks: the agent needs programs: install --hooks --agent names it by its first program")

// AgentHooks are one agent's hooks, as its description gives them.
type AgentHooks struct {
	// Agent is its name, as classify names it; Key its first program's,
	// which install --hooks names it by (claude, codex, tern).
	Agent, Key string
	// BuiltIn says the project ships its description.
	BuiltIn bool
	LocalHooks
}

// Hooks are the hooks of every agent the descriptions, built in or in
// local (nil for the built-in ones only), give hooks, in their order.
func Hooks(local *Local) []AgentHooks {
	var out []AgentHooks
	for _, a := range local.agents() {
		if a.hooks.Events != nil && len(a.programs) > 0 {
			out = append(out, AgentHooks{Agent: a.name, Key: a.programs[0], BuiltIn: a.source == "", LocalHooks: a.hooks})
		}
	}
	return out
}

// HookEvents are the events of the built-in agent named agent whose hooks
// wake the watcher, as its description gives them: nil for an agent with
// none.
func HookEvents(agent string) []string {
	for _, a := range agents() {
		if a.name == agent {
			return a.hooks.Events
		}
	}
	return nil
}
