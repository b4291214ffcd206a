package statedir

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"

	"github.com/omega-monitor/omega-monitor/statedir/event"
)

func TestHistoryLinesAndModes(t *testing.T) {
	t.Parallel()
	d := Dir(t.TempDir())
	assert.NilError(t, d.Prepare())
	now := time.Date(2026, 12, 1, 14, 0, 0, 0, time.UTC)
	assert.NilError(t, d.AppendHistory(now, "agent", []event.Event{
		{Name: event.Nudge, State: "STALLED", Fields: map[string]any{"text": "go on", "event": "not this"}},
		{Name: event.State, State: "WORKING"},
	}))
	b, err := os.ReadFile(d.Path(History))
	assert.NilError(t, err)
	want := `{"event":"nudge","state":"STALLED","target":"agent","text":"go on","ts":"2026-12-01T14:00:00Z"}` + "\n" +
		`{"event":"state","state":"WORKING","target":"agent","ts":"2026-12-01T14:00:00Z"}` + "\n"
	if d := cmp.Diff(want, string(b)); d != "" {
		t.Errorf("history (-want +got):\n%s", d)
	}
	for name, mode := range map[string]os.FileMode{History: 0o600, Actions: 0o700 | os.ModeDir, ".": 0o700 | os.ModeDir} {
		fi, err := os.Stat(d.Path(name))
		assert.NilError(t, err)
		assert.Equal(t, fi.Mode(), mode, name)
	}
}

func TestOutboxKeepsOrderAndNeverOverwrites(t *testing.T) {
	t.Parallel()
	d := Dir(t.TempDir())
	now := time.Date(2026, 12, 1, 14, 0, 0, 0, time.UTC)
	assert.NilError(t, d.QueueAlerts(now, []string{"a", "b"}))
	assert.NilError(t, d.QueueAlerts(now, []string{"c"})) // the same instant: a replayed clock
	names, err := d.PendingAlerts()
	assert.NilError(t, err)
	var got []string
	for _, n := range names {
		b, err := os.ReadFile(d.Path(Outbox + "/" + n))
		assert.NilError(t, err)
		got = append(got, string(b))
	}
	assert.DeepEqual(t, got, []string{"a", "b", "c"})
}

func TestDropStaleActionsNamesAllButTheDiff(t *testing.T) {
	t.Parallel()
	d := Dir(t.TempDir())
	assert.NilError(t, d.Prepare())
	for _, n := range []string{"001.nudge", "002.diff"} {
		assert.NilError(t, d.WriteAction(n, []byte("x")))
	}
	err := d.DropStaleActions()
	assert.ErrorContains(t, err, "dropped 1 stale action(s) the shell never carried out: 001.nudge")
	left, _ := os.ReadDir(d.Path(Actions))
	assert.Equal(t, len(left), 0)
	assert.NilError(t, d.DropStaleActions())
}

func TestRecordsRoundTripAndCap(t *testing.T) {
	t.Parallel()
	d := Dir(t.TempDir())
	rec := LoopRecord{Pid: 42, StartToken: "t", StartedAt: time.Date(2026, 12, 1, 14, 0, 0, 0, time.UTC), Target: "agent", Settings: map[string]string{"interval": "60"}}
	assert.NilError(t, d.WriteRecord(Loop, rec))
	var got LoopRecord
	assert.NilError(t, d.ReadRecord(Loop, &got))
	assert.DeepEqual(t, got, rec)
	assert.NilError(t, os.WriteFile(d.Path(Ended), []byte(strings.Repeat(" ", MaxRecord+1)), 0o600))
	var e EndedRecord
	assert.ErrorContains(t, d.ReadRecord(Ended, &e), "too large")
	assert.NilError(t, os.WriteFile(d.Path(DiffFile), []byte("{"), 0o600))
	var diff Diff
	assert.ErrorContains(t, d.ReadRecord(DiffFile, &diff), "corrupt")
}
