package statedir

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"

	"github.com/omega-monitor/omega-monitor/internal/statedir/event"
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

// TestOutboxUrgentFirstAndCapped: a question queued after a flood of other
// alerts is delivered first; past MaxOutbox the oldest others are dropped
// with a note, the urgent never.
func TestOutboxUrgentFirstAndCapped(t *testing.T) {
	t.Parallel()
	d := Dir(t.TempDir())
	now := time.Date(2026, 12, 1, 14, 0, 0, 0, time.UTC)
	var flood []string
	for i := range MaxOutbox + 20 {
		flood = append(flood, fmt.Sprintf("failure %d", i))
	}
	assert.NilError(t, d.QueueAlerts(now, flood))
	assert.NilError(t, d.QueueUrgent(now.Add(time.Minute), []string{"QUESTION"}))
	names, err := d.PendingAlerts()
	assert.NilError(t, err)
	assert.Assert(t, len(names) <= MaxOutbox+1, "%d waiting", len(names))
	read := func(name string) string {
		b, err := os.ReadFile(d.Path(Outbox + "/" + name))
		assert.NilError(t, err)
		return string(b)
	}
	assert.Equal(t, read(names[0]), "QUESTION")
	var dropped bool
	for _, n := range names {
		if strings.Contains(read(n), "ALERTS DROPPED") {
			dropped = true
		}
	}
	assert.Assert(t, dropped, "no note of the dropped alerts")
	assert.Assert(t, !slices.ContainsFunc(names, func(n string) bool { return read(n) == "failure 0" }), "the oldest were kept")
	assert.Assert(t, slices.ContainsFunc(names, func(n string) bool { return read(n) == fmt.Sprintf("failure %d", MaxOutbox+19) }), "the newest were dropped")
}

// TestHistoryStaysBoundedDuringARun: a watcher that runs for weeks, or a
// pane that floods long lines, sweeps its history as it goes: it never
// passes MaxHistory by more than a poll's lines, keeps the newest, and
// leaves room, so that the next append does not sweep again.
func TestHistoryStaysBoundedDuringARun(t *testing.T) {
	t.Parallel()
	d := Dir(t.TempDir())
	assert.NilError(t, d.Prepare())
	long := strings.Repeat("x", 64<<10)
	now := time.Date(2026, 12, 1, 14, 0, 0, 0, time.UTC)
	var last int64
	swept := 0
	for i := range 2 * MaxHistory / len(long) {
		assert.NilError(t, d.AppendHistory(now, "agent", []event.Event{{Name: event.State, State: "STALLED", Fields: map[string]any{"n": i, "line": long}}}))
		fi, err := os.Stat(d.Path(History))
		assert.NilError(t, err)
		assert.Assert(t, fi.Size() <= MaxHistory+int64(len(long))+200, "history %d bytes after %d polls", fi.Size(), i)
		if fi.Size() < last {
			swept++
			assert.Assert(t, fi.Size() <= MaxHistory/2, "a sweep left %d bytes", fi.Size())
		}
		last = fi.Size()
	}
	assert.Assert(t, swept >= 2 && swept <= 4, "swept %d times", swept)
	b, err := os.ReadFile(d.Path(History))
	assert.NilError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	assert.Assert(t, strings.Contains(lines[len(lines)-1], fmt.Sprintf(`"n":%d`, 2*MaxHistory/len(long)-1)), "the newest line was not kept")
}

// TestHeldHistorySaysWhatItAppended: an append through the held history
// goes where the history ended when it was held, and says so: the file,
// the offset, the bytes, and a sweep that replaced the file.
func TestHeldHistorySaysWhatItAppended(t *testing.T) {
	t.Parallel()
	d := Dir(t.TempDir())
	assert.NilError(t, d.Prepare())
	now := time.Date(2026, 12, 1, 14, 0, 0, 0, time.UTC)
	lines, err := HistoryLines(now, "agent", []event.Event{{Name: event.Nudge, State: "STALLED"}})
	assert.NilError(t, err)
	var ino uint64
	for i := range 2 {
		h, err := d.HoldHistory()
		assert.NilError(t, err)
		assert.Equal(t, h.Size, int64(i*len(lines)))
		a, err := h.Append(lines)
		h.Release()
		assert.NilError(t, err)
		if i == 0 {
			ino = h.Ino
		}
		want := Appended{Ino: ino, Offset: int64(i * len(lines)), Bytes: len(lines)}
		if diff := cmp.Diff(want, a); diff != "" {
			t.Errorf("append %d (-want +got):\n%s", i, diff)
		}
	}
	b, err := os.ReadFile(d.Path(History))
	assert.NilError(t, err)
	assert.Equal(t, string(b), string(lines)+string(lines))

	// Past MaxHistory, the append sweeps: the file is another.
	assert.NilError(t, os.Truncate(d.Path(History), MaxHistory))
	h, err := d.HoldHistory()
	assert.NilError(t, err)
	a, err := h.Append(lines)
	h.Release()
	assert.NilError(t, err)
	assert.Assert(t, a.Swept && a.Offset == MaxHistory, "%+v", a)
}
