package capture

import (
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/probe"
)

// The agents' events logs, as their descriptions give them
// (probe.EventsLog): an agent such as Copilot CLI keeps no status file of a
// pane, but logs each session's events as JSON lines whose first line names
// the session's working directory. As a Codex log, such a log names no
// pane: it counts for a pane when its working directory is the pane's and
// it was written lately.

// MaxEventsLogs is how many of the pane's recent events logs of one agent
// a frame carries, the newest, as MaxCodexLogs says.
const MaxEventsLogs = 4

// EventsSource is an agent's events log and where its home is on this
// machine ("" when that is not known).
type EventsSource struct {
	Log  probe.EventsLog
	Home string
}

// EventsSources are the logs where the environment getenv reads says each
// agent keeps them: the variable its description names, else its default
// under the user's home.
func EventsSources(getenv func(string) string, logs []probe.EventsLog) []EventsSource {
	out := make([]EventsSource, len(logs))
	for i, l := range logs {
		out[i] = EventsSource{Log: l}
		if l.Home != "" {
			out[i].Home = getenv(l.Home)
		}
		if out[i].Home == "" {
			out[i].Home = agentHome(getenv, "", l.Default)
		}
	}
	return out
}

// EventsFound are the ends of one agent's recent events logs for the pane,
// and why none were kept where a host's were not.
type EventsFound struct {
	Log   probe.EventsLog
	Tails [][]byte
	Err   error
}

// eventsTails returns the tails of the recent events logs of s whose
// working directory is dir, on this machine: the newest MaxEventsLogs, as a
// remote host sends them.
func eventsTails(s EventsSource, dir string, now time.Time) [][]byte {
	if s.Home == "" || dir == "" {
		return nil
	}
	// The path is checked names and * only (classify.LocalEvents): no
	// pattern reaches outside the home.
	logs, _ := filepath.Glob(filepath.Join(s.Home, filepath.FromSlash(s.Log.Path)))
	return recentTails(logs, s.Log.DirOf, dir, now, MaxEventsLogs)
}

// eventsMarks are the lines that open and end the block of one of the
// agent's events logs in a remote frame.
func eventsMarks(l probe.EventsLog) (mark, end string) {
	return eventsMarkPrefix + l.Key + "]", eventsEndPrefix + l.Key + "]"
}

// The starts of an events log's mark and end lines, its key and a ]
// after them.
const (
	eventsMarkPrefix = "[omega-monitor:events "
	eventsEndPrefix  = "[omega-monitor:events-end "
)

// remoteEvents adds an agent's events logs to the remote frame, as
// remoteQwenChats adds Qwen Code's: the logs at its path under its home
// ($VAR, else its default under $HOME), exactly as deep as the path is, of
// the pane's directory (its first line holding "NAME":"DIR", NAME the last
// of the dir field's names). Every word comes from a checked description:
// a variable's name, and paths of letters, digits, . _ - and *; each is
// quoted all the same.
func remoteEvents(l probe.EventsLog) string {
	root := `"$HOME"/` + shellWord(l.Default)
	if l.Home != "" {
		root = `"${` + l.Home + `:-$HOME/` + l.Default + `}"`
	}
	depth := strconv.Itoa(strings.Count(l.Path, "/") + 1)
	test := `-mindepth ` + depth + ` -maxdepth ` + depth + ` -path "$y"/` + shellWord(l.Path)
	key := ""
	if len(l.Dir) > 0 {
		key = l.Dir[len(l.Dir)-1]
	}
	mark, end := eventsMarks(l)
	return remoteRecent(root, test, shellWord(`"`+key+`":"`), mark, end)
}

// shellWord quotes s for sh.
func shellWord(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
