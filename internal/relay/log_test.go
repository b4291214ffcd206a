package relay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/poll"
)

// lines are n numbered lines from first, as Append is given them.
func lines(first, n int) []string {
	var out []string
	for i := first; i < first+n; i++ {
		out = append(out, fmt.Sprintf("line %03d", i))
	}
	return out
}

func appendAll(t *testing.T, l *Log, ls []string) {
	t.Helper()
	for _, s := range ls {
		if err := l.Append(s); err != nil {
			t.Fatal(err)
		}
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

// TestLogRotates: past its cap the log moves to relay.log.1, replacing the
// one before: never more than two files, neither past the cap, the newest
// lines kept in order, each file 0600.
func TestLogRotates(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := NewLog(dir)
	l.max = 90 // ten lines of 8 bytes and their newlines
	appendAll(t, l, lines(0, 25))
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{LogFile, LogFile + ".1"}, names); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(lines(10, 10), readLines(t, filepath.Join(dir, LogFile+".1"))); diff != "" {
		t.Errorf("relay.log.1 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(lines(20, 5), readLines(t, filepath.Join(dir, LogFile))); diff != "" {
		t.Errorf("relay.log (-want +got):\n%s", diff)
	}
	for _, name := range names {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.Size() > l.max || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, %v", name, fi.Mode(), err)
		}
	}
}

// TestLogRefusesWhatIsNotItsOwn: a log that is a link, a FIFO, a
// directory, a second name of another file, or another user's, is not
// written, and what it points at is untouched; each append says why
// (without waiting on the FIFO). A relay.log.1 that is a link is replaced
// by the rotation, its target untouched; a log opened to others is made
// 0600 again.
func TestLogRefusesWhatIsNotItsOwn(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		plant func(t *testing.T, path, elsewhere string)
		want  string
	}{
		{"a symbolic link", func(t *testing.T, path, elsewhere string) { os.Symlink(elsewhere, path) }, "is a symbolic link; refusing it"},
		{"a dangling symbolic link", func(t *testing.T, path, elsewhere string) { os.Symlink(elsewhere+".none", path) }, "is a symbolic link; refusing it"},
		{"a FIFO", func(t *testing.T, path, elsewhere string) {
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Skip(err)
			}
		}, "no such device or address"},
		{"a directory", func(t *testing.T, path, elsewhere string) { os.Mkdir(path, 0o700) }, "is a directory"},
		{"a hard link", func(t *testing.T, path, elsewhere string) { os.Link(elsewhere, path) }, "has 2 names (a hard link); refusing it"},
		{"another user's", func(t *testing.T, path, elsewhere string) {
			if os.Geteuid() != 0 {
				t.Skip("only root can give a file away")
			}
			os.WriteFile(path, []byte("theirs\n"), 0o600)
			os.Chown(path, 65534, 65534)
		}, "belongs to uid 65534, not to you"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			elsewhere := filepath.Join(t.TempDir(), "precious")
			os.WriteFile(elsewhere, []byte("precious\n"), 0o600)
			path := filepath.Join(dir, LogFile)
			tt.plant(t, path, elsewhere)
			l := NewLog(dir)
			for range 2 {
				if err := l.Append("a line"); err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("Append = %v, want an error saying %q", err, tt.want)
				}
			}
			if got, _ := os.ReadFile(elsewhere); string(got) != "precious\n" {
				t.Errorf("the file elsewhere now holds %q", got)
			}
			if _, err := TailLog(dir, 10, new(bytes.Buffer)); err == nil || errors.Is(err, fs.ErrNotExist) {
				t.Errorf("TailLog of %s = %v, want it refused", tt.name, err)
			}
		})
	}
	t.Run("a link as relay.log.1", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		elsewhere := filepath.Join(t.TempDir(), "precious")
		os.WriteFile(elsewhere, []byte("precious\n"), 0o600)
		os.Symlink(elsewhere, filepath.Join(dir, LogFile+".1"))
		l := NewLog(dir)
		l.max = 20
		appendAll(t, l, lines(0, 3))
		if got, _ := os.ReadFile(elsewhere); string(got) != "precious\n" {
			t.Errorf("the file elsewhere now holds %q", got)
		}
		if fi, err := os.Lstat(filepath.Join(dir, LogFile+".1")); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("relay.log.1 is %v (%v), want the log rotated in place of the link", fi.Mode(), err)
		}
	})
	t.Run("opened to others", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		path := filepath.Join(dir, LogFile)
		os.WriteFile(path, []byte("before\n"), 0o644)
		os.Chmod(path, 0o644)
		if err := NewLog(dir).Append("after"); err != nil {
			t.Fatal(err)
		}
		if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
			t.Errorf("mode %v, want 0600", fi.Mode().Perm())
		}
		if diff := cmp.Diff([]string{"before", "after"}, readLines(t, path)); diff != "" {
			t.Errorf("relay.log (-want +got):\n%s", diff)
		}
	})
	t.Run("a relay.log.1 that cannot be replaced", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, LogFile+".1", "x"), 0o700)
		l := NewLog(dir)
		l.max = 20
		appendAll(t, l, lines(0, 2))
		if err := l.Append("line 002"); err == nil || !strings.Contains(err.Error(), "is full and cannot move to relay.log.1") {
			t.Errorf("Append = %v, want it refused", err)
		}
		if fi, _ := os.Stat(filepath.Join(dir, LogFile)); fi.Size() > 20 {
			t.Errorf("relay.log grew to %d bytes past its cap", fi.Size())
		}
	})
}

// TestTailLog: the last lines across relay.log.1 and relay.log, oldest
// first; all for 0; a half-written last line left for the follower; no log
// an error that is fs.ErrNotExist.
func TestTailLog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := TailLog(dir, 5, new(bytes.Buffer)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no log: %v, want fs.ErrNotExist", err)
	}
	l := NewLog(dir)
	l.max = 90
	appendAll(t, l, lines(0, 14)) // 10 in relay.log.1, 4 in relay.log
	for _, tt := range []struct {
		n    int
		want []string
	}{
		{2, lines(12, 2)},
		{4, lines(10, 4)},
		{7, lines(7, 7)},
		{0, lines(0, 14)},
		{50, lines(0, 14)},
	} {
		var b bytes.Buffer
		if _, err := TailLog(dir, tt.n, &b); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(strings.Join(tt.want, "\n")+"\n", b.String()); diff != "" {
			t.Errorf("-n %d (-want +got):\n%s", tt.n, diff)
		}
	}
	// Only relay.log.1: its lines.
	os.Remove(filepath.Join(dir, LogFile))
	var b bytes.Buffer
	if _, err := TailLog(dir, 3, &b); err != nil || b.String() != strings.Join(lines(7, 3), "\n")+"\n" {
		t.Errorf("only relay.log.1: %q, %v", b.String(), err)
	}
	// A half-written line is not printed.
	os.WriteFile(filepath.Join(dir, LogFile), []byte("whole\nhalf"), 0o600)
	b.Reset()
	pos, err := TailLog(dir, 1, &b)
	if err != nil || b.String() != "whole\n" || pos.offset != int64(len("whole\n")) {
		t.Errorf("a half-written line: %q, offset %d, %v", b.String(), pos.offset, err)
	}
}

// syncBuffer is a bytes.Buffer for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestFollowLog: the lines appended after the tail come once each, in
// order, across rotations (the lines the old file got after the last look
// included), a half-written line once it ends; a log that is not there yet
// is waited for; the follow ends with its context, with no error, and says
// once that the receiver does not run.
func TestFollowLog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := NewLog(dir)
	l.max = 90
	pos, err := TailLog(dir, 0, new(bytes.Buffer))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("no log yet: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	var said []bool
	done := make(chan error, 1)
	go func() {
		done <- FollowLog(ctx, dir, pos, &out, 5*time.Millisecond, func(running bool) { said = append(said, running) })
	}()
	want := func(ls []string) {
		t.Helper()
		text := strings.Join(ls, "\n") + "\n"
		poll.WaitOn(t, func(poll.LogT) poll.Result {
			if out.String() == text {
				return poll.Success()
			}
			return poll.Continue("followed %q, want %q", out.String(), text)
		}, poll.WithDelay(time.Millisecond))
	}
	appendAll(t, l, lines(0, 3))
	want(lines(0, 3))
	// Many lines at once: rotations between two looks lose none of the
	// old file's last lines.
	appendAll(t, l, lines(3, 12))
	want(lines(0, 15))
	f, _ := os.OpenFile(filepath.Join(dir, LogFile), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString("half")
	time.Sleep(30 * time.Millisecond)
	want(lines(0, 15))
	f.WriteString(" ended\n")
	f.Close()
	want(append(lines(0, 15), "half ended"))
	cancel()
	if err := <-done; err != nil {
		t.Errorf("FollowLog = %v, want nil at its context's end", err)
	}
	if diff := cmp.Diff([]bool{false}, said); diff != "" {
		t.Errorf("said (-want +got):\n%s", diff)
	}
}

// TestLogs: Logs creates nothing in a state home with no receiver, and
// says there is no log yet; with one it prints the last lines.
func TestLogs(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	var out bytes.Buffer
	var notes []string
	note := func(s string) { notes = append(notes, s) }
	if err := Logs(context.Background(), home, LogsUsing{N: 50, Out: &out, Note: note}); err != nil {
		t.Fatal(err)
	}
	if len(notes) != 1 || !strings.HasPrefix(notes[0], "the answer receiver has no log yet") || out.Len() != 0 {
		t.Errorf("no log: said %q, printed %q", notes, out.String())
	}
	if entries, _ := os.ReadDir(home); len(entries) != 0 {
		t.Errorf("Logs created %v", entries)
	}
	os.MkdirAll(filepath.Join(home, Dir), 0o700)
	appendAll(t, NewLog(filepath.Join(home, Dir)), lines(0, 60))
	out.Reset()
	notes = nil
	if err := Logs(context.Background(), home, LogsUsing{N: 50, Out: &out, Note: note}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(strings.Join(lines(10, 50), "\n")+"\n", out.String()); diff != "" || len(notes) != 0 {
		t.Errorf("the last 50 lines (-want +got):\n%s\nsaid %q", diff, notes)
	}
}
