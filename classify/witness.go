package classify

import (
	"fmt"
	"slices"
	"strings"

	"github.com/omega-monitor/omega-monitor/probe"
)

// The kinds of an agent's own status or log files the watcher reads as a
// witness whose formats are code: each is a format of the agent's own,
// found where the agent keeps it and read by code (internal/capture finds
// them, package probe parses them). A description names the kind its agent
// writes (LocalAgent.Witness), or "events" and gives its events log as
// data (LocalEvents): any agent that logs typed, timed events as JSON
// lines, Copilot CLI among them.
const (
	// WitnessClaudeStatus is Claude Code's ~/.claude/sessions/<pid>.json,
	// which names its pane.
	WitnessClaudeStatus = probe.ClaudeStatus
	// WitnessCodexLog is Codex CLI's session log,
	// $CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl.
	WitnessCodexLog = probe.CodexLog
	// WitnessQwenChat is Qwen Code's chat record,
	// $QWEN_HOME/projects/<dir>/chats/<session>.jsonl.
	WitnessQwenChat = probe.QwenChat
)

// WitnessKinds are the kinds a description may name.
var WitnessKinds = []string{WitnessClaudeStatus, WitnessCodexLog, WitnessQwenChat, WitnessEvents}

// checkWitness checks the witness kind a description names, when it names
// one.
func checkWitness(kind string) error {
	if kind == "" || slices.Contains(WitnessKinds, kind) {
		return nil
	}
	return fmt.Errorf("witness: %q is not a kind of file the watcher reads (one of %s)", kind, strings.Join(WitnessKinds, ", "))
}

// WitnessOf is the kind of the agent's own files that speak for the agent
// named agent, as its description, built in or in local (nil for the
// built-in ones only), names it: "" when it names none; for an events log,
// the log's own kind (probe.EventsKind). known says the agent is described
// at all.
func WitnessOf(local *Local, agent string) (kind string, known bool) {
	for _, a := range local.agents() {
		if a.name != agent {
			continue
		}
		if a.events != nil {
			return probe.EventsKind(a.events.Key), true
		}
		return a.witness, true
	}
	return "", false
}
