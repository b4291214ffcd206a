package classify

import (
	"errors"
	"fmt"
)

// LocalHooks are an agent's hooks as install --hooks writes them: the
// events of the agent's that wake the watcher. Where they are written, and
// the shape of a handler, are each agent's settings format, and stay code
// (package setup).
type LocalHooks struct {
	Events []string `json:"events"`
}

// maxHookEvents bounds the events one description names.
const maxHookEvents = 16

// checkHooks checks a description's hooks: one to maxHookEvents plain
// event names, when it gives any.
func checkHooks(h LocalHooks) error {
	if h.Events == nil {
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
	return nil
}

// errOwnHooks refuses hooks in an operator's description: install --hooks
// writes only into the settings of the agents the project ships, whose
// formats it knows.
var errOwnHooks = errors.New("hooks: install --hooks writes hooks only for the agents the project ships (claude, codex, gemini, opencode), each in its own settings format; an agent described here is woken by no hook, and read at the watcher's pace")

// HookEvents are the events of the built-in agent named agent whose hooks
// wake the watcher, as its description gives them: nil for an agent with
// none.
func HookEvents(agent string) []string {
	for _, a := range agents() {
		if a.name == agent {
			return a.hookEvents
		}
	}
	return nil
}
