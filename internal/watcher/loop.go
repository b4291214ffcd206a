package watcher

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/omega-monitor/omega-monitor/internal/atomicfile"
	"github.com/omega-monitor/omega-monitor/internal/cmdline"
	"github.com/omega-monitor/omega-monitor/internal/fsutil"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/scripts"
)

// InstallLoop writes the embedded loop script, stamped with this
// binary's version, to home/bin/omega-monitor.sh, only when what is there
// differs, and atomically, so that a watcher that is starting never reads
// half a script. It returns the script's path.
func InstallLoop(home string) (string, error) {
	// The loop script and every watcher live in the state home: it, and
	// its bin, must be this user's alone before anything is written.
	dir := filepath.Join(home, "bin")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	for _, d := range []string{home, dir} {
		if err := statedir.CheckPrivate(d); err != nil {
			return "", err
		}
	}
	path := filepath.Join(dir, "omega-monitor.sh")
	script := StampedLoop()
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, script) {
		return path, os.Chmod(path, 0o700)
	}
	return path, atomicfile.Write(path, script, 0o700)
}

// LoopVersionMark starts the line that stamps a loop script with the version
// of the binary that wrote it.
const LoopVersionMark = "# omega-monitor-version: "

// StampedLoop is the embedded loop with its version line after the first.
func StampedLoop() []byte {
	first, rest, _ := bytes.Cut(scripts.Loop, []byte("\n"))
	var b bytes.Buffer
	b.Write(first)
	b.WriteString("\n" + LoopVersionMark + cmdline.Version() + "\n")
	b.Write(rest)
	return b.Bytes()
}

// ErrUnstamped is wrapped by checkLoopVersion for a script without a stamp.
var ErrUnstamped = errors.New("no version stamp")

// CheckLoopVersion refuses a loop script written by a binary of another
// version (or by none): the loop and the binary it calls share contracts
// (flags, action files, state), so they must come from one build.
func CheckLoopVersion(path string) error {
	data, err := fsutil.ReadCapped(path, 1<<20)
	if err != nil {
		return err
	}
	_, rest, _ := bytes.Cut(data, []byte("\n"))
	line, _, _ := bytes.Cut(rest, []byte("\n"))
	v, ok := bytes.CutPrefix(line, []byte(LoopVersionMark))
	switch {
	case !ok:
		return fmt.Errorf("the loop script %s carries no version; this binary is %s: %w", path, cmdline.Version(), ErrUnstamped)
	case string(v) != cmdline.Version():
		return fmt.Errorf("the loop script %s is of version %s, this binary is %s; refusing to run a loop of another version", path, v, cmdline.Version())
	}
	return nil
}
