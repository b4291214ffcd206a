package poll

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/capture"
	"github.com/omega-monitor/omega-monitor/probe"
)

// TestAccountOf: the account of a local Claude Code pane is read from the
// .claude.json of its own process's CLAUDE_CONFIG_DIR, so that two agents
// of one machine signed in with two accounts read as two; where the pane's
// process is not the agent's, the watcher's environment says where; a pane
// whose processes are not known, an agent whose description names no
// account file, and a file with no account read as none.
func TestAccountOf(t *testing.T) {
	dir := t.TempDir()
	a, b, home := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "home")
	for folder, id := range map[string]string{a: "aaaa-1", b: "bbbb-2", home: "cccc-3"} {
		if err := os.Mkdir(folder, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(folder, ".claude.json"), []byte(`{"oauthAccount": {"accountUuid": "`+id+`"}}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A process named as Claude Code's is, with the account's folder in
	// its own environment.
	claude := filepath.Join(dir, "claude")
	if err := os.Symlink("/bin/sleep", claude); err != nil {
		t.Fatal(err)
	}
	start := func(configDir string) probe.Process {
		t.Helper()
		cmd := exec.Command(claude, "30")
		cmd.Env = []string{"HOME=" + home, "CLAUDE_CONFIG_DIR=" + configDir}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return probe.Process{PID: cmd.Process.Pid, Comm: "claude", Args: []string{claude, "30"}}
	}
	pane := func(procs ...probe.Process) capture.Capture {
		return capture.Capture{Foreground: probe.Foreground{Known: true, Procs: procs}}
	}
	watcher := []string{"HOME=" + home}
	inA, inB := accountOf(pane(start(a)), nil, "Claude Code", watcher), accountOf(pane(start(b)), nil, "Claude Code", watcher)
	want := map[string]string{
		"a": probe.AccountKey([]byte(`{"oauthAccount": {"accountUuid": "aaaa-1"}}`), []string{"oauthAccount", "accountUuid"}),
		"b": probe.AccountKey([]byte(`{"oauthAccount": {"accountUuid": "bbbb-2"}}`), []string{"oauthAccount", "accountUuid"}),
		"c": probe.AccountKey([]byte(`{"oauthAccount": {"accountUuid": "cccc-3"}}`), []string{"oauthAccount", "accountUuid"}),
	}
	if inA != want["a"] || inB != want["b"] || inA == inB {
		t.Errorf("two panes of two accounts: %q and %q, want %q and %q", inA, inB, want["a"], want["b"])
	}
	shell := probe.Process{PID: os.Getpid(), Comm: "bash", Args: []string{"bash"}}
	if got := accountOf(pane(shell), nil, "Claude Code", watcher); got != want["c"] {
		t.Errorf("a pane without the agent's process: %q, want the watcher's environment's %q", got, want["c"])
	}
	for name, got := range map[string]string{
		"processes not known": accountOf(capture.Capture{}, nil, "Claude Code", watcher),
		"no account file":     accountOf(pane(shell), nil, "Pi", watcher),
		"no HOME":             accountOf(pane(shell), nil, "Claude Code", nil),
		"a file without one":  accountOf(pane(shell), nil, "Claude Code", []string{"HOME=" + dir}),
	} {
		if got != "" {
			t.Errorf("%s: %q, want none", name, got)
		}
	}
	if localAccount(capture.Capture{}, nil, "box:agent") != nil {
		t.Error("an ssh host's pane read for an account here")
	}
}

// TestRemoteAccount: the account of an ssh host's pane is asked for once
// per agent process (the page waits for it), read there by the command the
// loop runs (here by sh, as the host's login shell would), from the
// agent's own CLAUDE_CONFIG_DIR, and recorded: the next look has it, and
// asks nothing. A process started again is asked for again. What a host
// sends back that is not the reading asked for, or a failure, records no
// account and asks no more; a FIFO or a device planted as the file holds
// nothing up.
func TestRemoteAccount(t *testing.T) {
	dir := t.TempDir()
	config, home := filepath.Join(dir, "config"), filepath.Join(dir, "home")
	for _, d := range []string{config, home} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	account := []byte(`{"oauthAccount": {"accountUuid": "uuid-of-ann"}}`)
	if err := os.WriteFile(filepath.Join(config, ".claude.json"), account, 0o600); err != nil {
		t.Fatal(err)
	}
	want := probe.AccountKey(account, []string{"oauthAccount", "accountUuid"})
	claude := filepath.Join(dir, "claude")
	if err := os.Symlink("/bin/sleep", claude); err != nil {
		t.Fatal(err)
	}
	start := func(env ...string) capture.Capture {
		t.Helper()
		cmd := exec.Command(claude, "30")
		cmd.Env = env
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return capture.Capture{Foreground: probe.Foreground{Known: true,
			Procs: []probe.Process{{PID: cmd.Process.Pid, Comm: "claude", Args: []string{claude, "30"}}}}}
	}
	now := time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC)
	d := stateDirectory(t.TempDir())
	// look is one tick's: the account read (or asked for), and the
	// command the loop is handed.
	look := func(c capture.Capture, read *accountRecord) (key string, pending bool, measure string) {
		t.Helper()
		var ask accountRecord
		key, pending = d.remoteAccount(c, nil, read, &ask)("Claude Code")
		if err := d.recordAccount(now, read, &ask, nil, &measure); err != nil {
			t.Fatal(err)
		}
		return key, pending, measure
	}
	// run is the loop's measure on the host, its output in a file.
	run := func(measure string) string {
		t.Helper()
		cmd := exec.Command("timeout", "10", "/bin/sh", "-c", measure)
		cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("the measure: %v", err)
		}
		f := filepath.Join(t.TempDir(), "out")
		if err := os.WriteFile(f, out, 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	pane := start("HOME="+home, "CLAUDE_CONFIG_DIR="+config)
	key, pending, measure := look(pane, nil)
	if key != "" || !pending || measure == "" {
		t.Fatalf("first look: %q, pending %v, measure %q; want it asked for", key, pending, measure)
	}
	rec, ok := d.readAccountReading(now, run(measure), "", nil)
	if !ok || rec.Key != want {
		t.Fatalf("read: %+v (%v), want the key %q", rec, ok, want)
	}
	if key, pending, measure = look(pane, &rec); key != want || pending || measure != "" {
		t.Errorf("the look with it: %q, pending %v, measure %q", key, pending, measure)
	}
	if key, pending, measure = look(pane, nil); key != want || pending || measure != "" {
		t.Errorf("a later look: %q, pending %v, measure %q; want it from the record", key, pending, measure)
	}
	if _, ok := d.readAccountReading(now, run(measure+"true"), "", nil); ok {
		t.Error("an output read as an account's when none was asked for")
	}
	// Started again, without its variable: asked again, read from HOME.
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), []byte(`{"oauthAccount": {"accountUuid": "uuid-of-bob"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	again := start("HOME=" + home)
	if _, pending, measure = look(again, nil); !pending {
		t.Fatal("a process started again is not asked for")
	}
	if rec, _ = d.readAccountReading(now, run(measure), "", nil); rec.Key == "" || rec.Key == want {
		t.Errorf("read from HOME: %q, want bob's", rec.Key)
	}
	hostile := map[string]func(pid int) (output, failed string){
		"failed":            func(int) (string, string) { return "", "ssh: connection refused" },
		"another process's": func(pid int) (string, string) { return write(t, fmt.Sprintf("account %d\n%s", pid+1, account)), "" },
		"no mark":           func(int) (string, string) { return write(t, string(account)), "" },
		"not JSON":          func(pid int) (string, string) { return write(t, fmt.Sprintf("account %d\n\x00\xff{", pid)), "" },
		"an id past its cap": func(pid int) (string, string) {
			return write(t, fmt.Sprintf("account %d\n{\"oauthAccount\": {\"accountUuid\": %q}}", pid, strings.Repeat("a", 400))), ""
		},
	}
	for name, sent := range hostile {
		pane := start("HOME=" + home)
		_, _, measure := look(pane, nil)
		if measure == "" {
			t.Fatalf("%s: not asked for", name)
		}
		output, failed := sent(pane.Foreground.Procs[0].PID)
		rec, ok := d.readAccountReading(now, output, failed, nil)
		if !ok || rec.Key != "" {
			t.Errorf("%s: %+v (%v), want a reading of no account", name, rec, ok)
		}
		if key, pending, measure := look(pane, &rec); key != "" || pending || measure != "" {
			t.Errorf("%s: asked again (%q, %v, %q)", name, key, pending, measure)
		}
	}
	for name, plant := range map[string]func(string) error{
		"a FIFO":   func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"a device": func(p string) error { return os.Symlink("/dev/zero", p) },
	} {
		planted := filepath.Join(t.TempDir(), "planted")
		if err := os.Mkdir(planted, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := plant(filepath.Join(planted, ".claude.json")); err != nil {
			t.Fatal(err)
		}
		_, _, measure := look(start("HOME="+home, "CLAUDE_CONFIG_DIR="+planted), nil)
		if rec, _ := d.readAccountReading(now, run(measure), "", nil); rec.Key != "" {
			t.Errorf("%s: read as %q", name, rec.Key)
		}
	}
}

// write is a file holding text, for an output a host sent.
func write(t *testing.T, text string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "out")
	if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}
