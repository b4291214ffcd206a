package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	"gotest.tools/v3/poll"

	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// TestLoopReachesEveryChannelAndRunsOnChange: a watcher, as the loop runs
// it, pages a question to the funnel and to a webhook listed in the
// channels file (its token on no line or log), once; and --on-change runs
// its command for each change of state with the states in its environment.
func TestLoopReachesEveryChannelAndRunsOnChange(t *testing.T) {
	t.Parallel()
	s := testenv.Tmux(t)
	startAgent(t, s, "agent", "AGENT_MODE=question")
	var mu sync.Mutex
	var bodies []string
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, r.URL.Path+" "+string(b))
		mu.Unlock()
	}))
	t.Cleanup(hook.Close)
	home := t.TempDir()
	const secret = "s3cr3tT0kenXYZ"
	assert.NilError(t, os.WriteFile(filepath.Join(home, "channels"), []byte("generic+"+hook.URL+"/in/"+secret+"\n"), 0o600))
	changes := filepath.Join(t.TempDir(), "changes")
	onChange := `printf '%s %s -> %s\n' "$OMEGA_MONITOR_TARGET" "$OMEGA_MONITOR_OLD_STATE" "$OMEGA_MONITOR_NEW_STATE" >>` + changes
	r := startLoop(t, loopOptions{target: "agent", home: home,
		flags: []string{"--mux", s.Mux, "--interval", "1", "--work-probe", "echo 5", "--on-change", onChange}})
	r.waitLine("escalated to the operator", 60*time.Second)
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		mu.Lock()
		defer mu.Unlock()
		if len(bodies) == 0 {
			return poll.Continue("the webhook has nothing yet")
		}
		return poll.Success()
	}, poll.WithTimeout(60*time.Second))
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		data, _ := os.ReadFile(changes)
		if !strings.Contains(string(data), "agent NONE -> QUESTION") {
			return poll.Continue("on-change said %q", data)
		}
		return poll.Success()
	}, poll.WithTimeout(30*time.Second))
	r.waitLines(len(r.waitLines(1, time.Second))+3, 30*time.Second) // three polls more: no page again
	r.stop()
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, len(bodies), 1, "the webhook got %q", bodies)
	assert.Assert(t, strings.Contains(bodies[0], "QUESTION"), bodies[0])
	assert.Equal(t, len(r.alerts()), 1, "the funnel got %q", r.alerts())
	for _, name := range []string{"monitor.log", "watcher.log", "history.jsonl"} {
		data, _ := os.ReadFile(filepath.Join(r.state, name))
		assert.Assert(t, !strings.Contains(string(data), secret), "%s holds the channel's token", name)
	}
}
