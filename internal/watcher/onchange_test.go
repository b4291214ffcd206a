package watcher

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// TestOnChangeReachesTheTick: the loop's tick is given the watcher's
// --on-change, else every watcher's $OMEGA_MONITOR_ON_CHANGE, word for
// word through bash, with the probes' clock; none without either; a
// command of more than one line is refused at start.
func TestOnChangeReachesTheTick(t *testing.T) {
	bash := testenv.Need(t, "bash")[0]
	const hostile = `notify-send "$OMEGA_MONITOR_NEW_STATE" 'it'\''s' ; echo $(id) > /dev/null`
	for _, tc := range []struct {
		name, flag, env string
		want            []string
	}{
		{"none", "", "", nil},
		{"its own", hostile, "every-watcher", []string{"--on-change", hostile, "--on-change-timeout", "9"}},
		{"every watcher's", "", hostile, []string{"--on-change", hostile, "--on-change-timeout", "9"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f Settings
			fs := f.FlagSet("watch")
			args := []string{"--interval", "30"}
			if tc.flag != "" {
				args = append(args, "--on-change", tc.flag)
			}
			if err := fs.Parse(args); err != nil {
				t.Fatal(err)
			}
			env := map[string]string{"OMEGA_MONITOR_STATE": filepath.Join(t.TempDir(), "st"), "OMEGA_MONITOR_BIN": "/bin/omega-monitor",
				"OMEGA_MONITOR_TIMEOUT": "9", "OMEGA_MONITOR_MUX": "/bin/true", "HOME": t.TempDir(), "OMEGA_MONITOR_ON_CHANGE": tc.env}
			getenv := func(k string) string { return env[k] }
			if err := f.Check(getenv); err != nil {
				t.Fatal(err)
			}
			e, err := NewLoopEnv(coord.Target{Session: "agent"}, f, os.Getpid(), getenv)
			if err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(bash, "-c", e.Shell()+`printf '%s\0' "${tick[@]}"`).Output()
			if err != nil {
				t.Fatal(err)
			}
			// The tick's words are the state directory and the readings;
			// the command is in the settings each poll reads (loop.json).
			got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
			if diff := cmp.Diff([]string{"/bin/omega-monitor", "tick", "--state", env["OMEGA_MONITOR_STATE"], "--frame"}, got); diff != "" {
				t.Errorf("the tick's words (-want +got):\n%s", diff)
			}
			var tail []string
			if s := e.pollSettings(); s.OnChange != "" {
				tail = []string{"--on-change", s.OnChange, "--on-change-timeout", strconv.Itoa(s.OnChangeTimeoutS)}
			}
			if diff := cmp.Diff(tc.want, tail); diff != "" {
				t.Errorf("the poll's on-change setting (-want +got):\n%s", diff)
			}
		})
	}
	var f Settings
	fs := f.FlagSet("watch")
	if err := fs.Parse([]string{"--on-change", "a\nb"}); err != nil {
		t.Fatal(err)
	}
	if err := f.Check(func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "--on-change") {
		t.Errorf("a command of two lines: %v", err)
	}
}
