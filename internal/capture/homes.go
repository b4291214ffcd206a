package capture

import (
	"time"

	"github.com/omega-monitor/omega-monitor/classify"
)

// LocalOptions are how a call on this machine reads its capture: framed or
// not, the agent's status files in statusDir, and the agents' own logs
// (Codex's, Qwen Code's, and the events logs of the agents described, built
// in or in local) where the environment getenv reads says each agent keeps
// them.
func LocalOptions(getenv func(string) string, framed bool, statusDir string, now time.Time, local *classify.Local) Options {
	return Options{Framed: framed, StatusDir: statusDir, CodexHome: CodexHome(getenv), QwenHome: QwenHome(getenv),
		Events: EventsSources(getenv, classify.EventsLogs(local)), Now: now}
}
