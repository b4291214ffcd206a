package tick

import (
	"strings"
	"unicode/utf8"

	"github.com/omega-monitor/omega-monitor/probe"
)

// A pane's foreground process group is a reading (package probe): keys of
// ours go only to the agent's own process.
type (
	Process    = probe.Process
	Foreground = probe.Foreground
)

// TitleSays reads what an agent's terminal title (tmux's #{pane_title})
// says of its state: "waiting", "busy" or "idle", or "" when it says
// nothing. As seen set by the real programs: Codex CLI 0.171 titles a
// waiting approval "[ ! ] Action Required | PROMPT | DIR" (blinking with
// "[ . ]") and a running turn with a braille spinner first; Gemini CLI 0.61
// draws "◇  Ready (DIR)", "✦  Working… (DIR)" and "✋  Action Required
// (DIR)". Claude Code 2.1.332's title, "✳ Claude Code", does not change
// with its state, and says nothing.
func TitleSays(agent, title string) string {
	switch agent {
	case "Codex CLI":
		switch r, _ := utf8.DecodeRuneInString(title); {
		case strings.HasPrefix(title, "[ ! ] Action Required"), strings.HasPrefix(title, "[ . ] Action Required"):
			return "waiting"
		case r >= 0x2801 && r <= 0x28ff:
			return "busy"
		}
	case "Gemini CLI":
		switch {
		case strings.HasPrefix(title, "✋"):
			return "waiting"
		case strings.HasPrefix(title, "✦"):
			return "busy"
		case strings.HasPrefix(title, "◇"):
			return "idle"
		}
	}
	return ""
}
