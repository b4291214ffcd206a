package claudecode_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/claudecode"
	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

func TestModeArgs(t *testing.T) {
	for _, c := range []struct {
		mode claudecode.Mode
		want string
	}{
		{claudecode.Manual, "--permission-mode manual"},
		{claudecode.Auto, "--permission-mode auto"},
		{claudecode.Bypass, "--dangerously-skip-permissions"},
	} {
		if got := strings.Join(c.mode.Args(), " "); got != c.want {
			t.Errorf("%v.Args() = %q, want %q", c.mode, got, c.want)
		}
	}
}

func TestReadStatusMatchesPane(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, ".claude", "sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"100.json": `{"pid":100,"status":"busy","tmux":"a:@0.%1","updatedAt":5}`,
		"200.json": `{"pid":200,"status":"waiting","waitingFor":"input needed","tmux":"b:@1.%12","updatedAt":7}`,
		"300.json": `{"pid":300,"status":"idle","tmux":"c:@2.%2","upd`, // caught mid-write
		"300.key":  `not a status file`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	st, err := claudecode.ReadStatus(home, "%12")
	if err != nil {
		t.Fatal(err)
	}
	if st == nil || st.PID != 200 || st.Status != "waiting" || st.WaitingFor != "input needed" {
		t.Errorf("ReadStatus(%%12) = %+v, want pid 200 waiting", st)
	}
	for _, pane := range []string{"%2", "%3", "%"} {
		if st, err := claudecode.ReadStatus(home, pane); err != nil || st != nil {
			t.Errorf("ReadStatus(%s) = %+v, %v; want nothing", pane, st, err)
		}
	}
}

// TestRealClaudeCode runs the pinned Claude Code against the fake API: a
// message reaches the model byte for byte, the agent's status file follows
// its state, and a command waiting for permission does not run.
func TestRealClaudeCode(t *testing.T) {
	bin := claudecode.Binary(t)
	api := fakeapi.New(t)
	s := claudecode.Start(t, testenv.Tmux(t), claudecode.Config{Binary: bin, API: api.URL, Mode: claudecode.Manual})

	st := s.Status(t)
	if st.Version != claudecode.Version || st.PaneID() != s.Pane || st.Status != "idle" {
		t.Errorf("status file at start: %s", st.Raw)
	}

	odd := `please continue: "quoted"; $HOME & 'single' — ünïcödé ✓ 100%`
	since := time.Now()
	s.Type(t, odd)
	s.Stable(t, 2*time.Minute, "idle", since, func(screen string) bool { return strings.Contains(screen, "nothing more to do") })
	if texts := api.Texts(); len(texts) != 1 || texts[0] != odd {
		t.Fatalf("the fake API saw %q, want exactly [%q]", texts, odd)
	}

	since = time.Now()
	s.Type(t, "please "+fakeapi.TriggerSlow)
	s.Stable(t, 2*time.Minute, "busy", since, nil)

	since = time.Now()
	s.Keys(t, "Escape")
	s.Stable(t, 2*time.Minute, "idle", since, func(screen string) bool { return strings.Contains(screen, "Interrupted") })

	since = time.Now()
	s.Type(t, "now "+fakeapi.TriggerBash)
	snap := s.Stable(t, 2*time.Minute, "waiting", since, func(screen string) bool { return strings.Contains(screen, "Do you want to proceed?") })
	if snap.Status.WaitingFor != "permission prompt" {
		t.Errorf("waiting for %q, want permission prompt", snap.Status.WaitingFor)
	}
	marker := filepath.Join(s.Dir, fakeapi.BashMarker)
	time.Sleep(2 * time.Second)
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the command ran while its permission dialog was up")
	}
	since = time.Now()
	s.Keys(t, "Escape")
	s.Stable(t, 2*time.Minute, "idle", since, nil)
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the command ran after its permission dialog was cancelled")
	}
	if got := api.Texts(); len(got) != 3 || got[2] != "now "+fakeapi.TriggerBash {
		t.Errorf("the fake API saw %q", got)
	}
	if u := api.Unknown(); len(u) > 0 {
		t.Logf("the fake API had no answer for %q", u)
	}
}

// TestRealClaudeCodeBypass checks that the bypass mode starts without its
// warning dialog and runs the command without asking.
func TestRealClaudeCodeBypass(t *testing.T) {
	bin := claudecode.Binary(t)
	api := fakeapi.New(t)
	s := claudecode.Start(t, testenv.Tmux(t), claudecode.Config{Binary: bin, API: api.URL, Mode: claudecode.Bypass, Width: 60})
	since := time.Now()
	s.Type(t, "now "+fakeapi.TriggerBash)
	s.Stable(t, 2*time.Minute, "idle", since, func(screen string) bool { return strings.Contains(screen, "The command finished.") })
	if _, err := os.Stat(filepath.Join(s.Dir, fakeapi.BashMarker)); err != nil {
		t.Errorf("the command did not run in bypass mode: %v", err)
	}
}
