package probe

import (
	"path"
	"slices"
	"strconv"
	"strings"
)

// Keys of ours go only to the agent: to the pane's foreground process
// group while it holds the agent's own process, found by what the process
// is (its program), never by what the screen looks like. A shell that cats
// a file drawn as a dialog draws the dialog; its process is no agent's.

// A Process is one process of a pane's foreground process group.
type Process struct {
	PID int `json:"pid"`
	// Start tells this process apart from a later one with the same id:
	// its start time, in clock ticks since boot, as /proc says it.
	Start string `json:"start"`
	// Comm is the kernel's name of the process; Args the first words of
	// its command line.
	Comm string   `json:"comm,omitempty"`
	Args []string `json:"args,omitempty"`
}

// Same says p and q are one process: the same id, started at the same
// moment.
func (p Process) Same(q Process) bool { return p.PID == q.PID && p.Start == q.Start && p.Start != "" }

// Name is how a line names p: its program and its id.
func (p Process) Name() string {
	name := p.Comm
	if len(p.Args) > 0 && p.Args[0] != "" {
		name = path.Base(p.Args[0])
	}
	return name + " (pid " + strconv.Itoa(p.PID) + ")"
}

// A Foreground is a pane's foreground process group, as a capture read it:
// the processes of the group that descend from the pane's own process.
// Unknown says why it could not be read (a host without /proc, a pane
// whose process is gone); the zero value says the capture did not ask.
type Foreground struct {
	Known   bool      `json:"known,omitempty"`
	Unknown string    `json:"unknown,omitempty"`
	Procs   []Process `json:"procs,omitempty"`
}

// AgentProgram says whether p runs as one of programs, the names an
// agent's description gives (classify.Programs): the process's name, its
// executable's or, for an interpreter, its script's (node runs Gemini CLI
// as gemini.js, and Codex's npm wrapper as codex.js).
func AgentProgram(programs []string, p Process) bool {
	if len(programs) == 0 {
		return false
	}
	words := []string{p.Comm}
	for i, a := range p.Args {
		if i > 1 {
			break // the program, and an interpreter's script
		}
		words = append(words, path.Base(a))
	}
	for _, w := range words {
		w = strings.ToLower(w)
		for _, ext := range []string{".exe", ".js", ".mjs", ".cjs"} {
			w = strings.TrimSuffix(w, ext)
		}
		if w != "" && slices.Contains(programs, w) {
			return true
		}
	}
	return false
}

// Agent finds the process of an agent that runs as one of programs in the
// foreground group: the first, from the pane's own process down.
func (f Foreground) Agent(programs []string) (Process, bool) {
	for _, p := range f.Procs {
		if AgentProgram(programs, p) {
			return p, true
		}
	}
	return Process{}, false
}

// Holds says the foreground group still holds the process p.
func (f Foreground) Holds(p Process) bool {
	return slices.ContainsFunc(f.Procs, p.Same)
}

// Says names the foreground group's processes for a line: "bash (pid 12)".
func (f Foreground) Says() string {
	if !f.Known {
		return "unknown (" + f.Unknown + ")"
	}
	if len(f.Procs) == 0 {
		return "no process"
	}
	names := make([]string, 0, len(f.Procs))
	for _, p := range f.Procs {
		names = append(names, p.Name())
	}
	return strings.Join(names, ", ")
}

// NotAgent says why keys may not go to the pane for the agent named agent,
// which runs as one of programs ("" when they may): its foreground process
// group, where it is known, must hold that agent's process. An unknown
// group says nothing against it.
func (f Foreground) NotAgent(agent string, programs []string) string {
	if !f.Known {
		return ""
	}
	if _, ok := f.Agent(programs); ok {
		return ""
	}
	who := agent
	if who == "" {
		who = "an agent"
	}
	return "the pane's foreground process is " + f.Says() + ", not " + who
}
