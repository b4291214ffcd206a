package demo

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

func TestAlertSummary(t *testing.T) {
	t.Parallel()
	got := alertSummary("<b>QUESTION</b> · agent &amp; co\n<pre>Do you want to proceed?</pre>")
	if want := "QUESTION · agent & co"; got != want {
		t.Errorf("alertSummary = %q, want %q", got, want)
	}
}

// TestTailRecords checks that only complete records are sent, each once,
// however the file grows.
func TestTailRecords(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "alerts")
	ctx, cancel := context.WithCancel(t.Context())
	events := make(chan event, 8)
	done := make(chan struct{})
	go func() { tailRecords(ctx, path, "\n\036\n", "alert", events); close(done) }()
	defer func() { cancel(); <-done }()

	write := func(s string) {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	next := func() event {
		t.Helper()
		select {
		case e := <-events:
			return e
		case <-time.After(10 * time.Second):
			t.Fatal("no record within 10s")
			return event{}
		}
	}
	write("one\nline two\n\036\nthr")
	if e := next(); e != (event{"alert", "one\nline two"}) {
		t.Errorf("first record %q", e)
	}
	write("ee\n\036\n")
	if e := next(); e != (event{"alert", "three"}) {
		t.Errorf("second record %q", e)
	}
	select {
	case e := <-events:
		t.Errorf("a record more: %q", e)
	case <-time.After(300 * time.Millisecond):
	}
}

func TestRunRefusesInterval(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	err := Run(t.Context(), Config{Interval: 0, TempDir: tmp}, nil)
	if err == nil || !strings.HasPrefix(err.Error(), "demo: ") {
		t.Errorf("Run with interval 0: %v", err)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("Run with interval 0 left %d files", len(entries))
	}
}

// TestStartAndCleanup checks the demo's files and their modes, that the
// agent runs in the private server, and that cleanup stops the server.
func TestStartAndCleanup(t *testing.T) {
	t.Parallel()
	testenv.Need(t, "tmux", "bash")
	d, err := start(Config{Bin: "/bin/false", Interval: 1, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(d.dir)
	for name, want := range map[string]os.FileMode{"mux": 0o700, "alert-send.sh": 0o700, "agent.sh": 0o600, "omega-monitor.sh": 0o700} {
		fi, err := os.Stat(filepath.Join(d.dir, name))
		if err != nil {
			t.Error(err)
		} else if fi.Mode().Perm() != want {
			t.Errorf("%s has mode %v, want %v", name, fi.Mode().Perm(), want)
		}
	}
	if fi, err := os.Stat(d.state); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("state directory: %v, %v", fi, err)
	}
	if out, err := exec.Command(d.mux, "list-sessions", "-F", "#{session_name}").Output(); err != nil || strings.TrimSpace(string(out)) != "agent" {
		t.Errorf("sessions on the private server: %q, %v", out, err)
	}
	d.cleanup()
	if err := exec.Command(d.mux, "has-session").Run(); err == nil {
		t.Error("the private tmux server still runs after cleanup")
	}
}
