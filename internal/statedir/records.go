package statedir

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/atomicfile"
	"github.com/omega-monitor/omega-monitor/internal/fsutil"
)

// A LoopRecord is loop.json: which process watches, since when, and how.
// The loop writes it once when it starts (loop-env).
type LoopRecord struct {
	Pid        int       `json:"pid"`
	StartToken string    `json:"start_token"` // the process's start, so that a reused pid is told apart
	StartedAt  time.Time `json:"started_at"`
	IntervalS  int       `json:"interval_s"`
	Target     string    `json:"target"`
	Watcher    string    `json:"watcher"`
	Version    string    `json:"version"`
	// Socket is the local multiplexer server's socket (#{socket_path}),
	// for a local target whose server answered at start: an agent's hook
	// names its server by it ($TMUX), since pane ids are per server.
	Socket string `json:"socket,omitempty"`
	// Settings are the watcher's settings as given (flags and
	// environment), by name.
	Settings map[string]string `json:"settings,omitempty"`
	// Poll is what each poll of this loop reads: the settings checked
	// once at start, so that the loop's tick passes the state directory
	// and the poll's readings, nothing else. Nil in a record written
	// before polls read it.
	Poll *PollSettings `json:"poll,omitempty"`
}

// PollSettings are a watcher's settings as one poll reads them: plain
// values, which another Go program may fill to run a poll itself
// (poll.Settings); pollset.Check is their rule.
type PollSettings struct {
	Target      string `json:"target"`
	IntervalS   int    `json:"interval_s,omitempty"` // 0: not said
	NudgeBudget int    `json:"nudge_budget"`
	NudgeText   string `json:"nudge_text"`
	// HumanIdleS is how long, in seconds, a human's input counts them at
	// the agent (0: the rule is off).
	HumanIdleS int `json:"human_idle_s"`
	// OnChange is the operator's shell command for each change of state,
	// run under a clock of OnChangeTimeoutS seconds.
	OnChange         string `json:"on_change,omitempty"`
	OnChangeTimeoutS int    `json:"on_change_timeout_s,omitempty"`
	// Answers says the operator's chat can answer questions: a relayed
	// question that can be answered gets its options as buttons.
	// FreeText says a reply can answer its free-text option.
	Answers  bool `json:"answers,omitempty"`
	FreeText bool `json:"free_text,omitempty"`
	// AgentStatusDir holds the agent's own status files, on this machine
	// (Claude Code's sessions); "" for a remote target.
	AgentStatusDir string `json:"agent_status_dir,omitempty"`
}

// An EndedRecord is ended.json: stop writes it before it ends a watcher, so
// that the board tells a stopped watcher (gone) from one whose loop died
// (stale).
type EndedRecord struct {
	At time.Time `json:"at"`
	By string    `json:"by"`
}

// A Diff is diff.json: what the agent has written in the watched pane's
// directory, lines added and removed, committed and uncommitted, since the
// merge base with the upstream default branch.
type Diff struct {
	Added   int       `json:"added"`
	Removed int       `json:"removed"`
	At      time.Time `json:"at"`
	Dir     string    `json:"dir,omitempty"`
	Base    string    `json:"base,omitempty"`
	// Error says why there is no figure (not a git worktree, no base);
	// the board then shows "-".
	Error string `json:"error,omitempty"`
}

// Known reports whether the diff holds a figure.
func (d *Diff) Known() bool { return d != nil && d.Error == "" }

// An UndeliveredRecord is undelivered.json: the last alert of a watcher
// that could not be delivered, and why. An escalation that never left is
// not one the operator saw: the board carries it as such.
type UndeliveredRecord struct {
	At    time.Time `json:"at"`
	Alert string    `json:"alert"`
	Why   string    `json:"why"`
}

// A DeliveryRecord is delivery.json: the deliverer's view of each channel,
// written as it works, for the board.
type DeliveryRecord struct {
	PID      int             `json:"pid"`
	At       time.Time       `json:"at"`
	Channels []ChannelHealth `json:"channels"`
}

// A ChannelHealth is one channel's delivery: named by its line, never its
// URL.
type ChannelHealth struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Queued      int       `json:"queued"`
	Delivered   int       `json:"delivered"`
	DeliveredAt time.Time `json:"delivered_at,omitzero"`
	FailedAt    time.Time `json:"failed_at,omitzero"`
	Why         string    `json:"why,omitempty"`
	Sending     *Sending  `json:"sending,omitempty"`
}

// Sending is the send under way to a channel: the alert, its try, since.
type Sending struct {
	Alert string    `json:"alert"`
	Try   int       `json:"try"`
	Since time.Time `json:"since"`
}

// An AuditRecord is audits/NAME/last.json: what the latest run of an audit
// found, for the board.
type AuditRecord struct {
	RanAt      string   `json:"ran_at"`
	Dir        string   `json:"dir"`
	Agent      string   `json:"agent"`
	Dimensions int      `json:"dimensions"`
	Findings   int      `json:"findings"`
	Clean      int      `json:"clean"`
	Rejected   int      `json:"rejected"`
	Failed     int      `json:"failed"`
	Violations []string `json:"violations"`
	Fallback   bool     `json:"fallback"`
	Summary    string   `json:"summary"`
	Report     string   `json:"report"`
	Delivered  bool     `json:"delivered"`
	// DeliveryError says why the report was not delivered ("" when it
	// was, or when --no-deliver said not to).
	DeliveryError string `json:"delivery_error,omitempty"`
}

// AuditDir is the directory of the audit name in the state home home.
func AuditDir(home, name string) string { return filepath.Join(home, Audits, name) }

// WriteRecord writes v as the JSON file name in d, indented, atomically.
func (d Dir) WriteRecord(name string, v any) error {
	return d.writeRecord(name, v, atomicfile.Write)
}

// ReplaceRecord is WriteRecord for a record every poll rewrites
// (atomicfile.Replace: a crash may keep the one before, whole).
func (d Dir) ReplaceRecord(name string, v any) error {
	return d.writeRecord(name, v, atomicfile.Replace)
}

func (d Dir) writeRecord(name string, v any, write func(string, []byte, os.FileMode) error) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return errorf("%s: %w", name, err)
	}
	if err := write(d.Path(name), append(data, '\n'), 0o600); err != nil {
		return errorf("%s: %w", name, err)
	}
	return nil
}

// MaxRecord is the largest record read: records are a few hundred bytes.
const MaxRecord = 1 << 20

// ReadRecord reads the JSON file name in d into v. A missing file is an
// error that os.IsNotExist / fs.ErrNotExist recognises.
func (d Dir) ReadRecord(name string, v any) error {
	data, err := fsutil.ReadCapped(d.Path(name), MaxRecord)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return errorf("%s: corrupt: %w", name, err)
	}
	return nil
}

// A RemoteWakeRecord is wake.json: where the wake relay of a watcher of an
// ssh target stands (remotewake.Relay), so that the tick says once whether
// the hooks on the host can wake the watcher, and the board can show it.
type RemoteWakeRecord struct {
	Status string    `json:"status"` // one of the Wake words
	Why    string    `json:"why,omitempty"`
	At     time.Time `json:"at"`
}

// The statuses of a wake relay.
const (
	WakeListening = "listening" // the host's listener runs: its hooks wake the watcher
	WakeAbsent    = "absent"    // no omega-monitor on the host
	WakeOld       = "old"       // the host's omega-monitor does not listen
	WakeDown      = "down"      // the listener ended; the relay starts it again
)
