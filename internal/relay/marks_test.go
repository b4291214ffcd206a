package relay

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

func TestRateRecord(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	if got := ReadRate(dir, now); len(got) != 0 {
		t.Errorf("no file: %v", got)
	}
	rec := RateRecord{
		"monitor-agent": {now.Add(-2 * time.Minute), now.Add(-30 * time.Second), now.Add(-time.Second)},
		"monitor-old":   {now.Add(-time.Hour)},
		// Planted: a name that is no watcher's, a time an hour ahead
		// (it would hold the watcher's rate for an hour).
		"../etc":       {now},
		"monitor-late": {now.Add(time.Hour)},
	}
	if err := WriteRate(dir, rec); err != nil {
		t.Fatal(err)
	}
	want := RateRecord{"monitor-agent": {now.Add(-30 * time.Second), now.Add(-time.Second)}}
	if diff := cmp.Diff(want, ReadRate(dir, now)); diff != "" {
		t.Errorf("rate (-want +got):\n%s", diff)
	}
	if fi, err := os.Stat(filepath.Join(dir, Rate)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("rate.json: %v %v", fi.Mode(), err)
	}
	for _, junk := range []string{"{", "[1,2]", `{"monitor-agent":"x"}`} {
		os.WriteFile(filepath.Join(dir, Rate), []byte(junk), 0o600)
		if got := ReadRate(dir, now); len(got) != 0 {
			t.Errorf("%q read as %v", junk, got)
		}
	}
}

func TestEditedMessages(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	var e []EditedMessage
	e = AddEdited(e, 42, 1001, now.Add(-25*time.Hour))
	e = AddEdited(e, 42, 1002, now.Add(-time.Hour))
	e = AddEdited(e, 42, 1002, now) // once, at its last time
	if err := WriteEdited(dir, append(e, EditedMessage{ChatID: 0, MessageID: 5, At: now})); err != nil {
		t.Fatal(err)
	}
	got := ReadEdited(dir, now)
	if diff := cmp.Diff([]EditedMessage{{ChatID: 42, MessageID: 1002, At: now}}, got); diff != "" {
		t.Errorf("edited (-want +got):\n%s", diff)
	}
	if !WasEdited(got, 42, 1002) || WasEdited(got, 42, 1001) || WasEdited(got, 43, 1002) {
		t.Errorf("WasEdited wrong on %v", got)
	}
	for i := range maxEdited + 10 {
		e = AddEdited(e, 42, 2000+i, now)
	}
	if len(e) != maxEdited || !WasEdited(e, 42, 2000+maxEdited+9) || WasEdited(e, 42, 2000) {
		t.Errorf("%d remembered, want the newest %d", len(e), maxEdited)
	}
	os.WriteFile(filepath.Join(dir, Edited), []byte("junk"), 0o600)
	if got := ReadEdited(dir, now); got != nil {
		t.Errorf("junk read as %v", got)
	}
}

// TestEditedWhy: an edit remembers the retirement it applied, and why,
// across a write and a read; a later edit of the same message replaces it;
// a reason out of shape is read as an answer's outcome, its time dropped.
func TestEditedWhy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	left := now.Add(-2 * time.Minute)
	var e []EditedMessage
	e = AddEditedAs(e, EditedMessage{ChatID: 42, MessageID: 1001, Reason: statedir.RetireAgain, Since: left}, now.Add(-time.Minute))
	e = AddEditedAs(e, EditedMessage{ChatID: 42, MessageID: 1002, Reason: statedir.RetireGone, Since: left}, now)
	e = AddEdited(e, 42, 1002, now) // then an answer's outcome
	planted := EditedMessage{ChatID: 42, MessageID: 1003, At: now, Reason: "<b>owned</b>", Since: left}
	if err := WriteEdited(dir, append(e, planted)); err != nil {
		t.Fatal(err)
	}
	got := ReadEdited(dir, now)
	want := []EditedMessage{
		{ChatID: 42, MessageID: 1001, At: now.Add(-time.Minute), Reason: statedir.RetireAgain, Since: left},
		{ChatID: 42, MessageID: 1002, At: now},
		{ChatID: 42, MessageID: 1003, At: now},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("edited (-want +got):\n%s", diff)
	}
	if f, ok := FindEdited(got, 42, 1001); !ok || f.Reason != statedir.RetireAgain {
		t.Errorf("FindEdited(1001) = %v, %v", f, ok)
	}
	if _, ok := FindEdited(got, 43, 1001); ok {
		t.Error("FindEdited found a message of another chat")
	}
}
