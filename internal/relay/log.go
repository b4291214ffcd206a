package relay

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/fsutil"
)

// The receiver's log: every line it says goes to its pane and to LogFile
// in Dir, so that why a tap was refused outlives the pane. The pane is
// gone with its session, and a receiver started again draws a new one.
const (
	LogFile = "relay.log"
	// MaxLog is the size past which LogFile moves to LogFile+".1",
	// replacing the one before: the log is at most two files of about
	// this size. A receiver says a few lines an update; a megabyte is
	// weeks of taps.
	MaxLog = 1 << 20
	// LogEvery is how often a follower of the log looks for new lines.
	LogEvery = 500 * time.Millisecond
)

// A Log appends the receiver's lines to LogFile in its directory. Its
// methods may be called from several goroutines.
type Log struct {
	mu   sync.Mutex
	path string
	max  int64
}

// NewLog returns the log of the receiver's directory dir (Home); nothing
// is opened until a line is appended.
func NewLog(dir string) *Log {
	return &Log{path: filepath.Join(dir, LogFile), max: MaxLog}
}

// Append appends line and a newline. The file is opened for each line,
// never through a symbolic link, and only a regular file of the user's
// with one name is written (its mode made 0600); a line that would take
// it past MaxLog moves it to LogFile.1 first. A log that cannot move is
// not written: it never grows past its bound.
func (l *Log) Append(line string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	f, size, err := openLog(l.path)
	if err != nil {
		return err
	}
	if size > 0 && size+int64(len(line))+1 > l.max {
		f.Close()
		if err := os.Rename(l.path, l.path+".1"); err != nil {
			return errorf("%s is full and cannot move to %s.1: %w", l.path, LogFile, err)
		}
		if f, _, err = openLog(l.path); err != nil {
			return err
		}
	}
	_, err = f.WriteString(line + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return errorf("%w", err)
	}
	return nil
}

// openLog opens the log at path for appending, creating it 0600, and
// returns its size. What another hand could have put there is refused: a
// symbolic link (an append would land in the file it names), a FIFO (the
// open does not wait for a reader), a device, a directory, another user's
// file, and a file with a second name elsewhere.
func openLog(path string) (*os.File, int64, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
	if errors.Is(err, syscall.ELOOP) {
		return nil, 0, errorf("%s is a symbolic link; refusing it", path)
	}
	if err != nil {
		return nil, 0, errorf("%w", err)
	}
	fi, err := checkLog(f, path)
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if fi.Mode().Perm() != 0o600 {
		// The user's own file, opened to others by hand: it names who
		// answered what, so it is made private again.
		if err := f.Chmod(0o600); err != nil {
			f.Close()
			return nil, 0, errorf("%w", err)
		}
	}
	return f, fi.Size(), nil
}

// checkLog says what is wrong with the open file f as the receiver's log
// at path, or returns what it is.
func checkLog(f *os.File, path string) (os.FileInfo, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, errorf("%w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, errorf("%s is not a regular file; refusing it", path)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		switch {
		case int(st.Uid) != os.Geteuid():
			return nil, errorf("%s belongs to uid %d, not to you (uid %d); refusing it", path, st.Uid, os.Geteuid())
		case st.Nlink > 1:
			return nil, errorf("%s has %d names (a hard link); refusing it", path, st.Nlink)
		}
	}
	return fi, nil
}

// openLogRead opens the log at path for reading, with the checks of
// openLog; a log that is not there is an error that is fs.ErrNotExist.
func openLogRead(path string) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, nil, errorf("%s is a symbolic link; refusing it", path)
	}
	if err != nil {
		return nil, nil, err
	}
	fi, err := checkLog(f, path)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// A LogPos is where a follower of the log goes on: the file it read last
// (nil for none yet) and the offset after its last whole line.
type LogPos struct {
	file   os.FileInfo
	offset int64
}

// TailLog writes the last n whole lines (all for 0) of the receiver's log
// in its directory dir to w, those of LogFile.1 before those of LogFile,
// and returns where a follower goes on. No log at all is an error that is
// fs.ErrNotExist.
func TailLog(dir string, n int, w io.Writer) (LogPos, error) {
	path := filepath.Join(dir, LogFile)
	var pos LogPos
	var cur []byte
	lines := 0
	f, fi, err := openLogRead(path)
	switch {
	case err == nil:
		var b countWriter
		pos.offset, err = fsutil.Tail(f, n, &b)
		f.Close()
		if err != nil {
			return LogPos{}, errorf("%w", err)
		}
		pos.file, cur, lines = fi, b.data, b.lines
	case !errors.Is(err, fs.ErrNotExist):
		return LogPos{}, err
	}
	if n == 0 || lines < n {
		old, _, oerr := openLogRead(path + ".1")
		switch {
		case oerr == nil:
			_, oerr = fsutil.Tail(old, max(n-lines, 0), w)
			old.Close()
			if oerr != nil {
				return LogPos{}, errorf("%w", oerr)
			}
		case !errors.Is(oerr, fs.ErrNotExist):
			return LogPos{}, oerr
		case err != nil: // neither file
			return LogPos{}, err
		}
	}
	if _, err := w.Write(cur); err != nil {
		return LogPos{}, err
	}
	return pos, nil
}

// countWriter keeps what is written and counts its lines.
type countWriter struct {
	data  []byte
	lines int
}

func (c *countWriter) Write(p []byte) (int, error) {
	c.data = append(c.data, p...)
	for _, b := range p {
		if b == '\n' {
			c.lines++
		}
	}
	return len(p), nil
}

// FollowLog writes the whole lines appended to the receiver's log in dir
// after pos to w, looking every interval, until ctx ends, which is no
// error. A log that moved to LogFile.1 is read to its end there, then the
// new one from its start; one that shrank is read again from its start;
// one not written yet is waited for. When said is not nil, it is told at
// the first look whether the receiver runs, and again each time that
// changes: a follower of a stopped receiver is not left waiting in
// silence.
func FollowLog(ctx context.Context, dir string, pos LogPos, w io.Writer, interval time.Duration, said func(running bool)) error {
	path := filepath.Join(dir, LogFile)
	known, was := false, false
	for {
		if said != nil {
			if now := recordAlive(dir); !known || now != was {
				known, was = true, now
				said(now)
			}
		}
		var err error
		if pos, err = followOnce(path, pos, w); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(interval):
		}
	}
}

// followOnce copies what was appended to the log at path since pos.
func followOnce(path string, pos LogPos, w io.Writer) (LogPos, error) {
	f, fi, err := openLogRead(path)
	if errors.Is(err, fs.ErrNotExist) {
		return pos, nil
	}
	if err != nil {
		return pos, err
	}
	defer f.Close()
	if pos.file != nil && !os.SameFile(pos.file, fi) {
		// Moved to LogFile.1: its last lines, written after the last
		// look, are there.
		if old, ofi, err := openLogRead(path + ".1"); err == nil {
			if os.SameFile(pos.file, ofi) && ofi.Size() > pos.offset {
				_, err = copyLines(old, pos.offset, w)
			}
			old.Close()
			if err != nil {
				return pos, err
			}
		}
		pos.offset = 0
	}
	if fi.Size() < pos.offset {
		pos.offset = 0
	}
	pos.file = fi
	if fi.Size() > pos.offset {
		if pos.offset, err = copyLines(f, pos.offset, w); err != nil {
			return pos, err
		}
	}
	return pos, nil
}

// copyLines copies the whole lines of f after offset to w and returns the
// offset after the last one: a half-written line waits for its end.
func copyLines(f *os.File, offset int64, w io.Writer) (int64, error) {
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return offset, errorf("%w", err)
	}
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return offset, nil
		}
		if _, err := w.Write(line); err != nil {
			return offset, err
		}
		offset += int64(len(line))
	}
}

// recordAlive says whether the receiver relay.json in dir names runs. It
// takes no lock: a follower looking twice a second must never be the
// holder a receiver starting finds.
func recordAlive(dir string) bool {
	rec, err := ReadRecord(dir)
	return err == nil && rec.Alive()
}

// LogsUsing is what Logs works with.
type LogsUsing struct {
	// N is how many of the last lines to print; 0 all.
	N int
	// Follow says to go on printing lines as they come, until ctx ends.
	Follow bool
	// Every is how often a follower looks; LogEvery when zero.
	Every time.Duration
	// Out gets the log's lines; Note, when not nil, what is said about
	// them (no log yet, whether the receiver runs), one line each.
	Out  io.Writer
	Note func(string)
}

// Logs prints the receiver's log of the state home home, as `omega-monitor
// relay logs` does: the last lines, then, when following, those that come,
// until ctx ends. No log yet is said, and is no error. It creates nothing.
func Logs(ctx context.Context, home string, u LogsUsing) error {
	dir := filepath.Join(home, Dir)
	note := u.Note
	if note == nil {
		note = func(string) {}
	}
	every := u.Every
	if every <= 0 {
		every = LogEvery
	}
	pos, err := TailLog(dir, u.N, u.Out)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !u.Follow:
		note(fmt.Sprintf("the answer receiver has no log yet (%s is written once it runs: omega-monitor relay start)", filepath.Join(dir, LogFile)))
		return nil
	case errors.Is(err, fs.ErrNotExist):
		note(fmt.Sprintf("the answer receiver has no log yet; waiting for %s (Ctrl-C ends)", filepath.Join(dir, LogFile)))
	case err != nil:
		return err
	}
	if !u.Follow {
		return nil
	}
	return FollowLog(ctx, dir, pos, u.Out, every, func(running bool) {
		if running {
			note("the answer receiver runs; following its log (Ctrl-C ends)")
			return
		}
		note("the answer receiver does not run; its next lines come when it starts again (Ctrl-C ends)")
	})
}
