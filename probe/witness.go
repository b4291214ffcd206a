package probe

import (
	"cmp"
	"encoding/json"
	"fmt"
	"time"
)

// A Witness is the agent's own account of its state, independent of the
// screen: Claude Code writes one to ~/.claude/sessions/<pid>.json. It never
// decides alone; it can only stop a nudge the screen would allow.
type Witness struct {
	// Kind is the kind of file it was read from: ClaudeStatus, CodexLog,
	// QwenChat or an agent's events log (EventsKind) ("" for a witness
	// made otherwise, such as a title).
	Kind       string
	Status     string    // busy, waiting or idle
	WaitingFor string    // what a waiting agent waits for
	Pane       string    // the tmux pane it runs in, session:@window.%pane
	Version    string    // the agent's version
	Updated    time.Time // when the agent last wrote it
	// Changed is when its status last changed (Claude Code's
	// statusUpdatedAt), zero where it does not say: a question on the
	// screen whose status changed since it was paged is a new question,
	// asked again, whatever the screen shows between two polls.
	Changed time.Time
}

// The kinds of the agents' own files a witness is read from whose format
// is code, as an agent's description names them (classify.WitnessKinds);
// an events log's is data (EventsLog).
const (
	ClaudeStatus = "claude-status"
	CodexLog     = "codex-log"
	QwenChat     = "qwen-chat"
)

// WitnessMaxAge is how old a witness may be and still count: an agent that
// died leaves its last status behind.
const WitnessMaxAge = 5 * time.Minute

// ParseWitness reads a Claude Code session status file, or a Codex CLI
// session log (codexwitness.go), and checks that it
// belongs to pane and is fresh at now. It returns an error saying why a file
// does not count; the screen then decides alone.
func ParseWitness(data []byte, pane string, now time.Time) (Witness, error) {
	if codexRollout(data) {
		return parseCodexRollout(data, now)
	}
	var f struct {
		Status     string `json:"status"`
		WaitingFor string `json:"waitingFor"`
		Tmux       string `json:"tmux"`
		Version    string `json:"version"`
		UpdatedAt  int64  `json:"updatedAt"`
		Changed    int64  `json:"statusUpdatedAt"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return Witness{}, fmt.Errorf("probe: agent status: not a status file: %v", err)
	}
	w := Witness{Kind: ClaudeStatus, Status: f.Status, WaitingFor: f.WaitingFor, Pane: f.Tmux, Version: f.Version, Updated: time.UnixMilli(f.UpdatedAt)}
	if f.Changed > 0 {
		w.Changed = time.UnixMilli(f.Changed)
	}
	switch {
	case w.Status != "busy" && w.Status != "waiting" && w.Status != "idle":
		return Witness{}, fmt.Errorf("probe: agent status: unknown status %q", w.Status)
	case pane != "" && w.Pane != pane:
		return Witness{}, fmt.Errorf("probe: agent status: the file is for pane %q, not %q", w.Pane, pane)
	case f.UpdatedAt == 0 || now.Sub(w.Updated) > WitnessMaxAge:
		return Witness{}, fmt.Errorf("probe: agent status: stale (written %s)", w.Updated.UTC().Format(time.RFC3339))
	}
	return w, nil
}

// FreshestWitness picks, among the agent's status files, the one for pane
// written last, and checks it with ParseWitness. Files for other panes and
// files that are not status files are passed over: a stale file for the
// same pane must not hide a fresh one. A Codex session log among them
// counts as PaneWitness counts one.
func FreshestWitness(files [][]byte, pane string, now time.Time) (Witness, error) {
	return PaneWitness(files, Logs{}, pane, now)
}

// Logs are the ends of the session logs found for a pane's directory, by
// kind: each is read as its kind only, whatever its text says.
type Logs struct {
	Codex  [][]byte     // Codex CLI's session logs
	Qwen   [][]byte     // Qwen Code's chat records
	Events []EventsTail // the agents' events logs, each read as its description says
}

// EventsTail are the ends of the events logs of one agent's, found for a
// pane's directory.
type EventsTail struct {
	Log   EventsLog
	Tails [][]byte
}

// PaneWitness is the agent's own word for pane: the freshest of the status
// files that name it (as FreshestWitness), else, where none does, what the
// session logs of the pane's directory say, a busy one winning among them
// (another agent in the same directory can only stop a nudge; the tick
// weighs a witness only for the agent whose description names its kind).
// A log cannot pose as a status file.
func PaneWitness(statuses [][]byte, logs Logs, pane string, now time.Time) (Witness, error) {
	var best []byte
	var bestAt int64 = -1
	codex := logs.Codex[:len(logs.Codex):len(logs.Codex)]
	for _, data := range statuses {
		if codexRollout(data) {
			codex = append(codex, data)
			continue
		}
		var f struct {
			Tmux      string `json:"tmux"`
			UpdatedAt int64  `json:"updatedAt"`
		}
		if json.Unmarshal(data, &f) != nil || (pane != "" && f.Tmux != pane) {
			continue
		}
		if f.UpdatedAt > bestAt {
			best, bestAt = data, f.UpdatedAt
		}
	}
	if best != nil {
		return ParseWitness(best, pane, now)
	}
	var found *Witness
	var why error
	type kind struct {
		logs  [][]byte
		parse func([]byte, time.Time) (Witness, error)
	}
	kinds := []kind{{codex, parseCodexRollout}, {logs.Qwen, ParseQwenChat}}
	for _, e := range logs.Events {
		kinds = append(kinds, kind{e.Tails, e.Log.ParseEvents})
	}
	for _, kind := range kinds {
		for _, data := range kind.logs {
			w, err := kind.parse(data, now)
			switch {
			case err != nil:
				why = cmp.Or(why, err)
			case found == nil || w.Status != "idle":
				found = &w
			}
		}
	}
	switch {
	case found != nil:
		return *found, nil
	case why != nil && len(codex) == 0:
		return Witness{}, why
	}
	return Witness{}, fmt.Errorf("probe: agent status: no status file names pane %q", pane)
}

// Says is the witness's account in words, for the line.
func (w Witness) Says() string {
	if w.Status == "waiting" && w.WaitingFor != "" {
		return "waiting (" + w.WaitingFor + ")"
	}
	return w.Status
}

// fresh says whether a file an agent last wrote at last can speak for it
// at now: written within WitnessMaxAge, and not stamped more than a minute
// ahead (a clock that lies, or a planted file); notFresh says why not.
func fresh(last, now time.Time) bool {
	return !last.After(now.Add(time.Minute)) && now.Sub(last) <= WitnessMaxAge
}

func notFresh(what string, last, now time.Time) error {
	at := last.UTC().Format(time.RFC3339)
	if last.After(now) {
		return fmt.Errorf("probe: agent status: the %s is stamped in the future (%s)", what, at)
	}
	return fmt.Errorf("probe: agent status: stale (%s last written %s)", what, at)
}
