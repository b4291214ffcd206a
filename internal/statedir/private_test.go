package statedir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/omega-monitor/omega-monitor/internal/statedir/event"
)

// otherUser is a uid that is not this process's: as root, a directory can
// be given to it, as another local user would have made it.
const otherUser = 65534

func TestCheckPrivate(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	mine := filepath.Join(root, "mine")
	assert.NilError(t, os.Mkdir(mine, 0o700))
	assert.NilError(t, CheckPrivate(mine))

	open := filepath.Join(root, "open")
	assert.NilError(t, os.Mkdir(open, 0o700))
	assert.NilError(t, os.Chmod(open, 0o777))
	assert.ErrorContains(t, CheckPrivate(open), "is writable by others (mode -rwxrwxrwx); refusing it (chmod go-w")

	link := filepath.Join(root, "link")
	assert.NilError(t, os.Symlink(mine, link))
	assert.ErrorContains(t, CheckPrivate(link), "is a symbolic link; refusing it")

	file := filepath.Join(root, "file")
	assert.NilError(t, os.WriteFile(file, nil, 0o600))
	assert.ErrorContains(t, CheckPrivate(file), "is not a directory")

	if os.Geteuid() != 0 {
		t.Skip("giving a directory to another user needs root")
	}
	theirs := filepath.Join(root, "theirs")
	assert.NilError(t, os.Mkdir(theirs, 0o700))
	assert.NilError(t, os.Chown(theirs, otherUser, otherUser))
	assert.ErrorContains(t, CheckPrivate(theirs), "belongs to uid 65534, not to you")
}

// TestPrepareRefusesAPlantedDirectory: a watcher directory another user
// made (with an action waiting in it), or a state home they can write, is
// refused before anything is read from it or written to it.
func TestPrepareRefusesAPlantedDirectory(t *testing.T) {
	t.Parallel()
	home := filepath.Join(t.TempDir(), "monitor")
	assert.NilError(t, os.Mkdir(home, 0o700))
	d := Dir(filepath.Join(home, "monitor-agent"))
	assert.NilError(t, d.Prepare())

	open := Dir(filepath.Join(t.TempDir(), "shared", "monitor-agent"))
	assert.NilError(t, os.MkdirAll(string(open), 0o700))
	assert.NilError(t, os.Chmod(filepath.Dir(string(open)), 0o777))
	assert.ErrorContains(t, open.Prepare(), "is writable by others")

	if os.Geteuid() != 0 {
		t.Skip("giving a directory to another user needs root")
	}
	planted := Dir(filepath.Join(home, "monitor-planted"))
	assert.NilError(t, os.MkdirAll(planted.Path(Actions), 0o700))
	assert.NilError(t, os.WriteFile(planted.Path(Actions)+"/001.nudge", []byte("rm -rf ~"), 0o600))
	for _, p := range []string{string(planted), planted.Path(Actions)} {
		assert.NilError(t, os.Chown(p, otherUser, otherUser))
	}
	assert.ErrorContains(t, planted.Prepare(), "belongs to uid 65534, not to you")
}

// TestAppendsNeverFollowALink: a link planted where the log, the history
// or the failed-alert log would be makes the append fail; the file it
// points at is untouched.
func TestAppendsNeverFollowALink(t *testing.T) {
	t.Parallel()
	d := Dir(t.TempDir())
	victim := filepath.Join(t.TempDir(), "victim")
	assert.NilError(t, os.WriteFile(victim, []byte("mine\n"), 0o600))
	for _, name := range []string{Log, History} {
		assert.NilError(t, os.Symlink(victim, d.Path(name)))
	}
	assert.Assert(t, d.AppendLog(time.Now(), "MONITOR · agent · STALLED · pane text") != nil)
	assert.Assert(t, d.AppendHistory(time.Now(), "agent", []event.Event{{Name: event.Nudge, State: "STALLED"}}) != nil)
	home := t.TempDir()
	assert.NilError(t, os.Symlink(victim, filepath.Join(home, FailedAlerts)))
	assert.Assert(t, KeepFailed(home, "why", []byte("pane text")) != nil)
	b, err := os.ReadFile(victim)
	assert.NilError(t, err)
	assert.Assert(t, !strings.Contains(string(b), "pane text") && string(b) == "mine\n", string(b))
}
