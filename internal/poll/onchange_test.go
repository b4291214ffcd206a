package poll

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"
	"gotest.tools/v3/poll"

	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/statedir/event"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
	"github.com/omega-monitor/omega-monitor/probe"
	"github.com/omega-monitor/omega-monitor/tick"
)

func TestChangeOf(t *testing.T) {
	in := tick.Input{Work: probe.Read("7", true), Progress: probe.Read("", false)}
	for _, tc := range []struct {
		name   string
		events []tick.Event
		want   Change
		ok     bool
	}{
		{"no change", []tick.Event{{Name: event.Nudge, State: "STALLED"}}, Change{}, false},
		{"a change", []tick.Event{{Name: event.Nudge}, {Name: event.State, State: "QUESTION", Fields: map[string]any{"from": "WORKING", "rule": "claude-dialog"}}},
			Change{Watcher: "monitor-s", Target: "s", From: "WORKING", To: "QUESTION", Rule: "claude-dialog", Work: "7", Progress: "?"}, true},
		{"the first poll", []tick.Event{{Name: event.State, State: "WORKING", Fields: map[string]any{"from": ""}}},
			Change{Watcher: "monitor-s", Target: "s", From: "NONE", To: "WORKING", Work: "7", Progress: "?"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := changeOf("/x/monitor-s", "s", tc.events, in)
			assert.Equal(t, ok, tc.ok)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// onChangeWorld is a watcher's directory and the omega-monitor binary
// that runs on-change commands.
func onChangeWorld(t *testing.T) string {
	bin := testenv.Build(t, "../../cmd/omega-monitor")
	onChangeBinary = func() (string, error) { return filepath.Join(bin, "omega-monitor"), nil }
	t.Cleanup(func() { onChangeBinary = os.Executable })
	dir := filepath.Join(t.TempDir(), "monitor-s")
	assert.NilError(t, os.MkdirAll(dir, 0o700))
	return dir
}

func logOf(t *testing.T, dir string) string {
	b, _ := os.ReadFile(filepath.Join(dir, statedir.Log))
	return string(b)
}

// TestOnChangeGivesTheChange: the command is started and not waited for,
// and finds the change in its environment, not in its command line.
func TestOnChangeGivesTheChange(t *testing.T) {
	dir := onChangeWorld(t)
	out := filepath.Join(t.TempDir(), "env")
	c := Change{Watcher: "monitor-s", Target: "s", From: "WORKING", To: "QUESTION", Rule: "r; $(touch /tmp/pwned)", Work: "3", Progress: "41"}
	cmd := `env | grep ^OMEGA_MONITOR_ | grep -v ON_CHANGE | sort >` + out + `.tmp && mv ` + out + `.tmp ` + out
	assert.NilError(t, startOnChange(dir, cmd, 5, c))
	poll.WaitOn(t, poll.FileExists(out))
	b, err := os.ReadFile(out)
	assert.NilError(t, err)
	for _, want := range []string{"OMEGA_MONITOR_NEW_STATE=QUESTION", "OMEGA_MONITOR_OLD_STATE=WORKING", "OMEGA_MONITOR_PROGRESS=41",
		"OMEGA_MONITOR_RULE=r; $(touch /tmp/pwned)", "OMEGA_MONITOR_TARGET=s", "OMEGA_MONITOR_WATCHER=monitor-s", "OMEGA_MONITOR_WORK=3"} {
		assert.Assert(t, strings.Contains(string(b), want+"\n"), "%q not in\n%s", want, b)
	}
	assert.Equal(t, logOf(t, dir), "", "a command that succeeds is not logged")
}

// TestOnChangeFailingCommand: a command that fails is logged with what it
// said last, never fatal.
func TestOnChangeFailingCommand(t *testing.T) {
	dir := onChangeWorld(t)
	assert.NilError(t, startOnChange(dir, "echo 'first'; echo 'the hook broke' >&2; exit 7", 5, Change{Target: "s", From: "WORKING", To: "BLOCKED"}))
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if l := logOf(t, dir); l != "" {
			return poll.Success()
		}
		return poll.Continue("no log line yet")
	})
	l := logOf(t, dir)
	assert.Assert(t, strings.Contains(l, "MONITOR · s · ? · on-change command failed (WORKING → BLOCKED): exit status 7: the hook broke"), l)
}

// TestOnChangeHangingCommand: a command that never ends, and leaves a
// child of its own, is killed whole at its clock, and said in the log;
// the tick that started it had gone on long before.
func TestOnChangeHangingCommand(t *testing.T) {
	dir := onChangeWorld(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	cmd := "sleep 300 & echo $! >" + pidFile + "; sleep 300"
	assert.NilError(t, startOnChange(dir, cmd, 1, Change{Target: "s", From: "STALLED", To: "WORKING"}))
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if strings.Contains(logOf(t, dir), "on-change command failed") {
			return poll.Success()
		}
		return poll.Continue("no log line yet")
	})
	l := logOf(t, dir)
	assert.Assert(t, strings.Contains(l, "on-change command failed (STALLED → WORKING): no end within 1s, killed with its process group"), l)
	b, err := os.ReadFile(pidFile)
	assert.NilError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	assert.NilError(t, err)
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		if err := syscall.Kill(pid, 0); err != nil {
			return poll.Success()
		}
		return poll.Continue("the background child %d still runs", pid)
	})
}

// TestOnChangeWithoutACommand: an on-change run whose environment names
// no command is refused as such, and runs nothing.
func TestOnChangeWithoutACommand(t *testing.T) {
	none := func(string) string { return "" }
	err := OnChange(t.TempDir(), time.Second, none)
	assert.Assert(t, errors.Is(err, ErrNoOnChangeCommand), "%v", err)
}
