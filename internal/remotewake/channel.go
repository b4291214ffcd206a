// Package remotewake carries an agent's hook on an ssh host to the watcher
// of its pane, which runs on the operator's machine. Three parts, one job:
//
//   - on the host, the hook (omega-monitor wake) posts a wake to the wake
//     channel of the state home: Post writes the pane's id, nothing else,
//     into the FIFO of each listener of the pane's multiplexer server;
//   - on the host, a listener (omega-monitor wake --listen, which the
//     watcher runs over its own ssh connection) reads its FIFO and prints
//     one fixed line per pane woken: Listen;
//   - on the operator's machine, the watcher's relay (omega-monitor wake
//     --relay, started by the loop) keeps that listener running over the
//     watcher's ControlMaster, takes from what it prints only the wakes of
//     its own pane, and turns them into local wakes of its loop, spaced:
//     Relay.
//
// A wake carries no verdict, no text and no action: it only ends the loop's
// pause, and the screen decides. What crosses the connection is hostile
// (the host may be another's): a line that is not exactly the listener's
// greeting or a wake is dropped, lines are capped, and wakes are spaced.
// The channel lives in a 0700 directory of the user's state home, never in
// /tmp; only this user can post to it, and a post opens FIFOs only.
package remotewake

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/omega-monitor/omega-monitor/internal/digest"
	"github.com/omega-monitor/omega-monitor/internal/statedir"

	"encoding/hex"
)

// ChannelDir is the wake channel of the state home home: a dot name, which
// the board never takes for a watcher's directory.
func ChannelDir(home string) string { return filepath.Join(home, ".wake") }

// key names a multiplexer server in the channel: a hash of its socket's
// path, which may be long and hold any byte.
func key(socket string) string {
	sum := digest.Sum256([]byte(socket))
	return hex.EncodeToString(sum[:8])
}

// maxListeners is the most FIFOs one post writes to: a few watchers follow
// one server; a channel holding more is not ours to flood.
const maxListeners = 16

// Post is the hook's side: it tells every listener of the server whose
// socket is socket that pane had a hook. It writes "PANE\n" into each
// listener's FIFO without waiting (a full FIFO already holds a wake, so
// this one is dropped), opens nothing but FIFOs, follows no link, and
// removes a FIFO no listener holds any more. No channel (no listener ever
// ran in this home) costs one stat. pane must be a pane id (%N).
func Post(home, socket, pane string) error {
	if !IsPaneID(pane) || socket == "" {
		return errors.New("remotewake: post: not a pane")
	}
	dir := ChannelDir(home)
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err := statedir.CheckPrivate(home); err != nil {
		return fmt.Errorf("remotewake: post: %w", err)
	}
	if err := checkChannel(dir); err != nil {
		return fmt.Errorf("remotewake: post: %w", err)
	}
	f, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("remotewake: post: %w", err)
	}
	// A channel is a handful of names; a huge one is read no further.
	names, err := f.Readdirnames(256)
	f.Close()
	if err != nil && err != io.EOF {
		return fmt.Errorf("remotewake: post: %w", err)
	}
	prefix := key(socket) + "-"
	msg := []byte(pane + "\n")
	sent := 0
	for _, name := range names {
		if !strings.HasPrefix(name, prefix) || sent >= maxListeners {
			continue
		}
		sent++
		path := filepath.Join(dir, name)
		fd, err := openFIFO(path, syscall.O_WRONLY)
		if errors.Is(err, syscall.ENXIO) {
			// A FIFO takes its final name only once its listener
			// holds it open: none holds it, its listener is gone.
			os.Remove(path)
			continue
		}
		if err != nil {
			continue
		}
		// A raw write, which a full FIFO refuses at once (EAGAIN)
		// where the runtime's would wait.
		syscall.Write(fd, msg)
		syscall.Close(fd)
	}
	return nil
}

// openFIFO opens path without following a link and without waiting, and
// only when it is a FIFO: a regular file or a device planted in the
// channel is closed unwritten. The descriptor is non-blocking.
func openFIFO(path string, mode int) (int, error) {
	fd, err := syscall.Open(path, mode|syscall.O_NONBLOCK|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		syscall.Close(fd)
		return -1, fmt.Errorf("remotewake: %s is not a FIFO", path)
	}
	return fd, nil
}

// checkChannel says what is wrong with dir as the wake channel: a directory
// of this user's that nobody else can read, write or enter.
func checkChannel(dir string) error {
	if err := statedir.CheckPrivate(dir); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s is open to others (mode %v); refusing it (chmod 700 %s)", dir, fi.Mode().Perm(), dir)
	}
	return nil
}

// IsPaneID says whether s is a multiplexer's pane id: % and 1 to 9 digits.
func IsPaneID(s string) bool {
	d, ok := strings.CutPrefix(s, "%")
	return ok && d != "" && len(d) <= 9 && strings.Trim(d, "0123456789") == ""
}

// opened counts the listeners this process opened, for their names.
var opened atomic.Int64

// A Listener is a listener's FIFO in the channel, open for reading.
type Listener struct {
	f    *os.File
	path string
}

// Open makes the channel of home (and home itself) when missing, this
// user's alone, sweeps what dead listeners left there, and opens a FIFO of
// this process's for the server whose socket is socket. The FIFO is made
// and opened under a dot name, which posts pass by, and takes its final
// name only once open: a final name that no process holds open is a dead
// listener's, which anyone may remove.
func Open(home, socket string) (*Listener, error) {
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, fmt.Errorf("remotewake: %w", err)
	}
	if err := statedir.CheckPrivate(home); err != nil {
		return nil, fmt.Errorf("remotewake: %w", err)
	}
	dir := ChannelDir(home)
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("remotewake: %w", err)
	}
	if err := checkChannel(dir); err != nil {
		return nil, fmt.Errorf("remotewake: %w", err)
	}
	sweep(dir)
	name := fmt.Sprintf("%s-%d-%d", key(socket), os.Getpid(), opened.Add(1))
	tmp := filepath.Join(dir, "."+name)
	os.Remove(tmp)
	if err := syscall.Mkfifo(tmp, 0o600); err != nil {
		return nil, fmt.Errorf("remotewake: %s: %w", tmp, err)
	}
	// Read and write: the FIFO never reads as ended while no hook
	// writes, and the open does not wait for a writer.
	fd, err := openFIFO(tmp, syscall.O_RDWR)
	if err != nil {
		os.Remove(tmp)
		return nil, err
	}
	path := filepath.Join(dir, name)
	// Non-blocking: reads wait in the runtime's poller, which Close ends.
	f := os.NewFile(uintptr(fd), path)
	if err := os.Rename(tmp, path); err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("remotewake: %w", err)
	}
	return &Listener{f: f, path: path}, nil
}

// Path is the listener's FIFO.
func (l *Listener) Path() string { return l.path }

// Read reads what hooks posted.
func (l *Listener) Read(p []byte) (int, error) { return l.f.Read(p) }

// Close removes the FIFO and closes it.
func (l *Listener) Close() error {
	os.Remove(l.path)
	return l.f.Close()
}

// sweep removes from the channel dir the FIFOs of listeners that are gone:
// a final name that no process holds open, and a dot name whose process no
// longer runs.
func sweep(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		path := filepath.Join(dir, name)
		if e.Type()&os.ModeNamedPipe == 0 {
			continue
		}
		if tmp, ok := strings.CutPrefix(name, "."); ok {
			// .KEY-PID-N: a listener's, being opened.
			f := strings.Split(tmp, "-")
			if len(f) != 3 {
				continue
			}
			if n, err := strconv.Atoi(f[1]); err == nil && n > 0 && syscall.Kill(n, 0) == syscall.ESRCH {
				os.Remove(path)
			}
			continue
		}
		fd, err := openFIFO(path, syscall.O_WRONLY)
		if errors.Is(err, syscall.ENXIO) {
			os.Remove(path)
			continue
		}
		if err == nil {
			syscall.Close(fd)
		}
	}
}
