package poll

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/capture"
	"github.com/omega-monitor/omega-monitor/internal/pollset"
)

// TestRemoteVitalsCost measures what the transcript adds to a remote
// capture, run only when OMEGA_MONITOR_MEASURE is set (it asserts nothing:
// it prints figures). Captures alternate between a host whose pane has a
// transcript of 1 MiB (the frame carries its last VitalsTail bytes) and
// the same host with the transcript moved away (the frame carries none),
// so that the machine's load falls on both alike. For each: the CPU of
// the ssh client, the CPU of the remote script run by sh as sshd runs it
// (with the processes it waits for), the frame's size, and the tick's
// reading of the frame (capture.Read and the counting, in this process,
// each side with a state of its own as a watcher keeps it).
func TestRemoteVitalsCost(t *testing.T) {
	if os.Getenv("OMEGA_MONITOR_MEASURE") == "" {
		t.Skip("set OMEGA_MONITOR_MEASURE=1 to measure")
	}
	h := newRemoteHost(t)
	var data strings.Builder
	at := time.Now().Add(-time.Minute)
	for data.Len() < 1<<20 {
		data.WriteString(claudeLine("m", "tool_use", bashBlock, at))
	}
	appendFile(t, h.transcript, data.String())
	away := h.transcript + ".away"
	measureVitals(t, h, func(on bool) {
		if on {
			os.Rename(away, h.transcript)
		} else {
			os.Rename(h.transcript, away)
		}
	})
}

// TestRemoteCodexVitalsCost measures what Codex's session log adds to a
// remote capture, as TestRemoteVitalsCost does for Claude Code's
// transcript: a log of 1 MiB of the pane's directory, written within the
// last 5 minutes, so that the capture's find, its reading of the log's
// first line and the witness's tail of it run either way; on the side
// without, a Claude Code status file names the pane (its transcript
// missing), which sends no Codex block. The difference is the block alone.
func TestRemoteCodexVitalsCost(t *testing.T) {
	if os.Getenv("OMEGA_MONITOR_MEASURE") == "" {
		t.Skip("set OMEGA_MONITOR_MEASURE=1 to measure")
	}
	h := newCodexHost(t)
	at := time.Now().Add(-time.Minute)
	var data strings.Builder
	data.WriteString(codexMeta(h.dir, at))
	for data.Len() < 1<<20 {
		data.WriteString(codexItem("function_call", at))
	}
	appendFile(t, filepath.Join(h.day, "rollout-2026-03-04T12-00-00-0199a213.jsonl"), data.String())
	status := filepath.Join(h.home, ".claude", "sessions", "4242.json")
	measureVitals(t, h.remoteHost, func(on bool) {
		if on {
			os.Remove(status)
		} else {
			h.status(t, "4242", remoteSession, 2)
		}
	})
}

// measureVitals alternates captures of h with the record on and off
// (toggle), and logs the medians of each side's CPU and the frame's size.
func measureVitals(t *testing.T, h *remoteHost, toggle func(on bool)) {
	const rounds = 40
	type run struct{ ssh, script, read time.Duration }
	var with, without []run
	var sizeWith, sizeWithout int
	// Each side keeps its state, as a watcher does: after the first poll
	// only what was added is counted.
	stateWith, stateWithout := t.TempDir(), t.TempDir()
	for i := range 2 * rounds {
		has := i%2 == 0
		toggle(has)
		cmd := exec.Command("ssh", "-F", h.cfg.Path, "-n", "-o", "BatchMode=yes", "--", "box", capture.Remote(20, coord.Exact("agent"), classify.EventsLogs(nil)))
		frame, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		var r run
		r.ssh = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		sh := exec.Command("sh", "-c", capture.Remote(20, coord.Exact("agent"), classify.EventsLogs(nil)))
		sh.Env = append(os.Environ(), "HOME="+h.home, "OMEGA_MONITOR_MUX="+h.mux, "LANG=C.UTF-8")
		if _, err := sh.Output(); err != nil {
			t.Fatal(err)
		}
		r.script = sh.ProcessState.UserTime() + sh.ProcessState.SystemTime()
		state := stateWith
		if !has {
			state = stateWithout
		}
		start := cpuNow(t)
		if _, err := Tick(Request{Dir: state, Settings: pollset.Default("agent"), Readings: workOf7, Now: time.Now(), Capture: capture.Options{Framed: true, Now: time.Now()}}, bytes.NewReader(frame)); err != nil {
			t.Fatal(err)
		}
		r.read = cpuNow(t) - start
		if has {
			with, sizeWith = append(with, r), len(frame)
		} else {
			without, sizeWithout = append(without, r), len(frame)
		}
	}
	median := func(rs []run, f func(run) time.Duration) time.Duration {
		d := make([]time.Duration, len(rs))
		for i, r := range rs {
			d[i] = f(r)
		}
		slices.Sort(d)
		return d[len(d)/2]
	}
	for _, m := range []struct {
		name string
		f    func(run) time.Duration
	}{
		{"ssh client CPU", func(r run) time.Duration { return r.ssh }},
		{"remote script CPU (sh and its children)", func(r run) time.Duration { return r.script }},
		{"tick over the frame (CPU of this process)", func(r run) time.Duration { return r.read }},
	} {
		t.Logf("%-42s median with %v, without %v (%d rounds each)", m.name, median(with, m.f), median(without, m.f), rounds)
	}
	t.Logf("frame bytes: with %d, without %d", sizeWith, sizeWithout)
}

// cpuNow is the CPU this process has used.
func cpuNow(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
