package hosts_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/poll"

	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// The live form over a host that never answers: the board shows the
// other host's watchers and the hung host's row, and q ends it while a
// refresh waits on the hung host (the census runs beside the keys).
func TestLiveBoardOverAHungHost(t *testing.T) {
	testenv.EndToEnd(t)
	cfg := testenv.NewSSHConfig(t)
	testenv.SSHD(t, cfg, "alpha", hostEnv(t, watchers(t, "a", 1))...)
	h := testenv.HostileSSHD(t, cfg, "hung", hostEnv(t, watchers(t, "h", 1))...)
	h.Answer(t, "status --json", `while printf ' '; do sleep 1; done`)
	local := watchers(t, "here", 1)
	closeMasters(t, cfg, local)
	tm := testenv.Tmux(t)
	dir := t.TempDir()
	exit := filepath.Join(dir, "exit")
	script := "OMEGA_MONITOR_HOME=" + local + " " + bin(t) + " status --live --interval 200ms --ssh-config " + cfg.Path +
		" --hosts alpha,hung; echo $? >" + exit + ".new; mv " + exit + ".new " + exit + "; exec sleep 600"
	tm.NewSession(t, "board", "sh -c '"+script+"'")
	capture := func() string { return tm.Run(t, "capture-pane", "-p", "-t", "=board:") }
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		s := capture()
		if strings.Contains(s, "alpha/a-0") && strings.Contains(s, "host hung: DEGRADED") {
			return poll.Success()
		}
		return poll.Continue("the board lacks alpha's watcher or hung's row:\n%s", s)
	}, poll.WithTimeout(2*time.Minute), poll.WithDelay(100*time.Millisecond))

	// A refresh is under way at any moment now: each waits 5 s on hung.
	tm.Run(t, "send-keys", "-t", "=board:", "q")
	poll.WaitOn(t, func(poll.LogT) poll.Result {
		data, err := os.ReadFile(exit)
		if err != nil {
			return poll.Continue("the board has not ended: %v\n%s", err, capture())
		}
		if got := strings.TrimSpace(string(data)); got != "0" {
			return poll.Error(&exitError{got})
		}
		return poll.Success()
	}, poll.WithTimeout(2*time.Minute), poll.WithDelay(50*time.Millisecond))
}

type exitError struct{ code string }

func (e *exitError) Error() string { return "the board exited " + e.code }
