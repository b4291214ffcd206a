package capture

import (
	"os"
	"path/filepath"
	"time"

	"github.com/omega-monitor/omega-monitor/probe"
)

// Copilot CLI's own word: it logs each session's events in
// $COPILOT_HOME/session-state/<session>/events.jsonl (COPILOT_HOME defaults
// to ~/.copilot), whose first line (session.start) names the session's
// working directory and whose last events say whether a turn is open or
// its permission dialog waits (probe/copilotwitness.go reads them). As a
// Codex log, the log names no pane: it counts for a pane when its working
// directory is the pane's and it was written lately.

// MaxCopilotEvents is how many of the pane's recent Copilot CLI events
// logs a frame carries, the newest, as MaxCodexLogs says.
const MaxCopilotEvents = 4

// CopilotHome is where Copilot CLI keeps its sessions in the environment
// getenv reads: $COPILOT_HOME, else ~/.copilot ("" when neither is known).
func CopilotHome(getenv func(string) string) string {
	return agentHome(getenv, "COPILOT_HOME", ".copilot")
}

// copilotEvents returns the tails of the recent Copilot CLI events logs
// under home whose working directory is dir, on this machine: the newest
// MaxCopilotEvents, as a remote host sends them.
func copilotEvents(home, dir string, now time.Time) [][]byte {
	if home == "" {
		return nil
	}
	// One directory read and a stat a session: a glob would read each
	// session's directory too.
	sessions, _ := os.ReadDir(filepath.Join(home, "session-state"))
	var logs []string
	for _, e := range sessions {
		if e.IsDir() {
			logs = append(logs, filepath.Join(home, "session-state", e.Name(), "events.jsonl"))
		}
	}
	return recentTails(logs, probe.CopilotEventsDir, dir, now, MaxCopilotEvents)
}
