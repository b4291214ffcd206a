package watcher

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// TestWatchLoopCommandWords reads the watcher's command line back through a
// real shell: every flag value arrives as one word, unchanged.
func TestWatchLoopCommandWords(t *testing.T) {
	sh := testenv.Need(t, "sh")[0]
	var f Settings
	fs := f.FlagSet("watch")
	args := []string{
		"--work-probe", `ls "$TODO" | wc -l; echo '#S'`,
		"--nudge-text", "continue; don't stop $now",
		"--interval", "30",
	}
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	target := coord.Target{Host: "box", Session: "agent"}
	settings := map[string]string{"OMEGA_TELEGRAM_API": "http://127.0.0.1:9/x y", "OMEGA_MONITOR_TIMEOUT": "7"}
	line := loopCommand("/bin/omega monitor", "/st ate", "monitor-box-agent", "/st ate/bin/omega-monitor.sh", target, fs, f, settings, os.Getenv)
	if !strings.HasPrefix(line, "exec ") {
		t.Fatalf("command line %q does not exec the loop", line)
	}
	printer := `words() { for a; do printf '%s\0' "$a"; done; }; words ` + strings.TrimPrefix(line, "exec ")
	cmd := exec.Command(sh, "-c", printer)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sh: %v", err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	want := []string{"env"}
	for _, s := range envSettingList {
		if _, ok := settings[s.name]; !ok {
			want = append(want, "-u", s.name)
		}
	}
	if h := os.Getenv("HOME"); h != "" {
		want = append(want, "HOME="+h)
	}
	want = append(want,
		"OMEGA_MONITOR_BIN=/bin/omega monitor",
		"OMEGA_MONITOR_HOME=/st ate",
		"OMEGA_MONITOR_WATCHER=monitor-box-agent",
		"OMEGA_MONITOR_SESSION=1",
		"OMEGA_MONITOR_STATE=/st ate/monitor-box-agent",
	)
	if mux := os.Getenv("OMEGA_MONITOR_MUX"); mux != "" {
		want = append(want, "OMEGA_MONITOR_MUX="+mux)
	}
	want = append(want, "OMEGA_MONITOR_TIMEOUT=7", "OMEGA_TELEGRAM_API=http://127.0.0.1:9/x y")
	want = append(want, "/st ate/bin/omega-monitor.sh", "box:agent",
		"--interval", "30",
		"--nudge-text", "continue; don't stop $now",
		"--work-probe", `ls "$TODO" | wc -l; echo '#S'`,
	)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("loop command words (-want +got):\n%s", diff)
	}
}

// TestPrivateDirRefusesAnotherUsersSocketDirectory: the ssh control
// directory another local user made first (where their socket would pose as
// this user's ssh master) is refused, as is one others can read.
func TestPrivateDirRefusesAnotherUsersSocketDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "omega-monitor-0")
	if err := privateDir(dir); err != nil {
		t.Fatalf("a fresh directory: %v", err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := privateDir(dir); err == nil {
		t.Error("a directory others can read was taken")
	}
	if os.Geteuid() != 0 {
		t.Skip("giving a directory to another user needs root")
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if err := privateDir(dir); err == nil || !strings.Contains(err.Error(), "belongs to uid 65534") {
		t.Errorf("another user's directory: %v", err)
	}
}

// TestCheckAPI: the Bot API is https, or plain http only to this machine
// (a fake API on loopback): the bot token is in every URL.
func TestCheckAPI(t *testing.T) {
	for v, ok := range map[string]bool{
		"https://api.telegram.org":         true,
		"https://api.telegram.org/x":       true,
		"http://127.0.0.1:9":               true,
		"http://127.0.0.1:38211/x":         true,
		"http://localhost":                 true,
		"http://[::1]:8080/":               true,
		"http://api.telegram.org":          false,
		"http://10.0.0.7:8080":             false,
		"http://127.0.0.1.evil.example":    false,
		"http://localhost.evil.example":    false,
		"http://127.0.0.1:9@evil.example/": false,
		"http://[::1].evil.example":        false,
		"ftp://127.0.0.1":                  false,
	} {
		if _, err := checkAPI(v); (err == nil) != ok {
			t.Errorf("checkAPI(%q): %v, want ok %v", v, err, ok)
		}
	}
}

// TestTitlesOff: only the multiplexer's own word that titles are off counts;
// a tmux without the option (nothing printed) or one that allows them does
// not, nor does anything else it might print.
func TestTitlesOff(t *testing.T) {
	got := map[string]bool{}
	for _, out := range []string{"0\n", "off", "1\n", "on", "", "\n", "#{allow-set-title}", "0 1"} {
		got[out] = TitlesOff(out)
	}
	want := map[string]bool{"0\n": true, "off": true, "1\n": false, "on": false, "": false, "\n": false, "#{allow-set-title}": false, "0 1": false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("TitlesOff (-want +got):\n%s", diff)
	}
}
