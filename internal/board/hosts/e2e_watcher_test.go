package hosts_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	"gotest.tools/v3/poll"

	"github.com/omega-monitor/omega-monitor/internal/board/hosts"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
	"github.com/omega-monitor/omega-monitor/internal/testfleet"
)

// apiHome is a state home with one watcher, monitor-api of target api,
// whose history, verdict and log are of the last hour.
func apiHome(t *testing.T) string {
	ago := func(d time.Duration) string { return time.Now().Add(-d).UTC().Format(time.RFC3339) }
	return testfleet.Write(t, time.Now(), testfleet.Watcher{Name: "monitor-api", Target: "api", State: "STALLED", Work: "3", Progress: "1", Used: 1, Limit: 5,
		History: []string{
			fmt.Sprintf(`{"ts":%q,"target":"api","event":"state","state":"STALLED","from":"WORKING","to":"STALLED"}`, ago(50*time.Minute)),
			fmt.Sprintf(`{"ts":%q,"target":"api","event":"nudge","state":"STALLED"}`, ago(40*time.Minute)),
		},
		Log: []string{"MONITOR · api · WORKING", "MONITOR · api · STALLED · nudged (1/5)"}})
}

// TestWatcherOfAnotherHost: the MCP server's history, explain and logs of
// a watcher of another host (HOST/WATCHER) are one ssh call to that host's
// read-watcher over real sshd; a host that lies (too much, torn, a path
// for a name, escapes) or hangs costs that call one error in one line,
// within the clock, and never more.
func TestWatcherOfAnotherHost(t *testing.T) {
	testenv.EndToEnd(t)
	cfg := testenv.NewSSHConfig(t)
	testenv.SSHD(t, cfg, "alpha", hostEnv(t, apiHome(t))...)
	testenv.SSHD(t, cfg, "bare", "HOME="+t.TempDir(), "OMEGA_MONITOR_HOME="+t.TempDir())
	hostile := func(alias, answer string) *testenv.HostileHost {
		h := testenv.HostileSSHD(t, cfg, alias, hostEnv(t, apiHome(t))...)
		h.Answer(t, "read-watcher", answer)
		return h
	}
	hostile("huge", `head -c 8000000 /dev/zero | tr '\0' '['`)
	hostile("torn", `printf '{"watcher":"monitor-api","log":["x"'`)
	hostile("path", `printf '{"watcher":"../../../etc","log":["root:x:0:0"]}'`)
	hostile("many", `printf '{"watcher":"monitor-api","log":["1","2","3","4"]}'`)
	esc := hostile("esc", "cat <<'EOF'\n"+`{"watcher":"monitor-api","log":["MONITOR \u001b]0;pwned\u0007\u001b[2J \u202ex"]}`+"\nEOF\n")
	hostile("hung", `while printf ' '; do sleep 1; done`)
	local := t.TempDir()
	closeMasters(t, cfg, local)
	b, err := hosts.Open(local, "alpha,bare,huge,torn,path,many,esc,hung", cfg.Path, func(string) string { return "" })
	assert.NilError(t, err)

	// ask asks until the answer is not one of a machine too loaded for the
	// handshake within the clock, and checks that one call never took
	// more than the clock allows.
	ask := func(ref string, q hosts.Query) (*hosts.Records, error) {
		t.Helper()
		var r *hosts.Records
		var err error
		poll.WaitOn(t, func(poll.LogT) poll.Result {
			start := time.Now()
			r, err = b.Watcher(context.Background(), ref, q, time.Now())
			if took := time.Since(start); took > boardBound {
				return poll.Error(fmt.Errorf("%s took %v", ref, took))
			}
			if err != nil && strings.Contains(err.Error(), "unreachable") && !strings.HasPrefix(ref, "hung/") {
				return poll.Continue("%s: %v", ref, err)
			}
			return poll.Success()
		}, poll.WithTimeout(3*time.Minute), poll.WithDelay(time.Second))
		return r, err
	}

	r, err := ask("alpha/monitor-api", hosts.Query{Kind: hosts.History, Days: 1})
	assert.NilError(t, err)
	assert.Equal(t, r.Name(), "alpha/monitor-api")
	assert.Equal(t, len(r.History), 2)
	assert.Equal(t, r.History[1]["event"], "nudge")
	r, err = ask("alpha/api", hosts.Query{Kind: hosts.Explain})
	assert.NilError(t, err)
	assert.Equal(t, r.State.State, "STALLED")
	r, err = ask("alpha/api", hosts.Query{Kind: hosts.Logs, Lines: 1})
	assert.NilError(t, err)
	assert.DeepEqual(t, r.Log, []string{"MONITOR · api · STALLED · nudged (1/5)"})
	_, err = ask("alpha/nobody", hosts.Query{Kind: hosts.Explain})
	assert.ErrorContains(t, err, `host alpha: its omega-monitor read-watcher failed (exit status 1): omega-monitor: read-watcher: no watcher "nobody"`)

	logs := hosts.Query{Kind: hosts.Logs, Lines: 3}
	for ref, want := range map[string]string{
		"bare/api": "host bare: no omega-monitor on the host",
		"huge/api": "host huge: its answer is larger than 4 MiB: not read",
		"torn/api": "host torn: its answer is not a watcher's records: unexpected EOF",
		"path/api": `host path: its answer names the watcher "../../../etc"`,
		"many/api": "host many: its answer holds 4 log lines, 3 asked",
		"hung/api": "host hung: ",
	} {
		_, err := ask(ref, logs)
		assert.ErrorContains(t, err, want)
		assert.Check(t, !strings.ContainsAny(err.Error(), "\n\x1b\x07"), "%q", err)
	}
	r, err = ask("esc/api", logs)
	assert.NilError(t, err)
	assert.Assert(t, len(r.Log) == 1 && strings.HasPrefix(r.Log[0], "MONITOR ") && !strings.ContainsAny(r.Log[0], "\x1b\x07\u202e"), "%q", r.Log)

	// The host was asked for the watcher as a single quoted word, under
	// the board's environment mark.
	cmds := strings.Join(esc.Commands(t), "\n")
	assert.Check(t, strings.Contains(cmds, hosts.ReadEnv+`=1 exec "$b" read-watcher --logs 3 -- '\''api'\''`), "%s", cmds)
}
