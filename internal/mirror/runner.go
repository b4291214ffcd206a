package mirror

import (
	"strings"
)

// A Surface is what a runner offers the mirror to reflect the fleet on. The
// surfaces are distinct values, never a yes or no, so that no runner is
// taken to have what only one of them has: a task list.
type Surface string

const (
	// NativeTask: the runner has task tools; the mirror is the call plan.
	NativeTask Surface = "native-task"
	// MonitorAgent: no task tools, but a sub-agent can be spawned; the
	// mirror is an empty plan, one notice, and one read-only monitor agent
	// spawned with MonitorAgentPrompt.
	MonitorAgent Surface = "monitor-agent"
	// NoSurface: a headless or bare runner has no session to show anything
	// in; the mirror is an empty plan, said nowhere.
	NoSurface Surface = "none"
)

// A Capability is one runner's row of the matrix.
type Capability struct {
	Runner  string
	Surface Surface
	// Notice is the one line the runner's mirror says instead of a plan;
	// empty where it says nothing.
	Notice string
}

// CodexNotice is the line mirror-plan --runner codex says: Codex has no
// task tools, so the board and the monitor agent are its mirror.
const CodexNotice = "codex has no task surface; no mirror calls: the board (omega-monitor status --once) " +
	"and one read-only monitor agent (the MCP tool codex_monitor_agent) are the mirror"

// Matrix is every runner the mirror knows, in the order usage names them.
// Exactly one has a native task surface.
var Matrix = []Capability{
	{Runner: "claude", Surface: NativeTask},
	{Runner: "codex", Surface: MonitorAgent, Notice: CodexNotice},
	{Runner: "headless", Surface: NoSurface},
	{Runner: "bare", Surface: NoSurface},
}

// Runners returns the runners' names, as Matrix orders them.
func Runners() []string {
	out := make([]string, len(Matrix))
	for i, c := range Matrix {
		out[i] = c.Runner
	}
	return out
}

// CapabilityOf returns the row of a runner. An unknown runner is an error
// naming the known ones: it never falls back to another runner's surface.
func CapabilityOf(runner string) (Capability, error) {
	for _, c := range Matrix {
		if c.Runner == runner {
			return c, nil
		}
	}
	known := strings.Join(Runners(), ", ")
	if runner == "" {
		return Capability{}, errorf("no runner given: the known runners are %s", known)
	}
	return Capability{}, errorf("unknown runner %q: the known runners are %s", runner, known)
}
