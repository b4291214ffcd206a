package hosts_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	"gotest.tools/v3/poll"

	"github.com/omega-monitor/omega-monitor/internal/board"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
	"github.com/omega-monitor/omega-monitor/internal/testfleet"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.RemoveBuilds()
	os.Exit(code)
}

// boardBound is what one look of a board over hosts may take, however a
// host hangs: its clock (5 s), and room for a loaded machine.
const boardBound = 60 * time.Second

// bin is the omega-monitor built for the test, on every "host" alike.
func bin(t *testing.T) string {
	return filepath.Join(testenv.Build(t, "../../../cmd/omega-monitor"), "omega-monitor")
}

// hostEnv is the environment of a test host's sessions: its state home
// and its omega-monitor.
func hostEnv(t *testing.T, home string) []string {
	return []string{"HOME=" + t.TempDir(), "OMEGA_MONITOR_HOME=" + home, "OMEGA_MONITOR_BIN=" + bin(t), "LANG=C.UTF-8"}
}

// watchers writes n live watchers named monitor-<prefix>-<i>, each of
// target <prefix>-<i>, under a new state home.
func watchers(t *testing.T, prefix string, n int) string {
	var ws []testfleet.Watcher
	for i := range n {
		name := fmt.Sprintf("%s-%d", prefix, i)
		ws = append(ws, testfleet.Watcher{Name: "monitor-" + name, Target: name, State: "STALLED", Work: "3", Progress: "1", Used: 1, Limit: 5,
			History: []string{testfleet.HistoryLine(time.Hour, "nudge", "STALLED")}, Log: []string{"MONITOR · " + name + " · STALLED"}})
	}
	return testfleet.Write(t, time.Now(), ws...)
}

// closeMasters ends, when the test ends, the ssh connections the board of
// home kept for the next refresh.
func closeMasters(t *testing.T, cfg *testenv.SSHConfig, home string) {
	t.Cleanup(func() {
		socks, _ := filepath.Glob(filepath.Join(home, ".board-ssh", "*", "ssh-control"))
		for _, s := range socks {
			exec.Command("ssh", "-F", cfg.Path, "-o", "ControlPath="+s, "-O", "exit", filepath.Base(filepath.Dir(s))).Run()
		}
	})
}

// status runs the board of home with args, and returns its exit status,
// standard output and how long it took.
func status(t *testing.T, home string, args ...string) (int, string, time.Duration) {
	t.Helper()
	cmd := exec.Command(bin(t), append([]string{"status"}, args...)...)
	cmd.Env = append(os.Environ(), "OMEGA_MONITOR_HOME="+home, "HOME="+t.TempDir())
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if errb.Len() > 0 {
		t.Logf("status %s: stderr: %s", strings.Join(args, " "), errb.String())
	}
	return code, out.String(), took
}

// The done-when of issue 39: a board on one machine shows the watchers of
// two other hosts (real sshd), and a host made unreachable or hostile
// (an answer too big, malformed, laden with escapes, or none at all)
// costs only its row, within the clock.
func TestBoardOfThreeMachines(t *testing.T) {
	testenv.EndToEnd(t)
	cfg := testenv.NewSSHConfig(t)
	testenv.SSHD(t, cfg, "alpha", hostEnv(t, watchers(t, "a", 2))...)
	testenv.SSHD(t, cfg, "beta", hostEnv(t, watchers(t, "b", 1))...)
	testenv.ClosedHost(t, cfg, "dead")
	// A host that sends an ssh banner, then nothing.
	testenv.HungHost(t, cfg, "stall", true)
	// A host without omega-monitor: no OMEGA_MONITOR_BIN, none on its PATH
	// or in its HOME.
	testenv.SSHD(t, cfg, "bare", "HOME="+t.TempDir(), "OMEGA_MONITOR_HOME="+t.TempDir())
	hostile := func(alias, answer string) {
		h := testenv.HostileSSHD(t, cfg, alias, hostEnv(t, watchers(t, alias, 1))...)
		h.Answer(t, "status --json", answer)
	}
	hostile("huge", `head -c 8000000 /dev/zero | tr '\0' '['`)
	hostile("torn", `printf '{"generated_at":"2026-12-01T00:00:00Z","watchers":[{"name":"x"'`)
	// A board that is a board, but for the escapes in its texts.
	hostile("esc", "cat <<'EOF'\n"+`{"generated_at":"2026-12-01T00:00:00Z","watchers":[{"name":"monitor-e","target":"e\u001b]0;pwned\u0007\u001b[2J","liveness":"live","state":"QUESTION","needs_human":"question","last_line":"\u001b]52;c;ZWNobyBoaQ==\u0007x\u202e"}],"fleet":{},"degraded":false,"errors":[]}`+"\nEOF\n")
	// A host that answers a space a second, for ever: it ends itself
	// once nobody reads it.
	hostile("hung", `while printf ' '; do sleep 1; done`)
	local := watchers(t, "here", 1)
	closeMasters(t, cfg, local)
	all := "alpha,beta,dead,stall,bare,huge,torn,esc,hung"

	wants := []string{
		"here-0 ", "alpha/a-0 ", "alpha/a-1 ", "beta/b-0 ", "esc/e ",
		"host alpha: 2 watchers, read in ", "host beta: 1 watcher, read in ",
		"host dead: DEGRADED: unreachable: ",
		"host bare: DEGRADED: no omega-monitor on the host: install it there, or set OMEGA_MONITOR_BIN in its environment (answered in ",
		"host huge: DEGRADED: its answer is larger than 4 MiB: not read",
		"host hung: DEGRADED: too slow: its answer did not end within 5s (",
		"host stall: DEGRADED: unreachable: ", // ssh ends it, or the clock
		"host esc: 1 watcher, read in ",
		"host torn: DEGRADED: its answer is not a board: unexpected EOF (answered in ",
	}
	// A loaded machine may take longer than a host's 5 s for eight
	// handshakes at once: the board is asked again until every host had
	// its chance (the next refresh goes through the connections the last
	// one kept). Each look must cost the board no more than the host's
	// clock, whatever the hung host does.
	var out string
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		code, o, took := status(t, local, "--once", "--ssh-config", cfg.Path, "--hosts", all)
		out = o
		if code != 0 {
			return poll.Error(fmt.Errorf("status --once: exit %d:\n%s", code, out))
		}
		if took > boardBound {
			return poll.Error(fmt.Errorf("status --once took %v: the hung host held the board", took))
		}
		for _, want := range wants {
			if !strings.Contains(out, want) {
				return poll.Continue("status --once (%v) lacks %q:\n%s", took, want, out)
			}
		}
		t.Logf("status --once over 9 hosts took %v:\n%s", took, out)
		return poll.Success()
	}, poll.WithTimeout(3*time.Minute), poll.WithDelay(time.Second))
	assert.Check(t, !strings.ContainsAny(out, "\x1b\x07"), "an escape of a host's reached the board")
	assert.Check(t, !strings.Contains(out, "huge/"), "a host whose answer was not read put a watcher on the board")

	code, out, _ := status(t, local, "--json", "--ssh-config", cfg.Path, "--hosts", all)
	assert.Equal(t, code, 0)
	var f board.Fleet
	assert.NilError(t, json.Unmarshal([]byte(out), &f))
	got := map[string]string{}
	for _, w := range f.Watchers {
		got[w.Host+"/"+w.Name] = w.Liveness
	}
	assert.DeepEqual(t, got, map[string]string{
		"/monitor-here-0": "live", "alpha/monitor-a-0": "live", "alpha/monitor-a-1": "live",
		"beta/monitor-b-0": "live", "esc/monitor-e": "live",
	})
	assert.Equal(t, f.Fleet.Running, 5)
	assert.Equal(t, f.Fleet.Questions, 1)
	assert.Check(t, f.Degraded)
	rows := map[string]board.Host{}
	for _, h := range f.Hosts {
		rows[h.Name] = h
	}
	for _, name := range []string{"alpha", "beta", "esc"} {
		h := rows[name]
		assert.Check(t, h.Reachable && !h.Degraded && h.FreshAt != nil && h.RTTMs > 0, "%s: %+v", name, h)
	}
	for _, name := range []string{"dead", "stall", "bare", "huge", "torn", "hung"} {
		h := rows[name]
		assert.Check(t, h.Degraded && h.Reason != "", "%s: %+v", name, h)
	}
	assert.Check(t, !strings.Contains(out, `\u001b`), "an escape of a host's reached the JSON")

	// Only hosts that cannot be read, and no watcher here: degraded,
	// never empty (exit 4).
	empty := t.TempDir()
	closeMasters(t, cfg, empty)
	code, out, _ = status(t, empty, "--once", "--ssh-config", cfg.Path, "--hosts", "dead,torn")
	assert.Equal(t, code, 4, out)
}
