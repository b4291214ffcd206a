package watcher

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/board"
	"github.com/omega-monitor/omega-monitor/internal/remotewake"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

func TestHookPaneOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want HookPane
		ok   bool
	}{
		{"tmux", map[string]string{"TMUX_PANE": "%3", "TMUX": "/tmp/tmux-1000/default,4242,0"}, HookPane{"%3", "/tmp/tmux-1000/default"}, true},
		{"a comma in the socket", map[string]string{"TMUX_PANE": "%3", "TMUX": "/tmp/a,b/s,4242,7"}, HookPane{"%3", "/tmp/a,b/s"}, true},
		{"rmux", map[string]string{"RMUX_PANE": "%12", "RMUX": "/run/user/1/rmux/s,9,1"}, HookPane{"%12", "/run/user/1/rmux/s"}, true},
		{"no multiplexer", map[string]string{}, HookPane{}, false},
		{"a pane without its server", map[string]string{"TMUX_PANE": "%3"}, HookPane{}, false},
		{"not a pane id", map[string]string{"TMUX_PANE": "%3;rm", "TMUX": "/tmp/s,1,0"}, HookPane{}, false},
		{"a relative socket", map[string]string{"TMUX_PANE": "%3", "TMUX": "s,1,0"}, HookPane{}, false},
		{"one field", map[string]string{"TMUX_PANE": "%3", "TMUX": "/tmp/s"}, HookPane{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := HookPaneOf(func(k string) string { return tc.env[k] })
			if ok != tc.ok {
				t.Errorf("ok = %v, want %v", ok, tc.ok)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("HookPaneOf (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWakePaneWakesOnlyItsWatcher: each watcher's loop is a sleep that a
// SIGUSR1 ends; a hook's pane wakes exactly the watcher that follows that
// pane on that server, and none for a pane nobody follows.
func TestWakePaneWakesOnlyItsWatcher(t *testing.T) {
	sleep := testenv.Need(t, "sleep")[0]
	home := t.TempDir()
	os.Chmod(home, 0o700)
	type watcher struct {
		socket, pinned, captured string
	}
	watchers := map[string]watcher{
		"pinned":           {"/s/a", "%1", ""},
		"captured":         {"/s/a", "", "agent:@2.%2"},
		"other-server":     {"/s/b", "%1", ""},
		"remote":           {"", "%1", ""},
		"pinned-elsewhere": {"/s/a", "%4", "agent:@2.%1"},
	}
	procs := map[string]*exec.Cmd{}
	for name, w := range watchers {
		cmd := exec.Command(sleep, "30")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		procs[name] = cmd
		token, _ := board.SystemProcs{}.StartToken(cmd.Process.Pid)
		d := statedir.Dir(filepath.Join(home, name))
		os.Mkdir(string(d), 0o700)
		rec := statedir.LoopRecord{Pid: cmd.Process.Pid, StartToken: token, Socket: w.socket, Settings: map[string]string{}}
		if w.pinned != "" {
			rec.Settings["pane"] = w.pinned
		}
		if err := d.WriteRecord(statedir.Loop, rec); err != nil {
			t.Fatal(err)
		}
		if w.captured != "" {
			d.WriteRecord(statedir.State, map[string]any{"pane": w.captured})
		}
	}
	// Clutter a home holds: files, a directory without a loop.
	os.WriteFile(filepath.Join(home, "alert-failed.log"), nil, 0o600)
	os.Mkdir(filepath.Join(home, "audits"), 0o700)

	for _, tc := range []struct {
		pane HookPane
		want []string
	}{
		{HookPane{"%9", "/s/a"}, nil},
		{HookPane{"%1", "/s/c"}, nil},
		{HookPane{"%1", "/s/a"}, []string{"pinned"}},
		{HookPane{"%2", "/s/a"}, []string{"captured"}},
		{HookPane{"%1", "/s/b"}, []string{"other-server"}},
	} {
		woken, err := WakePane(home, tc.pane)
		if err != nil {
			t.Errorf("WakePane(%v): %v", tc.pane, err)
		}
		var got []string
		for _, dir := range woken {
			got = append(got, filepath.Base(dir))
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("WakePane(%v) woke (-want +got):\n%s", tc.pane, diff)
		}
	}
	// Each woken sleep died of the signal; every other one still runs.
	for name, cmd := range procs {
		want := name == "pinned" || name == "captured" || name == "other-server"
		if want {
			cmd.Wait()
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGUSR1 {
				t.Errorf("%s: ended by %v, want SIGUSR1", name, cmd.ProcessState)
			}
			continue
		}
		if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
			t.Errorf("%s was signalled: %v", name, err)
		}
	}
}

func TestWakePaneRefusesAnOpenHome(t *testing.T) {
	home := t.TempDir()
	os.Chmod(home, 0o777)
	if _, err := WakePane(home, HookPane{"%1", "/s/a"}); err == nil || !strings.Contains(err.Error(), "writable by others") {
		t.Errorf("WakePane in a home others can write: %v", err)
	}
}

func TestDrainPayloadIsBounded(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	start := time.Now()
	DrainPayload(r, 100*time.Millisecond) // a writer that never closes
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("DrainPayload on an open pipe took %v", d)
	}
	DrainPayload(strings.NewReader(strings.Repeat("x", 3*MaxHookPayload)), time.Second)
}

// TestWakeRelayCommandLine: a remote target's loop gets its relay's command
// line, read back through bash word for word: the relay, then ssh without a
// terminal, with no forwarding of any kind, over the watcher's ControlMaster,
// running the fixed listener command for the watcher's pane target; a
// local target gets none (its hooks signal the loop themselves).
func TestWakeRelayCommandLine(t *testing.T) {
	bash := testenv.Need(t, "bash")[0]
	for _, tc := range []struct {
		target coord.Target
		pane   string
		listen string // the listener's --target
	}{
		{coord.Target{Host: "box", Session: "agent"}, "", "=agent:"},
		{coord.Target{Host: "box", Session: "agent"}, "%7", "%7"},
		{coord.Target{Session: "agent"}, "", ""},
	} {
		t.Run(tc.target.String()+tc.pane, func(t *testing.T) {
			var f Settings
			fs := f.FlagSet("watch")
			args := []string{"--interval", "30", "--mux-wake", "0"} // the hooks' relay alone
			if tc.pane != "" {
				args = append(args, "--pane", tc.pane)
			}
			if err := fs.Parse(args); err != nil {
				t.Fatal(err)
			}
			state := filepath.Join(t.TempDir(), "st ate")
			env := map[string]string{"OMEGA_MONITOR_STATE": state, "OMEGA_MONITOR_BIN": "/b in/omega-monitor", "OMEGA_MONITOR_TIMEOUT": "9",
				"OMEGA_MONITOR_MUX": "/bin/true", "HOME": t.TempDir()}
			e, err := NewLoopEnv(tc.target, f, os.Getpid(), func(k string) string { return env[k] })
			if err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(bash, "-c", e.Shell()+`printf '%s\0' "${wake_relay[@]}"`).Output()
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
			if tc.listen == "" {
				if len(got) != 1 || got[0] != "" {
					t.Errorf("a local target's relay: %q, want none", got)
				}
				return
			}
			want := []string{"/b in/omega-monitor", "wake", "--relay", "--state", state, "--timeout", "9", "--", "ssh", "-T"}
			if diff := cmp.Diff(want, got[:len(want)]); diff != "" {
				t.Errorf("the relay's words (-want +got):\n%s", diff)
			}
			opts := strings.Join(got[len(want):len(got)-3], " ")
			for _, o := range []string{"-a -x", "ForwardAgent=no", "ClearAllForwardings=yes", "Tunnel=no", "PermitLocalCommand=no",
				"BatchMode=yes", "ControlMaster=no", "ControlPath=" + coord.ControlPath(state, os.Getuid())} {
				if !strings.Contains(opts, o) {
					t.Errorf("ssh options %q lack %q", opts, o)
				}
			}
			if diff := cmp.Diff([]string{"--", "box", remotewake.ListenCommand(tc.listen)}, got[len(got)-3:]); diff != "" {
				t.Errorf("the remote command (-want +got):\n%s", diff)
			}
		})
	}
}
