package capture

import "time"

// LocalOptions are how a call on this machine reads its capture: framed or
// not, the agent's status files in statusDir, and the agents' own logs
// where the environment getenv reads says each agent keeps them.
func LocalOptions(getenv func(string) string, framed bool, statusDir string, now time.Time) Options {
	return Options{Framed: framed, StatusDir: statusDir, CodexHome: CodexHome(getenv), QwenHome: QwenHome(getenv),
		CopilotHome: CopilotHome(getenv), Now: now}
}
