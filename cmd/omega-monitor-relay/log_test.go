package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/relay"
)

// TestLogFile: every line the receiver says goes to relay/relay.log too,
// the same words with the date before them, in the same order; mode 0600.
func TestLogFile(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "chat_id=42\nanswers=on\n")
	w.start(t)
	w.handled(t, w.tg.Push(tap(private, 43, nYes)))
	w.handled(t, w.tg.Push(tap(private, private, nYes)))
	w.stop(t)
	path := filepath.Join(w.state, relay.Dir, relay.LogFile)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("relay.log is mode %v, want 0600", fi.Mode().Perm())
	}
	data, _ := os.ReadFile(path)
	logged := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	pane := strings.Split(strings.TrimSuffix(w.log(), "\n"), "\n")
	if len(logged) != len(pane) {
		t.Fatalf("relay.log has %d lines, the pane %d:\n%s\n--\n%s", len(logged), len(pane), data, w.log())
	}
	for i := range pane {
		date, rest, _ := strings.Cut(logged[i], " ")
		if _, err := time.Parse(time.DateOnly, date); err != nil || rest != pane[i] {
			t.Errorf("line %d: logged %q, the pane says %q", i, logged[i], pane[i])
		}
	}
	for _, want := range []string{"refused a tap by user 43: user 43 is not allowed", "Ada asked monitor-agent to answer \"Yes\"", "stopped at update"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("relay.log does not say %q:\n%s", want, data)
		}
	}
}

// TestLogFileRefused: a relay.log that is a link is not followed: the
// receiver answers as ever, the file the link names is untouched, and the
// pane says once why the log is not written.
func TestLogFileRefused(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "chat_id=42\nanswers=on\n")
	dir := filepath.Join(w.state, relay.Dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	elsewhere := filepath.Join(w.home, "precious")
	os.WriteFile(elsewhere, []byte("precious\n"), 0o600)
	if err := os.Symlink(elsewhere, filepath.Join(dir, relay.LogFile)); err != nil {
		t.Fatal(err)
	}
	w.start(t)
	w.handled(t, w.tg.Push(tap(private, private, nYes)))
	w.handled(t, w.tg.Push(tap(private, private, nNo)))
	if got := w.answers(); len(got) != 2 || !strings.Contains(got[1], "sent to monitor-agent") {
		t.Errorf("callback answers = %q, want both sent", got)
	}
	w.stop(t)
	if got, _ := os.ReadFile(elsewhere); string(got) != "precious\n" {
		t.Errorf("the file the link names now holds %q", got)
	}
	if n := strings.Count(w.log(), "relay.log not written: relay: "+filepath.Join(dir, relay.LogFile)+" is a symbolic link; refusing it"); n != 1 {
		t.Errorf("the pane says %d times that relay.log is not written, want once:\n%s", n, w.log())
	}
}
