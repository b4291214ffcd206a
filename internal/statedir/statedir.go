// Package statedir is the on-disk contract of the watchers' state: the state
// home ($OMEGA_MONITOR_HOME, else ~/.omega/monitor) and, in it, one
// directory per watcher, named as its multiplexer session. It names every
// file there, defines the records written there (loop, ended, diff, audit),
// appends and sweeps the history, appends the log of MONITOR lines, and
// keeps the actions handed to the loop, the pending nudge, the outbox and
// the locks. Files are 0600 and directories 0700; every whole-file write is
// atomic.
//
// It is the one place these names and shapes are written down: the watcher
// writes through it, and the board, the MCP server and the mirror read
// through it. It imports neither tick nor classify, so that the read side
// stays light. It judges nothing: what a record means is tick's and board's.
package statedir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/atomicfile"
	"github.com/omega-monitor/omega-monitor/internal/fsutil"
)

// The files of a watcher's directory.
const (
	State     = "state.json"    // the tick's state (tick.State)
	StateLock = "state.lock"    // held over the tick's read-modify-write
	Loop      = "loop.json"     // the loop's process, written when it starts (LoopRecord)
	Ended     = "ended.json"    // written by stop before it ends a watcher (EndedRecord)
	History   = "history.jsonl" // one event a line (event.Event)
	HistLock  = "history.lock"  // held by every writer of the history
	Log       = "monitor.log"   // the MONITOR lines; monitor.log.1 the ones before
	LogLock   = "log.lock"      // held by every writer of the log
	DiffFile  = "diff.json"     // the watched worktree's diff (Diff)
	// AccountFile is the account of the agent of a pane of an ssh host,
	// read there once per agent process (package poll).
	AccountFile = "account.json"
	// Undelivered is the last alert the funnel could not deliver, and why
	// (UndeliveredRecord); removed once every alert waiting is delivered.
	Undelivered = "undelivered.json"
	// Delivery is what the deliverer says of each channel (DeliveryRecord).
	Delivery = "delivery.json"
	Target   = "target"       // the watched target
	Ledger   = "ledger"       // the echo ledger (package ledger)
	Actions  = "actions"      // what the tick hands the loop, as steps (steps.go): NNN.nudge, .enter, .answer, .wait, .diff
	Pending  = "pending.json" // the nudge handed over and the screen it was judged on
	// Answering is the answer handed over (its option, its keys, the
	// dialog and the agent's process it is for), which each check of its
	// steps compares with the screen.
	Answering  = "answering.json"
	Outbox     = "outbox"      // escalations waiting for delivery, NNN.alert
	OutboxLock = "outbox.lock" // held by the one deliverer
	Holder     = "loop.lock"   // held by the watcher's loop for its whole life
	PollDir    = "poll"        // the loop's scratch files of one poll
	// Condition, in PollDir, is the condition (in the multiplexer's
	// formats) the next key or paste is sent on: written by each check
	// that lets the loop go on, given by the loop to the multiplexer.
	Condition = "condition"
	// RulesReported holds the rules file's error last said, so that it
	// is said once.
	RulesReported = "rules.reported"
	// RemoteWake is where the wake relay of a remote target stands
	// (RemoteWakeRecord); removed at the loop's start.
	RemoteWake = "wake.json"
	// MuxWake is what the multiplexer's own wakes changed on the watched
	// pane's window and session, and what was there before
	// (muxwake.Record): written before the change, removed once undone.
	MuxWake = "muxwake.json"
	// MuxWoke marks a wake of the multiplexer's (wake --mux), left before
	// the loop is woken and removed by the poll it brings, which takes the
	// screen as settled: the pane has drawn nothing for seconds.
	MuxWoke = "muxwake.woke"
	// Vitals is the watched agent's own activity, counted from its own
	// records through a cursor (VitalsRecord).
	Vitals = "vitals.json"
)

// The files of the state home itself.
const (
	Audits       = "audits"           // one directory per audit, with AuditFile
	AuditFile    = "last.json"        // the latest run of an audit (AuditRecord)
	FailedAlerts = "alert-failed.log" // alerts that could not be delivered
	Channels     = "channels"         // the operator's channels other than Telegram, one URL a line (0600)
	Rules        = "rules.json"       // the operator's rules (classify)
	Hosts        = "hosts"            // the ssh aliases list may reach, one a line
	BoardCursors = ".board-cursors.json"
	// Groups holds one directory per cause that stopped many panes (one
	// account's usage limit, one host gone): its members, one file per
	// pane and event, and its pages, each a directory with an outbox that
	// any member's deliverer delivers (poll's group step). A dot name: no
	// census takes it for a watcher.
	Groups = ".groups"
)

// The files of a group's directory (Groups/NAME/): the cause as its first
// member gave it, the lock its pages are made under, one file per member
// and event (MEMBER.EVENT.json), and its pages, each a directory (NNN/)
// with the watchers it names and an outbox as a watcher's.
const (
	GroupFile    = "group.json"
	GroupLock    = "group.lock"
	GroupMembers = "members"
	GroupPages   = "pages"
	GroupPage    = "page.json"
)

// GroupsWaiting, in a watcher's directory, names the groups of which the
// watcher is a member that hold a page not yet delivered, one a line: the
// loop starts a deliverer while it exists.
const GroupsWaiting = "groups.wait"

// Limits of what is read and kept.
const (
	// MaxState is the largest state file read: a state is a few KB, and a
	// larger one is corrupt or planted.
	MaxState = 8 << 20
	// MaxLog is the size past which monitor.log moves to monitor.log.1.
	MaxLog = 4 << 20
	// HistoryKeep is how many lines of history the sweep at a watcher's
	// start keeps.
	HistoryKeep = 10000
	// MaxHistory is the size past which a running watcher's history is
	// swept as at its start; a sweep keeps at most half of it.
	MaxHistory = 16 << 20
)

// LogTime is how monitor.log dates its lines.
const LogTime = "2006-01-02 15:04:05"

// Home is $OMEGA_MONITOR_HOME made absolute, or ~/.omega/monitor, with
// the environment read through getenv: a caller resolves the home of the
// environment it was given (a test's, a detached session's), not only of
// this process.
func Home(getenv func(string) string) (string, error) {
	if h := getenv("OMEGA_MONITOR_HOME"); h != "" {
		return filepath.Abs(h)
	}
	home := getenv("HOME")
	if home == "" {
		return "", errorf("no state directory: set OMEGA_MONITOR_HOME (or HOME)")
	}
	return filepath.Join(home, ".omega", "monitor"), nil
}

// A Dir is one watcher's state directory.
type Dir string

// Path is the path of the file name in d.
func (d Dir) Path(name string) string { return filepath.Join(string(d), name) }

// Prepare creates d and its actions directory, 0700, and refuses a d,
// or a state home above it, that is not the user's alone (CheckPrivate,
// an error that is ErrNotPrivate): those that exist are checked before
// anything is made in them.
func (d Dir) Prepare() error {
	dirs := []string{filepath.Dir(string(d)), string(d), d.Path(Actions)}
	for _, dir := range dirs {
		if err := CheckPrivate(dir); errors.Is(err, ErrNotPrivate) {
			return fmt.Errorf("state directory: %w", err)
		}
	}
	if err := os.MkdirAll(d.Path(Actions), 0o700); err != nil {
		return fmt.Errorf("state directory: %v", err)
	}
	for _, dir := range dirs {
		if err := CheckPrivate(dir); err != nil {
			return fmt.Errorf("state directory: %w", err)
		}
	}
	os.Chmod(string(d), 0o700)
	return nil
}

// Write replaces the file name in d with data, 0600, atomically.
func (d Dir) Write(name string, data []byte) error {
	return atomicfile.Write(d.Path(name), data, 0o600)
}

// Replace is Write for a file every poll rewrites (atomicfile.Replace: a
// crash may keep the one before, whole).
func (d Dir) Replace(name string, data []byte) error {
	return atomicfile.Replace(d.Path(name), data, 0o600)
}

// Lock takes the exclusive lock file name in d, waiting for it; close the
// file to release it.
func (d Dir) Lock(name string) (*os.File, error) { return fsutil.Lock(d.Path(name)) }

// TryLock takes the lock file name in d, or returns an error wrapping
// fsutil.ErrLocked when another holds it.
func (d Dir) TryLock(name string) (*os.File, error) { return fsutil.TryLock(d.Path(name)) }

// WriteAction hands the loop the action name (NNN.kind) with its content.
func (d Dir) WriteAction(name string, data []byte) error {
	return atomicfile.Write(filepath.Join(d.Path(Actions), name), data, 0o600)
}

// DropStaleActions deletes the actions an earlier poll left that the loop
// never carried out, and names them; a measure of the diff is only asked
// again, so it is dropped without a word.
func (d Dir) DropStaleActions() error {
	left, err := os.ReadDir(d.Path(Actions))
	if err != nil {
		return fmt.Errorf("actions: %v", err)
	}
	var dropped []string
	for _, e := range left {
		if err := os.Remove(filepath.Join(d.Path(Actions), e.Name())); err == nil && !strings.HasSuffix(e.Name(), ".diff") {
			dropped = append(dropped, e.Name())
		}
	}
	d.DropPastes()
	if len(dropped) > 0 {
		return fmt.Errorf("dropped %d stale action(s) the shell never carried out: %s", len(dropped), strings.Join(dropped, ", "))
	}
	return nil
}

// ReadPending reads the pending nudge, as the tick wrote it.
func (d Dir) ReadPending() ([]byte, error) {
	data, err := fsutil.ReadCapped(d.Path(Pending), 1<<20)
	if err != nil {
		return nil, errors.New("no pending nudge: the tick handed over none")
	}
	return data, nil
}

// AppendLog appends a MONITOR line to monitor.log, the log that logs reads,
// after the date and time at, in the machine's zone: a line read back says
// when it happened, whatever it says. It is one line: a line break in line
// (a server's, a pane's) is a space, and starts no record of its own.
// Past MaxLog the log moves to monitor.log.1, replacing the one before.
func (d Dir) AppendLog(at time.Time, line string) error {
	_, err := d.WriteLog(at, line)
	return err
}

// LogLine is what AppendLog writes for line at at: one whole line.
func LogLine(at time.Time, line string) []byte {
	return []byte(at.Local().Format(LogTime) + " " + OneLine(line) + "\n")
}

// WriteLog is AppendLog, and says where the line went: the log's identity,
// its size before the line, and the bytes written. Every writer of the log
// holds LogLock while it finds the log's end and writes there, so that
// the offset is where the line went, and a writer that counted its line
// before writing it (a tick's tally) can tell whether another wrote first.
func (d Dir) WriteLog(at time.Time, line string) (Appended, error) {
	unlock, f, a, err := d.holdLog()
	if err != nil {
		return a, fmt.Errorf("monitor.log not written: %v", err)
	}
	defer unlock()
	a.Bytes, err = f.Write(LogLine(at, line))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return a, fmt.Errorf("monitor.log not written: %v", err)
	}
	return a, nil
}

// LogEnd is where the log ends now, as the next line goes there unless
// another writer comes first: its identity and size, the log moved aside
// first when it is past MaxLog, and created when there is none.
func (d Dir) LogEnd() (ino uint64, size int64, err error) {
	unlock, f, a, err := d.holdLog()
	if err != nil {
		return 0, 0, fmt.Errorf("monitor.log: %v", err)
	}
	f.Close()
	unlock()
	return a.Ino, a.Offset, nil
}

// holdLog takes the log's lock, moves the log aside when it is past
// MaxLog, and opens it for appending: a is where it ends. Close f, then
// unlock.
func (d Dir) holdLog() (unlock func(), f *os.File, a Appended, err error) {
	lock, err := d.Lock(LogLock)
	if err != nil {
		return nil, nil, a, fmt.Errorf("log lock: %w", err)
	}
	path := d.Path(Log)
	if fi, err := os.Stat(path); err == nil && fi.Size() > MaxLog {
		os.Rename(path, path+".1")
	}
	if f, err = openAppend(path); err != nil {
		lock.Close()
		return nil, nil, a, err
	}
	a.Ino, a.Offset = fileEnd(f)
	return func() { lock.Close() }, f, a, nil
}
