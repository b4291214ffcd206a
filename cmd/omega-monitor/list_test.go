package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"
	"gotest.tools/v3/icmd"
	"gotest.tools/v3/poll"

	"github.com/omega-monitor/omega-monitor/internal/testenv"
	"github.com/omega-monitor/omega-monitor/internal/watcher"
)

// TestListEverywhere lists a live local server, a reachable alias, two hung
// aliases and a refused one: it returns within its bound and says the right
// thing about each.
func TestListEverywhere(t *testing.T) {
	f := newFleet(t)
	f.tmux.NewSession(t, "agent", "sleep 300")
	f.tmux.NewSession(t, "build", "sleep 300")
	f.tmux.NewSession(t, "x$(y);z w", "sleep 300")
	testenv.SSHD(t, f.ssh, "testbox", "OMEGA_MONITOR_MUX="+f.tmux.Mux)
	testenv.HungHost(t, f.ssh, "silent", false)
	testenv.HungHost(t, f.ssh, "stalled", true)
	testenv.ClosedHost(t, f.ssh, "closed")
	f.run(t, "agent").Assert(t, icmd.Success)
	f.run(t, "testbox:build", "--ssh-config", f.ssh.Path).Assert(t, icmd.Success)

	const bound = 5 * time.Second
	start := time.Now()
	res := f.run(t, "list", "--all-hosts", "--ssh-config", f.ssh.Path, "--timeout", bound.String())
	took := time.Since(start)
	res.Assert(t, icmd.Success)
	if took > bound+3*time.Second {
		t.Errorf("list took %v with a %v bound per host", took, bound)
	}
	// Compare words, not the table's padding.
	var lines []string
	for _, line := range strings.Split(res.Stdout(), "\n") {
		lines = append(lines, strings.Join(strings.Fields(line), " "))
	}
	out := strings.Join(lines, "\n")
	for _, want := range []string{
		"HOST SESSION STATUS",
		"(local) agent watched by monitor-agent",
		"(local) build not watched",
		"(local) monitor-agent watcher of agent",
		"(local) monitor-testbox-build watcher of testbox:build",
		`(local) "x$(y);z w" cannot be watched: it contains '$'`,
		"testbox build watched by monitor-testbox-build",
		"testbox agent not watched",
		"silent - unreachable: coord: host silent: ",
		"stalled - unreachable: coord: host stalled: ",
		"closed - unreachable: coord: host closed: ssh: connect to host 127.0.0.1 port",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks the line %q; it printed:\n%s", want, res.Stdout())
		}
	}

	res = f.run(t, "list", "--json", "--all-hosts", "--ssh-config", f.ssh.Path, "--timeout", bound.String())
	res.Assert(t, icmd.Success)
	var l watcher.Listing
	if err := json.Unmarshal([]byte(res.Stdout()), &l); err != nil {
		t.Fatalf("list --json is not one JSON document: %v\n%s", err, res.Stdout())
	}
	type summary struct {
		Host      string
		Reachable bool
		Sessions  int
	}
	var got []summary
	for _, h := range l.Hosts {
		got = append(got, summary{h.Host, h.Reachable, len(h.Sessions)})
	}
	want := []summary{
		{"", true, 5},
		{"testbox", true, 5},
		{"silent", false, 0},
		{"stalled", false, 0},
		{"closed", false, 0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("list --json hosts (-want +got):\n%s", diff)
	}
	if s := l.Hosts[0].Sessions[0]; s.Session != "agent" || s.WatchedBy != "monitor-agent" || s.Target != "agent" {
		t.Errorf("first local session = %+v, want agent watched by monitor-agent", s)
	}
}

func TestListNoServerNoConfig(t *testing.T) {
	f := newFleet(t)
	res := f.run(t, "list")
	res.Assert(t, icmd.Success)
	if !strings.Contains(res.Stdout(), "(local)  -        no sessions") {
		t.Errorf("list with nothing running printed:\n%s", res.Stdout())
	}
	// Whether the agents' hooks are installed, read off their user files.
	if want := "hooks (a wake at the agent's own events): claude not installed, codex not installed, gemini not installed"; !strings.Contains(res.Stdout(), want) {
		t.Errorf("list lacks %q:\n%s", want, res.Stdout())
	}
	f.run(t, "install", "--hooks", "--gemini").Assert(t, icmd.Success)
	if want := "codex not installed, gemini installed, opencode not installed (omega-monitor install --hooks --claude --codex --opencode)"; !strings.Contains(f.run(t, "list").Stdout(), want) {
		t.Errorf("list after install --hooks --gemini lacks %q", want)
	}
}

func TestListUsage(t *testing.T) {
	tests := []struct {
		args []string
		code int
		out  string
		err  string
	}{
		{[]string{"list", "--help"}, 0, "usage: omega-monitor list", ""},
		{[]string{"list", "agent"}, 2, "", "omega-monitor watch agent"},
		{[]string{"list", "--timeout", "0s"}, 2, "", "--timeout"},
		{[]string{"list", "--timeout", "soon"}, 2, "", `--timeout "soon"`},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := run(tt.args, nil, &stdout, &stderr)
		if code != tt.code || !strings.Contains(stdout.String(), tt.out) || !strings.Contains(stderr.String(), tt.err) {
			t.Errorf("run(%q) = %d\nstdout: %s\nstderr: %s", tt.args, code, &stdout, &stderr)
		}
	}
}

// TestListKillsAHungProxyCommand: a ProxyCommand that hangs, and starts a
// grandchild of its own, is ended with its whole process group when the
// host's clock runs out: list leaves no process behind.
func TestListKillsAHungProxyCommand(t *testing.T) {
	testenv.Need(t, "ssh", "sh", "sleep")
	t.Parallel()
	f := newFleet(t)
	pids := filepath.Join(t.TempDir(), "pids")
	proxy := fmt.Sprintf(`sh -c 'sleep 300 & echo $! >> %s; echo $$ >> %s; sleep 300'`, pids, pids)
	f.ssh.Add(t, "hung", "HostName 127.0.0.1", "ProxyCommand "+proxy, "BatchMode yes")
	res := f.run(t, "list", "--all-hosts", "--ssh-config", f.ssh.Path, "--timeout", "2s")
	res.Assert(t, icmd.Success)
	assert.Assert(t, strings.Contains(res.Stdout(), "hung"), res.Stdout())
	data, err := os.ReadFile(pids)
	assert.NilError(t, err)
	for _, field := range strings.Fields(string(data)) {
		pid, err := strconv.Atoi(field)
		assert.NilError(t, err)
		poll.WaitOn(t, func(poll.LogT) poll.Result {
			if syscall.Kill(pid, 0) != nil {
				return poll.Success()
			}
			return poll.Continue("process %d of the ProxyCommand still runs", pid)
		}, poll.WithTimeout(10*time.Second))
	}
}

// TestListReachesOnlyOptedInHosts: an alias of the ssh config that the
// operator did not name in the hosts file, and does not watch, is never
// connected to (its ProxyCommand, which would leave a mark, never runs);
// list says how many it left out. One named in the hosts file is probed.
func TestListReachesOnlyOptedInHosts(t *testing.T) {
	testenv.Need(t, "ssh", "sh", "touch")
	f := newFleet(t)
	marks := t.TempDir()
	for _, alias := range []string{"stranger", "friend"} {
		f.ssh.Add(t, alias, "HostName 127.0.0.1", "ProxyCommand touch "+marks+"/"+alias, "BatchMode yes")
	}
	assert.NilError(t, os.MkdirAll(f.state, 0o700))
	assert.NilError(t, os.WriteFile(filepath.Join(f.state, "hosts"), []byte("# the hosts list may reach\nfriend\n"), 0o600))
	res := f.run(t, "list", "--ssh-config", f.ssh.Path, "--timeout", "3s")
	res.Assert(t, icmd.Success)
	assert.Assert(t, strings.Contains(res.Stdout(), "(1 more ssh aliases not probed: omega-monitor list --all-hosts"), res.Stdout())
	_, err := os.Stat(filepath.Join(marks, "stranger"))
	assert.Assert(t, os.IsNotExist(err), "list connected to an alias nobody opted into")
	_, err = os.Stat(filepath.Join(marks, "friend"))
	assert.NilError(t, err, "list did not reach the alias named in the hosts file")
}
