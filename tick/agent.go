package tick

import (
	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/probe"
)

// A pane's foreground process group is a reading (package probe): keys of
// ours go only to the agent's own process.
type (
	Process    = probe.Process
	Foreground = probe.Foreground
)

// TitleSays reads what an agent's terminal title says of its state, by
// the title marks of its description (classify.TitleSays): "waiting",
// "busy" or "idle", or "" when it says nothing. Codex CLI and Gemini CLI
// give marks; Claude Code's title does not change with its state.
func TitleSays(local *classify.Local, agent, title string) string {
	return classify.TitleSays(local, agent, title)
}
