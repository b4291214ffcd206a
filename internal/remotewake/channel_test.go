package remotewake

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// privateHome is a state home of the test's, 0700 as the watcher makes it.
func privateHome(t *testing.T) string {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	return home
}

// served is a listener serving in the background: its greeting read, its
// wake lines on lines, its standard input held open until stop.
type served struct {
	l     *Listener
	lines chan string
	stdin *io.PipeWriter
	done  chan error
	once  sync.Once
}

func serve(t *testing.T, home, socket string) *served {
	t.Helper()
	l, err := Open(home, socket)
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &served{l: l, lines: make(chan string, 100), stdin: inW, done: make(chan error, 1)}
	go func() {
		s.done <- Serve(l, inR, outW)
		outW.Close()
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
	}()
	if got := s.next(t); got != Hello {
		t.Fatalf("first line %q, want the greeting", got)
	}
	t.Cleanup(func() { s.stop(t) })
	return s
}

func (s *served) next(t *testing.T) string {
	t.Helper()
	select {
	case l := <-s.lines:
		return l
	case <-time.After(10 * time.Second):
		t.Fatal("the listener said nothing within 10s")
		return ""
	}
}

// quiet says whether the listener says nothing for a moment.
func (s *served) quiet() (string, bool) {
	select {
	case l := <-s.lines:
		return l, false
	case <-time.After(300 * time.Millisecond):
		return "", true
	}
}

func (s *served) stop(t *testing.T) {
	s.once.Do(func() { s.stopOnce(t) })
}

func (s *served) stopOnce(t *testing.T) {
	s.stdin.Close()
	select {
	case err := <-s.done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("Serve did not end within 10s of its standard input's end")
	}
	s.l.Close()
}

// TestPostReachesItsServerOnly: a post reaches the listeners of its
// server, as one wake line of the pane; another server's listener hears
// nothing; the posts that pile up come as one line a pane.
func TestPostReachesItsServerOnly(t *testing.T) {
	home := privateHome(t)
	a1 := serve(t, home, "/tmp/tmux-0/default")
	a2 := serve(t, home, "/tmp/tmux-0/default")
	b := serve(t, home, "/tmp/tmux-0/other")

	if err := Post(home, "/tmp/tmux-0/default", "%3"); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*served{a1, a2} {
		if got := s.next(t); got != "wake %3" {
			t.Errorf("listener said %q, want \"wake %%3\"", got)
		}
	}
	if l, ok := b.quiet(); !ok {
		t.Errorf("another server's listener said %q", l)
	}

	// A burst while nobody reads: at most a line a pane a read.
	for range 200 {
		Post(home, "/tmp/tmux-0/other", "%7")
	}
	lines := 0
	for {
		l, ok := b.quiet()
		if ok {
			break
		}
		if l != "wake %7" {
			t.Errorf("listener said %q", l)
		}
		lines++
	}
	if lines == 0 || lines > 200 {
		t.Errorf("200 posts made %d lines", lines)
	}
	t.Logf("200 posts: %d wake lines", lines)
}

// TestPostNeverWaits: a listener that does not read fills its FIFO; posts
// go on returning at once (a full FIFO already holds a wake), and the
// listener then says the pane once a read.
func TestPostNeverWaits(t *testing.T) {
	home := privateHome(t)
	l, err := Open(home, "/s")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	done := make(chan struct{})
	go func() {
		for range 40000 { // 160 KB of posts, more than a FIFO holds
			Post(home, "/s", "%12")
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("posts to a full FIFO waited")
	}
	buf := make([]byte, 4096)
	n, err := l.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"%12"}, Panes(buf[:n], 8)); diff != "" {
		t.Errorf("panes read (-want +got):\n%s", diff)
	}
}

// TestPostHostileChannel: a post writes into FIFOs only, follows no link,
// refuses a channel others could reach, sweeps a FIFO whose listener is
// gone, and makes nothing when no listener ever ran.
func TestPostHostileChannel(t *testing.T) {
	socket := "/s"
	prefix := key(socket) + "-"

	t.Run("no channel", func(t *testing.T) {
		home := privateHome(t)
		if err := Post(home, socket, "%1"); err != nil {
			t.Errorf("Post: %v", err)
		}
		if _, err := os.Lstat(ChannelDir(home)); !os.IsNotExist(err) {
			t.Errorf("a post made the channel: %v", err)
		}
	})

	t.Run("planted files", func(t *testing.T) {
		home := privateHome(t)
		dir := ChannelDir(home)
		os.Mkdir(dir, 0o700)
		victim := filepath.Join(t.TempDir(), "victim")
		os.WriteFile(victim, []byte("intact"), 0o600)
		os.WriteFile(filepath.Join(dir, prefix+"1"), []byte("intact"), 0o600)
		os.Symlink(victim, filepath.Join(dir, prefix+"2"))
		fifo := filepath.Join(t.TempDir(), "fifo")
		syscall.Mkfifo(fifo, 0o600)
		os.Symlink(fifo, filepath.Join(dir, prefix+"3"))
		if err := Post(home, socket, "%1"); err != nil {
			t.Errorf("Post: %v", err)
		}
		for _, f := range []string{victim, filepath.Join(dir, prefix+"1")} {
			if b, _ := os.ReadFile(f); string(b) != "intact" {
				t.Errorf("%s holds %q after a post", f, b)
			}
		}
	})

	t.Run("a dead listener's FIFO", func(t *testing.T) {
		home := privateHome(t)
		dir := ChannelDir(home)
		os.Mkdir(dir, 0o700)
		stale := filepath.Join(dir, prefix+"999999-1")
		if err := syscall.Mkfifo(stale, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := Post(home, socket, "%1"); err != nil {
			t.Errorf("Post: %v", err)
		}
		if _, err := os.Lstat(stale); !os.IsNotExist(err) {
			t.Errorf("the dead listener's FIFO is still there: %v", err)
		}
	})

	for _, mode := range []os.FileMode{0o777, 0o755, 0o710} {
		t.Run("channel mode "+mode.String(), func(t *testing.T) {
			home := privateHome(t)
			dir := ChannelDir(home)
			os.Mkdir(dir, 0o700)
			os.Chmod(dir, mode)
			if err := Post(home, socket, "%1"); err == nil {
				t.Errorf("a channel of mode %v was used", mode)
			}
			if _, err := Open(home, socket); err == nil {
				t.Errorf("a listener opened a channel of mode %v", mode)
			}
		})
	}

	t.Run("a home others can write", func(t *testing.T) {
		home := privateHome(t)
		os.Mkdir(ChannelDir(home), 0o700)
		os.Chmod(home, 0o777)
		if err := Post(home, socket, "%1"); err == nil {
			t.Error("a channel in a home others can write was used")
		}
		if _, err := Open(home, socket); err == nil {
			t.Error("a listener opened a channel in a home others can write")
		}
	})

	t.Run("channel is a link", func(t *testing.T) {
		home := privateHome(t)
		elsewhere := t.TempDir()
		os.Chmod(elsewhere, 0o700)
		os.Symlink(elsewhere, ChannelDir(home))
		if err := Post(home, socket, "%1"); err == nil {
			t.Error("a channel that is a link was used")
		}
		if _, err := Open(home, socket); err == nil {
			t.Error("a listener opened a channel that is a link")
		}
	})

	for _, pane := range []string{"", "%", "3", "%3\n%4", "%3;rm", strings.Repeat("9", 12)} {
		t.Run("pane "+strconv.Quote(pane), func(t *testing.T) {
			if err := Post(privateHome(t), socket, pane); err == nil {
				t.Errorf("Post took pane %q", pane)
			}
		})
	}
}

// TestOpenSweepsAndLeavesNothing: a listener's start removes what dead
// listeners left (a final name nobody holds, a dot name of a process that
// is gone), keeps a live listener's FIFO, and its Close removes its own.
func TestOpenSweepsAndLeavesNothing(t *testing.T) {
	home := privateHome(t)
	live := serve(t, home, "/s")
	dir := ChannelDir(home)
	dead := filepath.Join(dir, key("/other")+"-4242424-1")
	half := filepath.Join(dir, "."+key("/s")+"-4242425-1") // no such pid
	for _, f := range []string{dead, half} {
		if err := syscall.Mkfifo(f, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	l, err := Open(home, "/s")
	if err != nil {
		t.Fatal(err)
	}
	names := func() []string {
		entries, _ := os.ReadDir(dir)
		var n []string
		for _, e := range entries {
			n = append(n, e.Name())
		}
		return n
	}
	want := []string{filepath.Base(live.l.Path()), filepath.Base(l.Path())}
	if filepath.Base(live.l.Path()) > filepath.Base(l.Path()) {
		want[0], want[1] = want[1], want[0]
	}
	if diff := cmp.Diff(want, names()); diff != "" {
		t.Errorf("the channel after a start (-want +got):\n%s", diff)
	}
	l.Close()
	live.stop(t)
	if got := names(); len(got) != 0 {
		t.Errorf("left in the channel: %q", got)
	}
	fi, err := os.Lstat(dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("channel: %v, %v; want a 0700 directory", fi, err)
	}
}
