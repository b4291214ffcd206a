// Package ledger is the echo ledger: a file of the text the watcher typed
// into a watched session, and a matcher that removes that text from the
// lines of a captured pane, so the watcher never reads its own words as a
// signal.
//
// Text typed into a session echoes in its pane, hard-wrapped at the pane's
// width and framed by the agent's prompt glyphs and borders, so a line of the
// pane holds a fragment of what was sent with unrelated text around it. The
// Matcher therefore matches by content, in slices of SliceLen runes, and
// removes from a line exactly the spans that slices of recorded text cover.
// A fragment shorter than one slice is left in place: it is too short to
// tell from ordinary text.
//
// The file's first line is Sentinel, a line no pane can hold, so the file is
// never empty and a shell "grep -vFf FILE" over it can never blank a stream.
// Each further line is one record, oldest first. The file is bounded (the
// oldest records retire), written atomically and locked against concurrent
// writers.
//
// The package does not classify panes, decide anything, or type anything:
// it records what was sent and masks it, nothing else.
package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/omega-monitor/omega-monitor/internal/atomicfile"
	"github.com/omega-monitor/omega-monitor/internal/backread"
)

// Sentinel is the first line of every ledger file. It holds a C0 control
// (U+001F) and a noncharacter (U+FFFE): a capture never holds either once its
// escape sequences are stripped, and normalisation turns both into spaces, so
// no record can ever equal it.
const Sentinel = "\x1fomega-monitor echo ledger\ufffe"

// DefaultMax is the number of records a ledger keeps when Options.Max is 0.
const DefaultMax = 2000

// maxFile is the most of a ledger file that Load reads. A file Record wrote
// is far smaller; a larger one is not a ledger. (A variable for tests.)
var maxFile = 64 << 20

// Options bound a ledger file.
type Options struct {
	// Max is the most records the file keeps; when a Record would exceed
	// it the oldest records retire first. Zero means DefaultMax.
	Max int
}

// ErrCorrupt is the error that a *CorruptError matches with errors.Is.
var ErrCorrupt = errors.New("ledger: corrupt file")

// A CorruptError reports a ledger file that is not as Record writes it. The
// records that could be read are still returned beside it, and the next
// Record rewrites the file whole: sentinel restored, unreadable lines gone.
type CorruptError struct {
	Path       string
	NoSentinel bool // line 1 is not Sentinel (or the file is empty)
	Dropped    int  // lines that were unreadable and were dropped
	Rewritten  int  // lines that were not normalised, or were blank
	Truncated  bool // the file is larger than a ledger can be; its end was not read
}

func (e *CorruptError) Error() string {
	var what []string
	if e.NoSentinel {
		what = append(what, "no sentinel on line 1")
	}
	if e.Dropped > 0 {
		what = append(what, fmt.Sprintf("%d unreadable lines dropped", e.Dropped))
	}
	if e.Rewritten > 0 {
		what = append(what, fmt.Sprintf("%d lines not in normal form", e.Rewritten))
	}
	if e.Truncated {
		what = append(what, fmt.Sprintf("larger than %d MiB, the rest not read", maxFile>>20))
	}
	return fmt.Sprintf("ledger: %s is corrupt (%s); the next record repairs it",
		e.Path, strings.Join(what, ", "))
}

// Is reports whether target is ErrCorrupt.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// Record records text as sent, with the default Options.
func Record(path, text string) error {
	return RecordOptions(path, text, Options{})
}

// RecordOptions records text as sent: each line of it, normalised, becomes a
// record at the end of the file (a record already there moves to the end),
// and the oldest records retire beyond opt.Max. It holds an exclusive lock
// on path+".lock" throughout, and replaces the file atomically (a temporary
// file in the same directory, synced, then renamed), so concurrent writers
// lose nothing and a crash leaves the old file or the new one. The directory
// is created with mode 0700 if missing; the file has mode 0600.
//
// A corrupt file is repaired: its readable records are kept. Text with
// nothing to record (blank) still leaves a well-formed file behind.
func RecordOptions(path, text string, opt Options) error {
	max := opt.Max
	switch {
	case max == 0:
		max = DefaultMax
	case max < 0:
		return fmt.Errorf("ledger: Options.Max is %d, must not be negative", max)
	}
	if path == "" {
		return errors.New("ledger: no file named")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	unlock, err := lock(path + ".lock")
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	defer unlock()

	old, err := read(path)
	var corrupt *CorruptError
	if err != nil && !errors.As(err, &corrupt) {
		return err
	}
	add := records(text)
	recs := make([]string, 0, len(old.records)+len(add))
	fresh := make(map[string]bool, len(add))
	for _, r := range add {
		fresh[r] = true
	}
	for _, r := range old.records {
		if !fresh[r] {
			recs = append(recs, r)
		}
	}
	for _, r := range add {
		if fresh[r] {
			recs = append(recs, r)
			fresh[r] = false
		}
	}
	if len(recs) > max {
		recs = recs[len(recs)-max:]
	}
	return write(path, recs)
}

// Load reads the ledger at path and returns a Matcher over its records. A
// missing file is an empty Matcher and no error. A corrupt file gives a
// Matcher over the records that could be read, and a *CorruptError.
func Load(path string) (*Matcher, error) {
	f, err := read(path)
	var corrupt *CorruptError
	if err != nil && !errors.As(err, &corrupt) {
		return nil, err
	}
	return newMatcher(f.records), err
}

// LoadRecent is Load over the newest n records only, reading the file from
// its end: its cost follows n, not the file's history. A pane can still show
// only the echoes of the texts sent since its oldest kept line, and every
// record sent after another puts at least one line of echo below it, so a
// caller that keeps n lines of a pane needs no more than the newest n
// records. A corrupt tail gives what could be read and a *CorruptError.
func LoadRecent(path string, n int) (*Matcher, error) {
	fh, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return newMatcher(nil), nil
	}
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	// n records and the partial line before them: at most n+1 lines of
	// maxRecord bytes, and far less in practice, so read backwards until
	// n+1 newlines are in hand.
	size := fi.Size()
	tail, err := backread.Lines(fh, size, n, maxFile)
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	headed := size > 0 && int64(len(tail)) == size
	if !headed {
		// The tail starts mid-file: keep its last n whole lines, and read
		// them as records.
		end := len(tail)
		for i := 0; i < n && end > 0; i++ {
			end = bytes.LastIndexByte(tail[:end-1], '\n') + 1
		}
		tail = tail[end:]
	}
	f, corrupt := parse(string(tail), headed)
	recs := f.records[max(len(f.records)-n, 0):]
	if corrupt != nil {
		corrupt.Path = path
		return newMatcher(recs), corrupt
	}
	return newMatcher(recs), nil
}

// Texts returns the records of the ledger at path, oldest first, as Load
// reads them: a missing file has none, and a corrupt one gives what could be
// read and a *CorruptError.
func Texts(path string) ([]string, error) {
	f, err := read(path)
	var corrupt *CorruptError
	if err != nil && !errors.As(err, &corrupt) {
		return nil, err
	}
	return f.records, err
}

// A file is a ledger file as read.
type file struct {
	records []string
}

// read reads and parses the ledger at path.
func read(path string) (file, error) {
	fh, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return file{}, nil
	}
	if err != nil {
		return file{}, fmt.Errorf("ledger: %w", err)
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, int64(maxFile)+1))
	if err != nil {
		return file{}, fmt.Errorf("ledger: %w", err)
	}
	f, corrupt := parse(string(data), true)
	if corrupt != nil {
		corrupt.Path = path
		return f, corrupt
	}
	return f, nil
}

// parse reads the records of a ledger file's contents, or of its last
// lines when it is not headed by the file's first line. It reports, as a
// *CorruptError without a Path, anything that Record would not have written.
// The records share the memory of data.
func parse(data string, headed bool) (file, *CorruptError) {
	var f file
	var c CorruptError
	if len(data) > maxFile {
		// Read up to the last whole line.
		data = data[:strings.LastIndexByte(data[:maxFile], '\n')+1]
		c.Truncated = true
	}
	text := data
	if headed {
		first, rest, _ := strings.Cut(data, "\n")
		if first != Sentinel {
			c.NoSentinel = true
			rest = data
		}
		text = rest
	}
	f.records = make([]string, 0, strings.Count(text, "\n")+1)
	for text != "" {
		var line string
		line, text, _ = strings.Cut(text, "\n")
		if len(line) <= maxRecord && isNormal(line) && line != "" {
			f.records = append(f.records, line) // as Record writes it
			continue
		}
		if !readable(line) {
			c.Dropped++
			continue
		}
		recs := records(line)
		if len(recs) != 1 || recs[0] != line {
			c.Rewritten++
		}
		f.records = append(f.records, recs...)
	}
	if len(f.records) == 0 {
		f.records = nil // as a file without records always read
	}
	if c != (CorruptError{}) {
		return f, &c
	}
	return f, nil
}

// readable reports whether a line of a ledger file can be read as text:
// valid UTF-8 without control characters (other than whitespace) or
// noncharacters, none of which a pane or a record holds.
func readable(line string) bool {
	if !utf8.ValidString(line) {
		return false
	}
	for _, r := range line {
		switch {
		case r == '\t' || r == '\r' || r == '\v' || r == '\f':
		case r < ' ' || r == 0x7f || r >= 0x80 && r <= 0x9f && r != 0x85:
			return false
		case r == 0xfffe || r == 0xffff:
			return false
		}
	}
	return true
}

// write replaces the ledger at path with Sentinel and recs, atomically.
func write(path string, recs []string) (err error) {
	var b strings.Builder
	n := len(Sentinel) + 1
	for _, r := range recs {
		n += len(r) + 1
	}
	b.Grow(n)
	b.WriteString(Sentinel)
	b.WriteByte('\n')
	for _, r := range recs {
		b.WriteString(r)
		b.WriteByte('\n')
	}

	if err := atomicfile.Write(path, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	return nil
}
