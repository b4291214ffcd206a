package relay

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/atomicfile"
	"github.com/omega-monitor/omega-monitor/internal/digest"
	"github.com/omega-monitor/omega-monitor/internal/fsutil"
	"github.com/omega-monitor/omega-monitor/internal/proc"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// The receiver's files, in Dir under the state home.
const (
	Dir      = "relay"      // the receiver's directory in the state home
	LockFile = "relay.lock" // held by the one receiver for its whole life
	Offset   = "offset"     // the last update handled, in decimal
	Record   = "relay.json" // the running receiver (RecordFile)
	Inflight = "inflight"   // an answer being carried: <nonce>.json (InflightRecord)
	// Session is the multiplexer session relay start runs the receiver
	// of the default state home in (SessionFor).
	Session = "omega-relay"
)

// SessionFor is the multiplexer session the receiver of the state home
// home runs in: Session for the default home (~/.omega/monitor), and for
// any other one of its own, named by a digest of its path, so that two
// state homes on one multiplexer server each have their receiver.
func SessionFor(home string, getenv func(string) string) string {
	if h := getenv("HOME"); h != "" && filepath.Clean(home) == filepath.Join(h, ".omega", "monitor") {
		return Session
	}
	sum := digest.Sum256([]byte(filepath.Clean(home)))
	return Session + "-" + hex.EncodeToString(sum[:4])
}

// A RecordFile is relay.json: which process receives, since when, and
// when it last handled an update, for status.
type RecordFile struct {
	Pid        int       `json:"pid"`
	StartToken string    `json:"start_token"`
	Since      time.Time `json:"since"`
	LastUpdate time.Time `json:"last_update,omitzero"`
	Offset     int64     `json:"offset,omitempty"`
}

// An InflightRecord is an answer the receiver has written and not yet
// reported: enough to edit its message after a restart.
type InflightRecord struct {
	Nonce     string `json:"nonce"`
	Watcher   string `json:"watcher"`
	ChatID    int64  `json:"chat_id"`
	MessageID int    `json:"message_id"`
	From      string `json:"from"`
	// FromID is the Telegram id of the one who answered: a watcher that
	// asks for a confirmation is given one only from them.
	FromID int64     `json:"from_id,omitempty"`
	Label  string    `json:"label"`
	At     time.Time `json:"at"`
	// Text and Entities are the message as the tap showed it, to append
	// the outcome to.
	Text     string          `json:"text,omitempty"`
	Entities json.RawMessage `json:"entities,omitempty"`
	// Typed is the operator's words, for a reply to a free-text option.
	Typed string `json:"typed,omitempty"`
}

// Home is the receiver's directory under the state home home, made
// private if it is missing; a directory that is not the user's alone is
// refused.
func Home(home string) (string, error) {
	dir := filepath.Join(home, Dir)
	if err := os.MkdirAll(filepath.Join(dir, Inflight), 0o700); err != nil {
		return "", errorf("%w", err)
	}
	for _, d := range []string{home, dir, filepath.Join(dir, Inflight)} {
		if err := statedir.CheckPrivate(d); err != nil {
			return "", errorf("%w", err)
		}
	}
	return dir, nil
}

// ErrRunning is wrapped by Lock when another receiver holds the lock.
var ErrRunning = errorf("another receiver runs")

// Lock takes the receiver's lock in dir (Home), or says who holds it. The
// lock lasts until the file is closed or the process exits.
func Lock(dir string) (*os.File, error) {
	f, err := fsutil.TryLock(filepath.Join(dir, LockFile))
	if errors.Is(err, fsutil.ErrLocked) {
		return nil, fmt.Errorf("%w: %s", ErrRunning, holder(dir))
	}
	if err != nil {
		return nil, errorf("%w", err)
	}
	return f, nil
}

// Running reports whether a receiver holds the lock in the state home
// home, and its record if one does. It takes the lock for a moment to
// find out.
func Running(home string) (bool, RecordFile, error) {
	dir := filepath.Join(home, Dir)
	f, err := fsutil.TryLock(filepath.Join(dir, LockFile))
	if errors.Is(err, fsutil.ErrLocked) {
		rec, _ := ReadRecord(dir)
		return true, rec, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return false, RecordFile{}, nil
	}
	if err != nil {
		return false, RecordFile{}, errorf("%w", err)
	}
	f.Close()
	rec, _ := ReadRecord(dir)
	return false, rec, nil
}

// holder says who holds the lock of dir, from relay.json.
func holder(dir string) string {
	rec, err := ReadRecord(dir)
	if err != nil || rec.Pid == 0 {
		return "a receiver that did not say which"
	}
	return fmt.Sprintf("the receiver pid %d, since %s", rec.Pid, rec.Since.Local().Format(time.DateTime))
}

// WriteRecord writes relay.json, atomically.
func WriteRecord(dir string, rec RecordFile) error {
	return statedir.Dir(dir).WriteRecord(Record, rec)
}

// ReadRecord reads relay.json.
func ReadRecord(dir string) (RecordFile, error) {
	var rec RecordFile
	err := statedir.Dir(dir).ReadRecord(Record, &rec)
	return rec, err
}

// Alive says whether the process rec names still runs: its pid with the
// start token recorded, so that a reused pid is not taken for it.
func (rec RecordFile) Alive() bool {
	return rec.Pid > 0 && proc.Alive(rec.Pid, rec.StartToken)
}

// ReadOffset reads the last update handled; none is 0. A file that is not
// a number is an error: the receiver must not guess, and apply twice what
// it handled.
func ReadOffset(dir string) (int64, error) {
	data, err := fsutil.ReadCapped(filepath.Join(dir, Offset), 64)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, errorf("%w", err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil || n < 0 {
		return 0, errorf("%s holds no update id (%q): remove it to start from what Telegram holds", filepath.Join(dir, Offset), data)
	}
	return n, nil
}

// WriteOffset records id as the last update handled, atomically.
func WriteOffset(dir string, id int64) error {
	if err := atomicfile.Write(filepath.Join(dir, Offset), []byte(strconv.FormatInt(id, 10)+"\n"), 0o600); err != nil {
		return errorf("%w", err)
	}
	return nil
}

// WriteInflight records an answer being carried.
func WriteInflight(dir string, r InflightRecord) error {
	if !statedir.IsNonce(r.Nonce) {
		return errorf("%q is not a nonce", r.Nonce)
	}
	return statedir.Dir(filepath.Join(dir, Inflight)).WriteRecord(r.Nonce+".json", r)
}

// DropInflight forgets an answer once reported.
func DropInflight(dir, nonce string) {
	if statedir.IsNonce(nonce) {
		os.Remove(filepath.Join(dir, Inflight, nonce+".json"))
	}
}

// Inflights returns the answers being carried, as a restart finds them;
// unreadable ones are skipped (and removed: nothing can report them).
func Inflights(dir string) []InflightRecord {
	entries, _ := os.ReadDir(filepath.Join(dir, Inflight))
	var out []InflightRecord
	for _, e := range entries {
		nonce, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !statedir.IsNonce(nonce) || !e.Type().IsRegular() {
			continue
		}
		var r InflightRecord
		if err := statedir.Dir(filepath.Join(dir, Inflight)).ReadRecord(e.Name(), &r); err != nil || r.Nonce != nonce {
			DropInflight(dir, nonce)
			continue
		}
		out = append(out, r)
	}
	return out
}
