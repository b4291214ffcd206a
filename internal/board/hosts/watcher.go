package hosts

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/fsutil"
	"github.com/omega-monitor/omega-monitor/internal/printable"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/tick"
)

// What a board reads of one watcher beyond the census: its history, its
// last verdict (state.json), or its log's last lines. This machine's are
// read from its state home (Local); another host's through that host's
// own omega-monitor read-watcher, one ssh call (Board.Watcher), whose
// answer is checked and cleaned as a board's is.

// The kinds of a Query.
const (
	History = "history"
	Explain = "explain"
	Logs    = "logs"
)

// Bounds of a Query, and of what a host's answer may hold.
const (
	MaxDays  = 30
	MaxLines = 2000
	// maxEvents bounds the history events of one answer; a sweep keeps
	// 10,000 lines of a watcher's history.
	maxEvents = 20000
	// historyRoom is what an honest host sends of a history at most: the
	// newest events that fit, so that its answer stays well within
	// MaxAnswer.
	historyRoom = 2 << 20
)

// A Query asks for one kind of a watcher's records: its history over the
// last Days, its state (Explain), or its log's last Lines.
type Query struct {
	Kind  string
	Days  int
	Lines int
}

// check says why q is not a query a board answers, or nil.
func (q Query) check() error {
	switch q.Kind {
	case History:
		if q.Days < 1 || q.Days > MaxDays {
			return fmt.Errorf("days must be 1 to %d, got %d", MaxDays, q.Days)
		}
	case Explain:
	case Logs:
		if q.Lines < 1 || q.Lines > MaxLines {
			return fmt.Errorf("lines must be 1 to %d, got %d", MaxLines, q.Lines)
		}
	default:
		return fmt.Errorf("no such record %q: history, explain or logs", q.Kind)
	}
	return nil
}

// args are the words of read-watcher that ask q of watcher, quoted for the
// host's shell.
func (q Query) args(watcher string) string {
	words := []string{"read-watcher"}
	switch q.Kind {
	case History:
		words = append(words, "--history", strconv.Itoa(q.Days))
	case Explain:
		words = append(words, "--explain")
	case Logs:
		words = append(words, "--logs", strconv.Itoa(q.Lines))
	}
	return strings.Join(words, " ") + " -- " + coord.ShellQuote(watcher)
}

// Records are what a watcher's directory answered a Query: its name, and
// the one kind asked for. It is also the JSON of read-watcher, the answer
// another board reads.
type Records struct {
	// Watcher is the watcher's name, its state directory's; Host the ssh
	// alias of its machine, empty for this one's.
	Watcher string `json:"watcher"`
	Host    string `json:"-"`
	// Since is the oldest time a history was read from.
	Since time.Time `json:"since,omitzero"`
	// History holds the history lines since Since, oldest first, each as
	// written; LeftOut counts the oldest left out to keep the answer
	// within its bound.
	History []map[string]any `json:"history,omitempty"`
	LeftOut int              `json:"left_out,omitempty"`
	// State is the watcher's last verdict, as the tick wrote it.
	State *tick.State `json:"state,omitempty"`
	// Log holds the log's last lines, oldest first.
	Log []string `json:"log,omitempty"`
}

// Name is the watcher's name as the board names it: HOST/NAME for another
// host's.
func (r *Records) Name() string {
	if r.Host == "" {
		return r.Watcher
	}
	return r.Host + "/" + r.Watcher
}

// FindWatcher returns the state directory under home of the watcher arg
// names: by its name, or by its target. Nothing outside home can be
// named.
func FindWatcher(home, arg string) (string, error) {
	arg = strings.TrimSpace(arg)
	if arg == "" {
		return "", errors.New("watcher is required: a watcher's name or its target")
	}
	if !strings.ContainsAny(arg, `/\`) && arg != "." && arg != ".." {
		if d := filepath.Join(home, arg); isDir(d) {
			return d, nil
		}
	}
	if t, err := coord.ParseTarget(arg); err == nil {
		if d := filepath.Join(home, coord.WatcherName(t)); isDir(d) {
			return d, nil
		}
	}
	return "", fmt.Errorf("no watcher %q under %s (the status tool lists them)", arg, home)
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// Local reads what q asks of the watcher arg names (FindWatcher) under the
// state home home, as of now.
func Local(home, arg string, q Query, now time.Time) (*Records, error) {
	if err := q.check(); err != nil {
		return nil, err
	}
	dir, err := FindWatcher(home, arg)
	if err != nil {
		return nil, err
	}
	r := &Records{Watcher: filepath.Base(dir)}
	switch q.Kind {
	case History:
		r.Since = now.Add(-time.Duration(q.Days) * 24 * time.Hour)
		r.History, err = readHistory(filepath.Join(dir, statedir.History), r.Since)
	case Explain:
		r.State, err = readState(filepath.Join(dir, statedir.State))
	case Logs:
		r.Log, err = readLog(statedir.Dir(dir), q.Lines)
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

// readHistory reads the history lines at path since since; a torn or
// foreign line is skipped, and the rest still reads.
func readHistory(path string, since time.Time) ([]map[string]any, error) {
	h, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("hosts: history: %w", err)
	}
	defer h.Close()
	var lines []map[string]any
	sc := bufio.NewScanner(h)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		var ev map[string]any
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		stamp, _ := ev["ts"].(string)
		if ts, err := time.Parse(time.RFC3339, stamp); err != nil || ts.Before(since) {
			continue
		}
		lines = append(lines, ev)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("hosts: reading history: %w", err)
	}
	return lines, nil
}

func readState(path string) (*tick.State, error) {
	b, err := fsutil.ReadCapped(path, statedir.MaxRecord)
	if err != nil {
		return nil, fmt.Errorf("no verdict yet: %w", err)
	}
	var st tick.State
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("state.json is corrupt: %w", err)
	}
	return &st, nil
}

func readLog(d statedir.Dir, n int) ([]string, error) {
	var out bytes.Buffer
	if _, err := d.TailLog(n, &out); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("hosts: reading the log: %w", err)
	}
	if out.Len() == 0 {
		return nil, nil
	}
	return strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n"), nil
}

// Watcher reads what q asks of the watcher ref names: HOST/WATCHER (or
// HOST/TARGET) for a watcher of another host, as the board names it, else
// this machine's (Local). Only the board's own hosts are asked, one ssh
// call under the reader's clock and bound; whatever the host answers is
// checked and cleaned (DecodeRecords), and any fault of the host's is one
// error in one line, saying which host.
func (b *Board) Watcher(ctx context.Context, ref string, q Query, now time.Time) (*Records, error) {
	alias, name, remote := strings.Cut(strings.TrimSpace(ref), "/")
	if !remote {
		return Local(b.Root, ref, q, now)
	}
	if err := q.check(); err != nil {
		return nil, err
	}
	if !slices.Contains(b.Hosts, alias) {
		return nil, fmt.Errorf("no watcher %q: HOST/WATCHER names another host's, and %q is not a host of this board (its hosts file or --hosts)",
			printable.Cut(printable.String(ref), 100), printable.Cut(printable.String(alias), 64))
	}
	if _, err := coord.ParseTarget(name); err != nil {
		return nil, fmt.Errorf("no watcher %q on %s: give its name (monitor-…) or its target", printable.Cut(printable.String(name), 64), alias)
	}
	rep := b.Reader.call(ctx, alias, remoteRun(q.args(name)), "its omega-monitor read-watcher")
	if rep.why != "" {
		return nil, fmt.Errorf("host %s: %s", alias, rep.why)
	}
	r, err := DecodeRecords(rep.out, q)
	if err != nil {
		return nil, fmt.Errorf("host %s: %v", alias, err)
	}
	r.Host = alias
	return r, nil
}

// DecodeRecords reads a host's answer to q (read-watcher's JSON): one JSON
// object, nothing after it, every string cleaned and cut as Decode cleans
// a board, holding the kind asked for and no more than asked.
func DecodeRecords(data []byte, q Query) (*Records, error) {
	obj, err := decodeObject(data, "its answer is not a watcher's records")
	if err != nil {
		return nil, err
	}
	if hs, ok := obj["history"].([]any); ok && len(hs) > maxEvents {
		return nil, fmt.Errorf("its answer holds %d history events, more than %d: not read", len(hs), maxEvents)
	}
	clean, err := json.Marshal(sanitize(obj))
	if err != nil {
		return nil, fmt.Errorf("its answer is not a watcher's records: %v", err)
	}
	var r Records
	if err := json.Unmarshal(clean, &r); err != nil {
		return nil, fmt.Errorf("its answer is not a watcher's records: %v", err)
	}
	switch {
	case !coord.IsWatcher(r.Watcher) || coord.CheckSession(r.Watcher) != nil:
		return nil, fmt.Errorf("its answer names the watcher %q", printable.Cut(r.Watcher, 40))
	case q.Kind == Explain && r.State == nil:
		return nil, errors.New("its answer holds no verdict")
	case q.Kind != History && (r.History != nil || r.LeftOut != 0),
		q.Kind != Explain && r.State != nil,
		q.Kind != Logs && r.Log != nil:
		return nil, fmt.Errorf("its answer holds records not asked for (%s asked)", q.Kind)
	case q.Kind == Logs && len(r.Log) > q.Lines:
		return nil, fmt.Errorf("its answer holds %d log lines, %d asked", len(r.Log), q.Lines)
	case r.LeftOut < 0:
		return nil, errors.New("its answer is not a watcher's records: a negative count")
	}
	return &r, nil
}

// decodeObject reads data as one JSON object and nothing after it, its
// numbers kept as written; notWhat begins the error that says it is not.
func decodeObject(data []byte, notWhat string) (map[string]any, error) {
	if len(data) > MaxAnswer {
		return nil, fmt.Errorf("its answer is larger than %d MiB: not read", MaxAnswer>>20)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("%s: %v", notWhat, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s: more follows its object", notWhat)
	}
	obj, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: not a JSON object", notWhat)
	}
	return obj, nil
}

// newestWithin keeps the newest history lines whose JSON fits within room
// bytes, and says how many older ones it left out.
func newestWithin(lines []map[string]any, room int) ([]map[string]any, int) {
	used := 0
	for i := len(lines) - 1; i >= 0; i-- {
		b, _ := json.Marshal(lines[i])
		if used += len(b) + 1; used > room {
			return lines[i+1:], i + 1
		}
	}
	return lines, 0
}
