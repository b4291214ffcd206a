package watcher

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/muxwake"
)

// TestLoopEnvMuxWake: --mux-wake gives a local target's loop the mux
// wakes' listener as its relay, with the multiplexer and the pane it
// watches; an ssh target's, with the host, its ssh config and the host's
// wake listener to relay beside; a value out of bounds is refused.
func TestLoopEnvMuxWake(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	var f Settings
	fs := f.FlagSet("watch")
	assert.NilError(t, fs.Parse([]string{"--interval", "30", "--pane", "%7", "--mux-wake", "2"}))
	assert.NilError(t, f.Check(func(string) string { return "" }))
	state := filepath.Join(t.TempDir(), "st ate")
	env := map[string]string{"OMEGA_MONITOR_STATE": state, "OMEGA_MONITOR_BIN": "/b in/omega-monitor",
		"OMEGA_MONITOR_MUX": "/bin/true", "HOME": t.TempDir()}
	getenv := func(k string) string { return env[k] }
	e, err := NewLoopEnv(coord.Target{Session: "agent"}, f, os.Getpid(), getenv)
	assert.NilError(t, err)
	out, err := exec.Command(bash, "-c", e.Shell()+`printf '%s\0' "${wake_relay[@]}"`).Output()
	assert.NilError(t, err)
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	want := []string{"/b in/omega-monitor", "wake", "--mux", "--state", state, "--mux-bin", "/bin/true", "--target", "%7",
		"--silence", "2", "--interval", "30"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the mux wakes' listener (-want +got):\n%s", diff)
	}

	f.SSHConfig = "/c fg"
	e, err = NewLoopEnv(coord.Target{Host: "box", Session: "agent"}, f, os.Getpid(), getenv)
	assert.NilError(t, err)
	out, err = exec.Command(bash, "-c", e.Shell()+`printf '%s\0' "${wake_relay[@]}"`).Output()
	assert.NilError(t, err)
	got = strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	want = []string{"/b in/omega-monitor", "wake", "--mux", "--state", state, "--host", "box", "--ssh-config", "/c fg",
		"--target", "%7", "--silence", "2", "--interval", "30", "--timeout", "20", "--", "ssh", "-T"}
	if diff := cmp.Diff(want, got[:len(want)]); diff != "" {
		t.Errorf("an ssh target's mux wakes (-want +got):\n%s", diff)
	}
	if l := got[len(got)-1]; !strings.Contains(l, "wake --listen") {
		t.Errorf("relays %q, want the host's wake listener", l)
	}

	// auto, the default: 2 s, armed where the agent has no hooks of ours
	// (--auto); 0: no listener at all.
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{nil, []string{"/b in/omega-monitor", "wake", "--mux", "--state", state, "--mux-bin", "/bin/true", "--target", "%7",
			"--silence", "2", "--interval", "60", "--auto"}},
		{[]string{"--mux-wake", "auto"}, []string{"/b in/omega-monitor", "wake", "--mux", "--state", state, "--mux-bin", "/bin/true", "--target", "%7",
			"--silence", "2", "--interval", "60", "--auto"}},
		{[]string{"--mux-wake", "0"}, nil},
	} {
		var f Settings
		assert.NilError(t, f.FlagSet("watch").Parse(append([]string{"--pane", "%7"}, tc.args...)))
		assert.NilError(t, f.Check(getenv))
		e, err := NewLoopEnv(coord.Target{Session: "agent"}, f, os.Getpid(), getenv)
		assert.NilError(t, err)
		if diff := cmp.Diff(tc.want, e.wakeRelay()); diff != "" {
			t.Errorf("%q: the mux wakes' listener (-want +got):\n%s", tc.args, diff)
		}
	}

	for _, v := range []string{"301", "-1", "2h", "autox", ""} {
		var f Settings
		fs := f.FlagSet("watch")
		fs.SetOutput(new(strings.Builder))
		if fs.Parse([]string{"--mux-wake", v}) == nil && f.Check(getenv) == nil {
			t.Errorf("--mux-wake %s taken", v)
		}
	}
}

// TestMuxWakeUsage: wake --mux takes either the local multiplexer or
// an ssh host, a relayed listener with the host only, and a host alias
// that could read as an option of ssh's never.
func TestMuxWakeUsage(t *testing.T) {
	for _, args := range [][]string{
		{"--state", "/s", "--target", "%1", "--silence", "2"},
		{"--state", "/s", "--mux-bin", "/bin/true", "--target", "%1", "--silence", "2", "--", "ssh"},
		{"--state", "/s", "--host", "-oProxyCommand=x", "--target", "%1", "--silence", "2"},
		{"--state", "/s", "--host", "box", "--target", "%1", "--silence", "301"},
		{"--state", "/s", "--host", "box", "--target", "%1", "--silence", "2", "--timeout", "0"},
	} {
		var f MuxWakeFlags
		var stderr strings.Builder
		fs := f.FlagSet(&stderr)
		if err := fs.Parse(args); err != nil {
			t.Fatalf("wake --mux %q: %v", args, err)
		}
		if err := f.Check(fs.Args()); !errors.Is(err, ErrMuxWakeUsage) || !strings.HasPrefix(err.Error(), "usage: omega-monitor wake --mux") {
			t.Errorf("wake --mux %q: %v; want the usage", args, err)
		}
	}
}

// TestMuxWakeBudget: the multiplexer's wakes in any window, at two looks
// each, add at most a tenth to the window's regular polls; the window is
// an hour, or 20 intervals where that is longer, so that a long interval
// still has one.
func TestMuxWakeBudget(t *testing.T) {
	for _, tc := range []struct {
		interval time.Duration
		want     muxwake.Budget
	}{
		{time.Minute, muxwake.Budget{Wakes: 3, Window: time.Hour, Gap: 2 * time.Second}},
		{30 * time.Second, muxwake.Budget{Wakes: 6, Window: time.Hour, Gap: 2 * time.Second}},
		{7 * time.Second, muxwake.Budget{Wakes: 25, Window: time.Hour, Gap: 2 * time.Second}},
		{10 * time.Minute, muxwake.Budget{Wakes: 1, Window: 200 * time.Minute, Gap: 2 * time.Second}},
	} {
		got := muxWakeBudget(tc.interval)
		if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(muxwake.Budget{})); diff != "" {
			t.Errorf("interval %v (-want +got):\n%s", tc.interval, diff)
		}
		polls := int(got.Window / tc.interval)
		if looks := got.Wakes * muxWakeLooks; looks*muxWakeShare > polls {
			t.Errorf("interval %v: %d looks of wakes against %d polls, over a tenth", tc.interval, looks, polls)
		}
	}
}
