package statedir

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"syscall"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/atomicfile"
	"github.com/omega-monitor/omega-monitor/internal/statedir/event"
)

// lockHistory takes the exclusive lock that every writer of the history
// holds: appends and the sweep. The lock is a file of its own, because the
// sweep replaces the history by rename, and a lock on the old inode would
// not exclude a writer that opened the new one.
func (d Dir) lockHistory() (unlock func(), err error) {
	f, err := d.Lock(HistLock)
	if err != nil {
		return nil, fmt.Errorf("history lock: %w", err)
	}
	return func() { f.Close() }, nil
}

// AppendHistory appends the events of one poll to the history in one
// write, so that a failure loses at most this poll's lines and never an
// earlier one. Each line is a JSON object: ts, target, event, state, then
// the event's fields (which never replace those four).
func (d Dir) AppendHistory(now time.Time, target string, events []event.Event) error {
	if len(events) == 0 {
		return nil
	}
	lines, err := HistoryLines(now, target, events)
	if err != nil {
		return err
	}
	h, err := d.HoldHistory()
	if err != nil {
		return fmt.Errorf("history not written: %v", err)
	}
	defer h.Release()
	_, err = h.Append(lines)
	return err
}

// HistoryLines are the lines AppendHistory writes for events.
func HistoryLines(now time.Time, target string, events []event.Event) ([]byte, error) {
	var b bytes.Buffer
	for _, e := range events {
		obj := map[string]any{"ts": now.UTC().Format(time.RFC3339), "target": target, "event": e.Name, "state": e.State}
		keys := make([]string, 0, len(e.Fields))
		for k := range e.Fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if _, taken := obj[k]; !taken {
				obj[k] = e.Fields[k]
			}
		}
		line, err := json.Marshal(obj)
		if err != nil {
			return nil, fmt.Errorf("history not written: %v", err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes(), nil
}

// A HeldHistory is the history held for an append: its lock taken, the
// file open (created when there was none), and where it ended when it was
// held. Every writer of the history holds the lock, so that the lines
// appended while it is held go at Size: a writer can count them as it
// writes them, and never read them back.
type HeldHistory struct {
	d      Dir
	unlock func()
	f      *os.File
	Ino    uint64
	Size   int64
}

// HoldHistory takes the history's lock, opens the history for appending
// and finds where it ends. Release it when done.
func (d Dir) HoldHistory() (*HeldHistory, error) {
	unlock, err := d.lockHistory()
	if err != nil {
		return nil, err
	}
	f, err := openAppend(d.Path(History))
	if err != nil {
		unlock()
		return nil, err
	}
	h := &HeldHistory{d: d, unlock: unlock, f: f}
	h.Ino, h.Size = fileEnd(f)
	return h, nil
}

// fileEnd is the identity of the open file f and its size (0 and 0 when it
// cannot be found).
func fileEnd(f *os.File) (ino uint64, size int64) {
	if fi, err := f.Stat(); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			return uint64(st.Ino), fi.Size()
		}
	}
	return 0, 0
}

// Release lets the history's lock go.
func (h *HeldHistory) Release() {
	if h.f != nil {
		h.f.Close()
	}
	h.unlock()
}

// Appended is what one append to the history or the log wrote: the file's
// identity and its size before (where the lines went), their bytes, and
// whether the history was swept after it (then the file is another,
// shorter one).
type Appended struct {
	Ino    uint64
	Offset int64
	Bytes  int
	Swept  bool
}

// Append appends lines (whole lines, each ending in a newline) to the
// held history in one write, and sweeps it past MaxHistory. It is called
// once.
func (h *HeldHistory) Append(lines []byte) (Appended, error) {
	a := Appended{Ino: h.Ino, Offset: h.Size}
	f := h.f
	h.f = nil
	if fi, err := f.Stat(); err == nil {
		a.Offset = fi.Size()
	}
	n, err := f.Write(lines)
	a.Bytes = n
	if err != nil {
		f.Close()
		return a, fmt.Errorf("history not written: %v", err)
	}
	if err := f.Close(); err != nil {
		return a, fmt.Errorf("history not written: %v", err)
	}
	// A long run, or a flood of long lines, is swept as a start would be,
	// not left to grow until the next start.
	if a.Offset+int64(n) > MaxHistory {
		a.Swept = true
		if _, err := h.d.sweepHistory(HistoryKeep); err != nil {
			return a, fmt.Errorf("history written, not swept: %v", err)
		}
	}
	return a, nil
}

// SweepHistory keeps the last keep complete lines of the history, by
// writing them to a new file and renaming it over the old one, never by
// rewriting in place: a crash leaves the old history or the new one whole.
// A last line without its newline is a write that never finished and is
// dropped. It returns how many lines it dropped.
func (d Dir) SweepHistory(keep int) (int, error) {
	unlock, err := d.lockHistory()
	if err != nil {
		return 0, err
	}
	defer unlock()
	return d.sweepHistory(keep)
}

// sweepHistory is SweepHistory with the history's lock held. It keeps at
// most MaxHistory/2 bytes too, so that a sweep always leaves room: long
// lines cannot make every append sweep again.
func (d Dir) sweepHistory(keep int) (int, error) {
	path := d.Path(History)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return 0, err
	}
	torn := 0
	if n := len(data); n > 0 && data[n-1] != '\n' {
		torn = 1
		data = data[:bytes.LastIndexByte(data, '\n')+1]
	}
	lines := bytes.Count(data, []byte{'\n'})
	if lines <= keep && len(data) <= MaxHistory/2 && torn == 0 {
		return 0, nil
	}
	start, dropped := 0, 0
	for lines-dropped > keep || len(data)-start > MaxHistory/2 {
		start += bytes.IndexByte(data[start:], '\n') + 1
		dropped++
	}
	if err := atomicfile.Write(path, data[start:], 0o600); err != nil {
		return 0, fmt.Errorf("history sweep: %w", err)
	}
	return dropped + torn, nil
}
